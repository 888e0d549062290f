"""Incremental re-encoding for live typing: re-encode a window around an edit and splice it.

The view-model calls `reencode` in a worker after every keystroke. Instead of encoding the whole
text again it re-encodes a window of lines around the edit with the *same* engine
(`Tokenizer.encode`) and splices the result into the previous `Encoding`. The window is accepted
only if it synchronises with the previous encoding at both ends: the window's first and last
pre-token chunks and their tokens must be identical to the old ones at the same places. When
they are not (a chunk grew across the window edge, a prefix space was added at the window start,
a normalizer changed the text) the window doubles, and after a few tries the whole text is
encoded. The tests check the spliced result against a full encode on random edits.

Pure Python (no Qt): the GUI and the tests use it the same way.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from ..engine.encoding import Encoding, PreToken, Segment, Stages
from ..engine.text import NormalizedText

__all__ = ["Splice", "Edit", "diff_edit", "reencode", "full_encode"]

_SYNC = 2  # chunks that must match at each window edge
_MAX_TRIES = 4


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


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    # Binary search on slice equality: O(log n) memcmp calls instead of a Python char loop.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid :] == b[lb - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def diff_edit(old: str, new: str) -> Edit:
    """The smallest single edit turning ``old`` into ``new``.

    >>> diff_edit("hello world", "hello, world")
    Edit(start=5, old_end=5, new_end=6)
    """
    p = _common_prefix(old, new)
    s = _common_suffix(old, new, min(len(old), len(new)) - p)
    return Edit(p, len(old) - s, len(new) - s)


def full_encode(tokenizer, text: str, *, add_special_tokens: bool, allowed_special) -> Encoding:  # noqa: ANN001
    return tokenizer.encode(text, add_special_tokens=add_special_tokens, allowed_special=allowed_special)


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


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, max(pos, 0)) + 1


def _line_end(text: str, pos: int) -> int:
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


def _identity_stages(stages: Stages | None) -> bool:
    return stages is not None and all(s.normalized.is_identity for s in stages.segments)


def reencode(
    tokenizer,  # noqa: ANN001 - tokviz Tokenizer
    old_text: str,
    old: Encoding,
    new_text: str,
    *,
    add_special_tokens: bool,
    allowed_special=None,  # noqa: ANN001
    context_lines: int = 2,
) -> tuple[Encoding, Splice | None]:
    """Encode ``new_text`` reusing ``old`` (the encoding of ``old_text``); return it and the splice.

    When the window cannot be used (a normalizer changed the text, a prepended ▁, no
    synchronisation) the whole text is encoded and the splice is found by comparing the two
    encodings (`diff_splice`), so the panes still redraw only what changed. None means the
    whole encoding changed.
    """
    edit = diff_edit(old_text, new_text)
    if old.stages is not None and _identity_stages(old.stages) and old_text and new_text:
        lines = context_lines
        for _ in range(_MAX_TRIES):
            result = _try_window(tokenizer, old_text, old, new_text, edit, lines, allowed_special)
            if result is not None:
                return result
            lines *= 4
    new = full_encode(tokenizer, new_text, add_special_tokens=add_special_tokens, allowed_special=allowed_special)
    if not old_text or not new_text:
        return new, None
    return new, diff_splice(old, new, edit)


def _prefix_len(a: Sequence, b: Sequence, limit: int) -> int:
    """Length of the common prefix of two sequences (binary search on C-level slice equality)."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _suffix_len(a: Sequence, b: Sequence, limit: int) -> int:
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
        for k in range(1, q + 1)
        if k <= 4
    ):
        q = 0
    if p == 0 and q == 0:
        return None
    cf, cr, ca = 0, 0, 0
    if old.stages is not None and new.stages is not None:
        oc = [(c.text, c.start, c.end) for c in old.stages.pre_tokens]
        nc = [(c.text, c.start, c.end) for c in new.stages.pre_tokens]
        cp = _prefix_len(oc, nc, len(oc))
        while cp > 0 and nc[cp - 1][2] > edit.start:
            cp -= 1
        ot_ = [c[0] for c in oc]
        nt_ = [c[0] for c in nc]
        cq = _suffix_len(ot_, nt_, min(len(oc), len(nc)) - cp)
        while cq > 0:
            a, b = oc[len(oc) - cq], nc[len(nc) - cq]
            if a[1] >= edit.old_end and (a[1] + d, a[2] + d) == (b[1], b[2]):
                break
            cq -= 1
        cf, cr, ca = cp, len(oc) - cp - cq, len(nc) - cp - cq
    else:
        return None
    return Splice(p, n_old - p - q, n_new - p - q, cf, cr, ca)


