"""Seed sanity cases D02 (BPE training vs encoding, rank conflicts) and D06 (prefix instability)
from the shared seed notes (§7 / §A), run against tokviz's BPE model.

The toy training in D02 is only the seed's hand example (most frequent adjacent pair, ties by
the pair itself, on words without pre-tokenization); tokviz's real trainer lives in
tokviz.training and has its own tests.
"""

from __future__ import annotations

import base64
from collections import Counter
from functools import lru_cache
from typing import ClassVar

from support import bundle_bytes, require_module

from tokviz.engine.byte_alphabet import text_to_proxy
from tokviz.engine.models.bpe import BPE


def toy_train(word_freqs: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """The seed's hand procedure: count adjacent pairs, take the most frequent (then smallest)."""
    words = {tuple(w): f for w, f in word_freqs.items()}
    merges: list[tuple[str, str]] = []
    for _ in range(num_merges):
        counts: Counter[tuple[str, str]] = Counter()
        for w, f in words.items():
            for i in range(len(w) - 1):
                counts[(w[i], w[i + 1])] += f
        if not counts:
            break
        pair = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(pair)
        new_words = {}
        for w, f in words.items():
            out: list[str] = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == pair:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = f
        words = new_words
    return merges


def model_from_merges(merges: list[tuple[str, str]], alphabet: str) -> BPE:
    vocab: dict[str, int] = {}
    for t in [*alphabet, *(a + b for a, b in merges)]:
        vocab.setdefault(t, len(vocab))
    return BPE(vocab, merges)


def encode(model: BPE, text: str) -> list[str]:
    return [model.id_to_token(i) for i, _, _ in model.tokenize(text)]  # type: ignore[misc]


class TestSeedD02:
    CORPUS: ClassVar[dict[str, int]] = {"abab": 3, "abac": 1}

    def test_first_merge_is_ab_with_frequency_7(self) -> None:
        counts: Counter[tuple[str, str]] = Counter()
        for w, f in self.CORPUS.items():
            for i in range(len(w) - 1):
                counts[(w[i], w[i + 1])] += f
        assert counts.most_common(1) == [(("a", "b"), 7)]
        assert toy_train(self.CORPUS, 1) == [("a", "b")]

    def test_training_order_is_encoding_priority(self) -> None:
        merges = toy_train(self.CORPUS, 3)
        assert merges == [("a", "b"), ("ab", "ab"), ("a", "c")]
        model = model_from_merges(merges, "abc")
        assert encode(model, "ababac") == ["abab", "ac"]

    def test_round_trip_determinism_and_length(self) -> None:
        model = model_from_merges(toy_train(self.CORPUS, 3), "abc")
        for text in ["ababac", "cab", "aaaa", "bcbcab", "abacabab"]:
            tokens = encode(model, text)
            assert "".join(tokens) == text  # decode(encode(x)) == x
            assert encode(model, text) == tokens  # deterministic
            assert len(tokens) <= len(text.encode("utf-8"))

    def test_rank_conflict_follows_frozen_ranks(self) -> None:
        vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
        assert encode(BPE(vocab, [("a", "b"), ("b", "c")]), "abc") == ["ab", "c"]
        assert encode(BPE(vocab, [("b", "c"), ("a", "b")]), "abc") == ["a", "bc"]

    def test_left_to_right_non_overlapping(self) -> None:
        assert encode(BPE({"a": 0, "aa": 1}, [("a", "a")]), "aaa") == ["aa", "a"]


class TestSeedD06:
    def test_prefix_instability_toy(self) -> None:
        model = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")])
        short, long = encode(model, "ab"), encode(model, "abc")
        assert short == ["ab"] and long == ["abc"]
        assert long[: len(short)] != short  # encode("ab") is not a token prefix of encode("abc")

    def test_prefix_instability_real_vocab(self) -> None:
        """The same effect in GPT-2's r50k ranks, checked against tiktoken."""
        short, long = _r50k_ids(" hel"), _r50k_ids(" hello")
        assert long[: len(short)] != short
        tiktoken = require_module("tiktoken")
        enc = tiktoken.Encoding(
            "r50k-whole", pat_str=r"[\s\S]+", mergeable_ranks=_r50k_ranks(), special_tokens={}
        )
        assert (short, long) == (enc.encode_ordinary(" hel"), enc.encode_ordinary(" hello"))


@lru_cache(maxsize=1)
def _r50k_ranks() -> dict[bytes, int]:
    ranks = {}
    for line in bundle_bytes("gpt2/r50k_base.tiktoken").splitlines():
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def _r50k() -> BPE:
    return BPE.from_ranks(_r50k_ranks())


def _r50k_ids(text: str) -> list[int]:
    return [i for i, _, _ in _r50k().tokenize(text_to_proxy(text))]
