"""Incremental re-encoding for live typing: encode a window of lines around an edit and splice it.

An editor calls `reencode` after every keystroke. Instead of encoding the whole text again it runs
the same `Tokenizer.encode` on a window of whole lines around the edit and splices the result into
the previous `Encoding`. This is not an encode path of its own: every token it returns comes out of
`Tokenizer.encode` (of the window, or of the whole text); what it adds is the proof that the
window's tokens are the ones a full encode would give there. A window is used only when it
synchronises with the previous encoding at both ends: its first and last pre-token chunks, and
their tokens, equal the old ones at the same places. When they do not (a chunk grew across the
window edge, a normalizer changed the text ...) the window widens, and after `_MAX_TRIES` the whole
text is encoded and the changed tokens are found by comparing the two encodings (`diff_splice`).
Each refusal has a `Fallback` reason, returned in `Reencoded.fallbacks`.

The steps: `_window` (old coordinates, snapped to chunk boundaries), `_sync` (the edge chunks of
the window's encoding equal the old ones), `_token_range` (which old tokens the window replaces),
`_edge_tokens_match`, then `_splice` (the new `Encoding`, its `Stages`, and what changed).

Performance notes: the spliced `TokenColumns` are `Spliced` views (shifted on read) rather than
shifted copies, so a keystroke near the start of a long text does not rebuild its columns; views
are compacted once more than a couple of dozen pile up. Byte positions come from the encodings'
`OffsetMap` (an editor that keeps the map of the text it shows pays for it once per text).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Generic, TypeVar, overload

from .columns import NO_WORD, TokenColumns, int_column
from .encoding import Encoding, PreToken, Segment, Stages
from .text import NormalizedText

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer

__all__ = [
    "Edit",
    "Splice",
    "Fallback",
    "Reencoded",
    "Spliced",
    "diff_edit",
    "diff_splice",
    "reencode",
    "line_start",
    "line_end",
]

AllowedSpecial = str | set[str] | frozenset[str] | None
T = TypeVar("T")

_SYNC = 2  # chunks that must match at each window edge
_MAX_TRIES = 4  # windows tried (each with 4x the context lines, at least 1) before the whole text is encoded


@dataclass(frozen=True, slots=True)
class Edit:
    """A text change: old ``[start, old_end)`` became new ``[start, new_end)`` (code points)."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


@dataclass(frozen=True, slots=True)
class Splice:
    """Which tokens (and chunks) changed: ``removed`` old items at ``first`` became ``added`` new ones."""

    first: int
    removed: int
    added: int
    chunk_first: int
    chunk_removed: int
    chunk_added: int


class Fallback(Enum):
    """Why a window was refused (the next try widens it; after the last, the whole text is encoded)."""

    EMPTY_TEXT = "the old or the new text is empty"
    MODEL_INPUTS = "the tokenizer truncates or pads: the encoding is not the text's tokens alone"
    NORMALIZED = "the normalizer changed the text (or no stages were kept): offsets cannot be shifted"
    NO_HEAD_CHUNK = "no whole chunk between the window start and the edit to synchronise on"
    HEAD_CHUNK_CHANGED = "a chunk at the window start came out different"
    NO_TAIL_CHUNKS = "the window has fewer chunks than the old tail it must match"
    TAIL_TOUCHES_EDIT = "a chunk at the window end starts inside the edit"
    TAIL_CHUNK_CHANGED = "a chunk at the window end came out different"
    TOKEN_CROSSES_START = "an old token crosses the window start"
    TOKEN_CROSSES_END = "an old token crosses the window end"
    ADDED_TOKENS = "the window's encoding starts or ends with tokens that cover no text"
    EDGE_TOKENS_CHANGED = "the tokens of the synchronised edge chunks differ"


@dataclass(frozen=True, slots=True)
class Reencoded:
    """The result of `reencode`: the new encoding, what changed, and why windows were refused."""

    encoding: Encoding
    splice: Splice | None  # None: everything changed (nothing could be reused)
    fallbacks: tuple[Fallback, ...] = ()  # one per refused window, in order
    windowed: bool = False  # True: a window was spliced in; False: the whole text was encoded


