"""Unigram model: HF tokenizers' ``"Unigram"`` and SentencePiece's unigram ``.model`` encoder.

A Unigram vocabulary gives every piece a log-probability; encoding picks the segmentation with
the highest total (Viterbi). Candidates at a position are the vocabulary pieces that start there
(a character trie walk), plus an unknown node of score ``min_score - 10`` when no single-char
piece exists. Ties go to the first candidate considered, i.e. the one that starts earliest
(both references update a position only on a strictly better score and scan starts left to
right, shorter pieces first).

Two flavours, because the references differ in details that change results:

* ``sentencepiece=True`` (sentencepiece 0.2.3 ``unigram_model.cc``, ``EncodeOptimized``): only
  NORMAL, USER_DEFINED and UNUSED pieces are in the trie; UNUSED are skipped; ``min_score`` is
  taken over NORMAL pieces; a USER_DEFINED piece scores ``0.1 * (len_bytes - 1)``; path scores
  are **float32** sums (reproduced exactly: an ``array('f')`` store rounds like the C++
  ``float``), re-based to 0 whenever the score at a start position leaves ±1e5 -- on long
  texts this rounding decides between permutations of the same pieces ("000"+"0000" vs
  "0000"+"000"). Then SentencePiece's processor step merges unknown runs or byte-falls them
  back (`SentencePieceVocab.finish`).
* HF (``from_json``): every piece is in the trie, ``min_score`` over all pieces, float64,
  unknown runs fused, byte fallback of a fused unknown run to ``<0xNN>`` pieces each spanning
  the whole run (when every byte piece exists, else the unk id).

The lattice as data (every node, n-best, marginals, sampling) is `tokviz.engine.lattice`.
"""

from __future__ import annotations

import math
import re
from array import array
from itertools import accumulate, chain, compress, repeat
from operator import is_, itemgetter
from collections.abc import Sequence
from typing import Any

from .. import kernels
from ..encoding import UnigramTrace
from ..errors import TokvizFormatError
from ..fields import Fields
from ..unicode_tables import chars_class
from . import Model, ModelToken
from ._spm import SPACE, PieceType, SentencePieceVocab, byte_piece, space_chunker, to_float32

__all__ = ["Unigram", "UNK_PENALTY", "FLT_MIN"]

UNK_PENALTY = 10.0
FLT_MIN = 1.1754943508222875e-38  # C's FLT_MIN: SentencePiece's initial max_score

_KIND_SCORE = 0  # a normal piece: float32 (SentencePiece) / float64 (HF) score
_KIND_USER = 1  # SentencePiece USER_DEFINED: a double bonus score
_KIND_UNUSED = 2  # in the trie but never a candidate

_CACHE_LIMIT = 100_000
_RESET = 100000.0  # sentencepiece's kScoreResetThreshold
_CACHE_MAX_CHARS = 256
# A chunk cache entry: the path's ids and piece lengths, the bound on |T| under which the float32
# DP from T takes it, its scores, and whether it is a run of unknown characters.
_Entry = tuple[tuple[int, ...], tuple[int, ...], float, tuple[float, ...], bool]
# float32 rounding allowance per addition on a path, relative to the magnitudes (2 * 2**-23)
_MARGIN_PER_ADD = 2.4e-7
_ADD_ERR = 0.006  # > 1e5 * 2**-24: the rounding of one float32 addition below the re-basing threshold


def _f32(x: float) -> float:
    return array("f", (x,))[0]


