"""Post-processors: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence.

Hand-checked token layouts, then HF tokenizers built from the same tokenizer.json as the oracle
(ids, tokens, offsets with and without special tokens).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import require_module

from tokviz.engine.byte_alphabet import BYTE_TO_CHAR
from tokviz.engine.encoding import Encoding
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.processors import post_processor_from_json
from tokviz.engine.processors.byte_level import trim_offsets
from tokviz.engine.processors.template import BertProcessing, Piece, SpecialTokenSpec, TemplateProcessing
from tokviz.io.hf_json import load_hf_json


def _enc(tokens: list[str], offsets: list[tuple[int, int]]) -> Encoding:
    n = len(tokens)
    return Encoding.of_lists("", list(range(10, 10 + n)), tokens, offsets, list(offsets), [0] * n, [0] * n, list(range(n)))


def byte_level_json(post_processor: dict[str, Any] | None, *, add_prefix_space: bool = True) -> dict[str, Any]:
    vocab = {c: i for i, c in enumerate(BYTE_TO_CHAR)}
    merges = [["Ġ", "h"], ["Ġh", "i"], ["Ġ", "Ġ"]]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    specials = [("<s>", 300), ("</s>", 301), ("[CLS]", 302), ("[SEP]", 303)]
    for t, i in specials:
        vocab[t] = i
    return {
        "version": "1.0",
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for t, i in specials
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True, "use_regex": True},
        "post_processor": post_processor,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
    }


TEMPLATE = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [300], "tokens": ["<s>"]}, "</s>": {"id": "</s>", "ids": [301], "tokens": ["</s>"]}},
}
PROCESSORS = {
    "template": TEMPLATE,
    "bert": {"type": "BertProcessing", "sep": ["[SEP]", 303], "cls": ["[CLS]", 302]},
    "roberta": {"type": "RobertaProcessing", "sep": ["</s>", 301], "cls": ["<s>", 300], "trim_offsets": True, "add_prefix_space": True},
    "roberta-no-trim": {"type": "RobertaProcessing", "sep": ["</s>", 301], "cls": ["<s>", 300], "trim_offsets": False, "add_prefix_space": True},
    "byte-level-trim": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "byte-level-trim-no-prefix": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "sequence": {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "BertProcessing", "sep": ["[SEP]", 303], "cls": ["[CLS]", 302]},
    ]},
}
TEXTS = ["hi", " hi  there ", "  hi", "hi <s> hi", "", "   ", "é hi\n"]


class TestHfParity:
    @pytest.mark.parametrize("name", sorted(PROCESSORS))
    @pytest.mark.parametrize("text", TEXTS, ids=[repr(t) for t in TEXTS])
    @pytest.mark.parametrize("add_special", [True, False], ids=["special", "no-special"])
    def test_same_as_hf(self, name: str, text: str, add_special: bool) -> None:
        tokenizers = require_module("tokenizers")
        for prefix in (True, False):
            obj = byte_level_json(PROCESSORS[name], add_prefix_space=prefix)
            ours = load_hf_json(obj, source="t.json")
            ref = tokenizers.Tokenizer.from_str(json.dumps(obj))
            enc = ours.encode(text, add_special_tokens=add_special)
            r = ref.encode(text, add_special_tokens=add_special)
            assert (enc.ids, enc.tokens) == (r.ids, r.tokens)
            assert enc.offsets == [tuple(o) for o in r.offsets]
            assert enc.type_ids == r.type_ids
            # tokviz also flags special added tokens found in the text (HF flags only the
            # processor's own tokens): the views must show <s> typed by the user as special
            extracted = {i for i, (t, o) in enumerate(zip(enc.tokens, enc.offsets)) if t in ("<s>", "</s>") and o != (0, 0)}
            assert [m for i, m in enumerate(enc.special_tokens_mask) if i not in extracted] == [
                m for i, m in enumerate(r.special_tokens_mask) if i not in extracted
            ]
            assert all(enc.special_tokens_mask[i] == 1 for i in extracted)


class TestTemplateProcessing:
    def test_single_layout(self) -> None:
        tp = post_processor_from_json(TEMPLATE)
        out = tp.process(_enc(["a", "b"], [(0, 1), (1, 2)]))
        assert out.tokens == ["<s>", "a", "b", "</s>"]
        assert out.ids == [300, 10, 11, 301]
        assert out.offsets == [(0, 0), (0, 1), (1, 2), (0, 0)]
        assert out.special_tokens_mask == [1, 0, 0, 1]
        assert out.word_ids == [None, 0, 1, None]
        assert tp.added_tokens(False) == 2 and tp.added_tokens(True) == 0

    def test_pair_type_ids(self) -> None:
        tp = post_processor_from_json(TEMPLATE)
        out = tp.process(_enc(["a"], [(0, 1)]), _enc(["b"], [(0, 1)]))
        assert out.tokens == ["a", "b"] and out.type_ids == [0, 1]

    def test_no_special_tokens(self) -> None:
        tp = post_processor_from_json(TEMPLATE)
        assert tp.process(_enc(["a"], [(0, 1)]), add_special_tokens=False).tokens == ["a"]

    def test_string_pieces(self) -> None:
        tp = TemplateProcessing.from_json({"single": "[CLS] $A [SEP]", "special_tokens": {
            "[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}})
        assert tp.single == (Piece("SpecialToken", "[CLS]"), Piece("Sequence", "A"), Piece("SpecialToken", "[SEP]"))

    def test_missing_special_is_a_format_error(self) -> None:
        with pytest.raises(TokvizFormatError, match="missing"):
            TemplateProcessing(single=[Piece("SpecialToken", "<x>")], special_tokens={})

    def test_bad_piece_names_its_place(self) -> None:
        bad = dict(TEMPLATE, single=[{"Sequence": {"id": "A"}}, {"Nope": 1}])
        with pytest.raises(TokvizFormatError, match=r"single\[1\]"):
            post_processor_from_json(bad)


class TestBertProcessing:
    def test_pair(self) -> None:
        bp = BertProcessing(sep=("[SEP]", 2), cls=("[CLS]", 1))
        out = bp.process(_enc(["a"], [(0, 1)]), _enc(["b"], [(0, 1)]))
        assert out.tokens == ["[CLS]", "a", "[SEP]", "b", "[SEP]"]
        assert out.type_ids == [0, 0, 0, 1, 1]


class TestTrimOffsets:
    def test_leading_and_trailing_spaces(self) -> None:
        enc = _enc(["Ġhi", "ĠĠ", "x  "], [(0, 3), (3, 5), (5, 8)])
        assert trim_offsets(enc, add_prefix_space=False).offsets == [(1, 3), (5, 5), (5, 6)]

    def test_first_token_keeps_added_prefix_space(self) -> None:
        enc = _enc(["Ġhi"], [(0, 2)])
        assert trim_offsets(enc, add_prefix_space=True).offsets == [(0, 2)]

    def test_specials_untouched(self) -> None:
        sp = SpecialTokenSpec("<s>", (1,), ("<s>",))
        assert sp.ids == (1,)
