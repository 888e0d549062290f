"""WordPiece model: greedy longest-match-first, whole-word unk (seed D03), traces, JSON, and
parity with HF tokenizers' WordPiece on bert-base-uncased words."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from parity.cases import TRICKY
from support import bundle_bytes, corpus_text, require_module

from tokviz.engine.encoding import WordPieceTrace
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.models import model_from_json
from tokviz.engine.models.wordpiece import WordPiece


def toks(model: WordPiece, text: str) -> list[str]:
    return [model.id_to_token(i) for i, _, _ in model.tokenize(text)]  # type: ignore[misc]


def vocab_of(*tokens: str) -> dict[str, int]:
    return {t: i for i, t in enumerate(tokens)}


def hf_model(model_json: dict[str, Any]) -> Any:
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_str(
        json.dumps({"version": "1.0", "model": model_json, "added_tokens": []})
    )


def hf_result(hf: Any, text: str) -> list[tuple[int, int, int]]:
    e = hf.encode(text)
    return [(i, s, t) for i, (s, t) in zip(e.ids, e.offsets)]


class TestWordPiece:
    def test_longest_match_first(self) -> None:
        wp = WordPiece(vocab_of("a", "##b", "##bc", "[UNK]"))
        assert toks(wp, "abc") == ["a", "##bc"]
        assert wp.tokenize("abc") == ((0, 0, 1), (2, 1, 3))

    def test_whole_word_unk_when_a_position_fails(self) -> None:
        wp = WordPiece(vocab_of("a", "##b", "[UNK]"))
        assert toks(wp, "abc") == ["[UNK]"]
        assert wp.tokenize("abc") == ((2, 0, 3),)

    def test_greedy_never_backtracks(self) -> None:
        # "ab" wins at position 0 and leaves "c" with no "##c": the whole word is unk although
        # "a" + "##bc" would have worked
        wp = WordPiece(vocab_of("a", "ab", "##bc", "[UNK]"))
        assert toks(wp, "abc") == ["[UNK]"]

    def test_max_input_chars_per_word(self) -> None:
        wp = WordPiece(vocab_of("a", "##a", "[UNK]"), max_input_chars_per_word=3)
        assert toks(wp, "aaa") == ["a", "##a", "##a"]
        assert toks(wp, "aaaa") == ["[UNK]"]

    def test_custom_prefix_and_empty(self) -> None:
        wp = WordPiece(vocab_of("un", "@@do", "[UNK]"), continuing_subword_prefix="@@")
        assert toks(wp, "undo") == ["un", "@@do"]
        assert wp.tokenize("") == ()

    def test_missing_unk_is_an_error(self) -> None:
        with pytest.raises(TokvizFormatError, match="unk_token"):
            WordPiece(vocab_of("a")).tokenize("b")

    def test_traces(self) -> None:
        wp = WordPiece(vocab_of("a", "##b", "##bc", "[UNK]"))
        tokens, traces = wp.tokenize_traced("abc")
        assert tokens == wp.tokenize("abc")
        assert traces[0].matched == "a" and traces[0].tried[-1] == "a"
        assert traces[1] == WordPieceTrace(("##bc",), "##bc")
        tokens, traces = WordPiece(vocab_of("a", "ab", "##bc", "[UNK]")).tokenize_traced("abc")
        assert traces == (WordPieceTrace(("##c",), None),)

    def test_json_round_trip_and_hf_serialization(self) -> None:
        obj = {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab_of("[UNK]", "a", "##b"),
        }
        wp = model_from_json(obj)
        assert isinstance(wp, WordPiece)
        assert wp.to_json() == obj == json.loads(hf_model(obj).to_str())["model"]
        with pytest.raises(TokvizFormatError, match="vocab"):
            WordPiece.from_json({"type": "WordPiece", "vocab": ["a"]})
        with pytest.raises(TokvizFormatError, match="max_input_chars_per_word"):
            WordPiece.from_json({**obj, "max_input_chars_per_word": "x"})

    @pytest.mark.parametrize("words", [["abc", "abcd", "a", "bcd", "ab", "dcba"]], ids=["toy"])
    def test_toy_matches_hf(self, words: list[str]) -> None:
        obj = {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 3,
            "vocab": vocab_of("[UNK]", "a", "ab", "##b", "##bc", "##c", "b", "##d"),
        }
        ours, hf = WordPiece.from_json(obj), hf_model(obj)
        for w in words:
            assert list(ours.tokenize(w)) == hf_result(hf, w), w


@lru_cache(maxsize=1)
def _bert() -> tuple[WordPiece, Any, Any]:
    tokenizers = require_module("tokenizers")
    data = json.loads(bundle_bytes("bert-base-uncased/tokenizer.json"))
    full = tokenizers.Tokenizer.from_str(json.dumps(data))
    return WordPiece.from_json(data["model"]), hf_model(data["model"]), full


def _bert_words(texts: list[str]) -> list[str]:
    """Words as BERT's model sees them: HF's own normalizer + pre-tokenizer output (and raw)."""
    _, _, full = _bert()
    out: dict[str, None] = {}
    for t in texts:
        for src in (full.normalizer.normalize_str(t), t):
            for w, _ in full.pre_tokenizer.pre_tokenize_str(src):
                out[w] = None
    return [w for w in out if w]


class TestWordPieceParityBert:
    def test_tricky_and_corpus(self) -> None:
        ours, hf, _ = _bert()
        texts = [t for _, t in TRICKY]
        texts += (
            corpus_text("botchan.txt").splitlines()[:1500]
            + corpus_text("wagahaiwa_nekodearu.txt").splitlines()[:300]
        )
        bad = [w for w in _bert_words(texts) if list(ours.tokenize(w)) != hf_result(hf, w)]
        assert bad == []

    def test_long_word_is_unk(self) -> None:
        ours, hf, _ = _bert()
        for w in ["a" * 100, "a" * 101, "pneumonoultramicroscopicsilicovolcanoconiosis" * 3]:
            assert list(ours.tokenize(w)) == hf_result(hf, w)

    @given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=20))
    @settings(max_examples=200, deadline=None)
    def test_hypothesis(self, word: str) -> None:
        ours, hf, _ = _bert()
        assert list(ours.tokenize(word)) == hf_result(hf, word)
        assert ours.tokenize_traced(word)[0] == ours.tokenize(word)