class Unigram(Model):
    """A Unigram language-model segmenter.

    >>> m = Unigram([("<unk>", 0.0), ("a", -1.9), ("b", -1.9), ("ab", -0.9)], unk_id=0)
    >>> [(m.id_to_token(i), s, e) for i, s, e in m.tokenize("abab")]
    [('ab', 0, 2), ('ab', 2, 4)]
    """

    type_name = "Unigram"

    def __init__(
        self,
        vocab: Sequence[tuple[str, float]],
        *,
        unk_id: int | None = None,
        byte_fallback: bool = False,
        piece_types: Sequence[int] | None = None,
        sentencepiece: bool = False,
        source: str | None = None,
    ) -> None:
        self.sentencepiece = sentencepiece
        self.byte_fallback = byte_fallback
        pieces = tuple(p for p, _ in vocab)  # (tuples of atoms: see `_build`)
        if sentencepiece:
            types = list(piece_types) if piece_types is not None else [
                PieceType.UNKNOWN if i == unk_id else PieceType.NORMAL for i in range(len(pieces))
            ]
            self.spm: SentencePieceVocab | None = SentencePieceVocab(
                pieces, [s for _, s in vocab], types, byte_fallback=byte_fallback, source=source
            )
            self.scores = self.spm.scores
            self.unk_id: int | None = self.spm.unk_id
        else:
            self.spm = None
            self.scores = tuple(float(s) for _, s in vocab)
            if unk_id is not None and not 0 <= unk_id < len(pieces):
                raise TokvizFormatError(f"unk_id {unk_id} is outside the vocabulary of {len(pieces)} pieces",
                                        source=source)
            self.unk_id = unk_id
        self.pieces = pieces
        self.piece_types = self.spm.types if self.spm is not None else (PieceType.NORMAL,) * len(pieces)
        self._token_to_id: dict[str, int] = {}
        for i, p in enumerate(pieces):
            self._token_to_id.setdefault(p, i)
        self._native = kernels.native  # the native Viterbi, or None (see `_native_trie`)
        self._native_trie: Any = None
        self._build()
        self._cache: dict[str, tuple[ModelToken, ...]] = {}
        self._chunk_cache: dict[str, _Entry] = {}

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        types = self.piece_types
        scores = self.scores
        if self.sentencepiece:
            normal = [s for s, t in zip(scores, types) if t == PieceType.NORMAL]
            min_score = min(normal) if normal else 3.4028234663852886e38
            max_score = max([FLT_MIN, *normal])
            in_trie = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
            self.unk_score = _f32(min_score - UNK_PENALTY)
        else:
            min_score = min(scores) if scores else 0.0
            max_score = max(scores) if scores else 0.0
            in_trie = tuple(PieceType)
            self.unk_score = min_score - UNK_PENALTY
        self.min_score = min_score
        self.max_score = max_score
        # The trie as numbered nodes (node 0 is the root): ``kids[n]`` maps a character to the
        # next node, ``info[n]`` is the piece ending at n (None: a prefix only), ``dp_score[n]``
        # its score for the DP (None: no candidate) and ``node_id[n]`` its id. Flat lists of
        # ``{str: int}`` dicts and atoms hold no reference cycles and almost nothing the cycle
        # collector tracks (a trie of nested lists made every full collection walk ~100k objects).
        kids: list[dict[str, int]] = [{}]
        node_info: list[tuple[int, float, int] | None] = [None]
        node_score: list[float | None] = [None]
        node_id: list[int] = [-1]
        for i, (p, t) in enumerate(zip(self.pieces, types)):
            if t not in in_trie or not p:
                continue
            if t == PieceType.UNUSED:
                info: tuple[int, float, int] | None = (_KIND_UNUSED, 0.0, i)
            elif t == PieceType.USER_DEFINED:
                # float(len_bytes) * max_score in float32, then "- 0.1" in double
                # sentencepiece 0.2.3 GetUserDefinedScore(length in bytes): float(0.1 * (len - 1))
                info = (_KIND_USER, _f32(0.1 * (len(p.encode("utf-8")) - 1)), i)
            else:
                info = (_KIND_SCORE, scores[i], i)
            node = 0
            for c in p:
                nxt = kids[node].get(c)
                if nxt is None:
                    nxt = kids[node][c] = len(kids)
                    kids.append({})
                    node_info.append(None)
                    node_score.append(None)
                    node_id.append(-1)
                node = nxt
            if node_info[node] is None:  # the first piece with this string keeps it
                node_info[node] = info
                node_score[node] = None if info[0] == _KIND_UNUSED else info[1]
                node_id[node] = i
        self._kids = kids
        self._root = kids[0]
        # a character no trie edge carries (ends a walk at the end of a text)
        used = {c for k in kids for c in k}
        self._sentinel = next(c for c in ("\uffff", "\U0010ffff", "\x00", "\ufffe") if c not in used)
        # (tuples of atoms: the cycle collector stops tracking them; the native trie takes lists)
        self._node_info = tuple(node_info)
        self._node_score = tuple(node_score)
        self._node_id = tuple(node_id)
        # first characters that are a scored single-char piece (else the unknown node is offered)
        self._singles = frozenset(c for c, n in kids[0].items() if node_score[n] is not None)
        scored = [abs(v) for v in self.scores] + [abs(self.unk_score), 1.0]
        self._worst = max(scored)
        # score used on the path for each id (the unk node's score for the unk id)
        self._score_of = tuple(self._path_scores())
        self._chunker = None
        if self.sentencepiece:
            in_lattice = [p for p, t in zip(self.pieces, types) if t in (PieceType.NORMAL, PieceType.USER_DEFINED)]
            self._piece_chars = frozenset(c for p in in_lattice for c in p)
            self._chunker = _unigram_chunker(space_chunker(in_lattice), self._piece_chars)
            # adjacent characters inside some lattice piece (and the characters that are ever
            # followed inside one): between any other two characters no node can span
            self._bigrams = frozenset(p[k : k + 2] for p in in_lattice for k in range(len(p) - 1))
            self._joins_next = frozenset(p[k] for p in in_lattice for k in range(len(p) - 1))

    def _path_scores(self) -> list[float]:
        out = []
        for i, (p, t) in enumerate(zip(self.pieces, self.piece_types)):
            if i == self.unk_id:
                out.append(self.unk_score)
            elif self.sentencepiece and t == PieceType.USER_DEFINED:
                out.append(_f32(0.1 * (len(p.encode("utf-8")) - 1)))
            else:
                out.append(self.scores[i])
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Unigram:
        f = Fields(obj)
        vocab: list[tuple[str, float]] = []
        for k, entry in enumerate(f.list("vocab")):
            if (not isinstance(entry, (list, tuple)) or len(entry) != 2 or not isinstance(entry[0], str)
                    or not isinstance(entry[1], (int, float)) or isinstance(entry[1], bool)
                    or entry[1] != entry[1]):
                raise TokvizFormatError(f"expected [piece, score], got {entry!r:.80}", where=f"vocab[{k}]")
            vocab.append((entry[0], float(entry[1])))
        unk_id = f.int("unk_id", None, optional=True, minimum=0)
        if unk_id is not None and unk_id >= len(vocab):
            f.fail("unk_id", f"unk_id {unk_id} is outside the vocabulary of {len(vocab)} pieces")
        return cls(vocab, unk_id=unk_id, byte_fallback=f.bool("byte_fallback", False, optional=True))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Unigram",
            "unk_id": self.unk_id,
            "vocab": [[p, s] for p, s in zip(self.pieces, self.scores)],
            "byte_fallback": self.byte_fallback,
        }

    # ------------------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> int | None:
        return self._token_to_id.get(token)

    def id_to_token(self, id: int) -> str | None:  # noqa: A002
        return self.pieces[id] if 0 <= id < len(self.pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._token_to_id)

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._chunk_cache.clear()

    # ------------------------------------------------------------------ encoding
    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        if not text:
            return ()
        got = self._cache.get(text)
        if got is not None:
            return got
        out = tuple(zip(*self.tokenize_columns(text)))
        if len(text) <= _CACHE_MAX_CHARS:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[text] = out
        return out

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns ``(ids, starts, ends)`` (no per-token tuples; not cached here:
        the pipeline caches whole chunk results)."""
        if not text:
            return [], [], []
        native = self._native_path(text)
        if native is not None:
            ids, starts, ends = native
            if self.spm is not None:
                # (without byte fallback the native call has merged the unknown runs already)
                return self.spm.finish_columns(text, ids, starts, ends) if self.spm.byte_fallback else native
            raw = self._hf_finish(text, list(zip(ids, starts, ends)))
        elif self.spm is not None:
            if self._chunker is not None:
                return self.spm.finish_columns(text, *self._sp_columns(text))
            raw = self.spm.finish(text, self._dp_sp(text, 0.0)[0])
        else:
            raw = self._hf_finish(text, self.viterbi(text))
        return [t[0] for t in raw], [t[1] for t in raw], [t[2] for t in raw]

    def _native_path(self, text: str) -> tuple[list[int], list[int], list[int]] | None:
        """The best path of the whole ``text`` from the native Viterbi (SentencePiece's float32
        DP or HF's float64 one, as `_dp_sp` / `_viterbi_f64`); None: the Python kernels run
        (no native core, or a char with no candidate and no unk id, whose error they raise).
        The native DP needs no chunk cache: it is the exact DP the cached chunks reproduce.
        For SentencePiece without byte fallback the runs of unknown pieces come merged
        (`merge_unknown_runs`, the whole of `SentencePieceVocab.finish_columns` there)."""
        if self._native is None:
            return None
        trie = self._native_trie
        if trie is None:
            trie = self._native_trie = self._native.unigram_trie(self._kids, list(self._node_score), list(self._node_id))
        unk = -1 if self.unk_id is None else self.unk_id
        merge_unk = self.spm is not None and not self.spm.byte_fallback
        got = self._native.unigram_viterbi(trie, text, 0.0, self.unk_score, unk, self.sentencepiece, merge_unk)
        return None if got is None else got[:3]

    def token_values(self, text: str, spans: Sequence[ModelToken], values: list[str]) -> list[str]:
        """The token strings of a chunk: an unknown token shows the text it covers (HF's Unigram
        token value; SentencePiece's piece for an unknown run), every other its vocab piece."""
        unk = self.unk_id
        if unk is None or self.pieces[unk] not in values:
            # (an unknown token's value is always the unk piece string: none here)
            return values
        out = values
        for k, (i, s, e) in enumerate(spans):
            if i == unk and e > s:
                if out is values:
                    out = list(values)
                out[k] = text[s:e]
        return out

    def token_values_columns(
        self, text: str, ids: list[int], starts: list[int], ends: list[int], values: list[str]
    ) -> list[str]:
        """`token_values` on columns."""
        unk = self.unk_id
        if unk is None or unk not in ids:
            return values
        if self._native is not None:
            return self._native.spm_unknown_values(text, ids, starts, ends, unk, values)
        out = list(values)
        at = list(compress(range(len(ids)), map(unk.__eq__, ids)))  # the unknown tokens
        covered = map(text.__getitem__, map(slice, map(starts.__getitem__, at), map(ends.__getitem__, at)))
        for k, piece in zip(at, covered):
            if piece:  # (an empty span keeps the unk piece)
                out[k] = piece
        return out

    def tokenize_traced(self, text: str) -> tuple[tuple[ModelToken, ...], tuple[UnigramTrace, ...]]:
        toks = self.tokenize(text)
        traces = []
        unk = self.unk_id
        for i, s, e in toks:
            if i == unk:
                traces.append(UnigramTrace(self.unk_score * max(1, e - s)))
            elif self.piece_types[i] == PieceType.BYTE:
                traces.append(UnigramTrace(self.unk_score))
            else:
                traces.append(UnigramTrace(self.scores[i]))
        return toks, tuple(traces)

    def viterbi(self, text: str) -> list[tuple[int, int, int]]:
        """The best path as ``(id, start, end)`` nodes before unknown merging / byte fallback."""
        if self.sentencepiece:
            return self._viterbi_sp(text)
        return self._viterbi_f64(text)

    def _viterbi_sp(self, text: str) -> list[tuple[int, int, int]]:
        # sentencepiece 0.2.3 EncodeOptimized: float32 path scores (float + float), ties to the
        # first candidate (earliest start), and a re-basing of the scores to 0 whenever the
        # score at a start position leaves [-1e5, 1e5] (kScoreResetThreshold).
        if self._chunker is not None:
            return self._sp_chunked(text)
        return self._dp_sp(text, 0.0)[0]

    def _sp_chunked(self, text: str) -> list[tuple[int, int, int]]:
        """`_sp_columns` as ``(id, start, end)`` nodes."""
        ids, starts, ends = self._sp_columns(text)
        return list(zip(ids, starts, ends))

    def _sp_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
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
        assert self._chunker is not None
        cache = self._chunk_cache
        chunks = self._chunker.findall(text)
        entries = list(map(cache.get, chunks))
        if None in entries:
            # each distinct chunk not cached yet is computed once (C-level passes find them)
            fresh: dict[str, _Entry] = {}
            piece_chars = self._piece_chars
            for chunk in dict.fromkeys(compress(chunks, map(is_, entries, repeat(None)))):
                entry = cache.get(chunk)  # (a part of a chunk computed a moment ago)
                if entry is None:
                    if chunk[0] in piece_chars:
                        entry = self._chunk_path(chunk)
                    else:
                        entry = self._unknown_entry(len(chunk))
                    if len(chunk) <= _CACHE_MAX_CHARS:  # (also the parts of later chunks)
                        if len(cache) >= _CACHE_LIMIT:
                            cache.clear()
                        cache[chunk] = entry
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
        unk_score = self.unk_score
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
                    if total < -_RESET or total > _RESET:
                        total = 0.0
                    slot[0] = total + unk_score
                    total = slot[0]
            else:
                path_x, total = self._dp_sp(chunks[k], total)
                entries[k] = ([p[0] for p in path_x], [p[2] - p[1] for p in path_x])
        return total

    def _unknown_entry(self, n: int) -> _Entry:
        """Cache entry of a run of ``n`` characters no piece contains: ``n`` unknown nodes. No
        re-basing can happen inside it while ``|T| + n * |unk score| (+ rounding)`` stays under
        the threshold."""
        unk = self.unk_score
        cap = _RESET * 0.99 - n * (abs(unk) + _ADD_ERR)
        return (self.unk_id,) * n, (1,) * n, cap, (unk,) * n, True  # type: ignore[return-value]

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
        joins_next = self._joins_next
        bigrams = self._bigrams
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
        cache = self._chunk_cache
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
                if b - a <= _CACHE_MAX_CHARS:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[part] = entry
            p_ids, p_lens, p_cap, p_scores, _ = entry
            c = p_cap - abs(before) - adds * _ADD_ERR
            if c < cap:
                cap = c
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
        root = self._root
        kids = self._kids
        node_score = self._node_score
        node_id = self._node_id
        singles = self._singles
        unk_score = self.unk_score
        unk_id = self.unk_id
        padded = text + self._sentinel  # (the trie walk stops at the end without a test per step)
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
            if d < margin:
                margin = d
            e = s
        p_ids.reverse()
        p_lens.reverse()
        # bound on |T + V(s) + score| - |T| over every candidate (V can be > 0 with bonus pieces)
        mag = max(-min(best), max(best)) + self._worst if n else 0.0
        # The largest |T| for which the path is exact from T (see `_sp_columns`), a hair under.
        # Why: let M >= |T| + mag bound every value the float32 DP forms, u = 2**-24. Each stored
        # score is one rounding (<= u*M) away from its exact value plus its predecessor's error,
        # so F(s) is within s*u*M of T + V(s), whatever was decided elsewhere. At a path end e the
        # winner's exact sum beats every other candidate's by the margin d_e; after the
        # predecessors' errors (2*(e-1)*u*M) the float32 sums must still differ by more than one
        # ulp (2*u*M) so that rounding cannot make them equal: d_e > 2*e*u*M = e * 1.19e-7 * M
        # suffices; we ask for (e + 2) * 2.4e-7 * M, i.e. M < min_e(d_e / (e + 2)) / 2.4e-7.
        cap = min(_RESET * 0.99 - mag, margin / _MARGIN_PER_ADD - 1.0 - mag) * (1.0 - 1e-9)
        return tuple(p_ids), tuple(p_lens), cap, tuple(map(self._score_of.__getitem__, p_ids)), False

    def _dp_sp(self, text: str, start_score: float) -> tuple[list[tuple[int, int, int]], float]:
        """sentencepiece 0.2.3 ``EncodeOptimized`` on ``text`` from float32 score
        ``start_score``: (path, float32 score at the end)."""
        n = len(text)
        best = array("f", bytes(4 * (n + 1)))
        best[0] = start_score
        starts = [-1] * (n + 1)
        ids = [0] * (n + 1)
        kids = self._kids
        node_score = self._node_score
        node_id = self._node_id
        unk_score = self.unk_score
        unk_id = self.unk_id
        frontier = 0
        for s in range(n):
            base = best[s]
            if base < -_RESET or base > _RESET:
                # re-base every score from here to the frontier (exact: same magnitudes)
                for i in range(s, frontier + 1):
                    if i == s or starts[i] != -1:
                        best[i] = best[i] - base
                base = 0.0
            node = 0
            e = s
            single = False
            while e < n:
                t = kids[node].get(text[e])
                if t is None:
                    break
                e += 1
                node = t
                sc = node_score[t]
                if sc is None:
                    continue
                if e > frontier:
                    frontier = e
                cand = base + sc  # exact in double; float32 rounding decides below
                if starts[e] == -1:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = node_id[t]
                elif cand > best[e]:
                    # float32(cand) > best  <=>  cand > best and it does not round down to best
                    old = best[e]
                    best[e] = cand
                    if best[e] != old:
                        starts[e] = s
                        ids[e] = node_id[t]
                if e == s + 1:
                    single = True
            if not single:
                e = s + 1
                if e > frontier:
                    frontier = e
                cand = base + unk_score
                if starts[e] == -1:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = unk_id  # type: ignore[assignment]
                elif cand > best[e]:
                    old = best[e]
                    best[e] = cand
                    if best[e] != old:
                        starts[e] = s
                        ids[e] = unk_id  # type: ignore[assignment]
        return _backtrack(starts, ids, n), best[n]

    def _viterbi_f64(self, text: str) -> list[tuple[int, int, int]]:
        n = len(text)
        best = [0.0] * (n + 1)
        starts = [-1] * (n + 1)
        ids = [0] * (n + 1)
        kids = self._kids
        node_info = self._node_info
        unk_score = self.unk_score
        unk_id = -1 if self.unk_id is None else self.unk_id
        for s in range(n):
            base = best[s]
            node = 0
            e = s
            single = False
            while e < n:
                t = kids[node].get(text[e])
                if t is None:
                    break
                e += 1
                node = t
                info = node_info[t]
                if info is None:
                    continue
                cand = base + info[1]
                if starts[e] < 0 or cand > best[e]:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = info[2]
                if e == s + 1:
                    single = True
            if not single:
                if self.unk_id is None:
                    raise TokvizFormatError(
                        f"Unigram: no piece covers {text[s]!r} and the model has no unk_id"
                    )
                e = s + 1
                cand = base + unk_score
                if starts[e] < 0 or cand > best[e]:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = unk_id
        return _backtrack(starts, ids, n)

    def _hf_finish(self, text: str, raw: list[tuple[int, int, int]]) -> list[ModelToken]:
        unk = self.unk_id
        fused: list[tuple[int, int, int]] = []
        for t in raw:
            if t[0] == unk and fused and fused[-1][0] == unk:
                fused[-1] = (unk, fused[-1][1], t[2])
            else:
                fused.append(t)
        out: list[ModelToken] = []
        for i, s, e in fused:
            if i != unk:
                out.append((i, s, e))
                continue
            piece = text[s:e]
            known = self._token_to_id.get(piece)
            if known is not None:
                out.append((known, s, e))
                continue
            if self.byte_fallback:
                byte_ids = [self._token_to_id.get(byte_piece(b)) for b in piece.encode("utf-8")]
                if all(b is not None for b in byte_ids):
                    out.extend((b, s, e) for b in byte_ids)  # type: ignore[misc]
                    continue
            out.append((i, s, e))
        return out

    # ------------------------------------------------------------------ lattice
    def candidates(self, text: str, start: int) -> list[tuple[int, int, float]]:
        """SentencePiece ``PopulateNodes`` at one position: ``(id, end, score)`` in trie order
        (shorter first), UNUSED skipped, plus the unknown node when no single-char piece exists.
        USER_DEFINED pieces score ``len_chars * max_score`` (float32): the installed sentencepiece's
        n-best scores show no ``- 0.1`` here, unlike the optimized encoder's bonus."""
        out: list[tuple[int, int, float]] = []
        kids = self._kids
        node_info = self._node_info
        node = 0
        e = start
        n = len(text)
        single = False
        while e < n:
            t = kids[node].get(text[e])
            if t is None:
                break
            e += 1
            node = t
            info = node_info[t]
            if info is None:
                continue
            kind, score, pid = info
            if kind == _KIND_UNUSED:
                continue
            if kind == _KIND_USER:
                score = _f32(0.1 * (e - start - 1))  # GetUserDefinedScore(length in chars)
            out.append((pid, e, score))
            if e == start + 1:
                single = True
        if not single:
            if self.unk_id is None:
                raise TokvizFormatError(f"Unigram: no piece covers {text[start]!r} and the model has no unk_id")
            out.append((self.unk_id, start + 1, self.unk_score))
        return out

    def __repr__(self) -> str:
        kind = "sentencepiece" if self.sentencepiece else "hf"
        return f"Unigram({len(self.pieces)} pieces, {kind}, unk_id={self.unk_id}, byte_fallback={self.byte_fallback})"


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


def _backtrack(starts: list[int], ids: list[int], n: int) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    e = n
    while e > 0:
        s = starts[e]
        out.append((ids[e], s, e))
        e = s
    out.reverse()
    return out


# re-exported for the loader
__all__ += ["to_float32"]
