"""`ChunkPlan`: what each pre-tokenizer makes of a piece, and how a `Sequence` composes plans.

Hand-checkable cases; that the production encode over plans equals the reference path on every
pre-tokenizer type is `tests/engine/test_paths.py`.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings, strategies as st
from support import bundle_path

import tokviz
from tokviz.engine import reference
from tokviz.engine.encoding import PreToken
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.pretokenized import ChunkPlan, PreTokens, pre_token_spans
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


class TestPreTokens:
    """The stage view over plans: columns, single items and the materialized items agree."""

    def test_columns_items_and_slices_of_two_plans(self) -> None:
        # plan 1: "ab cd" cut at (0, 2), (3, 5); plan 2: the piece "é!" of original chars 6..8 under a
        # byte map: "é" is C3 A9 -> proxies "Ã©", "!" stays "!"
        p1 = ChunkPlan.from_spans(NormalizedText.identity("ab cd"), [(0, 2), (3, 5)])
        p2 = ChunkPlan.from_spans(NormalizedText.identity("ab cd é!", 6, 8), [(0, 1), (1, 2)], byte_map=True)
        want = [PreToken("ab", 0, 2), PreToken("cd", 3, 5), PreToken("Ã©", 6, 7), PreToken("!", 7, 8)]
        fresh = PreTokens([p1, p2])
        assert len(fresh) == 4
        assert [fresh[i] for i in range(4)] == want  # one by one, before any column exists
        assert fresh[-1] == want[-1] and fresh[1:3] == tuple(want[1:3]) and fresh[::-2] == tuple(want[::-2])
        assert list(fresh.starts) == [0, 3, 6, 7] and list(fresh.ends) == [2, 5, 7, 8]
        assert list(fresh.texts) == ["ab", "cd", "Ã©", "!"]
        assert list(fresh) == want and fresh == want and fresh[2] == want[2]
        assert pre_token_spans(fresh) == (fresh.starts, fresh.ends)
        assert pre_token_spans(want) == ([0, 3, 6, 7], [2, 5, 7, 8])

    def test_long_slices_come_from_the_columns(self) -> None:
        # 600 one-char chunks "a" at 0, 1, ...: a slice longer than a window is made from columns
        plan = ChunkPlan.from_spans(NormalizedText.identity("a" * 600), [(k, k + 1) for k in range(600)])
        fresh = PreTokens([plan])
        assert fresh[10:400] == tuple(PreToken("a", k, k + 1) for k in range(10, 400))
        assert fresh._texts is not None  # (the slice built the text column)

    def test_out_of_range(self) -> None:
        pts = PreTokens([ChunkPlan.from_spans(NormalizedText.identity("ab"), [(0, 2)])])
        with pytest.raises(IndexError):
            pts[1]
        with pytest.raises(IndexError):
            pts[-2]
        assert PreTokens([]) == () and len(PreTokens([])) == 0

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(["a", "b", " ", "é", "日", "\n", "😀", "!", "<|endoftext|>"]), max_size=30).map("".join))
    def test_encode_stage_columns_equal_the_reference(self, parts: str) -> None:
        # a byte-level rank file with a special token allowed (several plans per run): the
        # stage's items read one by one on a fresh encode, and its columns on another, equal the
        # reference path's pre-tokens
        tok = _r50k()
        ref = tuple(reference.encode(tok.pipeline, parts, allowed_special="all").stages.pre_tokens)
        pts = tok.encode(parts, allowed_special="all").stages.pre_tokens
        assert tuple(pts[i] for i in range(len(pts))) == ref and pts[1:-1] == ref[1:-1]
        fresh = tok.encode(parts, allowed_special="all").stages.pre_tokens
        assert (list(fresh.starts), list(fresh.ends), list(fresh.texts)) == (
            [c.start for c in ref], [c.end for c in ref], [c.text for c in ref])


@cache
def _r50k():  # noqa: ANN202
    return tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
