"""Seed sanity cases D03, D04, D05 (../shared/seeds/000_*.txt §7) on tokviz's engine."""

from __future__ import annotations

import math

import pytest
from support import bundle_bytes

from tokviz.engine.lattice import Lattice
from tokviz.engine.models.unigram import Unigram


def bert(vocab: list[str]):  # noqa: ANN201
    from tokviz.io.wordpiece_vocab import load_wordpiece_vocab

    text = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *vocab]) + "\n"
    return load_wordpiece_vocab(text, source="seed-vocab.txt", lowercase=True)


class TestD03WordPiece:
    def test_longest_continuation_wins(self) -> None:
        assert bert(["a", "##b", "##bc"]).encode("abc", add_special_tokens=False).tokens == ["a", "##bc"]

    def test_whole_word_unk(self) -> None:
        assert bert(["a", "##b"]).encode("abc", add_special_tokens=False).tokens == ["[UNK]"]

    def test_no_backtracking(self) -> None:
        # greedy takes "ab", then "c"/"##c" is missing: the whole word is [UNK] even though
        # "a" + "##bc" would have worked
        assert bert(["a", "ab", "##bc"]).encode("abc", add_special_tokens=False).tokens == ["[UNK]"]


class TestD04Unigram:
    def test_viterbi_and_forward(self) -> None:
        probs = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
        m = Unigram([("<unk>", -30.0)] + [(p, math.log(q)) for p, q in probs.items()], unk_id=0)
        assert [m.id_to_token(i) for i, _, _ in m.tokenize("abab")] == ["ab", "ab"]
        lat = Lattice.build(m, "abab")
        assert math.exp(lat.viterbi().score) == pytest.approx(0.16)
        forward = math.exp(lat.log_z())
        assert forward == pytest.approx(0.22350625, abs=1e-12)
        assert forward >= 0.16


class TestD05NormalizationVsByteFallback:
    def test_nfkc_is_lossy(self) -> None:
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("sentencepiece-test/test_model.model"), source="t")
        assert tok.normalizer.normalize_str("Ａ①") == "▁A1"
        assert tok.decode(tok.encode("Ａ①").ids) == "A1"  # the original is gone

    def test_byte_fallback_round_trips(self) -> None:
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("mistral-7b-v0.1/tokenizer.model"), source="m")
        enc = tok.encode("龘")
        assert enc.tokens == ["▁", "<0xE9>", "<0xBE>", "<0x98>"]
        assert tok.decode(enc.ids) == "龘"
        assert enc.byte_offsets[1:] == [(0, 1), (1, 2), (2, 3)]