fallback_reason = 0  # which synchronisation check last failed (diagnostics for tests and the bench)


def _fail(reason: int) -> None:
    global fallback_reason
    fallback_reason = reason
    return None


def _try_window(
    tokenizer, old_text: str, old: Encoding, new_text: str, edit: Edit, lines: int, allowed_special  # noqa: ANN001
) -> tuple[Encoding, Splice] | None:
    # Window in old coordinates: `lines` whole lines before and after the edited lines.
    ws = _line_start(old_text, edit.start)
    for _ in range(lines):
        if ws == 0:
            break
        ws = _line_start(old_text, ws - 1)
    we = _line_end(old_text, edit.old_end)
    for _ in range(lines):
        if we >= len(old_text):
            break
        we = _line_end(old_text, we)
    stages = old.stages
    assert stages is not None  # checked by the caller (internal invariant, not input)
    chunks = stages.pre_tokens
    chunk_starts = _Starts(chunks)
    # Snap the window to old chunk boundaries: start at a chunk start, end at a chunk end.
    ci0 = bisect_right(chunk_starts, ws) - 1
    ci0 = max(ci0, 0)
    ci1 = bisect_left(chunk_starts, we)  # first chunk starting at/after we
    if ci0 > 0 or ws > 0:
        ws = chunks[ci0].start if chunks else 0
    # Keep _SYNC old chunks before the edit and after it inside the window, so they can be matched.
    ci0 = max(0, min(ci0, _chunk_at(chunk_starts, edit.start) - _SYNC))
    ws = chunks[ci0].start if chunks and ci0 > 0 else 0
    last_edit_chunk = _chunk_at(chunk_starts, max(edit.old_end - 1, edit.start))
    ci1 = max(ci1, min(len(chunks), last_edit_chunk + 1 + _SYNC))
    we = chunks[ci1].start if ci1 < len(chunks) else len(old_text)
    if ci0 == 0:
        ws = 0
    if ci1 >= len(chunks):
        we = len(old_text)
    if ws > edit.start or we < edit.old_end:
        return _fail(1)
    delta = edit.delta
    new_we = we + delta
    window = new_text[ws:new_we]
    w = tokenizer.encode(window, add_special_tokens=False, allowed_special=allowed_special)
    if w.stages is None or not _identity_stages(w.stages):
        return _fail(2)
    wchunks = w.stages.pre_tokens
    # --- synchronisation at the window start: the first _SYNC chunks before the edit match.
    head_end = ws  # old tokens in [ws, head_end) must come out of the window unchanged
    tail_start = we  # old tokens in [tail_start, we) likewise (old coordinates)
    if ws > 0:
        k = 0
        for oc, nc in zip(chunks[ci0 : ci0 + _SYNC], wchunks[:_SYNC]):
            if oc.end >= edit.start:
                break
            head_end = oc.end
            if (oc.text, oc.start, oc.end) != (nc.text, nc.start + ws, nc.end + ws):
                return _fail(3)
            k += 1
        if k == 0 and ci0 > 0:
            return _fail(4)
    # --- synchronisation at the window end: the last _SYNC chunks after the edit match.
    if we < len(old_text):
        tail_old = chunks[max(ci1 - _SYNC, 0) : ci1]
        tail_new = wchunks[len(wchunks) - len(tail_old) :] if tail_old else ()
        if not tail_old or len(tail_new) != len(tail_old):
            return _fail(5)
        tail_start = tail_old[0].start
        for oc, nc in zip(tail_old, tail_new):
            if oc.start <= edit.old_end:
                return _fail(6)
            if (oc.text, oc.start + delta, oc.end + delta) != (nc.text, nc.start + ws, nc.end + ws):
                return _fail(7)
    # --- tokens: old body tokens inside [ws, we) are replaced by the window's tokens.
    ba, bb = _body_range(old)
    offs = old.offsets
    t0 = ba
    # first body token whose span starts at/after ws (spans are ordered inside the body)
    t0 = _first_token_at(offs, ba, bb, ws)
    t1 = _first_token_at(offs, t0, bb, we)
    if t0 > ba and offs[t0 - 1][1] > ws:
        return _fail(8)  # a token crosses the window start
    if t1 < bb and offs[t1][0] < we:
        return _fail(9)
    if t1 > t0 and offs[t1 - 1][1] > we:
        return _fail(10)
    # The window's tokens at the synchronised edges must equal the old ones.
    wb_a, wb_b = _body_range(w)
    if wb_a != 0 or wb_b != len(w.ids):
        return _fail(11)
    if not _edge_tokens_match(old, t0, t1, w, ws, delta, head_end, tail_start):
        return _fail(12)
    dbytes = len(window.encode("utf-8")) - len(old_text[ws:we].encode("utf-8"))
    new = _splice_encoding(old, new_text, w, t0, t1, ws, delta, dbytes, ba, bb)
    splice_chunks = _splice_stages(stages, new_text, w.stages, ci0, ci1, ws, delta)
    object.__setattr__(new, "stages", splice_chunks)
    # Report only what really changed: the window's tokens and chunks that equal the old ones
    # at both ends are not part of the splice (the panes then re-spell a handful of items).
    n, m = len(w.ids), t1 - t0
    p = 0
    while p < n and p < m and old.ids[t0 + p] == w.ids[p] and old.offsets[t0 + p] == (w.offsets[p][0] + ws, w.offsets[p][1] + ws):
        p += 1
    q = 0
    while q < n - p and q < m - p and old.ids[t1 - 1 - q] == w.ids[n - 1 - q]:
        a_, b_ = old.offsets[t1 - 1 - q]
        c_, d_ = w.offsets[n - 1 - q]
        if (a_ + delta, b_ + delta) != (c_ + ws, d_ + ws) or a_ < edit.old_end:
            break
        q += 1
    p = min(p, _first_token_at(offs, t0, t1, edit.start) - t0)  # never claim a token at/after the edit is unchanged
    oc_all = chunks[ci0:ci1]
    nc_all = list(wchunks)
    cm, cn = len(oc_all), len(nc_all)
    cp = 0
    while cp < cn and cp < cm and (oc_all[cp].text, oc_all[cp].start, oc_all[cp].end) == (
        nc_all[cp].text, nc_all[cp].start + ws, nc_all[cp].end + ws
    ) and oc_all[cp].end <= edit.start:
        cp += 1
    cq = 0
    while cq < cn - cp and cq < cm - cp:
        o, nn = oc_all[cm - 1 - cq], nc_all[cn - 1 - cq]
        if o.text != nn.text or o.start < edit.old_end or (o.start + delta, o.end + delta) != (nn.start + ws, nn.end + ws):
            break
        cq += 1
    return new, Splice(t0 + p, m - p - q, n - p - q, ci0 + cp, cm - cp - cq, cn - cp - cq)


