"""The span-path cliff (code review 2026-12-01, F2): a byte-fallback BPE behind WhitespaceSplit.

Every chunk of ``"Hello wörld " * n`` holding ``ö`` is "irregular" (byte-fallback pieces have
their own offset rule). The span path once re-ran the pre-tokenizer over the whole piece for
every block of chunks holding one such chunk, so its time grew with the square of the text.
This prints the time per 100k chars at each size next to the same text through the reference
path, the plain loop (ratios in one run; a flat ratio column means linear time).

    python bench/bench_span_cliff.py
    python bench/bench_span_cliff.py --sizes 100000 800000
"""

from __future__ import annotations

import argparse
import time

from tokviz.engine import backend, reference
from tokviz.engine.models.bpe import BPE
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.tokenizer import Tokenizer


def make_model() -> BPE:
    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": b + 1 for b in range(256)}}
    for t in ["H", "e", "l", "o", "w", "r", "d", "He", "ll", "llo", "Hello"]:
        vocab[t] = len(vocab)
    merges = [("H", "e"), ("l", "l"), ("ll", "o"), ("He", "llo")]
    return BPE(vocab, merges, byte_fallback=True, unk_token="<unk>")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 400_000, 800_000])
    args = ap.parse_args()
    print(f"kernels: {backend()}")
    print(f"{'chars':>9} {'encode':>9} {'reference':>10} {'ref/encode':>10} {'encode per 100k':>16}")
    for n in args.sizes:
        text = ("Hello wörld " * (n // 12 + 1))[:n]
        tok = Tokenizer(make_model(), pre_tokenizer=pre_tokenizer_from_json({"type": "WhitespaceSplit"}))
        t0 = time.perf_counter()
        enc = tok.encode(text)
        t1 = time.perf_counter()
        ref = reference.encode(Tokenizer(make_model(), pre_tokenizer=tok.pre_tokenizer), text)
        t2 = time.perf_counter()
        assert enc.ids == ref.ids and enc.byte_offsets == ref.byte_offsets
        fast, slow = t1 - t0, t2 - t1
        print(f"{n:>9,} {fast:>8.2f}s {slow:>9.2f}s {slow / fast:>9.1f}x {fast / n * 1e5:>15.3f}s")


if __name__ == "__main__":
    main()
