"""WordLevel model: whole-chunk lookup or unk, JSON, and parity with HF tokenizers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from support import require_module

from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.models import model_from_json
from tokviz.engine.models.wordlevel import WordLevel

VOCAB = {"<unk>": 0, "hello": 1, "world": 2, "héllo": 3, "a b": 4}


def hf_model(model_json: dict[str, Any]) -> Any:
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_str(
        json.dumps({"version": "1.0", "model": model_json, "added_tokens": []})
    )


class TestWordLevel:
    def test_lookup_and_unk(self) -> None:
        wl = WordLevel(VOCAB)
        assert wl.tokenize("hello") == ((1, 0, 5),)
        assert wl.tokenize("héllo") == ((3, 0, 5),)  # char offsets
        assert wl.tokenize("nope") == ((0, 0, 4),)
        assert wl.tokenize_traced("world") == (((2, 0, 5),), (None,))
        assert wl.vocab_size == 5 and wl.id_to_token(4) == "a b" and wl.token_to_id("x") is None

    def test_missing_unk_is_an_error(self) -> None:
        with pytest.raises(TokvizFormatError, match="unk_token"):
            WordLevel({"a": 0}, unk_token="[UNK]").tokenize("b")

    def test_json(self) -> None:
        obj = {"type": "WordLevel", "vocab": VOCAB, "unk_token": "<unk>"}
        wl = model_from_json(obj)
        assert isinstance(wl, WordLevel)
        assert wl.to_json() == obj == json.loads(hf_model(obj).to_str())["model"]
        with pytest.raises(TokvizFormatError, match="vocab"):
            WordLevel.from_json({"type": "WordLevel", "vocab": None})

    @given(
        st.sampled_from(sorted(VOCAB))
        | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
    )
    @settings(max_examples=100, deadline=None)
    def test_matches_hf(self, word: str) -> None:
        obj = {"type": "WordLevel", "vocab": VOCAB, "unk_token": "<unk>"}
        e = hf_model(obj).encode(word)
        assert list(WordLevel.from_json(obj).tokenize(word)) == [
            (i, s, t) for i, (s, t) in zip(e.ids, e.offsets)
        ]