# ---------------------------------------------------------------------------- the edit
def diff_edit(old: str, new: str) -> Edit:
    """The smallest single edit turning ``old`` into ``new``.

    >>> diff_edit("hello world", "hello, world")
    Edit(start=5, old_end=5, new_end=6)
    """
    p = _prefix_len(old, new, len(old))
    s = _suffix_len(old, new, min(len(old), len(new)) - p)
    return Edit(p, len(old) - s, len(new) - s)


def line_start(text: str, pos: int) -> int:
    """Start of the line holding ``pos`` (just after the previous newline).

    >>> line_start("ab\\ncd", 4)
    3
    """
    return text.rfind("\n", 0, max(pos, 0)) + 1


def line_end(text: str, pos: int) -> int:
    """End of the line holding ``pos``, its newline included (``len(text)`` on the last line).

    >>> line_end("ab\\ncd", 1)
    3
    """
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


# ---------------------------------------------------------------------------- entry point
def reencode(
    tokenizer: Tokenizer,
    old_text: str,
    old: Encoding,
    new_text: str,
    *,
    add_special_tokens: bool,
    allowed_special: AllowedSpecial = None,
    context_lines: int = 2,
) -> Reencoded:
    """Encode ``new_text`` reusing ``old`` (the encoding of ``old_text``) where it can.

    The result always equals ``tokenizer.encode(new_text, ...)``. When no window can be used the
    whole text is encoded and the splice is found by comparing the two encodings (`diff_splice`),
    so a view still redraws only what changed.
    """
    fallbacks: list[Fallback] = []
    edit = diff_edit(old_text, new_text)
    if not old_text or not new_text:
        fallbacks.append(Fallback.EMPTY_TEXT)
    elif tokenizer.truncation is not None or tokenizer.padding is not None:
        fallbacks.append(Fallback.MODEL_INPUTS)
    elif not _identity_stages(old.stages):
        fallbacks.append(Fallback.NORMALIZED)
    else:
        lines = context_lines
        for _ in range(_MAX_TRIES):
            result = _try_window(tokenizer, old_text, old, old.stages, new_text, edit, lines, allowed_special)
            if not isinstance(result, Fallback):
                new, splice = result
                return Reencoded(new, splice, tuple(fallbacks), windowed=True)
            fallbacks.append(result)
            if result is Fallback.NORMALIZED:
                break  # a wider window is normalized too
            lines = lines * 4 or 1
    new = tokenizer.encode(new_text, add_special_tokens=add_special_tokens, allowed_special=allowed_special)
    if not old_text or not new_text:
        return Reencoded(new, None, tuple(fallbacks))
    return Reencoded(new, diff_splice(old, new, edit), tuple(fallbacks))


def _identity_stages(stages: Stages | None) -> bool:
    return stages is not None and all(s.normalized.is_identity for s in stages.segments)


def _try_window(
    tokenizer: Tokenizer,
    old_text: str,
    old: Encoding,
    stages: Stages,
    new_text: str,
    edit: Edit,
    lines: int,
    allowed_special: AllowedSpecial,
) -> tuple[Encoding, Splice] | Fallback:
    chunks = stages.pre_tokens
    win = _window(old_text, chunks, edit, lines)
    window_text = new_text[win.start : win.end + edit.delta]
    w = tokenizer.encode(window_text, add_special_tokens=False, allowed_special=allowed_special)
    wstages = w.stages
    if wstages is None or not _identity_stages(wstages):
        return Fallback.NORMALIZED
    sync = _sync(chunks, win, wstages.pre_tokens, edit, len(old_text))
    if isinstance(sync, Fallback):
        return sync
    toks = _token_range(old, w, win)
    if isinstance(toks, Fallback):
        return toks
    if not _edge_tokens_match(old, toks, w, win, edit.delta, sync):
        return Fallback.EDGE_TOKENS_CHANGED
    return _splice(tokenizer, old, stages, new_text, w, wstages, win, toks, edit)


# ---------------------------------------------------------------------------- window
@dataclass(frozen=True, slots=True)
class _Window:
    """Old text ``[start, end)``, exactly the old chunks ``[c0, c1)`` (old coordinates)."""

    start: int
    end: int
    c0: int
    c1: int


