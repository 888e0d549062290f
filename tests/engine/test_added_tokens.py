"""Added tokens: HF's extraction rules (leftmost-longest, lstrip/rstrip/single_word, normalized),
the tiktoken special policy, and HF's id assignment on load.

Hand-checked cases first; each is also compared with HF tokenizers built from the same JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import require_module

from tokviz.engine.added_tokens import AddedToken, AddedVocabulary
from tokviz.engine.text import NormalizedText
from tokviz.io.hf_json import load_hf_json

LETTERS = "abcdefghijklmnopqrstuvwxyz "


def tokenizer_json(added: list[dict[str, Any]], *, normalizer: dict | None = None) -> dict[str, Any]:
    """A character-level BPE tokenizer.json (a-z and space) with the given added tokens."""
    vocab = {c: i for i, c in enumerate(LETTERS)}
    tokens = []
    for i, a in enumerate(added):
        tokens.append(
            {"id": len(vocab) + i, "content": a["content"], "single_word": a.get("single_word", False),
             "lstrip": a.get("lstrip", False), "rstrip": a.get("rstrip", False),
             "normalized": a.get("normalized", True), "special": a.get("special", False)}
        )
    return {
        "version": "1.0",
        "added_tokens": tokens,
        "normalizer": normalizer,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }


def both(obj: dict[str, Any]) -> tuple[Any, Any]:
    tokenizers = require_module("tokenizers")
    return load_hf_json(obj, source="test.json"), tokenizers.Tokenizer.from_str(json.dumps(obj))


def check_hf(obj: dict[str, Any], text: str) -> Any:
    ours, ref = both(obj)
    enc = ours.encode(text)
    r = ref.encode(text)
    assert enc.ids == r.ids
    assert enc.tokens == r.tokens
    assert enc.offsets == [tuple(o) for o in r.offsets]
    assert ours.decode(enc.ids) == ref.decode(enc.ids, skip_special_tokens=False)
    assert ours.decode(enc.ids, skip_special_tokens=True) == ref.decode(enc.ids, skip_special_tokens=True)
    return enc


MASK = {"content": "<mask>", "lstrip": True, "rstrip": True, "normalized": False, "special": True}


class TestExtraction:
    def test_lstrip_rstrip_take_the_spaces(self) -> None:
        enc = check_hf(tokenizer_json([MASK]), "a  <mask>  b")
        assert enc.tokens == ["a", "  <mask>  ", "b"]
        assert enc.offsets == [(0, 1), (1, 11), (11, 12)]

    def test_lstrip_never_crosses_the_previous_match(self) -> None:
        check_hf(tokenizer_json([MASK]), "<mask> <mask>  <mask>")

    def test_single_word(self) -> None:
        obj = tokenizer_json([{"content": "ab", "single_word": True}])
        enc = check_hf(obj, "ab abc cab ab")
        assert enc.ids[0] == 27 and enc.ids[-1] == 27
        assert enc.ids.count(27) == 2  # "abc" and "cab" are not single words

    def test_normalized_token_matches_normalized_text(self) -> None:
        obj = tokenizer_json([{"content": "XY", "normalized": True}], normalizer={"type": "Lowercase"})
        enc = check_hf(obj, "xy XY")
        assert enc.ids == [27, 26, 27]
        ours, _ = both(obj)
        assert ours.decode([27]) == "xy"  # HF decodes a normalized added token as its normalized form

    def test_leftmost_longest(self) -> None:
        obj = tokenizer_json([{"content": "ab", "normalized": False}, {"content": "abc", "normalized": False}, {"content": "bcd", "normalized": False}])
        enc = check_hf(obj, "abcd")
        assert enc.tokens == ["abc", "d"]

    def test_raw_before_normalized(self) -> None:
        obj = tokenizer_json(
            [{"content": "AB", "normalized": False, "special": True}, {"content": "ab", "normalized": True}],
            normalizer={"type": "Lowercase"},
        )
        enc = check_hf(obj, "AB ab Ab")
        assert enc.ids[:1] == [27]

    def test_empty_text_and_only_added(self) -> None:
        obj = tokenizer_json([MASK])
        assert check_hf(obj, "").ids == []
        assert check_hf(obj, "<mask>").ids == [27]

    def test_special_mask_and_words(self) -> None:
        ours, _ = both(tokenizer_json([MASK]))
        enc = ours.encode("ab<mask>c")
        assert enc.special_tokens_mask == [0, 0, 1, 0]
        assert enc.word_ids == [0, 0, 1, 2]


class TestAddedVocabulary:
    def test_extract_segments(self) -> None:
        vocab = AddedVocabulary([AddedToken("<s>", 5, special=True, normalized=False)])
        segs = vocab.extract("x<s>y", None)
        assert [(s.text, s.orig_start, s.orig_end, i) for s, i in segs] == [("x", 0, 1, None), ("<s>", 1, 4, 5), ("y", 4, 5, None)]

    def test_skip_ids_leave_text(self) -> None:
        vocab = AddedVocabulary([AddedToken("<s>", 5, special=True, normalized=False)])
        segs = vocab.extract("x<s>y", None, skip_ids={5})
        assert [(s.text, i) for s, i in segs] == [("x<s>y", None)]

    def test_normalize_is_applied_between_tokens(self) -> None:
        vocab = AddedVocabulary([AddedToken("<s>", 5, normalized=False)])
        segs = vocab.extract("A<s>B", lambda nt: nt.map_chars(str.lower))
        assert [s.text for s, _ in segs] == ["a", "<s>", "b"]

    def test_empty_content_ignored(self) -> None:
        assert AddedVocabulary([AddedToken("", 3)]).is_empty


class TestTiktokenPolicy:
    def _tok(self) -> Any:
        from tokviz.engine.models.bpe import BPE
        from tokviz.engine.tokenizer import Tokenizer

        vocab = {c: i for i, c in enumerate("<|>abcdefghijklmnopqrstuvwxyz")}
        return Tokenizer(
            BPE(vocab, []),
            added_tokens=[AddedToken("<|x|>", 100, special=True, normalized=False)],
            special_policy="tiktoken",
        )

    def test_literal_is_text_by_default(self) -> None:
        tok = self._tok()
        assert 100 not in tok.encode("a<|x|>b").ids

    def test_allowed_special(self) -> None:
        tok = self._tok()
        assert tok.encode("a<|x|>b", allowed_special="all").ids == [3, 100, 4]
        assert tok.encode("a<|x|>b", allowed_special={"<|x|>"}).ids == [3, 100, 4]

    def test_unknown_allowed_special_is_an_error(self) -> None:
        with pytest.raises(ValueError, match="not special"):
            self._tok().encode("a", allowed_special={"<|nope|>"})


class TestIdAssignment:
    def test_hf_ids_come_from_model_then_next_free(self) -> None:
        obj = tokenizer_json([{"content": "a", "special": True, "normalized": False}, {"content": "<new>"}])
        obj["added_tokens"][0]["id"] = 99  # HF ignores the file's id: "a" is 0 in the model
        obj["added_tokens"][1]["id"] = 50
        ours, ref = both(obj)
        assert ours.token_to_id("a") == ref.token_to_id("a") == 0
        assert ours.token_to_id("<new>") == ref.token_to_id("<new>") == 27
        assert ours.vocab_size == ref.get_vocab_size(with_added_tokens=True)

    def test_normalized_text_segment_value(self) -> None:
        nt = NormalizedText.identity("ab")
        assert AddedVocabulary([]).extract("ab", None)[0][0] == nt
