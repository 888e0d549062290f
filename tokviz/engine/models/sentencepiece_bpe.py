"""SentencePiece BPE (``bpe_model.cc``): Llama 2 / Mistral style, merges ordered by piece score.

Unlike HF BPE there is no merges list: the text is split into characters (a USER_DEFINED piece
found by longest match is one frozen symbol that never merges), then, repeatedly, the adjacent
pair whose concatenation is a vocabulary piece with the **highest score** is merged, the
leftmost on ties. A pair whose concatenation is an UNUSED piece still merges, and the result is
resegmented back into the two pieces it was made of (recursively) at the end. Symbols that are
not pieces become the unk id; SentencePiece's processor then merges unknown runs or byte-falls
them back to ``<0xNN>`` (`SentencePieceVocab.finish`).

SentencePiece runs BPE over the whole normalized text. A merge can only join two characters
that occur next to each other inside some piece, so the text is cut where the two neighbouring
characters never do (e.g. before a ``▁`` that follows a letter, when no piece holds ``x▁``);
the chunks are then independent and cached.

With the native core, ``spm_bpe_encode`` (``tokviz/engine/_native/spm.c``) runs the same merge loop over the
whole text in C, with no chunks or caches; `SentencePieceBPE._encode` stays the reference and
runs wherever the C declines (an UNUSED piece formed: its resegmentation is Python's).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import cached_property
from itertools import compress
from typing import Any

import regex

from .. import kernels
from ..encoding import BpeTrace, MergeStep
from . import Model, ModelToken
from ._py_fast import SpmBpeChunks
from ._spm import PieceType, SentencePieceVocab

__all__ = ["SentencePieceBPE"]

_MERGEABLE_TYPES = frozenset((PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED))



class SentencePieceBPE(Model):
    """SentencePiece's BPE encoder.

    >>> m = SentencePieceBPE(["<unk>", "a", "b", "ab"], [0.0, -1.0, -2.0, -0.5], [2, 1, 1, 1])
    >>> [(m.id_to_token(i), s, e) for i, s, e in m.tokenize("aab")]
    [('a', 0, 1), ('ab', 1, 3)]
    """

    type_name = "SentencePieceBPE"  # not an HF type; built by the .model loader

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int],
        *,
        byte_fallback: bool = False,
        source: str | None = None,
    ) -> None:
        self.spm = SentencePieceVocab(pieces, scores, types, byte_fallback=byte_fallback, source=source)
        self.byte_fallback = byte_fallback
        self.pieces = self.spm.pieces
        self.scores = self.spm.scores
        self.types = self.spm.types
        self.unk_id = self.spm.unk_id
        ud = sorted(self.spm.user_defined, key=len, reverse=True)
        self._ud_regex = regex.compile("|".join(regex.escape(u) for u in ud)) if ud else None
        self._kernels = kernels.native  # the native merge loop's module, or None (pure Python)
        self._table: Any = None

    # ------------------------------------------------------------------ lazy tables
    # Built on first read (`functools.cached_property`, see `tokviz.engine.caching`): the native
    # merge loop needs only its own table (`_native_table`, made from the piece columns).
    def _mergeable_columns(self) -> tuple[list[str], list[int], list[float], list[int]]:
        """``pieces_`` of ModelInterface (what a merge may produce: NORMAL, USER_DEFINED and
        UNUSED pieces) as columns: the pieces, their ids, scores and types."""
        is_m = list(map(_MERGEABLE_TYPES.__contains__, self.types))
        return (list(compress(self.pieces, is_m)), list(compress(range(len(is_m)), is_m)),
                list(compress(self.scores, is_m)), list(compress(self.types, is_m)))

    @cached_property
    def _mergeable(self) -> dict[str, tuple[float, int, bool]]:
        """piece -> (score, id, UNUSED?) of every piece a merge may produce."""
        pieces, ids, scores, types = self._mergeable_columns()
        return dict(zip(pieces, zip(scores, ids, map(PieceType.UNUSED.__eq__, types))))

    @cached_property
    def _plain_ids(self) -> dict[str, int]:
        """piece -> id for what a symbol can be without PieceToId's reserved-first rule mattering
        (reserved pieces that are also mergeable strings are looked up the slow way)."""
        reserved = self.spm._reserved
        return {p: i for p, (_, i, _) in self._mergeable.items() if p not in reserved}

    @cached_property
    def _fast(self) -> SpmBpeChunks | None:
        """The tuned pure-Python kernel (`_py_fast`), only without the native core."""
        return SpmBpeChunks(self) if self._kernels is None else None

    def _native_table(self) -> Any:
        """The native piece table (built on first use): every mergeable string with its score,
        and every piece string with the id ``piece_to_id`` gives it; None: the Python runs."""
        table = self._table
        if table is None and self._kernels is not None:
            spm = self.spm
            # piece_to_id of a mergeable string: a reserved piece of that string first, else its own id
            reserved = spm._reserved
            strings, own, scores, types = self._mergeable_columns()
            ids = list(map(reserved.get, strings, own))
            flags = [3 if t == PieceType.UNUSED else 1 for t in types]  # 1: mergeable, 2: UNUSED
            made = set(strings)
            for p, i in reserved.items():  # reserved strings no merge produces keep their own id
                if p not in made:
                    strings.append(p)
                    ids.append(i)
                    scores.append(0.0)
                    flags.append(0)
            table = self._table = self._kernels.spm_bpe_table(strings, ids, scores, flags, list(spm.user_defined), spm.unk_id)
            if table is None:
                self._kernels = None
                self._fast = SpmBpeChunks(self)
        return table

    # ------------------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> int | None:
        return self.spm.lookup(token)

    def id_to_token(self, id: int) -> str | None:
        return self.pieces[id] if 0 <= id < len(self.pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return self.spm.get_vocab()

    def vocab_by_id(self) -> Sequence[str | None]:
        return self.pieces  # (an id is its piece's index)

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def clear_cache(self) -> None:
        if self._fast is not None:
            self._fast.cache.clear()

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "vocab": [[p, s, int(t)] for p, s, t in zip(self.pieces, self.scores, self.types)],
            "byte_fallback": self.byte_fallback,
        }

    # ------------------------------------------------------------------ encoding
    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        return tuple(zip(*self.tokenize_columns(text)))

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns ``(ids, starts, ends)``: chunk results are cached as piece ids
        and lengths (the pieces tile the text), joined with C-level chain/accumulate."""
        if not text:
            return [], [], []
        table = self._native_table()
        if table is not None:
            got = self._kernels.spm_bpe_encode(table, text)  # type: ignore[union-attr]
            if got is not None:
                return self.spm.finish_columns(text, *got)
        fast = self._fast
        if fast is not None:
            ids, starts, ends = fast.columns(text)
        else:
            raw = self._encode(text, None)
            ids, starts, ends = [t[0] for t in raw], [t[1] for t in raw], [t[2] for t in raw]
        # unknown merging / byte fallback across the whole text (a run may span chunks)
        return self.spm.finish_columns(text, ids, starts, ends)

    def token_values_columns(
        self, text: str, ids: list[int], starts: list[int], ends: list[int], values: list[str]
    ) -> list[str]:
        """The vocab strings themselves (`Model.token_values`), without its per-token tuples."""
        return values

    def tokenize_traced(self, text: str) -> tuple[tuple[ModelToken, ...], tuple[BpeTrace | None, ...]]:
        steps: list[tuple[int, int, MergeStep]] = []
        raw = self._encode(text, steps)
        toks = tuple(self.spm.finish(text, raw))
        traces: list[BpeTrace | None] = []
        for _, s, e in toks:
            # a token's history: the merges whose result lies inside it
            mine = tuple(st for (ms, me, st) in steps if s <= ms and me <= e)
            traces.append(BpeTrace(initial=tuple(self._initial(text[s:e])[0]), merges=mine))
        return toks, tuple(traces)

    def _initial(self, text: str) -> tuple[list[str], list[bool]]:
        """Initial symbols: characters, or a whole USER_DEFINED piece (frozen)."""
        ud = self._ud_regex
        if ud is None:
            return list(text), [False] * len(text)
        syms: list[str] = []
        frozen: list[bool] = []
        i = 0
        n = len(text)
        while i < n:
            m = ud.match(text, i)
            if m is not None and m.end() > i:
                syms.append(m.group())
                frozen.append(True)
                i = m.end()
            else:
                syms.append(text[i])
                frozen.append(False)
                i += 1
        return syms, frozen

    def _encode(self, text: str, steps: list[tuple[int, int, MergeStep]] | None) -> list[tuple[int, int, int]]:
        syms, frozen = self._initial(text)
        n = len(syms)
        if n == 0:
            return []
        mergeable = self._mergeable
        starts = []
        pos = 0
        for s in syms:
            starts.append(pos)
            pos += len(s)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        heap: list[tuple[float, int, int, int]] = []
        rev_merge: dict[str, tuple[str, str]] = {}

        def push(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            piece = syms[left] + syms[right]
            got = mergeable.get(piece)
            if got is None:
                return
            score, _, unused = got
            # highest score first, then leftmost (SymbolPairComparator)
            heap.append((-score, left, right, len(piece)))  # heapified below
            if unused:
                rev_merge[piece] = (syms[left], syms[right])

        for i in range(1, n):
            push(i - 1, i)
        heapq.heapify(heap)
        while heap:
            neg, left, right, size = heapq.heappop(heap)
            a, b = syms[left], syms[right]
            if not a or not b or len(a) + len(b) != size:
                continue  # stale: one side was merged away since
            merged = a + b
            if steps is not None:
                position = sum(1 for k in range(left) if syms[k])
                steps.append((starts[left], starts[left] + size,
                              MergeStep(rank=mergeable[merged][1], left=a, right=b, merged=merged, position=position)))
            syms[left] = merged
            syms[right] = ""
            r_next = nxt[right]
            nxt[left] = r_next
            if r_next >= 0:
                prev[r_next] = left
            for l2, r2 in ((prev[left], left), (left, nxt[left])):
                if l2 < 0 or r2 < 0 or frozen[l2] or frozen[r2]:
                    continue
                piece = syms[l2] + syms[r2]
                got = mergeable.get(piece)
                if got is None:
                    continue
                heapq.heappush(heap, (-got[0], l2, r2, len(piece)))
                if got[2]:
                    rev_merge[piece] = (syms[l2], syms[r2])
        out: list[tuple[int, int, int]] = []
        piece_to_id = self.spm.piece_to_id
        i = 0
        if not rev_merge:
            # no UNUSED piece was formed: every symbol is its own piece
            lookup = self._plain_ids.get
            while i != -1:
                w = syms[i]
                pid = lookup(w)
                if pid is None:
                    pid = piece_to_id(w)
                out.append((pid, starts[i], starts[i] + len(w)))
                i = nxt[i]
            return out
        while i != -1:
            self._resegment(syms[i], starts[i], rev_merge, piece_to_id, out)
            i = nxt[i]
        return out

    def _resegment(self, w: str, start: int, rev_merge: dict[str, tuple[str, str]], piece_to_id: Any,
                   out: list[tuple[int, int, int]]) -> None:
        pid = piece_to_id(w)
        if self.types[pid] != PieceType.UNUSED or pid == self.unk_id:
            out.append((pid, start, start + len(w)))
            return
        parts = rev_merge.get(w)
        if parts is None:
            out.append((pid, start, start + len(w)))
            return
        self._resegment(parts[0], start, rev_merge, piece_to_id, out)
        self._resegment(parts[1], start + len(parts[0]), rev_merge, piece_to_id, out)

    def __repr__(self) -> str:
        return f"SentencePieceBPE({len(self.pieces)} pieces, byte_fallback={self.byte_fallback})"
