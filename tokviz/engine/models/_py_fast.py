"""The tuned pure-Python kernels: chunk reuse that only machines without the native core run.

This is the one module of kernels that exist for speed alone (tiktoken's ``_educational.py`` in
reverse): each class below reproduces its model's reference kernel exactly, faster on long
texts, by cutting the text where no token can span and reusing the results of repeated pieces.
With the native core none of them runs (the C loops take whole texts). Each model chooses its
class in one place, its constructor, and only when `tokviz.engine.kernels.native` is None; the
tests compare every class with the reference kernel it stands for.

* `BpeLongChunks` (HF BPE, ``BPE._merge_chunk``): a chunk longer than `BPE_CUT_MIN` chars (a
  whole document when the tokenizer has no pre-tokenizer, as Mistral's tokenizer.json) is cut
  between two characters that are adjacent in no merge result.
* `SpmBpeChunks` (`SentencePieceBPE._encode`): the normalized text cut before ``▁`` runs and
  between characters that are adjacent in no piece.
* `UnigramChunks` (``Unigram._viterbi(float32=True)``): SentencePiece's float32 Viterbi over a
  whole text, reproduced chunk by chunk under float32 error bounds.

They exist because the pure-Python bench (bench/bench_encode.py with ``TOKVIZ_PURE_PYTHON=1``)
shows a gap over the reference kernels that users of the pure backend would notice on
SentencePiece-style vocabularies. Rank-mode chunks are not cut: every multi-byte token is a merge
result, so few cuts exist.
"""

from __future__ import annotations

import math
import re
from array import array
from itertools import accumulate, chain, compress, repeat
from operator import add, and_, is_, itemgetter, not_, or_
from typing import Any

from ..caching import BoundedCache
from ..unicode_tables import chars_class
from . import ModelToken
from ._spm import SCORE_RESET, SPACE, PieceType, space_chunker

__all__ = ["BPE_CUT_MIN", "BpeLongChunks", "SpmBpeChunks", "UnigramChunks"]

#: HF BPE chunks longer than this (chars) are cut (`BpeLongChunks`).
BPE_CUT_MIN = 256
_CACHE_LIMIT = 100_000
_CACHE_MAX_CHARS = 256
_SPLIT_ABOVE = 8  # SentencePiece BPE chunks this short are encoded whole


def _sentinel(used: str) -> str:
    """A one-char string that occurs nowhere in ``used``."""
    for c in ("\x00", "\uffff", "\U0010ffff", "\x01"):
        if c not in used:
            return c
    taken = set(used)
    return next(chr(cp) for cp in range(0xE000, 0x110000) if chr(cp) not in taken)


