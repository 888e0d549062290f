"""Normalized text aligned to the original, and offset conversion between units.

`NormalizedText` is the value every normalizer and pre-tokenizer takes and returns. It is the
pure-Python counterpart of HF tokenizers' ``NormalizedString``: the current (normalized) text,
plus, for every normalized character, the span of the *original* text it came from. Unlike HF we
keep alignments per character (not per UTF-8 byte) and in absolute code-point coordinates of the
whole original text, so a slice needs no re-basing. The semantics of insertions, removals and
slicing reproduce HF exactly (see `NormalizedText.transform_range`), because token offsets are
computed from these alignments and must equal HF's ``return_offsets_mapping``.

`OffsetMap` is the one place where code points, UTF-8 bytes and UTF-16 units (Qt text
positions) are converted into each other. Nothing else in tokviz does index arithmetic between
units.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from operator import itemgetter

from . import kernels

__all__ = ["NormalizedText", "OffsetMap", "check_text", "make_text", "pick", "split_piece"]


# bytes.translate tables over UTF-8: 1 for a lead byte (or ASCII), 0 for a continuation byte;
# and UTF-16 units per character, counted at its lead byte
LEAD_BYTES = bytes(0 if 0x80 <= b <= 0xBF else 1 for b in range(256))
_TABLE_BLOCK = 1 << 16
_UTF16_UNITS = bytes(0 if 0x80 <= b <= 0xBF else 2 if b >= 0xF0 else 1 for b in range(256))


def _arr(values: Iterable[int] = ()) -> array:
    return array("q", values)


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """A (piece of) text after normalization, aligned to the original text.

    ``starts[i]``/``ends[i]`` give the span of ``original`` (code points, absolute) that
    normalized character ``text[i]`` came from. When both are ``None`` the alignment is the
    identity: ``text[i]`` came from ``original[orig_start + i]``. ``orig_start``/``orig_end``
    give the span of the original text this piece covers (HF's ``offsets_original``).

    >>> nt = NormalizedText.identity("Hello")
    >>> nt.original_span(1, 3)
    (1, 3)
    >>> up = nt.transform_range(0, 1, [("h", 0)])
    >>> up.text, up.original_span(0, 2)
    ('hello', (0, 2))
    """

    original: str
    text: str
    orig_start: int
    orig_end: int
    starts: Sequence[int] | None = field(default=None, repr=False, compare=False)
    ends: Sequence[int] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def identity(cls, original: str, start: int = 0, end: int | None = None) -> NormalizedText:
        """The unnormalized view of ``original[start:end]``."""
        end = len(original) if end is None else end
        return cls(original, original[start:end], start, end)

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self.text)

    @property
    def is_identity(self) -> bool:
        return self.starts is None

    def align(self, i: int) -> tuple[int, int]:
        """Original span of normalized character ``i``."""
        if self.starts is None:
            return (self.orig_start + i, self.orig_start + i + 1)
        return (self.starts[i], self.ends[i])  # type: ignore[index]

    def alignments(self) -> list[tuple[int, int]]:
        """Every normalized character's original span (materialized; O(n))."""
        if self.starts is None:
            s = self.orig_start
            return [(s + i, s + i + 1) for i in range(len(self.text))]
        return list(zip(self.starts, self.ends))  # type: ignore[arg-type]

    def _arrays(self) -> tuple[array, array]:
        if self.starts is None:
            s = self.orig_start
            n = len(self.text)
            return _arr(range(s, s + n)), _arr(range(s + 1, s + n + 1))
        return _arr(self.starts), _arr(self.ends)  # type: ignore[arg-type]

    @property
    def original_text(self) -> str:
        return self.original[self.orig_start : self.orig_end]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map the normalized range ``[start, end)`` to an absolute original span.

        Mirrors HF ``convert_offsets(Range::Normalized)`` followed by the shift HF applies in
        ``into_encoding``: an empty range is returned unchanged, *relative* to this piece's
        original start (HF quirk kept on purpose), an empty text maps to its whole original.
        """
        if start == end:
            if not self.text and start == 0:
                return (self.orig_start, self.orig_end)
            return (self.orig_start + start, self.orig_start + end)
        if self.starts is None:
            return (self.orig_start + start, self.orig_start + end)
        return (self.starts[start], self.ends[end - 1])  # type: ignore[index]

    def normalized_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Map an absolute original span to a normalized range (HF ``Range::Original``)."""
        rs, re_ = start - self.orig_start, end - self.orig_start
        if rs == re_:
            return (rs, re_)
        if rs > re_:
            return None
        if self.starts is None:
            n = len(self.text)
            return (max(0, min(rs, n)), max(0, min(re_, n)))
        s_idx: int | None = None
        e_idx: int | None = None
        for i, (a, b) in enumerate(zip(self.starts, self.ends)):  # type: ignore[arg-type]
            if end < b:
                break
            if s_idx is None and start <= a and a != b:
                s_idx = i
            e_idx = i + 1
        if s_idx is not None and e_idx is not None:
            return (s_idx, e_idx)
        if s_idx is not None:
            return (s_idx, s_idx)
        if e_idx is not None:
            return (e_idx, e_idx)
        return None

    # ------------------------------------------------------------------ slicing
    def slice(self, start: int, end: int) -> NormalizedText:
        """The sub-piece ``text[start:end]`` with its alignments (HF ``slice(Range::Normalized)``)."""
        if start == 0 and end == len(self.text):
            return self
        o_start, o_end = self.original_span(start, end)
        if self.starts is None:
            return NormalizedText(self.original, self.text[start:end], o_start, o_end)
        return NormalizedText(
            self.original,
            self.text[start:end],
            o_start,
            o_end,
            self.starts[start:end],
            self.ends[start:end],  # type: ignore[index]
        )

    # ------------------------------------------------------------------ transformation
    def transform_range(
        self,
        start: int,
        end: int,
        changes: Iterable[tuple[str, int]],
        initial_offset: int = 0,
    ) -> NormalizedText:
        """Replace normalized characters ``[start, end)`` by ``changes``; HF ``transform_range``.

        ``changes`` yields ``(char, change)``: ``0`` replaces the next old character, ``1`` is an
        insertion, ``-n`` replaces the next old character and removes the ``n`` after it.
        ``initial_offset`` old characters are removed before the first new one.

        Alignment rules, exactly HF's: a replacing character takes the span of the old character
        it replaces; an inserted character takes the span of the old character just before the
        current position (or the empty span at the piece's original start if there is none).
        """
        old_starts, old_ends = self._arrays()
        pos = start + initial_offset  # index into the old normalized text
        new_chars: list[str] = []
        new_starts = _arr()
        new_ends = _arr()
        for ch, change in changes:
            if change > 0:
                if pos < 1:
                    a, b = self.orig_start, self.orig_start
                else:
                    a, b = old_starts[pos - 1], old_ends[pos - 1]
            else:
                a, b = old_starts[pos], old_ends[pos]
                pos += 1
                if change < 0:
                    pos -= change
            new_chars.append(ch)
            new_starts.append(a)
            new_ends.append(b)
        if pos > end:
            raise ValueError(f"transform_range consumed past its range ({pos} > {end})")
        text = self.text[:start] + "".join(new_chars) + self.text[end:]
        starts = old_starts[:start] + new_starts + old_starts[end:]
        ends = old_ends[:start] + new_ends + old_ends[end:]
        return NormalizedText(self.original, text, self.orig_start, self.orig_end, starts, ends)

    def transform(self, changes: Iterable[tuple[str, int]], initial_offset: int = 0) -> NormalizedText:
        """`transform_range` over the whole text."""
        return self.transform_range(0, len(self.text), changes, initial_offset)

    def map_chars(self, fn) -> NormalizedText:  # noqa: ANN001 - fn: Callable[[str], str] 1:1
        """Replace each character by ``fn(char)`` (one character each; alignments unchanged)."""
        text = "".join(fn(c) for c in self.text)
        if len(text) != len(self.text):
            raise ValueError("map_chars: fn must return exactly one character per character")
        return NormalizedText(self.original, text, self.orig_start, self.orig_end, self.starts, self.ends)

    def with_text(self, text: str) -> NormalizedText:
        """Same alignment, new text of the same length (a 1:1 character substitution)."""
        if len(text) != len(self.text):
            raise ValueError("with_text: length must not change")
        return NormalizedText(self.original, text, self.orig_start, self.orig_end, self.starts, self.ends)

    def filter_chars(self, keep) -> NormalizedText:  # noqa: ANN001 - keep: Callable[[str], bool]
        """Drop characters for which ``keep(char)`` is false (HF ``filter``)."""
        if all(keep(c) for c in self.text):
            return self
        # HF filter: a removed char is folded into the previous kept char (change -n); removed
        # chars before the first kept char become the initial_offset.
        out: list[tuple[str, int]] = []
        removed = 0
        initial = 0
        for c in self.text:
            if keep(c):
                if out:
                    prev_c, _ = out[-1]
                    out[-1] = (prev_c, -removed)
                else:
                    initial = removed
                out.append((c, 0))
                removed = 0
            else:
                removed += 1
        if out:
            prev_c, _ = out[-1]
            out[-1] = (prev_c, -removed)
        else:
            initial = removed
        return self.transform(out, initial)

    def prepend(self, s: str) -> NormalizedText:
        """HF ``prepend``: every prepended char is aligned with the first character."""
        if not self.text or not s:
            return self
        first = self.text[0]
        changes = [(c, 0 if i == 0 else 1) for i, c in enumerate(s)] + [(first, 1)]
        return self.transform_range(0, 1, changes)

    def append(self, s: str) -> NormalizedText:
        """HF ``append``: every appended char is aligned with the last character."""
        if not self.text or not s:
            return self
        n = len(self.text)
        last = self.text[-1]
        return self.transform_range(n - 1, n, [(last, 0)] + [(c, 1) for c in s])

    @staticmethod
    def concat(pieces: Sequence[NormalizedText]) -> NormalizedText:
        """Join pieces of the same original into one (for the whole-text normalized stage)."""
        if not pieces:
            raise ValueError("concat needs at least one piece")
        first, last = pieces[0], pieces[-1]
        if all(p.starts is None for p in pieces) and all(
            a.orig_end == b.orig_start and len(a.text) == a.orig_end - a.orig_start
            for a, b in zip(pieces, pieces[1:])
        ):
            return NormalizedText(
                first.original, "".join(p.text for p in pieces), first.orig_start, last.orig_end
            )
        starts, ends = _arr(), _arr()
        for p in pieces:
            s, e = p._arrays()
            starts += s
            ends += e
        return NormalizedText(
            first.original, "".join(p.text for p in pieces), first.orig_start, last.orig_end, starts, ends
        )


_new_object = object.__new__
_set_original = NormalizedText.original.__set__  # type: ignore[attr-defined]
_set_text = NormalizedText.text.__set__  # type: ignore[attr-defined]
_set_orig_start = NormalizedText.orig_start.__set__  # type: ignore[attr-defined]
_set_orig_end = NormalizedText.orig_end.__set__  # type: ignore[attr-defined]
_set_starts = NormalizedText.starts.__set__  # type: ignore[attr-defined]
_set_ends = NormalizedText.ends.__set__  # type: ignore[attr-defined]


def make_text(
    original: str,
    text: str,
    orig_start: int,
    orig_end: int,
    starts: Sequence[int] | None = None,
    ends: Sequence[int] | None = None,
    kind: type[NormalizedText] = NormalizedText,
) -> NormalizedText:
    """Build a `NormalizedText` without the frozen-dataclass ``__init__`` (cheaper).

    Same value as ``NormalizedText(original, text, orig_start, orig_end, starts, ends)``; for the
    pre-tokenizer hot loops that create one piece per chunk. No validation is done. ``kind``: a
    subclass without fields of its own (`SentencePieceText`) to build instead.
    """
    n = _new_object(kind)
    _set_original(n, original)
    _set_text(n, text)
    _set_orig_start(n, orig_start)
    _set_orig_end(n, orig_end)
    _set_starts(n, starts)
    _set_ends(n, ends)
    return n


def pick(values: Sequence[int], indices: Sequence[int]) -> Sequence[int]:
    """``[values[i] for i in indices]`` in one C call (``itemgetter`` of one index would give
    the bare value, of none an error)."""
    if len(indices) > 1:
        return itemgetter(*indices)(values)
    return [values[i] for i in indices]


def check_text(text: str, *, source: str = "text") -> None:
    """Reject text that cannot be UTF-8 encoded (lone surrogates) with a clear message."""
    if text.isascii():  # (a flag of the string: no pass over it)
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(
            f"{source} contains a lone surrogate U+{ord(bad):04X} at code point {exc.start}; "
            "it is not valid Unicode text and cannot be tokenized"
        ) from None


class OffsetMap:
    """Convert positions in one string between code points, UTF-8 bytes and UTF-16 units.

    All tokviz offsets are code points of the original text; use this at the edges (byte
    views, Qt text positions). Positions are *boundaries* (0..len inclusive).

    >>> m = OffsetMap("a😀b")
    >>> m.to_utf8(2), m.to_utf16(2), m.from_utf16(3), m.from_utf8(5)
    (5, 3, 2, 2)
    """

    __slots__ = ("text", "_ascii", "_u8", "_u16", "_bmp")

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._u8: array | None = None
        self._u16: array | None = None
        self._bmp: bool | None = None

    def _utf8_table(self) -> array:
        if self._u8 is None and kernels.native is not None:  # (one C pass, the GIL released)
            self._u8 = table = _arr()
            table.frombytes(kernels.native.utf8_positions(self.text))
        if self._u8 is None:
            # byte position of every character: the positions of the UTF-8 lead bytes (C-level
            # passes), then the total length
            data = self.text.encode("utf-8", "surrogatepass")
            leads = data.translate(LEAD_BYTES)
            table = _arr()
            for i in range(0, len(data), _TABLE_BLOCK):  # by blocks: a C call holds the GIL
                table.extend(compress(range(i, i + _TABLE_BLOCK), leads[i : i + _TABLE_BLOCK]))
            table.append(len(data))
            self._u8 = table
        return self._u8

    def _utf16_table(self) -> array | None:
        if self._bmp is None:
            self._bmp = self._ascii or max(self.text, default="\0") < "\U00010000"
        if self._bmp:
            return None
        if self._u16 is None:
            # UTF-16 units per character (2 above the BMP: a 4-byte UTF-8 lead), summed
            units = self.text.encode("utf-8", "surrogatepass").translate(_UTF16_UNITS).replace(b"\x00", b"")
            table = _arr([0])
            for i in range(0, len(units), _TABLE_BLOCK):  # by blocks: a C call holds the GIL
                sums = accumulate(units[i : i + _TABLE_BLOCK], initial=table[-1])
                next(sums)  # (the running total already in the table)
                table.extend(sums)
            self._u16 = table
        return self._u16

    @property
    def is_ascii(self) -> bool:
        """True when every position is the same in all three units."""
        return self._ascii

    def to_utf8(self, i: int) -> int:
        return i if self._ascii else self._utf8_table()[i]

    def utf8_table(self) -> Sequence[int]:
        """The byte position of every char boundary (0..len): ``to_utf8`` as a column."""
        return range(len(self.text) + 1) if self._ascii else self._utf8_table()

    def to_utf16(self, i: int) -> int:
        table = self._utf16_table()
        return i if table is None else table[i]

    def from_utf8(self, b: int) -> int:
        """Code point index of the character containing byte ``b`` (or the end)."""
        if self._ascii:
            return b
        table = self._utf8_table()
        return bisect_right(table, b) - 1

    def from_utf16(self, u: int) -> int:
        """Code point index of the character containing UTF-16 unit ``u`` (or the end)."""
        table = self._utf16_table()
        if table is None:
            return u
        return bisect_right(table, u) - 1

    def span_to_utf8(self, start: int, end: int) -> tuple[int, int]:
        return (self.to_utf8(start), self.to_utf8(end))

    def span_to_utf16(self, start: int, end: int) -> tuple[int, int]:
        return (self.to_utf16(start), self.to_utf16(end))


def split_piece(piece: NormalizedText, spans: Iterable[tuple[int, int]]) -> list[NormalizedText]:
    """The non-empty chunks ``piece.text[s:e]`` for ``spans`` (normalized ranges, in order): the
    chunk objects of a plan (`ChunkPlan.chunks`, the stage view; the encode reads the plan's
    columns instead). An unnormalized piece's chunks are built with `make_text` and no alignment
    arrays; otherwise the alignment is sliced as HF's ``slice(Range::Normalized)`` does. Empty
    chunks are dropped, as HF's ``PreTokenizedString::split`` drops them.

    >>> [(c.text, c.orig_start) for c in split_piece(NormalizedText.identity("ab cd"), [(0, 2), (2, 2), (3, 5)])]
    [('ab', 0), ('cd', 3)]
    """
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
