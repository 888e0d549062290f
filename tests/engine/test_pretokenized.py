"""`ChunkPlan`: what each pre-tokenizer makes of a piece, and how a `Sequence` composes plans.

Hand-checkable cases; that the production encode over plans equals the reference path on every
pre-tokenizer type is `tests/engine/test_paths.py`.
"""

from __future__ import annotations

from tokviz.engine.encoding import PreToken
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.pretokenized import ChunkPlan
from tokviz.engine.text import NormalizedText

SPLIT_WORDS = {"type": "Split", "pattern": {"Regex": r" ?\w+|\s+|[^\w\s]+"}, "behavior": "Isolated", "invert": False}
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}


def plan_of(obj: dict, text: str) -> ChunkPlan:
    return pre_tokenizer_from_json(obj).plan(NormalizedText.identity(text))  # type: ignore[union-attr]


class TestChunkPlan:
    def test_cut_only_gives_spans(self) -> None:
        plan = plan_of({"type": "WhitespaceSplit"}, "ab  cd\te")
        assert plan.spans() == [(0, 2), (4, 6), (7, 8)]
        assert plan.texts == ["ab", "cd", "e"] and plan.fallback is None and not plan.byte_map

    def test_split_then_byte_level_composes_into_a_byte_map(self) -> None:
        # Qwen's / tiktoken's shape: the Split's chunks, the byte map as the chunk text map
        plan = plan_of({"type": "Sequence", "pretokenizers": [SPLIT_WORDS, BYTE_LEVEL]}, "hi é!")
        assert plan.fallback is None and plan.byte_map
        assert plan.texts == ["hi", " é", "!"] and plan.starts == [0, 2, 4]
        # the stage view maps the bytes: " é" is 20 C3 A9 -> Ġ Ã ©
        assert plan.pre_tokens() == [PreToken("hi", 0, 2), PreToken("ĠÃ©", 2, 4), PreToken("!", 4, 5)]

    def test_a_later_transform_falls_back_to_chunk_objects(self) -> None:
        # T5's shape: Metaspace transforms each chunk of WhitespaceSplit
        t5 = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Metaspace"}]}
        plan = plan_of(t5, "ab cd")
        assert plan.fallback is not None
        assert plan.texts == ["▁ab", "▁cd"]
        # the joined alignment: "▁ab" at 0..3 comes from original 0..2, "▁cd" from 3..5
        assert plan.orig_spans() == ([0, 3], [2, 5])

    def test_pre_tokenize_is_the_plan(self) -> None:
        pre = pre_tokenizer_from_json({"type": "Sequence", "pretokenizers": [SPLIT_WORDS, BYTE_LEVEL]})
        piece = NormalizedText.identity("日本 go")
        chunks = pre.pre_tokenize([piece])  # type: ignore[union-attr]
        plan = pre.plan(piece)  # type: ignore[union-attr]
        assert [(c.text, c.orig_start, c.orig_end) for c in chunks] == [(p.text, p.start, p.end) for p in plan.pre_tokens()]

    def test_whole_is_piece(self) -> None:
        # BertPreTokenizer keeps an uncut piece as it is (its own orig span), a cut one is sliced
        piece = NormalizedText("xaby", "ab", 0, 4, [1, 2], [2, 3])  # "x" and "y" were removed
        bert = pre_tokenizer_from_json({"type": "BertPreTokenizer"})
        assert [(c.orig_start, c.orig_end) for c in bert.plan(piece).chunks()] == [(0, 4)]  # type: ignore[union-attr]
        ws = pre_tokenizer_from_json({"type": "Whitespace"})
        assert [(c.orig_start, c.orig_end) for c in ws.plan(piece).chunks()] == [(1, 3)]  # type: ignore[union-attr]