class _Starts(Sequence[int]):
    """``starts[i] == chunks[i].start`` without building the list (bisect needs only indexing)."""

    __slots__ = ("_chunks",)

    def __init__(self, chunks: Sequence[PreToken]) -> None:
        self._chunks = chunks

    def __len__(self) -> int:
        return len(self._chunks)

    def __getitem__(self, i: int) -> int:  # type: ignore[override] - bisect indexes with ints only
        return self._chunks[i].start


def _chunk_at(starts: Sequence[int], pos: int) -> int:
    """The last chunk starting at or before ``pos`` (0 when none does)."""
    return max(bisect_right(starts, pos) - 1, 0)


def _window(old_text: str, chunks: Sequence[PreToken], edit: Edit, lines: int) -> _Window:
    """``lines`` whole lines before and after the edited lines, widened to old chunk boundaries
    so that `_SYNC` whole chunks lie between each window edge and the edit.

    The window always covers the edit: chunk starts are increasing, ``c0`` lies before the chunk
    holding ``edit.start`` and ``c1`` after the chunk holding ``edit.old_end - 1``.
    """
    ws = line_start(old_text, edit.start)
    for _ in range(lines):
        if ws == 0:
            break
        ws = line_start(old_text, ws - 1)
    we = line_end(old_text, edit.old_end)
    for _ in range(lines):
        if we >= len(old_text):
            break
        we = line_end(old_text, we)
    starts = _Starts(chunks)
    c0 = max(0, min(bisect_right(starts, ws) - 1, _chunk_at(starts, edit.start) - _SYNC))
    last_edited = _chunk_at(starts, max(edit.old_end - 1, edit.start))
    c1 = max(bisect_left(starts, we), min(len(chunks), last_edited + 1 + _SYNC))
    # The first window starts at 0 (not at chunk 0: an added token may precede it); the last ends
    # at the end of the text.
    ws = chunks[c0].start if c0 > 0 else 0
    we = chunks[c1].start if c1 < len(chunks) else len(old_text)
    return _Window(ws, we, c0, c1)


# ---------------------------------------------------------------------------- synchronisation
@dataclass(frozen=True, slots=True)
class _Sync:
    """Old tokens in ``[window.start, head_end)`` and ``[tail_start, window.end)`` (old
    coordinates) must come out of the window unchanged."""

    head_end: int
    tail_start: int


def _same_chunk(o: PreToken, n: PreToken, shift_old: int, shift_new: int) -> bool:
    return o.text == n.text and o.start + shift_old == n.start + shift_new and o.end + shift_old == n.end + shift_new


def _sync(
    chunks: Sequence[PreToken], win: _Window, wchunks: Sequence[PreToken], edit: Edit, old_len: int
) -> _Sync | Fallback:
    """The window's first `_SYNC` chunks before the edit, and its last `_SYNC` chunks, equal the
    old ones at the same places (window chunks are window-relative; the tail is shifted by the
    edit's length change)."""
    head_end = win.start
    if win.start > 0:
        matched = 0
        for oc, nc in zip(chunks[win.c0 : win.c0 + _SYNC], wchunks[:_SYNC]):
            if oc.end >= edit.start:
                break
            head_end = oc.end
            if not _same_chunk(oc, nc, 0, win.start):
                return Fallback.HEAD_CHUNK_CHANGED
            matched += 1
        if matched == 0:
            return Fallback.NO_HEAD_CHUNK
    tail_start = win.end
    if win.end < old_len:
        tail_old = chunks[max(win.c1 - _SYNC, 0) : win.c1]
        tail_new = wchunks[len(wchunks) - len(tail_old) :] if tail_old else ()
        if not tail_old or len(tail_new) != len(tail_old):
            return Fallback.NO_TAIL_CHUNKS
        tail_start = tail_old[0].start
        for oc, nc in zip(tail_old, tail_new):
            if oc.start <= edit.old_end:
                return Fallback.TAIL_TOUCHES_EDIT
            if not _same_chunk(oc, nc, edit.delta, win.start):
                return Fallback.TAIL_CHUNK_CHANGED
    return _Sync(head_end, tail_start)


