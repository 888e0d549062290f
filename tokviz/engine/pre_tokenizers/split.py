"""The ``Split`` pre-tokenizer (a string or regex pattern, five behaviours, invert) and the
slicing helper every splitting pre-tokenizer shares.

The slicing helper, `split_piece`, lives in `tokviz.engine.text` (re-exported here).

`Split.plan` takes the chunk columns of `isolated_chunks` for Isolated, and of `tiling_chunks`
for tiktoken's Removed-inverted split when the matches tile the piece (then they are the pieces
it keeps): the native scanner of a published pattern, else one C-level ``findall``.
"""

from __future__ import annotations

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
from ..text import NormalizedText, split_piece
from . import PreTokenizer

__all__ = ["Split", "split_piece", "behavior_from_json"]


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
