"""Time of the vocabulary audit against the bare reference check of the same reachability question.

For each tokenizer: tokviz's `audit_vocabulary` (all of G1–G6: surfaces, byte taxonomy,
reachability with stage attribution, fragments) vs the reference library answering only
"does each token's surface encode back to it" (tiktoken ``encode_ordinary`` per token; HF
tokenizers ``encode_batch`` over all surfaces, multi-threaded). Ratios are reference CPU time /
tokviz CPU time (1.0 = as fast)::

    python bench/bench_audit.py [o200k_base qwen3 ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy

from corpus import shared_dir

import tokviz
from tokviz.analysis.audit import audit_vocabulary

BUNDLES = {
    "r50k_base": "gpt2/r50k_base.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
    "qwen3": "qwen3/tokenizer.json",
    "bert": "bert-base-uncased/tokenizer.json",
}


def _reference_seconds(name: str, path: Path) -> float:
    if path.suffix == ".tiktoken":
        import tiktoken
        import tiktoken_ext.openai_public as presets
        from tiktoken.load import load_tiktoken_bpe

        real = presets.load_tiktoken_bpe
        presets.load_tiktoken_bpe = lambda _u, expected_hash=None: load_tiktoken_bpe(str(path), expected_hash)
        try:
            enc = tiktoken.Encoding(**getattr(presets, name)())
        finally:
            presets.load_tiktoken_bpe = real
        items = []
        for b, r in enc._mergeable_ranks.items():
            try:
                items.append((b.decode("utf-8"), r))
            except UnicodeDecodeError:
                pass
        t = time.process_time()
        sum(enc.encode_ordinary(s) != [r] for s, r in items)
        return time.process_time() - t
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(path))
    vocab = hf.get_vocab(with_added_tokens=False)
    dec = hf.decoder
    texts = [dec.decode([s]) for s in vocab]
    t = time.process_time()
    hf.encode_batch(texts, add_special_tokens=False)
    return time.process_time() - t


def main(names: list[str]) -> None:
    shared = shared_dir()
    print(f"{'tokenizer':<14}{'entries':>9}{'tokviz s':>10}{'ref s':>9}{'ratio':>8}")
    for name in names or list(BUNDLES):
        path = shared / "bundles" / BUNDLES[name]
        tok = tokviz.load(path)
        t = time.process_time()
        audit = audit_vocabulary(tok)
        ours = time.process_time() - t
        ref = _reference_seconds(name, path)
        print(f"{name:<14}{len(audit.tokens):>9,}{ours:>10.2f}{ref:>9.2f}{ref / ours:>8.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