# ---------------------------------------------------------------------------- tokens
@dataclass(frozen=True, slots=True)
class _Tokens:
    """Old tokens ``[first, stop)`` are replaced by the window's; ``[body_start, body_end)`` are
    the old tokens between those the post-processor added at both ends."""

    body_start: int
    body_end: int
    first: int
    stop: int


def _body_range(enc: Encoding) -> tuple[int, int]:
    """Tokens between those the post-processor added (special, covering no text) at both ends."""
    n = len(enc.ids)
    a = 0
    while a < n and enc.special_tokens_mask[a] and enc.offsets[a][0] == enc.offsets[a][1]:
        a += 1
    b = n
    while b > a and enc.special_tokens_mask[b - 1] and enc.offsets[b - 1][0] == enc.offsets[b - 1][1]:
        b -= 1
    return a, b


def _first_token_at(offs: Sequence[tuple[int, int]], lo: int, hi: int, pos: int) -> int:
    """The first token in ``[lo, hi)`` starting at or after ``pos`` (spans are ordered in the body)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if offs[mid][0] < pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _token_range(old: Encoding, w: Encoding, win: _Window) -> _Tokens | Fallback:
    ba, bb = _body_range(old)
    offs = old.offsets
    t0 = _first_token_at(offs, ba, bb, win.start)
    t1 = _first_token_at(offs, t0, bb, win.end)
    if t0 > ba and offs[t0 - 1][1] > win.start:
        return Fallback.TOKEN_CROSSES_START
    if t1 > t0 and offs[t1 - 1][1] > win.end:
        return Fallback.TOKEN_CROSSES_END
    if _body_range(w) != (0, len(w.ids)):
        return Fallback.ADDED_TOKENS
    return _Tokens(ba, bb, t0, t1)


def _edge_tokens_match(old: Encoding, toks: _Tokens, w: Encoding, win: _Window, delta: int, sync: _Sync) -> bool:
    """The old tokens of the synchronised edge chunks equal the window's first and last tokens."""
    n = len(w.ids)
    t0, t1, ws = toks.first, toks.stop, win.start
    i = 0
    while t0 + i < t1 and old.offsets[t0 + i][1] <= sync.head_end:
        if i >= n:
            return False
        s, e = w.offsets[i]
        if old.ids[t0 + i] != w.ids[i] or old.offsets[t0 + i] != (s + ws, e + ws):
            return False
        i += 1
    j = 1
    while t1 - j >= t0 and old.offsets[t1 - j][0] >= sync.tail_start:
        if n - j < i:
            return False
        s, e = w.offsets[n - j]
        if old.ids[t1 - j] != w.ids[n - j] or old.offsets[t1 - j] != (s + ws - delta, e + ws - delta):
            return False
        j += 1
    return True


# ---------------------------------------------------------------------------- the splice
def _splice(
    tokenizer: Tokenizer,
    old: Encoding,
    stages: Stages,
    new_text: str,
    w: Encoding,
    wstages: Stages,
    win: _Window,
    toks: _Tokens,
    edit: Edit,
) -> tuple[Encoding, Splice]:
    new_stages = _splice_stages(stages, new_text, wstages, win, edit.delta)
    new = _splice_encoding(old, new_text, w, win, toks, edit.delta, new_stages)
    # Report only what really changed: the window's tokens and chunks that equal the old ones
    # at both ends are not part of the splice (a view then re-spells a handful of items).
    p, q = _unchanged_tokens(old, w, win, toks, edit)
    cp, cq = _unchanged_chunks(stages.pre_tokens, wstages.pre_tokens, win, edit)
    m, n = toks.stop - toks.first, len(w.ids)
    cm, cn = win.c1 - win.c0, len(wstages.pre_tokens)
    return new, Splice(toks.first + p, m - p - q, n - p - q, win.c0 + cp, cm - cp - cq, cn - cp - cq)


