"""Whitespace-based splitters: ``Whitespace``, ``WhitespaceSplit``, ``CharDelimiterSplit``.

``Whitespace`` keeps runs of word characters and runs of other non-space characters
(``\\w+|[^\\w\\s]+``, Unicode ``\\w`` as in Rust's regex crate); ``WhitespaceSplit`` splits on
whitespace (Rust ``char::is_whitespace``) and drops it; ``CharDelimiterSplit`` splits on one
character and drops it.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..patterns import compile_pattern
from ..unicode_tables import WHITE_SPACE
from . import PreTokenizer

__all__ = ["Whitespace", "WhitespaceSplit", "CharDelimiterSplit"]

_WORDS = r"\w+|[^\w\s]+"


class Whitespace(PreTokenizer):
    """HF ``Whitespace``.

    >>> Whitespace().pre_tokenize_str("Hey man!! 42")
    [('Hey', (0, 3)), ('man', (4, 7)), ('!!', (7, 9)), ('42', (10, 12))]
    """

    type_name = "Whitespace"

    def __init__(self) -> None:
        self._compiled = compile_pattern(_WORDS)

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        # HF: Invert(regex) with Removed keeps exactly the regex matches (never empty here)
        return [m.span() for m in self._compiled.finditer(text)]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Whitespace:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "Whitespace"}

    def __repr__(self) -> str:
        return "Whitespace()"


class WhitespaceSplit(PreTokenizer):
    """HF ``WhitespaceSplit``: split on whitespace characters and drop them.

    >>> WhitespaceSplit().pre_tokenize_str("a  b\\u3000c")
    [('a', (0, 1)), ('b', (3, 4)), ('c', (5, 6))]
    """

    type_name = "WhitespaceSplit"

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        from ..patterns import split_spans
        from .punctuation import char_matches

        return [(s, e) for s, e in split_spans(char_matches(text, WHITE_SPACE), "Removed") if s != e]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> WhitespaceSplit:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "WhitespaceSplit"}

    def __repr__(self) -> str:
        return "WhitespaceSplit()"


class CharDelimiterSplit(PreTokenizer):
    """HF ``CharDelimiterSplit``: split on one character and drop it.

    >>> CharDelimiterSplit(delimiter="-").pre_tokenize_str("a-b--c")
    [('a', (0, 1)), ('b', (2, 3)), ('c', (5, 6))]
    """

    type_name = "CharDelimiterSplit"
    whole_is_piece = True  # a piece without the delimiter is kept as it is

    def __init__(self, *, delimiter: str) -> None:
        if len(delimiter) != 1:
            raise TokvizFormatError(f"CharDelimiterSplit.delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        d = self.delimiter
        if d not in text:
            return [(0, len(text))]
        ends = list(accumulate(map((1).__add__, map(len, text.split(d)))))
        return list(zip([0, *ends], map((-1).__add__, ends)))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CharDelimiterSplit:
        return cls(delimiter=Fields(obj).char("delimiter"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    def __repr__(self) -> str:
        return f"CharDelimiterSplit({self.delimiter!r})"
