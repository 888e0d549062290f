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

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress
from typing import Any

from .. import kernels
from ..caching import BoundedCache
from ..encoding import UnigramTrace
from ..errors import TokvizFormatError
from ..fields import Fields
from . import Model, ModelToken
from ._py_fast import UnigramChunks
from ._spm import SCORE_RESET, PieceType, SentencePieceVocab, byte_piece, to_float32

__all__ = ["FLT_MIN", "UNK_PENALTY", "Unigram"]

UNK_PENALTY = 10.0
FLT_MIN = 1.1754943508222875e-38  # C's FLT_MIN: SentencePiece's initial max_score

_KIND_SCORE = 0  # a normal piece: float32 (SentencePiece) / float64 (HF) score
_KIND_USER = 1  # SentencePiece USER_DEFINED: a double bonus score
_KIND_UNUSED = 2  # in the trie but never a candidate

_CACHE_LIMIT = 100_000  # chunks `Unigram.tokenize` caches
_CACHE_MAX_CHARS = 256
_MIN_JUMP = 4  # the shortest run of prefix-only nodes a walk jumps over (`chain_jumps`)


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
        self._build()
        self._cache = BoundedCache(_CACHE_LIMIT, max_key_chars=_CACHE_MAX_CHARS)

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        """The scores the DPs need; the tries are lazy tables (below)."""
        types = self.piece_types
        scores = self.scores
        if self.sentencepiece:
            normal = list(compress(scores, map(PieceType.NORMAL.__eq__, types)))
            min_score = min(normal) if normal else 3.4028234663852886e38
            max_score = max([FLT_MIN, *normal])
            self.unk_score = _f32(min_score - UNK_PENALTY)
        else:
            min_score = min(scores) if scores else 0.0
            max_score = max(scores) if scores else 0.0
            self.unk_score = min_score - UNK_PENALTY
        self.min_score = min_score
        self.max_score = max_score

    def _trie_entries(self) -> tuple[list[str], list[float | None], list[int]]:
        """The pieces in the trie, in id order, with their DP score (None: in the trie but no
        candidate, an UNUSED piece) and id: what both tries are made of. SentencePiece puts
        NORMAL, USER_DEFINED and UNUSED pieces in it; HF every piece."""
        types = self.piece_types
        if self.sentencepiece:
            keep = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
            ids = [i for i, t in enumerate(types) if t in keep and self.pieces[i]]
        else:
            ids = [i for i, p in enumerate(self.pieces) if p]
        pieces = list(map(self.pieces.__getitem__, ids))
        scores: list[float | None] = list(map(self.scores.__getitem__, ids))
        if self.sentencepiece and (PieceType.UNUSED in types or PieceType.USER_DEFINED in types):
            for k, i in enumerate(ids):
                t = types[i]
                if t == PieceType.UNUSED:
                    scores[k] = None
                elif t == PieceType.USER_DEFINED:
                    # sentencepiece 0.2.3 GetUserDefinedScore(length in bytes): float(0.1 * (len - 1))
                    scores[k] = _f32(0.1 * (len(pieces[k].encode("utf-8")) - 1))
        return pieces, scores, ids

    # ------------------------------------------------------------------ lazy tables
    # Built on first read (`functools.cached_property`, see `tokviz.engine.caching`): with the
    # native core an encode needs only `_native_trie`, made from the pieces in C; the Python
    # trie serves the pure-Python kernels, the lattice and the traces.
    @cached_property
    def _native_trie(self) -> Any:
        """The native Viterbi's trie (None without the native core)."""
        return None if self._native is None else self._native.unigram_trie(*self._trie_entries())

    @cached_property
    def _trie(self) -> _PyTrie:
        """The Python trie (`_PyTrie`)."""
        pieces, scores, ids = self._trie_entries()
        types = self.piece_types
        user = PieceType.USER_DEFINED if self.sentencepiece else None
        kinds = [_KIND_UNUSED if sc is None else _KIND_USER if types[i] == user else _KIND_SCORE
                 for sc, i in zip(scores, ids)]
        return _PyTrie.of(pieces, scores, ids, kinds)

    @cached_property
    def _kids(self) -> list[dict[str, int]]:
        return self._trie.kids

    @cached_property
    def _root(self) -> dict[str, int]:
        return self._kids[0]

    @cached_property
    def _node_info(self) -> tuple[tuple[int, float, int] | None, ...]:
        return self._trie.node_info

    @cached_property
    def _node_score(self) -> tuple[float | None, ...]:
        return self._trie.node_score

    @cached_property
    def _node_id(self) -> tuple[int, ...]:
        return self._trie.node_id

    @cached_property
    def _jumps(self) -> tuple[tuple[str, int, int] | None, ...]:
        return chain_jumps(self._kids, self._node_score)

    @cached_property
    def _singles(self) -> frozenset[str]:
        """First characters that are a scored single-char piece (else the unknown node is offered)."""
        return frozenset(c for c, n in self._kids[0].items() if self._node_score[n] is not None)

    @cached_property
    def _sentinel(self) -> str:
        """A character no trie edge carries (ends a walk at the end of a text)."""
        used = {c for k in self._kids for c in k}
        return next(c for c in ("\uffff", "\U0010ffff", "\x00", "\ufffe") if c not in used)

    @cached_property
    def _worst(self) -> float:
        return max([abs(v) for v in self.scores] + [abs(self.unk_score), 1.0])

    @cached_property
    def _score_of(self) -> tuple[float, ...]:
        """The score used on the path for each id (the unk node's score for the unk id)."""
        return tuple(self._path_scores())

    @cached_property
    def _fast(self) -> UnigramChunks | None:
        """The tuned pure-Python kernel (`_py_fast`), only without the native core."""
        return UnigramChunks.of(self) if self.sentencepiece and self._native is None else None

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

    def id_to_token(self, id: int) -> str | None:
        return self.pieces[id] if 0 <= id < len(self.pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._token_to_id)

    def vocab_by_id(self) -> Sequence[str | None]:
        return self.pieces  # (an id is its piece's index)

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def clear_cache(self) -> None:
        self._cache.clear()
        if self._fast is not None:
            self._fast.cache.clear()

    # ------------------------------------------------------------------ encoding
    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        if not text:
            return ()
        got = self._cache.get(text)
        if got is None:
            got = tuple(zip(*self.tokenize_columns(text)))
            self._cache.put(text, got)
        return got

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
        elif self._fast is not None:
            return self.spm.finish_columns(text, *self._fast.columns(text))  # type: ignore[union-attr]
        elif self.spm is not None:
            raw = self.spm.finish(text, self.viterbi(text))
        else:
            raw = self._hf_finish(text, self.viterbi(text))
        return [t[0] for t in raw], [t[1] for t in raw], [t[2] for t in raw]

    def _native_path(self, text: str) -> tuple[list[int], list[int], list[int]] | None:
        """The best path of the whole ``text`` from the native Viterbi (SentencePiece's float32
        DP or HF's float64 one, as `_viterbi`); None: the Python kernels run
        (no native core, or a char with no candidate and no unk id, whose error they raise).
        The native DP needs no chunk cache: it is the exact DP the cached chunks reproduce.
        For SentencePiece without byte fallback the runs of unknown pieces come merged
        (`merge_unknown_runs`, the whole of `SentencePieceVocab.finish_columns` there)."""
        if self._native is None:
            return None
        trie = self._native_trie
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
        """The best path as ``(id, start, end)`` nodes before unknown merging / byte fallback
        (the reference DP; SentencePiece's float32 one for a ``.model``)."""
        return self._viterbi(text, float32=self.sentencepiece)[0]

    def _viterbi(self, text: str, *, float32: bool, start_score: float = 0.0) -> tuple[list[tuple[int, int, int]], float]:
        """The best path of ``text`` as ``(id, start, end)`` nodes, and its score: the one
        Python Viterbi (the native core's twin).

        Candidates at each start position are the trie's pieces that start there, shorter first,
        then the unknown node when no single-char piece exists; a position's best is replaced
        only by a strictly better score, so ties go to the earliest start. ``float32``:
        sentencepiece 0.2.3 ``EncodeOptimized``, path scores stored as float32 (an ``array('f')``
        rounds like the C++ ``float``; a candidate wins only if it still beats the best after that
        rounding) and re-based to 0 whenever the score at a start position leaves ±1e5
        (kScoreResetThreshold), from float32 ``start_score``; else HF's float64 DP.
        """
        n = len(text)
        best = array("f" if float32 else "d", bytes((4 if float32 else 8) * (n + 1)))
        best[0] = start_score
        starts = [-1] * (n + 1)
        ids = [0] * (n + 1)
        kids = self._kids
        node_score = self._node_score
        node_id = self._node_id
        jumps = self._jumps
        unk_score = self.unk_score
        unk_id = self.unk_id
        frontier = 0  # the furthest end reached (the scores a re-basing shifts)
        for s in range(n):
            base = best[s]
            if float32 and (base < -SCORE_RESET or base > SCORE_RESET):
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
                sc = node_score[t]
                if sc is None:  # a prefix only, or an UNUSED piece
                    j = jumps[t]
                    if j is None:
                        node = t
                        continue
                    if not text.startswith(j[0], e):
                        break
                    e += j[1]
                    t = j[2]
                    sc = node_score[t]
                    if sc is None:
                        node = t
                        continue
                node = t
                frontier = max(frontier, e)
                cand = base + sc
                if starts[e] == -1:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = node_id[t]
                elif cand > best[e]:
                    old = best[e]
                    best[e] = cand
                    if best[e] != old:  # (float32: it must not round down to the old best)
                        starts[e] = s
                        ids[e] = node_id[t]
                if e == s + 1:
                    single = True
            if not single:
                if unk_id is None:
                    raise TokvizFormatError(f"Unigram: no piece covers {text[s]!r} and the model has no unk_id")
                e = s + 1
                frontier = max(frontier, e)
                cand = base + unk_score
                if starts[e] == -1:
                    best[e] = cand
                    starts[e] = s
                    ids[e] = unk_id
                elif cand > best[e]:
                    old = best[e]
                    best[e] = cand
                    if best[e] != old:
                        starts[e] = s
                        ids[e] = unk_id
        return _backtrack(starts, ids, n), best[n]

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
            j = self._jumps[t]
            if j is not None:  # (a run of prefix-only nodes: one comparison)
                if not text.startswith(j[0], e):
                    break
                e += j[1]
                t = j[2]
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


