"""Encode the mixed corpus with tokviz and with HF tokenizers, same tokenizer.json, one process.

Prints, per bundle: HF ``Tokenizer.encode`` CPU time, tokviz ``Tokenizer.encode`` time on a cold
tokenizer (fresh caches: the first encode of a text) and warm (the same text again), and the
ratios (the target is tokviz <= HF, i.e. ratio HF/tokviz >= 1.0). Also checks the ids agree.

    python bench/bench_encode_hf_json.py [--bundle qwen3] [--repeat 2] [--part NAME]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import mixed_corpus, shared_dir  # noqa: E402


def _time(fn, repeat: int) -> float:  # noqa: ANN001
    """Best CPU time of ``repeat`` runs (CPU, not wall clock: the machine may be shared; both
    libraries encode on one thread here)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    import tokenizers

    from tokviz.io.hf_json import load_hf_json

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", action="append", help="bundle name (default: qwen3 and claude-legacy)")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--part", default=None, help="only this part of the corpus")
    args = p.parse_args(argv)
    corpus = mixed_corpus()
    text = corpus.text if args.part is None else dict(corpus.parts)[args.part]
    print(f"corpus: {len(text):,} chars, {len(text.encode('utf-8')):,} bytes")
    for bundle in args.bundle or ["qwen3", "claude-legacy"]:
        data = (shared_dir() / "bundles" / bundle / "tokenizer.json").read_bytes()
        ref = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
        hf = _time(lambda: ref.encode(text), args.repeat)
        ours_tok = load_hf_json(data, source=bundle)
        t = time.process_time()
        enc = ours_tok.encode(text)
        cold = time.process_time() - t
        warm = _time(lambda: ours_tok.encode(text), args.repeat)
        same = enc.ids == ref.encode(text).ids
        print(
            f"{bundle}: hf {hf:.2f} s | tokviz cold {cold:.2f} s, warm {warm:.2f} s | "
            f"hf/tokviz cold {hf / cold:.2f}x, warm {hf / warm:.2f}x | {len(enc.ids):,} tokens, ids equal: {same}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