class _Starts:
    """``starts[i] == chunks[i].start`` without building the list (bisect needs only indexing)."""

    __slots__ = ("_chunks",)

    def __init__(self, chunks) -> None:  # noqa: ANN001
        self._chunks = chunks

    def __len__(self) -> int:
        return len(self._chunks)

    def __getitem__(self, i: int) -> int:
        return self._chunks[i].start


def _shift_pair(v: tuple[int, int], d: int) -> tuple[int, int]:
    return (v[0] + d, v[1] + d)


def _shift_chunk(c: PreToken, d: int) -> PreToken:
    return PreToken(c.text, c.start + d, c.end + d)


def _shift_word(v: int | None, d: int) -> int | None:
    return None if v is None else v + d


class Spliced(Sequence):
    """A sequence after splices, kept as shifted views ``(source, lo, hi, delta)`` of earlier ones.

    Shifting every offset (or chunk) after an edit would build one object per token on every
    keystroke; this builds a shifted item only when it is read. Parts are compacted into a list
    when they pile up. Slicing returns a list.
    """

    __slots__ = ("_parts", "_firsts", "_n", "_shift")

    def __init__(self, parts: list[tuple[Sequence, int, int, int]], shift) -> None:  # noqa: ANN001
        self._shift = shift
        flat: list[tuple[Sequence, int, int, int]] = []
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

    def _slice_parts(self, lo: int, hi: int, d: int) -> list[tuple[Sequence, int, int, int]]:
        out = []
        for (src, a, b, dd), first in zip(self._parts, self._firsts):
            s = max(lo, first)
            e = min(hi, first + b - a)
            if s < e:
                out.append((src, a + s - first, a + e - first, dd + d))
        return out

    def __len__(self) -> int:
        return self._n

    def _one(self, i: int):  # noqa: ANN202
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        k = bisect_right(self._firsts, i) - 1
        src, lo, _hi, d = self._parts[k]
        c = src[lo + i - self._firsts[k]]
        return self._shift(c, d) if d else c

    def __getitem__(self, i):  # noqa: ANN001, ANN204
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return [self._one(j) for j in range(start, stop, step)]
            out: list = []
            for p in self._slice_parts(start, stop, 0):
                src, a, b, d = p
                out.extend(src[a:b] if not d else (self._shift(c, d) for c in src[a:b]))
            return out
        return self._one(i)

    def __iter__(self) -> Iterator:
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

    def __add__(self, other: Sequence) -> list:
        return list(self) + list(other)


