"""Decoders: ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace, BPEDecoder,
CTC and Sequence. Hand-checked outputs, then HF's decoders (``tokenizers.decoders``) on the same
token lists as the oracle."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st
from support import require_module

from tokviz.engine.byte_alphabet import text_to_proxy
from tokviz.engine.decoders import decoder_from_json
from tokviz.engine.decoders.basic import BPEDecoder, ByteFallback, Fuse, Replace, Strip
from tokviz.engine.decoders.byte_level import ByteLevel
from tokviz.engine.decoders.metaspace import Metaspace
from tokviz.engine.decoders.wordpiece import WordPiece
from tokviz.engine.errors import TokvizFormatError

DECODERS = {
    "byte-level": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "metaspace-always": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "metaspace-never": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
    "metaspace-first": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "wordpiece-raw": {"type": "WordPiece", "prefix": "##", "cleanup": False},
    "byte-fallback": {"type": "ByteFallback"},
    "fuse": {"type": "Fuse"},
    "strip": {"type": "Strip", "content": " ", "start": 1, "stop": 2},
    "replace-string": {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    "replace-regex": {"type": "Replace", "pattern": {"Regex": "a+"}, "content": "<A>"},
    "bpe": {"type": "BPEDecoder", "suffix": "</w>"},
    "ctc": {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    "mistral-sequence": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
}
TOKEN_LISTS = [
    [],
    ["▁Hello", "▁world", "!"],
    ["Hello", "##s", "world", ".", "do", "not", "'s", "n't"],
    ["<0xE6>", "<0x97>", "<0xA5>", "x", "<0xFF>", "<0x41>", "<0xZZ>"],
    [text_to_proxy(" héllo"), text_to_proxy("\n日本"), "<|im_start|>", "Ċ"],
    ["ÃĢ", "Ġ", "\u00e9"],  # an invalid UTF-8 byte run through ByteLevel
    ["a</w>", "b", "c</w>"],
    ["<pad>", "h", "h", "<pad>", "i", "|", "t", "t"],
    ["  x  ", "aaa bab  "],  # (HF panics on a token shorter than Strip.stop; tokviz clamps)
]


class TestHfParity:
    @pytest.mark.parametrize("name", sorted(DECODERS))
    @pytest.mark.parametrize("tokens", TOKEN_LISTS, ids=[str(i) for i in range(len(TOKEN_LISTS))])
    def test_same_as_hf(self, name: str, tokens: list[str]) -> None:
        tokenizers = require_module("tokenizers")
        obj = DECODERS[name]
        ours = decoder_from_json(obj)
        if name == "bpe" and not tokens:
            assert ours.decode([]) == ""  # HF's BPEDecoder underflows (panics) on an empty list
            return
        hf = _hf_decoder(tokenizers, obj)
        assert ours.decode(list(tokens)) == hf.decode(list(tokens))


def _hf_decoder(tokenizers, obj):  # noqa: ANN001, ANN202
    """Build the HF decoder from the same JSON, through a tiny tokenizer.json."""
    tj = {
        "version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None, "post_processor": None,
        "decoder": obj, "model": {"type": "WordLevel", "vocab": {"x": 0}, "unk_token": "x"},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(tj)).decoder


class TestByHand:
    def test_byte_level(self) -> None:
        assert ByteLevel().decode(["ĠhÃ©llo", "Ċ"]) == " héllo\n"
        assert ByteLevel().decode(["<|x|>", "Ġa"]) == "<|x|> a"

    def test_metaspace_first_token(self) -> None:
        assert Metaspace().decode(["▁a▁b", "▁c"]) == "ab c"  # HF drops every ▁ of token 0
        assert Metaspace(prepend_scheme="never").decode(["▁a"]) == " a"

    def test_wordpiece(self) -> None:
        assert WordPiece().decode(["un", "##aff", "##able", ",", "ok"]) == "unaffable, ok"

    def test_byte_fallback(self) -> None:
        assert ByteFallback().decode_chain(["<0xC3>", "<0xA9>", "a"]) == ["é", "a"]
        assert ByteFallback().decode_chain(["<0xC3>", "a"]) == ["\ufffd", "a"]

    def test_strip_fuse_replace_bpe(self) -> None:
        assert Strip(content=" ", start=1, stop=1).decode_chain(["  a  "]) == [" a "]
        assert Fuse().decode_chain(["a", "b"]) == ["ab"]
        assert Replace(pattern="▁", content=" ").decode_chain(["▁a▁"]) == [" a "]
        assert BPEDecoder().decode(["a</w>", "b</w>"]) == "a b"

    def test_bad_json(self) -> None:
        with pytest.raises(TokvizFormatError, match="decoder"):
            decoder_from_json({"type": "Nope"})
        with pytest.raises(TokvizFormatError):
            decoder_from_json({"type": "Replace", "pattern": {"Bad": 1}, "content": " "})


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=30))
def test_byte_level_roundtrip(text: str) -> None:
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return
    proxies = [text_to_proxy(c) for c in text]
    assert ByteLevel().decode(proxies) == text
