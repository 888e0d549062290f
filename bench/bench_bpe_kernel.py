"""The native rank-mode merge alone (the byte-level kernel `bpe_merge_utf8`) vs tiktoken, per chunk.

The mixed corpus (bench/corpus.py) is split once with each rank file's own pattern (its tiktoken
encoding); every distinct chunk is merged once, as the pipeline does on a cold cache:

* tokviz: ``bpe_merge_utf8`` on a freshly built table (the table build is timed separately);
  its pair memo starts empty, so this is the honest first-merge speed;
* tiktoken: ``_encode_single_piece`` on the chunk's UTF-8 (the same loop in Python).

The chunks are also split into ASCII and non-ASCII ones (the non-ASCII ones, mostly Japanese,
are long runs of three-byte chars where most merges happen). Ratios are reference CPU time /
tokviz CPU time (1.0 = as fast), best of ``--repeat`` alternating runs::

    python bench/bench_bpe_kernel.py [--only o200k_base] [--repeat 3]

Needs the native core (it measures it); ids are checked equal to tiktoken's.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encode import RANK_BUNDLES, encode_all, tiktoken_ref  # noqa: E402
from corpus import mixed_corpus, shared_dir  # noqa: E402


def cpu(fn: Callable[[], object]) -> float:
    """CPU seconds of this process for one call (the machine may be shared), without the
    cyclic collector (whose pauses would land on whichever side ran when it fired)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the corpus to use")
    ap.add_argument("--only", nargs="*", default=None, help="rank files to run (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs of each side (best of)")
    args = ap.parse_args()

    import regex

    import tokviz
    from tokviz.engine import kernels
    from tokviz.engine.models.bpe import _PROXIES

    native = kernels.native
    if native is None:
        raise SystemExit("the native core is not built (or TOKVIZ_PURE_PYTHON=1): nothing to measure")
    text = mixed_corpus(scale=args.scale).text
    print(f"tokviz {tokviz.__file__}")
    print(f"{'rank file':<12} {'part':<9} {'chunks':>7} {'bytes':>9} {'tokviz':>9} {'tiktoken':>9} {'ratio':>6}")
    for name, rel in RANK_BUNDLES.items():
        if args.only and name not in args.only:
            continue
        path = shared_dir() / "bundles" / rel
        enc = tiktoken_ref(path)
        chunks = list(dict.fromkeys(regex.findall(enc._pat_str, text)))
        vocab = tokviz.load(path).model._vocab
        t_table = min(cpu(lambda: native.bpe_rank_table(vocab)) for _ in range(args.repeat))
        parts = {
            "ascii": [c for c in chunks if c.isascii()],
            "other": [c for c in chunks if not c.isascii()],
            "all": chunks,
        }
        for part, texts in parts.items():
            raw = [c.encode("utf-8") for c in texts]
            single = enc._encode_single_piece
            t_ref = t_mine = float("inf")
            for _ in range(args.repeat):
                t_ref = min(t_ref, cpu(encode_all(single, raw)))
                table = native.bpe_rank_table(vocab)  # fresh: an empty pair memo
                merge = partial(native.bpe_merge_utf8, table)
                t_mine = min(t_mine, cpu(encode_all(lambda c: merge(c, _PROXIES), texts)))
            table = native.bpe_rank_table(vocab)
            same = all(native.bpe_merge_utf8(table, c, _PROXIES)[0] == single(b) for c, b in zip(texts, raw))
            print(
                f"{name:<12} {part:<9} {len(texts):>7,} {sum(map(len, raw)):>9,} {t_mine * 1e3:>7.1f}ms "
                f"{t_ref * 1e3:>7.1f}ms {t_ref / t_mine:>6.2f}" + ("" if same else "   !!! ids differ !!!")
            )
        print(f"{name:<12} table build (not in the rows above): {t_table * 1e3:.1f}ms")


if __name__ == "__main__":
    main()
