"""Character-class splitters: ``Punctuation``, ``Digits``, ``BertPreTokenizer``, ``UnicodeScripts``.

Character classes are HF's, not Python's (see `tokviz.engine.unicode_tables`): punctuation is
ASCII punctuation or P* in Unicode 8.0, digits are Rust ``char::is_numeric`` (Nd, Nl, No),
whitespace is Rust ``char::is_whitespace``.
"""

from __future__ import annotations

import re
from collections.abc import Container
from functools import lru_cache
from itertools import accumulate, compress
from operator import itemgetter
from typing import Any

from ..fields import Fields
from ..patterns import split_spans
from ..unicode_tables import NUMERIC, PUNCTUATION, WHITE_SPACE, script_of
from . import PreTokenizer
from .split import behavior_from_json

__all__ = ["Punctuation", "Digits", "BertPreTokenizer", "UnicodeScripts", "is_punctuation", "is_numeric", "char_matches"]


def is_punctuation(c: str) -> bool:
    return c in PUNCTUATION


def is_numeric(c: str) -> bool:
    return c in NUMERIC


@lru_cache(maxsize=512)
def _cut_regex(chars: frozenset[str]) -> re.Pattern[str]:
    cls = "".join(re.escape(c) for c in sorted(chars))
    return re.compile(f"([{cls}])|[^{cls}]+")


def char_matches(text: str, members: Container[str]) -> list[tuple[int, int, bool]]:
    """HF ``find_matches`` for a per-character predicate (membership in ``members``): each member
    character is a match, the runs between are non-matches. Only the characters present in the
    text go into the regex (a class of thousands of ranges would cost microseconds per char)."""
    if not text:
        return [(0, 0, False)]
    present = frozenset(c for c in set(text) if c in members)
    if not present:
        return [(0, len(text), False)]
    return [(m.start(), m.end(), m.start(1) >= 0) for m in _cut_regex(present).finditer(text)]


@lru_cache(maxsize=512)
def _bert_regex(punct: frozenset[str], space: frozenset[str]) -> re.Pattern[str]:
    """Punctuation chars one by one, runs of other non-space chars, and runs of space chars
    (the three tile the text)."""
    p = "".join(re.escape(c) for c in sorted(punct))
    ps = "".join(re.escape(c) for c in sorted(punct | space))
    alternatives = [f"[{p}]"] if p else []
    alternatives.append(f"[^{ps}]+")
    if space:
        alternatives.append("[" + "".join(re.escape(c) for c in sorted(space)) + "]+")
    return re.compile("|".join(alternatives))


class Punctuation(PreTokenizer):
    """HF ``Punctuation``: every punctuation character is a delimiter (default: Isolated).

    >>> Punctuation().pre_tokenize_str("Hey, you!")
    [('Hey', (0, 3)), (',', (3, 4)), (' you', (4, 8)), ('!', (8, 9))]
    """

    type_name = "Punctuation"

    def __init__(self, *, behavior: str = "Isolated") -> None:
        self.behavior = behavior_from_json({"behavior": behavior})

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        return split_spans(char_matches(text, PUNCTUATION), self.behavior)

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

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        return split_spans(char_matches(text, NUMERIC), "Isolated" if self.individual_digits else "Contiguous")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Digits:
        return cls(individual_digits=Fields(obj).bool("individual_digits"))

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
    whole_is_piece = True  # nothing to cut: HF keeps the piece as it is

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        """Whitespace-Removed then punctuation-Isolated, in one pass: the chunks are the single
        punctuation characters and the runs of everything else that is not whitespace. One
        C-level ``findall`` cuts the text into those and the whitespace runs (which tile it),
        positions are running sums, and the whitespace runs are dropped."""
        if not text:
            return []
        chars = set(text)
        punct = frozenset(c for c in chars if c in PUNCTUATION)
        space = frozenset(c for c in chars if c in WHITE_SPACE)
        if not punct and not space:
            return [(0, len(text))]
        parts = _bert_regex(punct, space).findall(text)
        ends = list(accumulate(map(len, parts)))
        spans = zip([0, *ends], ends)
        if not space:
            return list(spans)
        return list(compress(spans, map(space.isdisjoint, map(itemgetter(0), parts))))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BertPreTokenizer:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertPreTokenizer"}

    def __repr__(self) -> str:
        return "BertPreTokenizer()"


_SCRIPT_BASE = 0xE000  # private-use stand-ins for script ids in the translated text
_ANY = "A"
_SCRIPT_RUNS = re.compile(r"([^A])(?:\1|A)*")


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

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        # Map every character to a stand-in for its script (one str.translate over the
        # distinct characters' table), then each chunk is a run of one script followed by
        # any "Any" characters: ([^A])(?:\1|A)* — leading Any characters match nothing.
        table = {}
        for c in set(text):
            k = script_of(c)
            table[ord(c)] = _ANY if k < 0 else chr(_SCRIPT_BASE + k)
        spans = [m.span() for m in _SCRIPT_RUNS.finditer(text.translate(table))]
        if spans:
            # the last chunk always runs to the end of the piece (HF pushes len as a cut)
            spans[-1] = (spans[-1][0], len(text))
        return spans

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> UnicodeScripts:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "UnicodeScripts"}

    def __repr__(self) -> str:
        return "UnicodeScripts()"