def _unchanged_tokens(old: Encoding, w: Encoding, win: _Window, toks: _Tokens, edit: Edit) -> tuple[int, int]:
    """How many of the window's first and last tokens equal the old ones at the same places."""
    t0, t1, ws, delta = toks.first, toks.stop, win.start, edit.delta
    n, m = len(w.ids), t1 - t0
    p = 0
    while p < n and p < m and old.ids[t0 + p] == w.ids[p]:
        s, e = w.offsets[p]
        if old.offsets[t0 + p] != (s + ws, e + ws):
            break
        p += 1
    # never claim a token at or after the edit start is unchanged
    p = min(p, _first_token_at(old.offsets, t0, t1, edit.start) - t0)
    q = 0
    while q < n - p and q < m - p and old.ids[t1 - 1 - q] == w.ids[n - 1 - q]:
        a, b = old.offsets[t1 - 1 - q]
        c, d = w.offsets[n - 1 - q]
        if a < edit.old_end or (a + delta, b + delta) != (c + ws, d + ws):
            break
        q += 1
    return p, q


def _unchanged_chunks(
    chunks: Sequence[PreToken], wchunks: Sequence[PreToken], win: _Window, edit: Edit
) -> tuple[int, int]:
    """How many of the window's first and last chunks equal the old ones at the same places."""
    old_part = chunks[win.c0 : win.c1]
    cm, cn = len(old_part), len(wchunks)
    cp = 0
    while cp < cn and cp < cm and old_part[cp].end <= edit.start and _same_chunk(old_part[cp], wchunks[cp], 0, win.start):
        cp += 1
    cq = 0
    while cq < cn - cp and cq < cm - cp:
        o, nc = old_part[cm - 1 - cq], wchunks[cn - 1 - cq]
        if o.start < edit.old_end or not _same_chunk(o, nc, edit.delta, win.start):
            break
        cq += 1
    return cp, cq


def _shift_pair(v: tuple[int, int], d: int) -> tuple[int, int]:
    return (v[0] + d, v[1] + d)


def _shift_int(v: int, d: int) -> int:
    return v + d


def _shift_chunk(c: PreToken, d: int) -> PreToken:
    return PreToken(c.text, c.start + d, c.end + d)


def _shift_word(v: int, d: int) -> int:
    return v if v == NO_WORD else v + d


def _splice_encoding(
    old: Encoding, new_text: str, w: Encoding, win: _Window, toks: _Tokens, delta: int, stages: Stages
) -> Encoding:
    t0, t1, bb, n_old, nw = toks.first, toks.stop, toks.body_end, len(old), len(w)
    # Byte positions: the text before the window is unchanged, so its byte length is the old one.
    old_map = old.offset_map
    ws_b = old_map.to_utf8(win.start)
    dbytes = w.offset_map.to_utf8(len(w.text)) - (old_map.to_utf8(win.end) - ws_b)
    o, c = old.columns, w.columns

    def cat(col_old: Sequence[T], col_win: Sequence[T], d_win: int, d_tail: int, shift: Callable[[T, int], T]) -> Spliced[T]:
        return Spliced(
            [(col_old, 0, t0, 0), (col_win, 0, nw, d_win), (col_old, t1, bb, d_tail), (col_old, bb, n_old, 0)], shift
        )

    def flags(col_old: Sequence[int] | None, col_win: Sequence[int] | None) -> Sequence[int] | None:
        if col_old is None and col_win is None:
            return None
        col_old = col_old if col_old is not None else int_column(repeat(0, n_old))
        col_win = col_win if col_win is not None else int_column(repeat(0, nw))
        return cat(col_old, col_win, 0, 0, _shift_int)

    # Word ids: the window numbers its words from 0; rebase them on the old numbering.
    base = _word_base(old, t0, toks.body_start)
    last_new = max((x + base for x in c.word_ids if x != NO_WORD), default=base - 1)
    first_tail = next((x for x in o.word_ids[t1 : min(bb, t1 + 64)] if x != NO_WORD), None)
    wshift = 0 if first_tail is None else (last_new + 1) - first_tail
    columns = TokenColumns(
        cat(o.ids, c.ids, 0, 0, _shift_int), cat(o.tokens, c.tokens, 0, 0, _shift_int),  # type: ignore[arg-type]
        cat(o.starts, c.starts, win.start, delta, _shift_int), cat(o.ends, c.ends, win.start, delta, _shift_int),
        cat(o.byte_starts, c.byte_starts, ws_b, dbytes, _shift_int), cat(o.byte_ends, c.byte_ends, ws_b, dbytes, _shift_int),
        cat(o.word_ids, c.word_ids, base, wshift, _shift_word), flags(o.special, c.special), flags(o.type_ids, c.type_ids),
    )
    return Encoding(new_text, columns, stages, None, old.source)


