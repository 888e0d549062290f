"""What the merge trainers (BPE, WordPiece) share: the vocabulary table, the corpus words as symbol
ids, the history the merge slider reads, and BPE's pair queue.

A merge trainer runs in phases, each a method here or on the trainer: **specials** (ids first),
**alphabet** (the base symbols), **words** (each distinct corpus word as symbol ids), **pairs**
(adjacent pair counts and where they occur), **merges** (pick a pair, record it, apply it to the
words it occurs in) and **result** (`MergeState.result`). `MergeState` holds everything that
outlives a phase.

`PairQueue` is BPE's pairs + merges phases over integer ids: HF's incremental algorithm (pair
counts and a pair -> words index updated only around each merge, a priority queue with lazy
invalidation; see `tokviz.training.bpe` for the rules it reproduces). Its kernel is
``tokviz.training._count`` (a small optional C extension) when built, else `PyPairQueue` here;
both give the same merges (a test compares them), ``TOKVIZ_PURE_PYTHON=1`` selects the Python one.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["MergeState", "PyPairQueue", "pair_queue", "native_kernel"]


class MergeState:
    """The vocabulary (ids in creation order), the words and the history of a merge run.

    ``record``: keep, for every word, each merge that changed it and its symbols after it (the
    merge slider's steps); without it only the first and last steps can be shown.
    """

    def __init__(self, specials: Sequence[str], *, record: bool) -> None:
        self.id_to_token: list[str] = []
        self.token_to_id: dict[str, int] = {}
        for tok in specials:
            self.add(tok)
        self.record = record
        self.word_list: list[str] = []
        self.word_counts: list[int] = []
        self.initial: list[tuple[int, ...]] = []
        self.n_base = 0
        self.merges: list[tuple[int, int, int]] = []  # (left id, right id, new id)
        self.counts: list[int] = []
        self.duplicates: list[bool] = []
        self.scores: list[float] = []
        self.hist_k: list[list[int]] = []
        self.hist_seg: list[list[tuple[int, ...]]] = []
        self.touched_by: list[list[int]] = []
        self.tokens_after: list[int] = []

    def add(self, tok: str) -> int:
        """The id of ``tok``, a new one (the next) when it is not in the vocabulary yet."""
        i = self.token_to_id.get(tok)
        if i is None:
            i = len(self.id_to_token)
            self.id_to_token.append(tok)
            self.token_to_id[tok] = i
        return i

    def mark_base(self) -> None:
        """The ids so far are the base vocabulary (specials and alphabet: ``n_base``)."""
        self.n_base = len(self.id_to_token)

    def set_words(self, words: Sequence[str], counts: Sequence[int], symbols: Sequence[Sequence[int]]) -> None:
        """The corpus words, their counts and their symbols before any merge."""
        self.word_list, self.word_counts = list(words), list(counts)
        self.initial = [tuple(s) for s in symbols]
        if self.record:
            self.hist_k = [[] for _ in words]
            self.hist_seg = [[] for _ in words]
        self.tokens_after = [sum(len(s) * c for s, c in zip(self.initial, self.word_counts))]

    def merged(self, a: int, b: int, prefix: str | None) -> tuple[str, int, bool]:
        """The token of merging ``a`` and ``b`` (the right side's continuation ``prefix`` dropped),
        its id, and whether it already existed (HF's duplicate merge: the id is reused)."""
        left, right = self.id_to_token[a], self.id_to_token[b]
        if prefix and right.startswith(prefix):
            right = right[len(prefix) :]
        new_tok = left + right
        duplicate = new_tok in self.token_to_id
        return new_tok, self.add(new_tok), duplicate

    def record_merge(self, a: int, b: int, new_id: int, count: int, duplicate: bool, score: float | None = None) -> int:
        """Merge k (returned) is (a, b) -> new_id, chosen with ``count`` (and ``score``)."""
        self.merges.append((a, b, new_id))
        self.counts.append(count)
        self.duplicates.append(duplicate)
        if score is not None:
            self.scores.append(score)
        return len(self.merges) - 1

    def record_words(self, k: int, changed: Sequence[int], segments: Sequence[Sequence[int]], removed: int) -> None:
        """Merge k changed the words ``changed`` into ``segments`` and removed ``removed`` tokens."""
        if self.record:
            for wi, seg in zip(changed, segments):
                self.hist_k[wi].append(k)
                self.hist_seg[wi].append(tuple(seg))
            self.touched_by.append(list(changed))
        self.tokens_after.append(self.tokens_after[-1] - removed)

    def result(self, cls: type, trainer: Any, final_words: Sequence[Sequence[int]] | None) -> Any:  # noqa: ANN401
        """The trainer's result (`BpeResult` or a subclass) of this run."""
        return cls(
            trainer=trainer,
            id_to_token=tuple(self.id_to_token),
            merge_ids=tuple(self.merges),
            merge_counts=tuple(self.counts),
            duplicate_flags=tuple(self.duplicates),
            n_base=self.n_base,
            words=tuple(self.word_list),
            word_counts=tuple(self.word_counts),
            initial_words=tuple(self.initial),
            hist_k=self.hist_k,
            hist_seg=self.hist_seg,
            tokens_after=tuple(self.tokens_after),
            touched_by=self.touched_by,
            final_words=None if self.record else tuple(tuple(w) for w in final_words or ()),
        )


class PyPairQueue:
    """BPE's pair counts, pair -> words index and merge queue over symbol-id words (pure Python).

    ``words`` are modified in place. ``sym_len[i]``: how many base symbols id i spans (for
    ``max_len``, HF's ``max_token_length``; None: no limit). `pop` returns the next pair to merge
    and `merge` applies it to the words of that queue entry.

    Queue entries are ``(-count, left, right, seq, words)``: the highest count first, then the
    smaller pair of ids, then the older entry; an entry whose count changed since it was pushed
    is pushed back with the current count and its *old* word set (HF's lazy invalidation).
    """

    def __init__(
        self, words: list[list[int]], counts: Sequence[int], sym_len: Sequence[int], max_len: int | None
    ) -> None:
        self.words = words
        self.counts = list(counts)
        self.sym_len = list(sym_len)
        self.max_len = max_len
        self.seq = 0
        self.current: set[int] = set()
        pair_counts: dict[tuple[int, int], int] = {}
        where: dict[tuple[int, int], set[int]] = {}
        for wi, syms in enumerate(words):
            c = self.counts[wi]
            for p in zip(syms, syms[1:]):
                pair_counts[p] = pair_counts.get(p, 0) + c
                s = where.get(p)
                if s is None:
                    where[p] = {wi}
                else:
                    s.add(wi)
        self.pair_counts = pair_counts
        heap = []
        for p, pos in where.items():
            if pair_counts[p] > 0:
                heap.append((-pair_counts[p], p[0], p[1], self.seq, pos))
                self.seq += 1
        heapq.heapify(heap)
        self.heap = heap

    def __len__(self) -> int:
        """Distinct pairs counted before any merge (after: pairs ever seen)."""
        return len(self.pair_counts)

    def pop(self) -> tuple[int, int, int] | None:
        """(left, right, count) of the next entry whose count is current, or None when empty."""
        heap, pc = self.heap, self.pair_counts
        while heap:
            neg, a, b, _, pos = heapq.heappop(heap)
            cur = pc[(a, b)]
            if -neg != cur:
                heapq.heappush(heap, (-cur, a, b, self.seq, pos))
                self.seq += 1
                continue
            self.current = pos
            return a, b, cur
        return None

    def merge(self, a: int, b: int, new_id: int, *, changed: bool = False) -> tuple[int, int, list[int]]:
        """Apply (a, b) -> new_id to the words of the last popped entry: (words touched, tokens
        removed, the words changed when ``changed``), with exactly the neighbour-pair changes
        HF's ``Word::merge`` reports (the merged pair's own count is left alone, as in HF)."""
        sym_len, limit = self.sym_len, self.max_len
        while len(sym_len) <= new_id:
            sym_len.append(1)
        new_len = sym_len[new_id] = sym_len[a] + sym_len[b]
        pc, words, counts = self.pair_counts, self.words, self.counts
        pcget = pc.get
        where: dict[tuple[int, int], set[int]] = {}
        touched = removed = 0
        out: list[int] = []
        for wi in self.current:
            w = words[wi]
            if a not in w:
                continue
            c = counts[wi]
            i = hit = 0
            while True:
                try:
                    i = w.index(a, i)
                except ValueError:
                    break
                if i + 1 < len(w) and w[i + 1] == b:
                    hit += 1
                    if i > 0:
                        pv = w[i - 1]
                        pc[(pv, a)] = pcget((pv, a), 0) - c  # may go below 0 with max_len, as in HF
                        if limit is None or sym_len[pv] + new_len < limit:
                            q = (pv, new_id)
                            pc[q] = pcget(q, 0) + c
                            where.setdefault(q, set()).add(wi)
                    w[i] = new_id
                    del w[i + 1]
                    if i < len(w) - 1:
                        nx = w[i + 1]
                        pc[(b, nx)] = pcget((b, nx), 0) - c
                        if limit is None or sym_len[nx] + new_len < limit:
                            q = (new_id, nx)
                            pc[q] = pcget(q, 0) + c
                            where.setdefault(q, set()).add(wi)
                i += 1
            if hit:
                touched += 1
                removed += hit * c
                if changed:
                    out.append(wi)
        for q, st in where.items():
            cnt = pc[q]
            if cnt > 0:
                heapq.heappush(self.heap, (-cnt, q[0], q[1], self.seq, st))
                self.seq += 1
        return touched, removed, out

    def word(self, wi: int) -> list[int]:
        """The symbols of word ``wi`` now."""
        return self.words[wi]

    def segments(self) -> list[tuple[int, ...]]:
        """Every word's symbols now."""
        return [tuple(w) for w in self.words]


def native_kernel() -> Any:  # noqa: ANN401 - the module, or None
    """The C pair queue (``tokviz.training._count``), or None (not built, or TOKVIZ_PURE_PYTHON=1)."""
    if os.environ.get("TOKVIZ_PURE_PYTHON", "").strip() not in ("", "0"):
        return None
    try:
        from . import _count  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _count


def pair_queue(
    words: list[list[int]], counts: Sequence[int], sym_len: Sequence[int], max_len: int | None
) -> Any:  # noqa: ANN401
    """BPE's pair queue: the C kernel's when it is built, else `PyPairQueue` (the same merges)."""
    native = native_kernel()
    if native is not None:
        return native.PairQueue(words, list(counts), list(sym_len), -1 if max_len is None else max_len)
    return PyPairQueue(words, counts, sym_len, max_len)