# ---------------------------------------------------------------------- HF BPE
class BpeLongChunks:
    """Long BPE chunks cut where no merge can cross, each piece merged (and cached) alone.

    Only for a model where cutting is exact (`of`): no prefix/suffix decorations, no
    ``ignore_merges`` (it applies to the whole chunk only), not rank mode, and HF's drifting
    offsets impossible (every unknown char becomes byte pieces, or an existing unk token).
    """

    __slots__ = ("cache", "inert_fallback", "model", "result_pairs", "sentinel")

    def __init__(self, model: Any) -> None:
        self.model = model
        ranks = model._ranks
        # Every two adjacent chars inside a merge result (None: a merge has an empty part, so
        # nothing is ever cut). A merge result across a boundary between two plain symbols holds
        # the two chars there, so a boundary whose pair is not in this set is never crossed.
        self.sentinel = sent = _sentinel("".join(model._vocab))
        if all(a and b for a, b in ranks):
            joined = sent.join(set(model._merged.values()))
            self.result_pairs: set[str] | None = {g for g in set(map(add, joined, joined[1:])) if sent not in g}
        else:
            self.result_pairs = None
        # True when no merge takes a byte-fallback piece or the unk token as a part: what stands
        # for an unknown char then never merges with anything
        parts = set(map(itemgetter(0), ranks)) | set(map(itemgetter(1), ranks))
        fallback = {f"<0x{b:02X}>" for b in range(256)} if model.byte_fallback else set()
        if model.unk_token is not None:
            fallback.add(model.unk_token)
        self.inert_fallback = parts.isdisjoint(fallback)
        self.cache = BoundedCache(model.cache_capacity, max_key_chars=_CACHE_MAX_CHARS)

    @classmethod
    def of(cls, model: Any) -> BpeLongChunks | None:
        """The cutter of ``model``, or None when cutting could change its results."""
        if not model._plain or model.ignore_merges or model.rank_mode or not model.deterministic:
            return None
        vocab = model._vocab
        if model.byte_fallback:
            if not all(f"<0x{b:02X}>" in vocab for b in range(256)):
                return None
        elif model.unk_token is None or model.unk_token not in vocab:
            return None
        return cls(model)

    def tokenize(self, text: str) -> tuple[ModelToken, ...] | None:
        """A long chunk cut where no merge can cross, each piece tokenized (and cached) alone;
        None when there is no such boundary.

        A boundary between two plain symbols is cut when no merge result holds its two chars
        side by side (`result_pairs`: one C-level pass). Chars outside the vocab become byte-fallback
        pieces or unk: when those never merge they are masked (always cut around), else their
        boundaries are never cut; unk runs stay whole for ``fuse_unk``. `cuttable` rules out
        HF's drifting offsets, which would carry across pieces.
        """
        pairs = self.result_pairs
        if pairs is None:
            return None
        m = self.model
        vocab = m._vocab
        strange = [c for c in set(text) if c not in vocab]
        if not strange:
            joinable = list(map(pairs.__contains__, map(add, text, text[1:])))
        elif self.inert_fallback:
            # The unknown chars' pieces never merge: mask them with the sentinel (in no vocab
            # entry), so both boundaries of an unknown char are cut; a run of unknown chars that
            # fuse into one unk stays whole.
            masked = text.translate(dict.fromkeys(map(ord, strange), self.sentinel))
            joinable = list(map(pairs.__contains__, map(add, masked, masked[1:])))
            if m.fuse_unk and not m.byte_fallback:
                unknown = list(map(self.sentinel.__eq__, masked))
                joinable = list(map(or_, joinable, map(and_, unknown, unknown[1:])))
        else:
            # a boundary next to an unknown char is never cut (its pieces may merge)
            joinable = list(map(pairs.__contains__, map(add, text, text[1:])))
            unknown = [c not in vocab for c in text]
            joinable = list(map(or_, joinable, map(or_, unknown, unknown[1:])))
        if False not in joinable:
            return None
        n = len(text)
        starts = [0, *compress(range(1, n), map(not_, joinable))]
        pieces = list(map(text.__getitem__, map(slice, starts, [*starts[1:], n])))
        results = self.cache.entries(pieces, m._merge_chunk)
        # piece-relative spans shifted by the piece start, in C-level passes
        flat = list(chain.from_iterable(results))
        shifts = list(chain.from_iterable(map(repeat, starts, map(len, results))))
        out = zip(
            map(itemgetter(0), flat),
            map(add, map(itemgetter(1), flat), shifts),
            map(add, map(itemgetter(2), flat), shifts),
        )
        return tuple(out)