def _word_base(old: Encoding, t0: int, body_start: int) -> int:
    words = old.columns.word_ids
    for k in range(t0 - 1, body_start - 1, -1):
        x = words[k]
        if x != NO_WORD:
            return x + 1
    return 0


def _splice_stages(old: Stages, new_text: str, win: Stages, window: _Window, delta: int) -> Stages:
    old_chunks = old.pre_tokens
    win_chunks = win.pre_tokens
    chunks = Spliced(
        [
            (old_chunks, 0, window.c0, 0),
            (win_chunks, 0, len(win_chunks), window.start),
            (old_chunks, window.c1, len(old_chunks), delta),
        ],
        _shift_chunk,
    )
    # Segments (all identity here): re-cut around the window, then merge neighbours that a full
    # encode would have kept as one run of ordinary text.
    ws, old_we = window.start, window.end
    pieces: list[tuple[int, int, int | None, bool]] = []
    for s in old.segments:
        if s.end <= ws or (s.start < ws and s.added_id is None):
            a, b = s.start, min(s.end, ws)
            if b > a or s.start == s.end:
                pieces.append((a, b, s.added_id, s.special))
    for s in win.segments:
        pieces.append((s.start + ws, s.end + ws, s.added_id, s.special))
    for s in old.segments:
        if s.start >= old_we or (s.end > old_we and s.added_id is None):
            pieces.append((max(s.start, old_we) + delta, s.end + delta, s.added_id, s.special))
    merged: list[tuple[int, int, int | None, bool]] = []
    for a, b, aid, sp in pieces:
        if b <= a and aid is None:
            continue
        if merged and aid is None and merged[-1][2] is None and merged[-1][1] == a:
            merged[-1] = (merged[-1][0], b, None, merged[-1][3])
        else:
            merged.append((a, b, aid, sp))
    segments = tuple(Segment(a, b, NormalizedText.identity(new_text, a, b), aid, sp) for a, b, aid, sp in merged)
    return Stages(new_text, segments, chunks)  # type: ignore[arg-type] - a read-only view of the chunks


