"""Cost of the exact spans and of the offset linter, against the encode they explain.

`Encoding.exact_offsets` is computed on first access, so ``encode`` itself must not get slower:
the first line compares ``encode`` with the exact spans never read against ``encode`` followed by
reading them; the others print how long the exact alignment and a lint take per line, as ratios
to HF ``tokenizers`` encoding the same lines in the same run (the reference)::

    python bench/bench_lint.py [--lines 2000] [--bundle qwen3/tokenizer.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tokviz  # noqa: E402
import tokviz.engine.exact  # noqa: E402
from tokviz.analysis.lint import lint_encoding  # noqa: E402


def _cpu(fn) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--bundle", default="qwen3/tokenizer.json")
    args = ap.parse_args()
    shared = Path(__file__).resolve().parents[2] / "shared"
    if not shared.is_dir():
        shared = Path("/work/shared")
    path = shared / "bundles" / args.bundle
    text = (shared / "corpora" / "botchan.txt").read_bytes().decode("utf-8")
    lines = [ln for ln in text.splitlines() if ln][: args.lines]
    tok = tokviz.load(path)
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(path))
    ref = _cpu(lambda: [hf.encode(ln, add_special_tokens=False) for ln in lines])
    enc_only = _cpu(lambda: [tok.encode(ln, add_special_tokens=False) for ln in lines])
    encs = [tok.encode(ln, add_special_tokens=False) for ln in lines]
    exact = _cpu(lambda: [tokviz.engine.exact.exact_alignment(tok, e) for e in encs])
    lint = _cpu(lambda: [lint_encoding(tok, tok.encode(ln, add_special_tokens=False)) for ln in lines])
    n = len(lines)
    print(f"{args.bundle}, {n} lines (CPU seconds, best of 3; ratio = HF encode / this)")
    print(f"  HF encode            {ref:8.3f} s   1.00")
    print(f"  tokviz encode        {enc_only:8.3f} s   {ref / enc_only:.2f}")
    print(f"  exact alignment      {exact:8.3f} s   {ref / exact:.3f}  ({exact / n * 1e6:.0f} us/line)")
    print(f"  encode + lint        {lint:8.3f} s   {ref / lint:.3f}  ({lint / n * 1e6:.0f} us/line)")


if __name__ == "__main__":
    main()
