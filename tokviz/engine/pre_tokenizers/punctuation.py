"""Character-class splitters: ``Punctuation``, ``Digits``, ``BertPreTokenizer``, ``UnicodeScripts``.

Character classes are HF's, not Python's (see `tokviz.engine.unicode_tables`): punctuation is
ASCII punctuation or P* in Unicode 8.0, digits are Rust ``char::is_numeric`` (Nd, Nl, No),
whitespace is Rust ``char::is_whitespace``.
"""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..patterns import char_class_regex, find_class_matches, split_spans
from ..text import NormalizedText
from ..unicode_tables import NUMERIC, PUNCTUATION, WHITE_SPACE, ranges_class, script_of
from . import PreTokenizer
from .split import behavior_from_json, split_piece

__all__ = ["Punctuation", "Digits", "BertPreTokenizer", "UnicodeScripts", "is_punctuation", "is_numeric", "split_on_chars"]


def is_punctuation(c: str) -> bool:
    return c in PUNCTUATION


def is_numeric(c: str) -> bool:
    return c in NUMERIC


_PUNCT_RE = char_class_regex(ranges_class(PUNCTUATION))
_NUMERIC_RE = char_class_regex(ranges_class(NUMERIC))
_SPACE_RE = char_class_regex("".join(f"\\U{ord(c):08x}" for c in sorted(WHITE_SPACE)))


def split_on_chars(pieces: list[NormalizedText], compiled, behavior: str) -> list[NormalizedText]:  # noqa: ANN001
    """HF ``split`` on a per-character predicate (given as a `char_class_regex`)."""
    out: list[NormalizedText] = []
    for piece in pieces:
        out += split_piece(piece, split_spans(find_class_matches(compiled, piece.text), behavior))
    return out


class Punctuation(PreTokenizer):
    """HF ``Punctuation``: every punctuation character is a delimiter (default: Isolated).

    >>> Punctuation().pre_tokenize_str("Hey, you!")
    [('Hey', (0, 3)), (',', (3, 4)), (' you', (4, 8)), ('!', (8, 9))]
    """

    type_name = "Punctuation"

    def __init__(self, *, behavior: str = "Isolated") -> None:
        self.behavior = behavior_from_json({"behavior": behavior})

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        return split_on_chars(pieces, _PUNCT_RE, self.behavior)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Punctuation:
        return cls(behavior=behavior_from_json(obj, default="Isolated"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Punctuation", "behavior": self.behavior}

    def __repr__(self) -> str:
        return f"Punctuation(behavior={self.behavior})"


class Digits(PreTokenizer):
    """HF ``Digits``: numeric characters apart from the rest, one by one or as runs.

    >>> Digits(individual_digits=False).pre_tokenize_str("a123b")
    [('a', (0, 1)), ('123', (1, 4)), ('b', (4, 5))]
    """

    type_name = "Digits"

    def __init__(self, *, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        return split_on_chars(pieces, _NUMERIC_RE, "Isolated" if self.individual_digits else "Contiguous")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Digits:
        value = obj.get("individual_digits")
        if not isinstance(value, bool):
            raise TokvizFormatError(f"Digits.individual_digits must be true or false, got {value!r}")
        return cls(individual_digits=value)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    def __repr__(self) -> str:
        return f"Digits(individual_digits={self.individual_digits})"


class BertPreTokenizer(PreTokenizer):
    """HF ``BertPreTokenizer``: drop whitespace, then isolate every punctuation character.

    >>> BertPreTokenizer().pre_tokenize_str("Hi, you!")
    [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
    """

    type_name = "BertPreTokenizer"

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        return split_on_chars(split_on_chars(pieces, _SPACE_RE, "Removed"), _PUNCT_RE, "Isolated")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BertPreTokenizer:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertPreTokenizer"}

    def __repr__(self) -> str:
        return "BertPreTokenizer()"


class UnicodeScripts(PreTokenizer):
    """HF ``UnicodeScripts``: a new chunk wherever the script changes.

    Scripts are HF's (SentencePiece's table; Hiragana, Katakana and ``ー`` count as Han). "Any"
    characters (the space, characters HF's table lacks) never start a chunk and do not change
    the current script. HF quirk kept: characters before the first non-Any character are dropped
    (" abc" gives one chunk "abc"; an all-space piece gives none).

    >>> UnicodeScripts().pre_tokenize_str("ab 日本 cd")
    [('ab ', (0, 3)), ('日本 ', (3, 6)), ('cd', (6, 8))]
    """

    type_name = "UnicodeScripts"

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        out: list[NormalizedText] = []
        for piece in pieces:
            cuts: list[int] = []
            last = None
            for i, c in enumerate(piece.text):
                script = script_of(c)
                if script < 0:
                    continue
                if script != last:
                    cuts.append(i)
                    last = script
            cuts.append(len(piece.text))
            out += split_piece(piece, list(zip(cuts, cuts[1:])))
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> UnicodeScripts:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "UnicodeScripts"}

    def __repr__(self) -> str:
        return "UnicodeScripts()"