@dataclass(frozen=True, slots=True)
class _PyTrie:
    """The Python trie as numbered nodes (node 0 is the root): ``kids[n]`` maps a character to
    the next node, ``node_info[n]`` is the piece ending at n (None: a prefix only),
    ``node_score[n]`` its score for the DP (None: no candidate) and ``node_id[n]`` its id. Flat
    lists of ``{str: int}`` dicts and atoms hold no reference cycles and almost nothing the
    cycle collector tracks (a trie of nested lists made every full collection walk ~100k
    objects)."""

    kids: list[dict[str, int]]
    node_info: tuple[tuple[int, float, int] | None, ...]
    node_score: tuple[float | None, ...]
    node_id: tuple[int, ...]

    @classmethod
    def of(cls, pieces: list[str], scores: list[float | None], ids: list[int], kinds: list[int]) -> _PyTrie:
        """The trie of `Unigram._trie_entries` (``kinds``: `_KIND_SCORE` ...); the first piece
        with a string keeps its node."""
        kids: list[dict[str, int]] = [{}]
        node_info: list[tuple[int, float, int] | None] = [None]
        node_score: list[float | None] = [None]
        node_id: list[int] = [-1]
        claimed = bytearray(1)
        for p, sc, i, kind in zip(pieces, scores, ids, kinds):
            node = 0
            for c in p:
                nxt = kids[node].get(c)
                if nxt is None:
                    nxt = kids[node][c] = len(kids)
                    kids.append({})
                    node_info.append(None)
                    node_score.append(None)
                    node_id.append(-1)
                    claimed.append(0)
                node = nxt
            if not claimed[node]:
                claimed[node] = 1
                node_info[node] = (kind, 0.0 if sc is None else sc, i)
                node_score[node] = sc
                node_id[node] = i
        # (tuples of atoms: the cycle collector stops tracking them)
        return cls(kids, tuple(node_info), tuple(node_score), tuple(node_id))