# ---------------------------------------------------------------------------- diff of two encodings
def _prefix_len(a: Sequence[object], b: Sequence[object], limit: int) -> int:
    """Length of the common prefix of two sequences or strings, at most ``limit`` (binary search
    on slice equality: O(log n) C-level comparisons instead of a Python loop over items)."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _suffix_len(a: Sequence[object], b: Sequence[object], limit: int) -> int:
    lo, hi = 0, min(len(a), len(b), limit)
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid :] == b[lb - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def diff_splice(old: Encoding, new: Encoding, edit: Edit) -> Splice | None:
    """Which tokens and chunks differ between two encodings of texts that differ by ``edit``.

    Tokens are unchanged at the front while ids, vocab strings and offsets are equal, and at the
    back while ids and vocab strings are equal and the offsets differ exactly by the edit's
    length change (checked at the boundary token; the texts after the edit are equal). Same
    for pre-token chunks. None when nothing can be reused.
    """
    if old.stages is None or new.stages is None:
        return None
    n_old, n_new = len(old.ids), len(new.ids)
    oi, ni = list(old.ids), list(new.ids)
    ot, nt = list(old.tokens), list(new.tokens)
    oo, no = list(old.offsets), list(new.offsets)
    # front: identical tokens that end before the edit
    p = min(_prefix_len(oi, ni, n_old), _prefix_len(ot, nt, n_old), _prefix_len(oo, no, n_old))
    while p > 0 and no[p - 1][1] > edit.start:
        p -= 1
    # back: identical ids/vocab, offsets shifted by delta, starting after the edit
    limit = min(n_old, n_new) - p
    q = min(_suffix_len(oi, ni, limit), _suffix_len(ot, nt, limit))
    d = edit.delta
    while q > 0:
        a, b = oo[n_old - q], no[n_new - q]
        if a[0] >= edit.old_end and (a[0] + d, a[1] + d) == b:
            break
        q -= 1
    # trailing post-processor tokens (empty spans) are equal but not shifted: accept them
    if q and any(
        oo[n_old - k] != (no[n_new - k][0] - d, no[n_new - k][1] - d) and oo[n_old - k] != no[n_new - k]
        for k in range(1, min(q, 4) + 1)
    ):
        q = 0
    if p == 0 and q == 0:
        return None
    oc = [(c.text, c.start, c.end) for c in old.stages.pre_tokens]
    nc = [(c.text, c.start, c.end) for c in new.stages.pre_tokens]
    cp = _prefix_len(oc, nc, len(oc))
    while cp > 0 and nc[cp - 1][2] > edit.start:
        cp -= 1
    cq = _suffix_len([c[0] for c in oc], [c[0] for c in nc], min(len(oc), len(nc)) - cp)
    while cq > 0:
        a_, b_ = oc[len(oc) - cq], nc[len(nc) - cq]
        if a_[1] >= edit.old_end and (a_[1] + d, a_[2] + d) == (b_[1], b_[2]):
            break
        cq -= 1
    return Splice(p, n_old - p - q, n_new - p - q, cp, len(oc) - cp - cq, len(nc) - cp - cq)


# ---------------------------------------------------------------------------- shifted views
class Spliced(Sequence[T], Generic[T]):
    """A sequence after splices, kept as shifted views ``(source, lo, hi, delta)`` of earlier ones.

    Shifting every offset (or chunk) after an edit would build one object per token on every
    keystroke; this builds a shifted item only when it is read. Parts are compacted into a list
    when they pile up. Slicing returns a list.

    >>> s = Spliced([([(0, 1), (1, 2)], 0, 2, 0), ([(0, 1)], 0, 1, 5)], _shift_pair)
    >>> list(s)
    [(0, 1), (1, 2), (5, 6)]
    """

    __slots__ = ("_parts", "_firsts", "_n", "_shift")

    def __init__(self, parts: list[tuple[Sequence[T], int, int, int]], shift: Callable[[T, int], T]) -> None:
        self._shift = shift
        flat: list[tuple[Sequence[T], int, int, int]] = []
        for src, lo, hi, d in parts:
            if hi <= lo:
                continue
            if isinstance(src, Spliced):
                flat.extend(src._slice_parts(lo, hi, d))
            else:
                flat.append((src, lo, hi, d))
        if len(flat) > 24:
            items = [shift(c, d) if d else c for src, lo, hi, d in flat for c in src[lo:hi]]
            flat = [(items, 0, len(items), 0)]
        self._parts = flat
        self._firsts = [0, *accumulate(hi - lo for _s, lo, hi, _d in flat)]
        self._n = self._firsts[-1]

    def _slice_parts(self, lo: int, hi: int, d: int) -> list[tuple[Sequence[T], int, int, int]]:
        out = []
        for (src, a, b, dd), first in zip(self._parts, self._firsts):
            s = max(lo, first)
            e = min(hi, first + b - a)
            if s < e:
                out.append((src, a + s - first, a + e - first, dd + d))
        return out

    def __len__(self) -> int:
        return self._n

    def _one(self, i: int) -> T:
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        k = bisect_right(self._firsts, i) - 1
        src, lo, _hi, d = self._parts[k]
        c = src[lo + i - self._firsts[k]]
        return self._shift(c, d) if d else c

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return [self._one(j) for j in range(start, stop, step)]
            out: list[T] = []
            for src, a, b, d in self._slice_parts(start, stop, 0):
                out.extend(src[a:b] if not d else (self._shift(c, d) for c in src[a:b]))
            return out
        return self._one(i)

    def __iter__(self) -> Iterator[T]:
        shift = self._shift
        for src, lo, hi, d in self._parts:
            if d:
                for c in src[lo:hi]:
                    yield shift(c, d)
            else:
                yield from src[lo:hi]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._n and all(x == y for x, y in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[T]) -> list[T]:
        return list(self) + list(other)
