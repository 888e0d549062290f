"""Caret analysis speed: tokviz's analyze_caret against tiktoken's encode_with_unstable.

Both run on the same prompts in this process; the ratio is tokviz time / tiktoken time (cold =
the first call, which builds tokviz's sorted surface table; warm = the median of the repeats).

    python bench/bench_heal.py               # r50k, cl100k, o200k
    python bench/bench_heal.py --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import shared_dir  # noqa: E402

BUNDLES = {"r50k_base": "gpt2/r50k_base.tiktoken", "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
           "o200k_base": "o200k_base/o200k_base.tiktoken"}
PROMPTS = ["hello fanta", "The quick brown fo", "print('Hello, worl", "Hello world ", "hello\n"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    import tokviz
    from tokviz.analysis.healing import analyze_caret
    from tokviz.io.tiktoken_ranks import preset_for

    for name, rel in BUNDLES.items():
        data = (shared_dir() / "bundles" / rel).read_bytes()
        preset = preset_for(data)
        with tempfile.NamedTemporaryFile(suffix=".tiktoken") as f:
            f.write(data)
            f.flush()
            ref = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(f.name),
                                    special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)
        tok = tokviz.load(data)
        t = time.perf_counter()
        analyze_caret(tok, PROMPTS[0])
        cold = time.perf_counter() - t
        t = time.perf_counter()
        ref.encode_with_unstable(PROMPTS[0])
        cold_ref = time.perf_counter() - t
        for prompt in PROMPTS:
            ours, theirs = [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                analyze_caret(tok, prompt)
                ours.append(time.perf_counter() - t)
                t = time.perf_counter()
                ref.encode_with_unstable(prompt)
                theirs.append(time.perf_counter() - t)
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"{name:12} {prompt!r:22} tokviz {a * 1e3:8.1f} ms  tiktoken {b * 1e3:8.1f} ms  ratio {a / b:6.1f}x")
        print(f"{name:12} cold (first call) tokviz {cold * 1e3:.0f} ms  tiktoken {cold_ref * 1e3:.0f} ms  "
              f"ratio {cold / cold_ref:.1f}x")


if __name__ == "__main__":
    main()