def chain_jumps(kids: list[dict[str, int]], node_score: Sequence[float | None]) -> tuple[tuple[str, int, int] | None, ...]:
    """For each trie node that starts a chain of prefix-only nodes with one child each, the jump
    over the chain: ``(label, len(label), target)``, the characters the walk must meet after the
    node and the node it then reaches (scored, or with a choice of children, or a leaf); None
    elsewhere. A walk follows a chain with one ``str.startswith`` instead of a step per
    character, so a piece thousands of characters long costs a comparison at each start, not a
    walk (nothing ends inside a chain: no candidate is skipped). Built in one pass over the
    nodes (a child's number is above its parent's); chains shorter than `_MIN_JUMP` are left to
    the walk."""
    n = len(kids)
    unary = [sc is None and len(k) == 1 for k, sc in zip(kids, node_score)]
    unary[0] = False  # (the root is never reached by a step)
    inner = bytearray(n)
    for k in compress(range(n), unary):
        for child in kids[k].values():
            if unary[child]:
                inner[child] = 1
    jumps: list[tuple[str, int, int] | None] = [None] * n
    for k in compress(range(n), unary):
        if inner[k]:
            continue
        chars = []
        x = k
        while unary[x]:
            ((c, x),) = kids[x].items()
            chars.append(c)
        if len(chars) >= _MIN_JUMP:
            jumps[k] = ("".join(chars), len(chars), x)
    return tuple(jumps)


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
