"""Simple normalizers: Lowercase, Strip, StripAccents, Replace, Prepend, and Sequence.

Each reproduces the alignment HF's ``NormalizedString`` gives (see `NormalizedText`), but works
by splicing only the changed regions instead of re-running a per-character transform over the
whole text. Two facts of HF's transform make that possible:

* a *filter* (removing characters) leaves every kept character with its own alignment;
* a character replaced 1:1 keeps its alignment; an inserted one copies the alignment of the
  character consumed just before it.

`splice` is the shared builder (BertNormalizer uses it too).
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Sequence as SequenceABC
from typing import Any

import regex

from ..errors import TokvizFormatError
from ..fields import Fields
from ..patterns import HFRegex, compile_pattern, find_matches, pattern_from_json, pattern_to_json
from ..text import NormalizedText, make_text
from ..unicode_tables import COMBINING_MARK, LOWERCASE_EXTRA, WHITE_SPACE, class_runs
from . import Normalizer, normalizer_from_json

__all__ = [
    "Lowercase",
    "Strip",
    "StripAccents",
    "Replace",
    "Prepend",
    "Sequence",
    "splice",
    "old_alignment",
    "remove_chars",
    "lowercase",
    "extend_alignment",
]

_WS = "".join(sorted(WHITE_SPACE))


def old_alignment(nt: NormalizedText) -> tuple[SequenceABC[int], SequenceABC[int]]:
    """Per-character original starts/ends of ``nt`` (ranges for an unnormalized piece)."""
    if nt.starts is None:
        o = nt.orig_start
        n = len(nt.text)
        return range(o, o + n), range(o + 1, o + n + 1)
    return nt.starts, nt.ends  # type: ignore[return-value]


_IOTA_CAP = 1 << 22  # cached 0..n-1 up to 4M entries (32 MB)
_iota = array("q")


def extend_alignment(arr: array, seq: SequenceABC[int]) -> None:
    """``arr.extend(seq)``, at C speed when ``seq`` is a ``range`` (an unnormalized alignment)."""
    global _iota
    if type(seq) is range and seq.step == 1 and 0 <= seq.start and seq.stop <= _IOTA_CAP:
        if seq.stop > len(_iota):
            size = min(_IOTA_CAP, max(seq.stop + 1024, 2 * len(_iota)))
            if size >= 100_000:  # array(range) costs ~60 ns an entry; numpy writes the bytes
                import numpy as np

                _iota = array("q")
                _iota.frombytes(np.arange(size, dtype=np.int64).tobytes())
            else:
                _iota = array("q", range(size))
        arr.extend(_iota[seq.start : seq.stop])
    else:
        arr.extend(seq)


def splice(
    nt: NormalizedText,
    edits: list[tuple[int, int, str, SequenceABC[int], SequenceABC[int]]],
) -> NormalizedText:
    """Replace normalized ranges ``[a, b)`` by new text with the given alignments.

    ``edits`` are ``(a, b, new_text, new_starts, new_ends)``, sorted and non-overlapping.
    """
    if not edits:
        return nt
    s = nt.text
    old_starts, old_ends = old_alignment(nt)
    parts: list[str] = []
    starts = array("q")
    ends = array("q")
    prev = 0
    for a, b, new, ns, ne in edits:
        if prev < a:
            parts.append(s[prev:a])
            extend_alignment(starts, old_starts[prev:a])
            extend_alignment(ends, old_ends[prev:a])
        parts.append(new)
        starts.extend(ns)
        ends.extend(ne)
        prev = b
    if prev < len(s):
        parts.append(s[prev:])
        extend_alignment(starts, old_starts[prev:])
        extend_alignment(ends, old_ends[prev:])
    return NormalizedText(nt.original, "".join(parts), nt.orig_start, nt.orig_end, starts, ends)


def remove_chars(nt: NormalizedText, members: Container[str]) -> NormalizedText:
    """HF ``filter``: drop every character in ``members``; kept characters keep their alignment."""
    return splice(nt, [(a, b, "", (), ()) for a, b in class_runs(nt.text, members)])


_EXTRA_LOWER = regex.compile("[" + "".join(f"\\U{ord(c):08x}" for c in LOWERCASE_EXTRA) + "]")
_lower_cache: dict[str, str] = {}


def _lower_char(c: str) -> str:
    # Rust char::to_lowercase, one character at a time: no final-sigma context (Python's
    # str.lower would give 'ς' at the end of a word; HF gives 'σ').
    r = _lower_cache.get(c)
    if r is None:
        r = _lower_cache[c] = LOWERCASE_EXTRA.get(c) or c.lower()
    return r


def lowercase(nt: NormalizedText) -> NormalizedText:
    """HF ``NormalizedString::lowercase``."""
    s = nt.text
    if s.isascii():
        low = s.lower()
        return nt if low == s else nt.with_text(low)
    if s.lower() == s and _EXTRA_LOWER.search(s) is None:
        return nt
    single: dict[int, str] = {}
    multi: dict[str, str] = {}
    for c in set(s):
        lc = _lower_char(c)
        if lc != c:
            if len(lc) == 1:
                single[ord(c)] = lc
            else:
                multi[c] = lc
    if single:
        nt = nt.with_text(s.translate(single))
    if not multi:
        return nt
    # a character lowering to several (U+0130 -> "i̇"): the first replaces it, the rest are
    # inserted after it; all share its alignment
    old_starts, old_ends = old_alignment(nt)
    edits = []
    for i, c in enumerate(nt.text):
        lc = multi.get(c)
        if lc is not None:
            edits.append((i, i + 1, lc, [old_starts[i]] * len(lc), [old_ends[i]] * len(lc)))
    return splice(nt, edits)


class _Simple(Normalizer):
    """A normalizer without options."""

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Normalizer:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name}

    def __repr__(self) -> str:
        return f"{self.type_name}()"


class Lowercase(_Simple):
    """Lowercase every character (Rust ``to_lowercase``, per character).

    >>> Lowercase().normalize_str("ΟΔΟΣ İ")
    'οδοσ i̇'
    """

    type_name = "Lowercase"

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return lowercase(text)


class StripAccents(_Simple):
    """Remove combining marks (Mn, Mc, Me in Unicode 9.0). Usually after NFD.

    >>> StripAccents().normalize_str("e\u0301")
    'e'
    """

    type_name = "StripAccents"

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if text.text.isascii():
            return text
        return remove_chars(text, COMBINING_MARK)


class Strip(Normalizer):
    """Remove leading and/or trailing whitespace (HF ``Strip``).

    >>> Strip(left=True, right=True).normalize_str("  hi  ")
    'hi'
    """

    type_name = "Strip"

    def __init__(self, *, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    def normalize(self, text: NormalizedText) -> NormalizedText:
        s = text.text
        count = len(s)
        leading = count - len(s.lstrip(_WS)) if self.left else 0
        trailing = count - len(s.rstrip(_WS)) if self.right else 0
        if leading == 0 and trailing == 0:
            return text
        if leading >= count or trailing >= count:
            return make_text(text.original, "", text.orig_start, text.orig_end, array("q"), array("q"))
        # Kept characters keep their alignment. (HF marks the character that swallows the
        # trailing whitespace by comparing a *char* index with the *byte* length; the byte length
        # is never smaller, so for non-ASCII text no character is marked, and the trailing
        # whitespace disappears with the replaced range either way: same alignment.)
        return splice(text, [(0, leading, "", (), ()), (count - trailing, count, "", (), ())])

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Strip:
        f = Fields(obj)
        return cls(left=f.bool("strip_left", True), right=f.bool("strip_right", True))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}

    def __repr__(self) -> str:
        return f"Strip(left={self.left}, right={self.right})"


def replace_matches(nt: NormalizedText, compiled: HFRegex, content: str) -> NormalizedText:
    """HF ``NormalizedString::replace``: every match becomes ``content``.

    Each content character is an insertion after the removed match, so it copies the alignment
    of the match's *last* character (for an empty match: of the character before it, or the
    empty span at the piece start).
    """
    s = nt.text
    matches = [(a, b) for a, b, m in find_matches(compiled, s) if m]
    if not matches:
        return nt
    if len(content) == 1 and all(b - a == 1 for a, b in matches):
        # 1:1 substitution: every content char takes the alignment of the char it replaces
        chars = list(s)
        for a, _ in matches:
            chars[a] = content
        return nt.with_text("".join(chars))
    old_starts, old_ends = old_alignment(nt)
    n = len(content)
    edits = []
    for a, b in matches:
        if b > a:
            sa, sb = old_starts[b - 1], old_ends[b - 1]
        elif a > 0:
            sa, sb = old_starts[a - 1], old_ends[a - 1]
        else:
            sa = sb = nt.orig_start
        edits.append((a, b, content, [sa] * n, [sb] * n))
    return splice(nt, edits)


class Replace(Normalizer):
    """Replace a string or regex pattern by ``content`` (HF ``Replace``).

    >>> Replace(pattern=" ", content="▁").normalize_str("a b")
    'a▁b'
    """

    type_name = "Replace"

    def __init__(self, *, pattern: str, content: str, is_regex: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.is_regex = is_regex
        self._compiled = compile_pattern(pattern, literal=not is_regex)
        self._literal_char = pattern if (not is_regex and len(pattern) == 1 and len(content) == 1) else None

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if self._literal_char is not None:
            # the common case (SentencePiece-style " " -> "▁"): 1:1, alignment unchanged
            s = text.text
            if self._literal_char not in s:
                return text
            return text.with_text(s.replace(self._literal_char, self.content))
        return replace_matches(text, self._compiled, self.content)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Replace:
        pattern, is_regex = pattern_from_json(obj.get("pattern"))
        return cls(pattern=pattern, content=Fields(obj).str("content"), is_regex=is_regex)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Replace", "pattern": pattern_to_json(self.pattern, self.is_regex), "content": self.content}

    def __repr__(self) -> str:
        kind = "Regex" if self.is_regex else "String"
        return f"Replace({kind}={self.pattern!r}, content={self.content!r})"


def prepend(nt: NormalizedText, prefix: str) -> NormalizedText:
    """HF ``NormalizedString::prepend``: the prefix shares the first character's alignment."""
    if not nt.text or not prefix:
        return nt
    old_starts, old_ends = old_alignment(nt)
    n = len(prefix)
    return splice(nt, [(0, 0, prefix, [old_starts[0]] * n, [old_ends[0]] * n)])


class Prepend(Normalizer):
    """Put ``prepend`` in front of a non-empty text (HF ``Prepend``).

    >>> Prepend(prepend="▁").normalize_str("hi"), Prepend(prepend="▁").normalize_str("")
    ('▁hi', '')
    """

    type_name = "Prepend"

    def __init__(self, *, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return prepend(text, self.prepend)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Prepend:
        return cls(prepend=Fields(obj).str("prepend"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Prepend", "prepend": self.prepend}

    def __repr__(self) -> str:
        return f"Prepend({self.prepend!r})"


class Sequence(Normalizer):
    """Apply normalizers in order (HF ``Sequence``)."""

    type_name = "Sequence"

    def __init__(self, normalizers: list[Normalizer]) -> None:
        self.normalizers = list(normalizers)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        items = Fields(obj).list("normalizers")
        built = []
        for i, item in enumerate(items):
            n = normalizer_from_json(item, where=f"normalizers[{i}]")
            if n is None:
                raise TokvizFormatError("expected a normalizer object, got null", where=f"normalizers[{i}]")
            built.append(n)
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "normalizers": [n.to_json() for n in self.normalizers]}

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"
