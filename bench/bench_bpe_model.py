"""Throughput of the BPE model alone (no normalizer, no pre-tokenizer) against the references.

The mixed corpus (bench/corpus.py) is split once with tiktoken's cl100k pattern; the chunks are
then encoded

* by tokviz's rank-mode `BPE` (cl100k rank file) vs tiktoken: ``_encode_single_piece`` per
  chunk (same Python loop) and ``encode_ordinary`` on the whole text (regex included, so the
  ratio against it is a lower bound for the model's share);
* by tokviz's merges-mode `BPE` (qwen3 tokenizer.json model) vs HF tokenizers with only that
  model, fed the chunks as one pre-tokenized input (``is_pretokenized=True``).

tokviz runs start with a cold cache (a fresh model) and are repeated once warm. Ratios are
reference CPU time / tokviz CPU time (1.0 = as fast; 0.1 = ten times slower)::

    python bench/bench_bpe_model.py [--scale 0.3]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import mixed_corpus, shared_dir

from tokviz.engine.byte_alphabet import text_to_proxy
from tokviz.engine.models.bpe import BPE

CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def timed(fn: Callable[[], object]) -> float:
    """CPU seconds of this process for one call (the bench machine may be shared; wall time
    would charge other processes' load to whichever side ran at the wrong moment)."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the corpus to use")
    args = ap.parse_args()

    import regex
    import tiktoken
    import tokenizers

    corpus = mixed_corpus(scale=args.scale)
    text = corpus.text
    chunks = regex.findall(CL100K_PATTERN, text)
    proxies = [text_to_proxy(c) for c in chunks]
    raw = [c.encode("utf-8") for c in chunks]
    print(
        f"corpus: {len(text):,} chars, {len(text.encode()):,} bytes, {len(chunks):,} chunks "
        f"({len(set(chunks)):,} distinct)"
    )

    # ---------------------------------------------------------------- rank mode vs tiktoken
    bundles = shared_dir() / "bundles"
    ranks: dict[bytes, int] = {}
    for line in (bundles / "cl100k_base" / "cl100k_base.tiktoken").read_bytes().splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    enc = tiktoken.Encoding("cl100k_bench", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={})
    single = enc._encode_single_piece

    t_tik_whole = min(timed(lambda: enc.encode_ordinary(text)) for _ in range(2))
    t_tik_piece = min(timed(lambda: [single(b) for b in raw]) for _ in range(2))
    model = BPE.from_ranks(ranks)
    tok = model.tokenize
    t_cold = timed(lambda: [tok(p) for p in proxies])
    t_warm = timed(lambda: [tok(p) for p in proxies])
    nocache = BPE.from_ranks(ranks, cache_capacity=0)
    t_nocache = timed(lambda: [nocache.tokenize(p) for p in proxies])
    mine = [i for p in proxies for i, _, _ in model.tokenize(p)]
    same = mine == enc.encode_ordinary(text)
    print("\nrank mode (cl100k) vs tiktoken" + ("" if same else "   !!! ids differ !!!"))
    print(f"  tiktoken encode_ordinary (whole text): {t_tik_whole:7.3f} s")
    print(f"  tiktoken _encode_single_piece x chunks: {t_tik_piece:7.3f} s")
    print(
        f"  tokviz BPE cold cache:                  {t_cold:7.3f} s   ratio vs encode_ordinary "
        f"{t_tik_whole / t_cold:.3f}, vs per-piece {t_tik_piece / t_cold:.3f}"
    )
    print(
        f"  tokviz BPE warm cache:                  {t_warm:7.3f} s   ratio vs encode_ordinary "
        f"{t_tik_whole / t_warm:.3f}"
    )
    print(
        f"  tokviz BPE no cache:                    {t_nocache:7.3f} s   ratio vs encode_ordinary "
        f"{t_tik_whole / t_nocache:.3f}"
    )

    # ---------------------------------------------------------------- merges mode vs HF
    data = json.loads((bundles / "qwen3" / "tokenizer.json").read_text(encoding="utf-8"))
    hf = tokenizers.Tokenizer.from_str(
        json.dumps({"version": "1.0", "model": data["model"], "added_tokens": []})
    )
    t_hf = min(timed(lambda: hf.encode(proxies, is_pretokenized=True)) for _ in range(2))
    model = BPE.from_json(data["model"])
    tok = model.tokenize
    t_cold = timed(lambda: [tok(p) for p in proxies])
    t_warm = timed(lambda: [tok(p) for p in proxies])
    same = [i for p in proxies for i, _, _ in model.tokenize(p)] == hf.encode(
        proxies, is_pretokenized=True
    ).ids
    print("\nmerges mode (qwen3) vs HF tokenizers model" + ("" if same else "   !!! ids differ !!!"))
    print(f"  HF encode(chunks, is_pretokenized=True): {t_hf:7.3f} s")
    print(f"  tokviz BPE cold cache:                   {t_cold:7.3f} s   ratio {t_hf / t_cold:.3f}")
    print(f"  tokviz BPE warm cache:                   {t_warm:7.3f} s   ratio {t_hf / t_warm:.3f}")

    # ---------------------------------------------------------------- long chunks
    for name, chunk in [
        ("'a'*10000", "a" * 10000),
        ("CJK run x10000", ("吾輩は猫である名前はまだ無い" * 800)[:10000]),
    ]:
        p = text_to_proxy(chunk)
        fresh = BPE.from_ranks(ranks, cache_capacity=0)
        warm = text_to_proxy("猫の手も借りたい")  # first use sets up the model
        t_setup = timed(partial(fresh.tokenize, warm))
        t_m = timed(partial(fresh.tokenize, p))
        t_t = timed(partial(single, chunk.encode()))
        print(
            f"\nlong chunk {name}: tokviz {t_m:.3f} s (after {t_setup:.3f} s one-time setup), "
            f"tiktoken {t_t:.3f} s"
        )


if __name__ == "__main__":
    main()
