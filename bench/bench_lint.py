"""Cost of the exact spans and of the offset linter, against the encode they explain.

`Encoding.exact_offsets` is computed on first access, so ``encode`` itself must not get slower:
the first line compares ``encode`` with the exact spans never read against ``encode`` followed by
reading them; the others print how long the exact alignment and a lint take per line, as ratios
to HF ``tokenizers`` encoding the same lines in the same run (the reference)::

    python bench/bench_lint.py [--lines 2000] [--bundle qwen3/tokenizer.json]

``--scaling`` instead lints growing prefixes of one long Japanese text (10k, 40k, 160k chars and
all of it): the time per character must stay flat (the linter is linear in the text)::

    python bench/bench_lint.py --scaling [--bundle cl100k_base/cl100k_base.tiktoken]
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
    ap.add_argument("--scaling", action="store_true", help="growing prefixes of one long text")
    args = ap.parse_args()
    shared = Path(__file__).resolve().parents[2] / "shared"
    if not shared.is_dir():
        shared = Path("/work/shared")
    path = shared / "bundles" / args.bundle
    if args.scaling:
        scaling(path, shared / "corpora" / "wagahaiwa_nekodearu.txt")
        return
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


def _reference(path: Path):  # noqa: ANN202 - text -> ids of the reference library
    if path.suffix == ".tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from tokviz.io.tiktoken_ranks import preset_for

        preset = preset_for(path.read_bytes())
        ref = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)
        return lambda t: ref.encode(t, disallowed_special=())
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(path))
    return lambda t: hf.encode(t, add_special_tokens=False)


def scaling(path: Path, corpus: Path) -> None:
    """Encode, exact spans and lint of growing prefixes, each as a ratio to the reference encoding it
    (tiktoken for a .tiktoken file, HF ``tokenizers`` otherwise)."""
    from tokviz.io.textfile import read_text_file

    text = read_text_file(corpus).text
    tok = tokviz.load(path)
    ref = _reference(path)
    print(f"{path.name}: CPU seconds, once each; ratio = reference encode / this")
    for n in (10_000, 40_000, 160_000, len(text)):
        part = text[:n]
        t0 = time.process_time()
        ref(part)
        t1 = time.process_time()
        enc = tok.encode(part, add_special_tokens=False)
        t2 = time.process_time()
        enc.exact_alignment
        t3 = time.process_time()
        lint_encoding(tok, enc)
        t4 = time.process_time()
        r = max(t1 - t0, 1e-6)
        print(f"  {len(part):>7} chars  reference {r:6.2f} s · encode {t2 - t1:6.2f} s ({r / (t2 - t1):.2f})"
              f" · exact {t3 - t2:6.2f} s ({r / (t3 - t2):.3f}) · lint {t4 - t3:6.2f} s ({r / (t4 - t3):.3f})"
              f" · lint {1e6 * (t4 - t3) / len(part):.1f} us/char")


if __name__ == "__main__":
    main()
