"""NormalizedText built by the pre-tokenizers' fast paths (`make_text`, lazy `Gathered` columns)
behaves exactly like one built with explicit alignment arrays."""

from __future__ import annotations

from array import array

from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
from tokviz.engine.text import NormalizedText, make_text


def _explicit(nt: NormalizedText) -> NormalizedText:
    starts = array("q", [a for a, _ in nt.alignments()])
    ends = array("q", [b for _, b in nt.alignments()])
    return NormalizedText(nt.original, nt.text, nt.orig_start, nt.orig_end, starts, ends)


class TestMakeText:
    def test_equals_constructor(self) -> None:
        assert make_text("abc", "b", 1, 2) == NormalizedText("abc", "b", 1, 2)
        assert make_text("abc", "b", 1, 2).is_identity


class TestGatheredChunk:
    def _chunk(self) -> NormalizedText:
        text = "xx héllo wörld"
        chunks = ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize([NormalizedText.identity(text, 3, 14)])
        (chunk,) = chunks
        return chunk

    def test_queries_match_explicit_arrays(self) -> None:
        lazy = self._chunk()
        explicit = _explicit(lazy)
        n = len(lazy.text)
        assert lazy.alignments() == explicit.alignments()
        for a in range(n):
            for b in range(a, n + 1):
                assert lazy.original_span(a, b) == explicit.original_span(a, b)
        assert lazy.normalized_span(4, 6) == explicit.normalized_span(4, 6)

    def test_slice_transform_concat(self) -> None:
        lazy = self._chunk()
        explicit = _explicit(lazy)
        assert lazy.slice(2, 7).alignments() == explicit.slice(2, 7).alignments()
        changes = [("Z", 0), ("Y", 1)]
        assert lazy.transform_range(1, 2, changes).alignments() == explicit.transform_range(1, 2, changes).alignments()
        joined = NormalizedText.concat([lazy.slice(0, 3), lazy.slice(3, len(lazy.text))])
        assert joined.alignments() == lazy.alignments()