# ---------------------------------------------------------------------- SentencePiece BPE
class SpmBpeChunks:
    """SentencePiece BPE over chunks: a merge can only join two characters that occur next to
    each other inside some piece, so the text is cut where they never do (e.g. before a ``▁``
    that follows a letter, when no piece holds ``x▁``); the chunks are independent and cached."""

    __slots__ = ("bigrams", "cache", "chunker", "joinable", "lone_ids", "model")

    def __init__(self, model: Any) -> None:
        self.model = model
        mergeable = model._mergeable
        self.chunker = None if any(SPACE in u for u in model.spm.user_defined) else space_chunker(mergeable)
        # every pair of adjacent characters inside a piece a merge or a symbol can produce
        self.bigrams = frozenset(p[k : k + 2] for p in mergeable for k in range(len(p) - 1))
        chars = sorted({c for p in mergeable if len(p) > 1 for c in p})
        self.joinable = re.compile("[" + "".join(f"\\U{ord(c):08x}" for c in chars) + "]{2,}") if chars else None
        self.cache = BoundedCache(_CACHE_LIMIT, max_key_chars=_CACHE_MAX_CHARS)
        self.lone_ids: dict[str, int] = {}  # char -> id of the char as a symbol of its own

    def columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """``SentencePieceBPE._encode(text)`` as columns ``(ids, starts, ends)`` (the pieces tile
        the text), before unknown merging and byte fallback."""
        chunker = self.chunker
        if chunker is None:
            entries = [self._chunk_entry(text)]
        else:
            # (the chunker's alternatives tile any text)
            entries = self.cache.entries(chunker.findall(text), self._chunk_entry)
        ids = list(chain.from_iterable(map(itemgetter(0), entries)))
        ends = list(accumulate(chain.from_iterable(map(itemgetter(1), entries))))
        starts = [0]
        starts += ends[:-1]
        return ids, starts, ends

    def _chunk_entry(self, chunk: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(ids, piece lengths)`` of one chunk, joined from its parts (`_parts`), each of which
        is encoded once and cached: no merge can join two parts, so the chunk's pieces are its
        parts' pieces in order."""
        cache = self.cache
        plain_ids = self.model._plain_ids.get
        piece_to_id = self.model.spm.piece_to_id
        ids: list[int] = []
        lens: list[int] = []
        for a, b, alone in self._parts(chunk):
            if alone:
                # characters in no multi-character piece: each is one symbol, its own id (or unk)
                stretch = chunk[a:b]
                got = list(map(self.lone_ids.get, stretch))
                if None in got:
                    for k, c in enumerate(stretch):
                        if got[k] is None:
                            pid = plain_ids(c)
                            got[k] = self.lone_ids[c] = piece_to_id(c) if pid is None else pid
                ids += got
                lens += [1] * (b - a)
                continue
            if b - a == 1:
                # one character on its own: one symbol, its own id (or unk)
                c = chunk[a]
                pid = plain_ids(c)
                ids.append(piece_to_id(c) if pid is None else pid)
                lens.append(1)
                continue
            part = chunk[a:b] if b - a < len(chunk) else chunk
            got = cache.get(part) if part is not chunk else None
            if got is None:
                raw = self.model._encode(part, None)
                got = (tuple([t[0] for t in raw]), tuple([t[2] - t[1] for t in raw]))
                if part is not chunk:
                    cache.put(part, got)
            ids += got[0]
            lens += got[1]
        return tuple(ids), tuple(lens)

    def _parts(self, text: str) -> list[tuple[int, int, bool]]:
        """Cut ``text`` between two characters that are adjacent in no piece: no merge (and no
        user-defined symbol) can join them, so the parts are independent (and short enough to
        cache, e.g. the words of a Japanese line without spaces). A character that occurs in no
        multi-character piece stands alone (``(start, end, True)`` for a stretch of such
        characters). Short texts stay whole (finding the cuts would cost more than the parts'
        cache hits save)."""
        n = len(text)
        if n <= _SPLIT_ABOVE or self.joinable is None:
            return [(0, n, False)]
        out: list[tuple[int, int, bool]] = []
        bigrams = self.bigrams
        pos = 0
        for m in self.joinable.finditer(text):
            s, e = m.span()
            if s > pos:
                out.append((pos, s, True))
            start = s
            prev = text[s]
            for p in range(s + 1, e):
                c = text[p]
                if prev + c not in bigrams:
                    out.append((start, p, False))
                    start = p
                prev = c
            out.append((start, e, False))
            pos = e
        if n > pos:
            out.append((pos, n, True))
        return out


# ---------------------------------------------------------------------- SentencePiece Unigram
# A chunk cache entry: the path's ids and piece lengths, the bound on |T| under which the float32
# DP from T takes it, its scores, and whether it is a run of unknown characters.
_Entry = tuple[tuple[int, ...], tuple[int, ...], float, tuple[float, ...], bool]
# float32 rounding allowance per addition on a path, relative to the magnitudes (2 * 2**-23)
_MARGIN_PER_ADD = 2.4e-7
_ADD_ERR = 0.006  # > 1e5 * 2**-24: the rounding of one float32 addition below the re-basing threshold


class UnigramChunks:
    """SentencePiece's float32 Viterbi over a whole text, computed chunk by chunk with cached
    chunk results (see `columns` for why that is exact)."""

    __slots__ = ("bigrams", "cache", "chunker", "joins_next", "model", "piece_chars")

    def __init__(self, model: Any, chunker: re.Pattern[str], in_lattice: list[str]) -> None:
        self.model = model
        self.piece_chars = frozenset(c for p in in_lattice for c in p)
        self.chunker = chunker
        # adjacent characters inside some lattice piece (and the characters that are ever
        # followed inside one): between any other two characters no node can span
        self.bigrams = frozenset(p[k : k + 2] for p in in_lattice for k in range(len(p) - 1))
        self.joins_next = frozenset(p[k] for p in in_lattice for k in range(len(p) - 1))
        self.cache: BoundedCache = BoundedCache(_CACHE_LIMIT, max_key_chars=_CACHE_MAX_CHARS)

    @classmethod
    def of(cls, model: Any) -> UnigramChunks | None:
        """The chunked kernel of a SentencePiece ``model``, or None when its pieces allow no cut."""
        in_lattice = [p for p, t in zip(model.pieces, model.piece_types) if t in (PieceType.NORMAL, PieceType.USER_DEFINED)]
        piece_chars = frozenset(c for p in in_lattice for c in p)
        chunker = _unigram_chunker(space_chunker(in_lattice), piece_chars)
        return None if chunker is None else cls(model, chunker, in_lattice)

    def columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """Viterbi chunk by chunk (cuts no piece spans), reusing cached chunk results; the path
        as columns ``(ids, starts, ends)`` (the pieces tile the text: a start is the previous end).

        The DP state at a cut is one float32 score ``T``. A chunk's cached path is the exact
        (double) best path with its smallest winning margin; the float32 DP started from ``T``
        makes the same decisions when every margin exceeds the float32 rounding it can suffer
        (a few ulps of ``|T|`` + the chunk's magnitudes per addition) and no re-basing can happen
        inside the chunk. Otherwise (near or exact ties, large scores) the chunk is recomputed
        exactly from ``T``. ``T`` then advances by float32-adding the path's scores in order --
        exactly what the full DP stores there.
        """
        cache = self.cache
        chunks = self.chunker.findall(text)
        entries = list(map(cache.get, chunks))
        if None in entries:
            # each distinct chunk not cached yet is computed once (C-level passes find them)
            fresh: dict[str, _Entry] = {}
            piece_chars = self.piece_chars
            for chunk in dict.fromkeys(compress(chunks, map(is_, entries, repeat(None)))):
                entry = cache.get(chunk)  # (a part of a chunk computed a moment ago)
                if entry is None:
                    if chunk[0] in piece_chars:
                        entry = self._chunk_path(chunk)
                    else:
                        entry = self._unknown_entry(len(chunk))
                    cache.put(chunk, entry)  # (also the parts of later chunks)
                fresh[chunk] = entry
            # a chunk computed now was missing at every occurrence; the others keep their hit
            entries = list(map(fresh.get, chunks, entries))
        self._advance(chunks, entries)
        ids = list(chain.from_iterable(map(itemgetter(0), entries)))
        # the pieces tile the text: the ends are the running sums of their lengths
        ends = list(accumulate(chain.from_iterable(map(itemgetter(1), entries))))
        starts = [0]
        starts += ends[:-1]
        return ids, starts, ends

    def _advance(self, chunks: list[str], entries: list) -> float:
        """Run the float32 state ``T`` over the chunks from 0: a cached path is taken when
        ``|T| < cap``, else the chunk is redone exactly (its entry replaced by the result).
        Returns ``T`` after the last chunk."""
        total = 0.0
        slot = array("f", [0.0])
        unk_score = self.model.unk_score
        for k, entry in enumerate(entries):
            cap = entry[2]
            # (|T| + mag < 0.99 * reset and margin > (len + 2) * (|T| + mag + 1) * _MARGIN_PER_ADD,
            # solved for |T| once per chunk in `_chunk_dp`)
            if -cap < total < cap:
                for sc in entry[3]:
                    slot[0] = total + sc  # float + float, rounded like the C++ float
                    total = slot[0]
            elif entry[4]:
                # a run of characters no piece contains: the only path is one unknown node per
                # character (no piece reaches into or over it); float32 sums and re-basing as
                # the full DP does them at each start position
                for _ in entry[0]:
                    if total < -SCORE_RESET or total > SCORE_RESET:
                        total = 0.0
                    slot[0] = total + unk_score
                    total = slot[0]
            else:
                path_x, total = self.model._viterbi(chunks[k], float32=True, start_score=total)
                entries[k] = ([p[0] for p in path_x], [p[2] - p[1] for p in path_x])
        return total

    def _unknown_entry(self, n: int) -> _Entry:
        """Cache entry of a run of ``n`` characters no piece contains: ``n`` unknown nodes. No
        re-basing can happen inside it while ``|T| + n * |unk score| (+ rounding)`` stays under
        the threshold."""
        unk = self.model.unk_score
        cap = SCORE_RESET * 0.99 - n * (abs(unk) + _ADD_ERR)
        return (self.model.unk_id,) * n, (1,) * n, cap, (unk,) * n, True  # type: ignore[return-value]

    def _chunk_path(self, text: str) -> _Entry:
        """Cache entry of one chunk (see `_chunk_dp`), composed from the entries of its parts
        when no lattice node can span some places in it (two characters that are adjacent in no
        piece): the parts' entries are cached, so a new chunk made of known parts costs no DP.

        Composition is exact: no node spans a cut, so the best path is the parts' best paths in
        order and the float32 DP reaches each cut with the state ``T_k`` the previous part left.
        The float32 DP from ``T`` takes the composed path if every part's condition
        ``|T_k| < cap_k`` holds. ``T_k`` is ``T`` plus the scores before part ``k`` (double sum
        ``P_k``), float32-added ``a_k`` times; while every partial sum stays below the re-basing
        threshold (each part's own cap guarantees that), one addition rounds by at most
        ``1e5 * 2**-24 < _ADD_ERR``, so ``|T_k| <= |T| + |P_k| + a_k * _ADD_ERR``. Hence the
        composed cap ``min_k(cap_k - |P_k| - a_k * _ADD_ERR)`` (a hair under, for the double sum).
        """
        n = len(text)
        joins_next = self.joins_next
        bigrams = self.bigrams
        cuts: list[int] = []
        prev = text[0]
        for i in range(1, n):
            c = text[i]
            if prev not in joins_next or prev + c not in bigrams:
                cuts.append(i)
            prev = c
        if not cuts:
            return self._chunk_dp(text)
        cuts.append(n)
        cache = self.cache
        ids: list[int] = []
        lens: list[int] = []
        scores: list[float] = []
        cap = math.inf
        before = 0.0  # P_k
        adds = 0  # a_k
        a = 0
        for b in cuts:
            part = text[a:b]
            entry = cache.get(part)
            if entry is None:
                entry = self._chunk_dp(part)
                cache.put(part, entry)
            p_ids, p_lens, p_cap, p_scores, _ = entry
            c = p_cap - abs(before) - adds * _ADD_ERR
            cap = min(cap, c)
            ids += p_ids
            lens += p_lens
            scores += p_scores
            before += sum(p_scores)
            adds += len(p_scores)
            a = b
        return tuple(ids), tuple(lens), cap * (1.0 - 1e-9) - 1e-6, tuple(scores), False

    def _chunk_dp(self, text: str) -> _Entry:
        """Cache entry of one chunk: the exact best path as ``(ids, ends)`` (double DP from 0),
        the bound on ``|T|`` under which the float32 DP from ``T`` takes that path (from the
        path's smallest winning margin and a bound on the magnitudes compared), and the path's
        scores."""
        n = len(text)
        ninf = -math.inf
        best = [ninf] * (n + 1)
        best[0] = 0.0
        second = [ninf] * (n + 1)
        starts = [-1] * (n + 1)
        ids = [0] * (n + 1)
        root = self.model._root
        kids = self.model._kids
        node_score = self.model._node_score
        node_id = self.model._node_id
        jumps = self.model._jumps
        singles = self.model._singles
        unk_score = self.model.unk_score
        unk_id = self.model.unk_id
        padded = text + self.model._sentinel  # (the trie walk stops at the end without a test per step)
        for s, c in enumerate(text):
            base = best[s]
            if c not in singles:
                # the unknown node (no single-char piece here); candidates ending at s + 1 from
                # earlier starts were all offered before, as in the reference order
                e = s + 1
                cand = base + unk_score
                b = best[e]
                if cand > b:
                    second[e] = b
                    best[e] = cand
                    starts[e] = s
                    ids[e] = unk_id  # type: ignore[assignment]
                elif cand > second[e]:
                    second[e] = cand
            t = root.get(c)
            e = s
            while t is not None:
                e += 1
                sc = node_score[t]
                if sc is None:
                    j = jumps[t]
                    if j is not None:  # (a run of prefix-only nodes: one comparison)
                        if not padded.startswith(j[0], e):
                            break
                        e += j[1]
                        t = j[2]
                        sc = node_score[t]
                if sc is not None:
                    cand = base + sc
                    b = best[e]
                    if cand > b:
                        second[e] = b
                        best[e] = cand
                        starts[e] = s
                        ids[e] = node_id[t]
                    elif cand > second[e]:
                        second[e] = cand
                t = kids[t].get(padded[e])
        p_ids: list[int] = []
        p_lens: list[int] = []
        margin = math.inf  # min over path ends e of (winning margin at e) / (e + 2)
        e = n
        while e > 0:
            p_ids.append(ids[e])
            s = starts[e]
            p_lens.append(e - s)
            d = (best[e] - second[e]) / (e + 2)
            margin = min(margin, d)
            e = s
        p_ids.reverse()
        p_lens.reverse()
        # bound on |T + V(s) + score| - |T| over every candidate (V can be > 0 with bonus pieces)
        mag = max(-min(best), max(best)) + self.model._worst if n else 0.0
        # The largest |T| for which the path is exact from T (see `columns`), a hair under.
        # Why: let M >= |T| + mag bound every value the float32 DP forms, u = 2**-24. Each stored
        # score is one rounding (<= u*M) away from its exact value plus its predecessor's error,
        # so F(s) is within s*u*M of T + V(s), whatever was decided elsewhere. At a path end e the
        # winner's exact sum beats every other candidate's by the margin d_e; after the
        # predecessors' errors (2*(e-1)*u*M) the float32 sums must still differ by more than one
        # ulp (2*u*M) so that rounding cannot make them equal: d_e > 2*e*u*M = e * 1.19e-7 * M
        # suffices; we ask for (e + 2) * 2.4e-7 * M, i.e. M < min_e(d_e / (e + 2)) / 2.4e-7.
        cap = min(SCORE_RESET * 0.99 - mag, margin / _MARGIN_PER_ADD - 1.0 - mag) * (1.0 - 1e-9)
        return tuple(p_ids), tuple(p_lens), cap, tuple(map(self.model._score_of.__getitem__, p_ids)), False


def _unigram_chunker(space: re.Pattern[str] | None, piece_chars: frozenset[str]) -> re.Pattern[str] | None:
    """`space_chunker`'s pattern, also cutting around every run of characters that no piece
    contains (no piece can span such a cut); such a run is one chunk of its own."""
    if space is None:
        return None
    plain = [c for c in piece_chars if c != SPACE]
    if not plain:
        return space
    q = f"[{chars_class(plain)}]"
    prefix_mode = space.pattern.startswith(SPACE)
    core = f"{SPACE}+{q}*|{q}+" if prefix_mode else f"{q}*{SPACE}+|{q}+"
    everything = chars_class(piece_chars)
    return re.compile(f"[^{everything}]+|{core}")
