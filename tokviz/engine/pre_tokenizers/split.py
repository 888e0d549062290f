"""The ``Split`` pre-tokenizer (a string or regex pattern, five behaviours, invert) and the
slicing helper every splitting pre-tokenizer shares.

`split_piece` makes the chunk objects of a plan (`ChunkPlan.chunks`, the stage view; the encode
reads the plan's columns instead): for an unnormalized piece it builds them directly with
`make_text` and no alignment arrays; otherwise it slices the alignment as HF's
``slice(Range::Normalized)`` does. Empty chunks are dropped, as HF's
``PreTokenizedString::split`` drops them.

`Split.plan` takes the chunk columns of `isolated_chunks` for Isolated, and of `tiling_chunks`
for tiktoken's Removed-inverted split when the matches tile the piece (then they are the pieces
it keeps): the native scanner of a published pattern, else one C-level ``findall``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import TokvizFormatError
from ..fields import REQUIRED, Fields
from ..patterns import (
    BEHAVIORS,
    compile_pattern,
    find_matches,
    isolated_chunks,
    isolated_spans,
    pattern_from_json,
    pattern_to_json,
    split_spans,
    tiling_chunks,
)
from ..pretokenized import ChunkPlan
from ..text import NormalizedText, make_text
from . import PreTokenizer

__all__ = ["Split", "split_piece", "behavior_from_json"]


def split_piece(piece: NormalizedText, spans: Iterable[tuple[int, int]]) -> list[NormalizedText]:
    """The non-empty chunks ``piece.text[s:e]`` for ``spans`` (normalized ranges, in order)."""
    text = piece.text
    if piece.starts is None:
        original = piece.original
        o = piece.orig_start
        return [make_text(original, text[s:e], o + s, o + e) for s, e in spans if s != e]
    starts = piece.starts
    ends = piece.ends
    original = piece.original
    out = []
    for s, e in spans:
        if s != e:
            # HF slice(Range::Normalized): the chunk's original span is the first char's start
            # to the last char's end.
            out.append(make_text(original, text[s:e], starts[s], ends[e - 1], starts[s:e], ends[s:e]))  # type: ignore[index]
    return out


def behavior_from_json(obj: dict[str, Any], *, default: str | None = None) -> str:
    return Fields(obj).choice("behavior", BEHAVIORS, REQUIRED if default is None else default)  # type: ignore[return-value]


class Split(PreTokenizer):
    """Split on a pattern (HF ``Split``): ``{"String": s}`` is literal, ``{"Regex": r}`` a regex.

    >>> Split(pattern="-", behavior="Isolated").pre_tokenize_str("a-b")
    [('a', (0, 1)), ('-', (1, 2)), ('b', (2, 3))]
    """

    type_name = "Split"

    def __init__(self, *, pattern: str, is_regex: bool = False, behavior: str = "Isolated", invert: bool = False) -> None:
        if behavior not in BEHAVIORS:
            raise TokvizFormatError(f"Split: behavior must be one of {', '.join(BEHAVIORS)}, got {behavior!r}")
        self.pattern = pattern
        self.is_regex = is_regex
        self.behavior = behavior
        self.invert = invert
        self._compiled = compile_pattern(pattern, literal=not is_regex)

    def plan(self, piece: NormalizedText) -> ChunkPlan:
        if self.behavior == "Isolated":  # (invert changes nothing for Isolated)
            return ChunkPlan.from_columns(piece, isolated_chunks(self._compiled, piece.text))
        if self.behavior == "Removed" and self.invert and piece.text:
            # tiling matches are the pieces it keeps (tiktoken's split: matches kept, no gaps)
            found = tiling_chunks(self._compiled, piece.text)
            if found is not None:
                return ChunkPlan.from_columns(piece, found)
        return ChunkPlan.from_spans(piece, self.chunk_spans(piece.text))

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        if self.behavior == "Isolated":  # invert changes nothing for Isolated
            return isolated_spans(self._compiled, text)
        matches = find_matches(self._compiled, text)
        if self.invert:
            matches = [(s, e, not m) for s, e, m in matches]
        return split_spans(matches, self.behavior)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Split:
        pattern, is_regex = pattern_from_json(obj.get("pattern"))
        invert = Fields(obj).bool("invert", False)
        return cls(pattern=pattern, is_regex=is_regex, behavior=behavior_from_json(obj), invert=invert)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Split",
            "pattern": pattern_to_json(self.pattern, self.is_regex),
            "behavior": self.behavior,
            "invert": self.invert,
        }

    def __repr__(self) -> str:
        kind = "Regex" if self.is_regex else "String"
        return f"Split({kind}={self.pattern!r}, behavior={self.behavior}, invert={self.invert})"