def _chunk_at(starts: list[int], pos: int) -> int:
    return max(bisect_right(starts, pos) - 1, 0)


def _first_token_at(offs: list[tuple[int, int]], lo: int, hi: int, pos: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        if offs[mid][0] < pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _edge_tokens_match(
    old: Encoding, t0: int, t1: int, w: Encoding, ws: int, delta: int, head_end: int, tail_start: int
) -> bool:
    """The old tokens of the synchronised edge chunks equal the window's first and last tokens."""
    n = len(w.ids)
    i = 0
    while t0 + i < t1 and old.offsets[t0 + i][1] <= head_end:
        if i >= n:
            return False
        s, e = w.offsets[i]
        if old.ids[t0 + i] != w.ids[i] or old.offsets[t0 + i] != (s + ws, e + ws):
            return False
        i += 1
    j = 1
    while t1 - j >= t0 and old.offsets[t1 - j][0] >= tail_start:
        if n - j < i:
            return False
        s, e = w.offsets[n - j]
        if old.ids[t1 - j] != w.ids[n - j] or old.offsets[t1 - j] != (s + ws - delta, e + ws - delta):
            return False
        j += 1
    return True


def _splice_encoding(
    old: Encoding, new_text: str, w: Encoding, t0: int, t1: int, ws: int, delta: int, dbytes: int, ba: int, bb: int
) -> Encoding:
    ws_b = len(new_text[:ws].encode("utf-8"))
    n_old = len(old.ids)
    nw = len(w.ids)

    def cat(col_old: Sequence, col_win: Sequence, d_win: int, d_tail: int, shift) -> Spliced:  # noqa: ANN001
        return Spliced(
            [(col_old, 0, t0, 0), (col_win, 0, nw, d_win), (col_old, t1, bb, d_tail), (col_old, bb, n_old, 0)], shift
        )

    # Word ids: the window numbers its words from 0; rebase them on the old numbering.
    base = _word_base(old, t0, ba)
    last_new = max((x + base for x in w.word_ids if x is not None), default=base - 1)
    first_tail = next((x for x in old.word_ids[t1 : min(bb, t1 + 64)] if x is not None), None)
    wshift = 0 if first_tail is None else (last_new + 1) - first_tail
    return Encoding(
        new_text,
        old.ids[:t0] + w.ids + old.ids[t1:],
        old.tokens[:t0] + w.tokens + old.tokens[t1:],
        cat(old.offsets, w.offsets, ws, delta, _shift_pair),
        cat(old.byte_offsets, w.byte_offsets, ws_b, dbytes, _shift_pair),
        old.special_tokens_mask[:t0] + w.special_tokens_mask + old.special_tokens_mask[t1:],
        old.type_ids[:t0] + w.type_ids + old.type_ids[t1:],
        cat(old.word_ids, w.word_ids, base, wshift, _shift_word),
        None,
        None,
    )


def _shift_trailing(spans: list[tuple[int, int]], d: int) -> list[tuple[int, int]]:
    return [(s + d, e + d) for s, e in spans]


def _word_base(old: Encoding, t0: int, ba: int) -> int:
    for k in range(t0 - 1, ba - 1, -1):
        x = old.word_ids[k]
        if x is not None:
            return x + 1
    return 0


def _splice_stages(old: Stages, new_text: str, win: Stages, ci0: int, ci1: int, ws: int, delta: int) -> Stages:
    old_chunks = old.pre_tokens
    win_chunks = win.pre_tokens
    chunks = Spliced(
        [
            (old_chunks, 0, ci0, 0),
            (win_chunks, 0, len(win_chunks), ws),
            (old_chunks, ci1, len(old_chunks), delta),
        ],
        _shift_chunk,
    )
    # Segments (all identity here): re-cut around the window, then merge neighbours that a full
    # encode would have kept as one run of ordinary text.
    old_we = old_chunks[ci1].start if ci1 < len(old_chunks) else len(old.original)
    new_we = old_we + delta
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
            a = max(s.start, old_we) + delta
            pieces.append((a, s.end + delta, s.added_id, s.special))
    merged: list[list] = []
    for a, b, aid, sp in pieces:
        if b <= a and aid is None:
            continue
        if merged and aid is None and merged[-1][2] is None and merged[-1][1] == a:
            merged[-1][1] = b
        else:
            merged.append([a, b, aid, sp])
    segments = tuple(
        Segment(a, b, NormalizedText.identity(new_text, a, b), aid, sp) for a, b, aid, sp in merged
    )
    return Stages(new_text, segments, chunks)
