"""The Unigram lattice as data: every candidate piece, Viterbi, n-best, marginals, sampling.

For a normalized text and a `Unigram` model, `Lattice.build` lists every candidate node the way
SentencePiece's ``PopulateNodes`` does (per start position, pieces in trie order -- shorter
first --, then an unknown node when no single-character piece exists). Everything else is
computed from those nodes, on request, as plain values:

* `Lattice.viterbi` -- the best segmentation (ties: the earliest-starting left node);
* `Lattice.nbest` -- the n best segmentations with their scores, by SentencePiece's A* search
  (exact h(x) from a Viterbi pass) including its priority queue's order among equal scores
  (a binary heap reproducing libstdc++'s ``push_heap``/``pop_heap``), so lists and scores equal
  ``NBestEncode``;
* `Lattice.forward` / `Lattice.backward` / `Lattice.marginals` / `Lattice.log_z` --
  forward-backward in log space with an inverse temperature ``alpha``; ``marginals`` are the
  log posterior probabilities of the nodes;
* `Lattice.sample` -- a segmentation drawn with probability proportional to
  ``exp(alpha * score)`` over *all* paths (SentencePiece's ``enable_sampling=True,
  nbest_size=-1``), by backward sampling from the forward scores;
* `Lattice.sample_nbest` -- a draw among the n best with probability ``∝ exp(alpha * score)``
  (``nbest_size > 1``).

Offsets are characters of the normalized text (``start``/``end``) and of the original text
(``orig_start``/``orig_end``, when the caller passes the alignment). Scores are natural-log
probabilities.

>>> from tokviz.engine.models.unigram import Unigram
>>> import math
>>> m = Unigram([("<unk>", -10.0)] + [(p, math.log(q)) for p, q in
...              [("a", .15), ("b", .15), ("ab", .40), ("aba", .20), ("bab", .10)]], unk_id=0)
>>> lat = Lattice.build(m, "abab")
>>> lat.viterbi().pieces, round(math.exp(lat.viterbi().score), 4)
(('ab', 'ab'), 0.16)
>>> round(math.exp(lat.log_z()), 8)
0.22350625
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["LatticeNode", "Segmentation", "Lattice", "CandidateSource"]


class CandidateSource(Protocol):
    """What a lattice needs from a model (`tokviz.engine.models.unigram.Unigram` is one): the
    pieces, the unknown id, and the candidates that start at a position."""

    pieces: Sequence[str]
    unk_id: int | None

    def candidates(self, text: str, start: int) -> list[tuple[int, int, float]]:
        """``(id, end, score)`` of every node starting at ``start``."""
        ...

_BOS = -1
_EOS = -2
_MAX_AGENDA = 10000  # SentencePiece shrinks its agenda at this size ...
_MIN_AGENDA = 512  # ... down to min(512, 10 * nbest_size) hypotheses


@dataclass(frozen=True, slots=True)
class LatticeNode:
    """One candidate piece: ``text[start:end]`` as vocabulary ``id`` with log-prob ``score``."""

    index: int
    id: int
    piece: str  # the vocabulary piece (for an unknown node: the text it covers)
    start: int  # characters of the normalized text
    end: int
    orig_start: int  # characters of the original text
    orig_end: int
    score: float
    unknown: bool = False


@dataclass(frozen=True, slots=True)
class Segmentation:
    """A path through the lattice: node indices, their ids and pieces, and the path's score."""

    nodes: tuple[int, ...]
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    score: float


class _F32:
    """Round a double to the nearest float32 (a one-slot ``array('f')`` store)."""

    _slot = array("f", [0.0])

    @staticmethod
    def round(x: float, _slot: array = _slot) -> float:
        _slot[0] = x
        return _slot[0]


def _identity(x: float) -> float:
    return x


def _logsumexp(values: Sequence[float]) -> float:
    m = max(values)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(v - m) for v in values))


@dataclass(frozen=True, slots=True, eq=False)
class Lattice:
    """All candidate segmentations of one normalized text under a Unigram model."""

    text: str
    nodes: tuple[LatticeNode, ...]
    begin: tuple[tuple[int, ...], ...]  # begin[pos]: nodes starting at pos (len(text) + 1 lists)
    end: tuple[tuple[int, ...], ...]  # end[pos]: nodes ending at pos

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        model: CandidateSource,
        text: str,
        *,
        original_spans: Sequence[tuple[int, int]] | None = None,
    ) -> Lattice:
        """The lattice of normalized ``text``. ``original_spans[i]`` is the original span of
        normalized character ``i`` (e.g. ``NormalizedText.alignments()``); without it the
        original offsets equal the normalized ones."""
        n = len(text)
        nodes: list[LatticeNode] = []
        begin: list[list[int]] = [[] for _ in range(n + 1)]
        end: list[list[int]] = [[] for _ in range(n + 1)]
        pieces = model.pieces
        unk = model.unk_id

        def orig(s: int, e: int) -> tuple[int, int]:
            if original_spans is None:
                return s, e
            return original_spans[s][0], original_spans[e - 1][1]

        for s in range(n):
            for pid, e, score in model.candidates(text, s):
                k = len(nodes)
                os_, oe = orig(s, e)
                is_unk = pid == unk and e == s + 1 and pieces[pid] != text[s:e]
                nodes.append(LatticeNode(k, pid, text[s:e] if is_unk else pieces[pid], s, e, os_, oe, score, is_unk))
                begin[s].append(k)
                end[e].append(k)
        return cls(text, tuple(nodes), tuple(map(tuple, begin)), tuple(map(tuple, end)))

    def __len__(self) -> int:
        return len(self.nodes)

    def _segmentation(self, path: Sequence[int], score: float) -> Segmentation:
        nodes = self.nodes
        return Segmentation(
            tuple(path), tuple(nodes[k].id for k in path), tuple(nodes[k].piece for k in path), score
        )

    def path_score(self, path: Sequence[int]) -> float:
        """Sum of the node scores of a path (node indices)."""
        return sum(self.nodes[k].score for k in path)

    # ------------------------------------------------------------------ Viterbi
    def _viterbi_scores(self, *, f32: bool = False) -> tuple[list[float], list[int], float, int]:
        """Best score of a path from BOS through each node (inclusive), its best left
        neighbour (-1: BOS), and the same for EOS. Ties keep the first left node in ``end``
        order (SentencePiece's strict ``>``). ``f32``: sums rounded to float32 like
        ``Lattice::Viterbi`` (used by n-best, whose scores SentencePiece reports in float32)."""
        nodes = self.nodes
        rnd = _F32.round if f32 else _identity
        n = len(self.text)
        back = [0.0] * len(nodes)
        prev = [-1] * len(nodes)
        for pos in range(n + 1):
            lefts = self.end[pos]
            for r in self.begin[pos] if pos < n else ():
                rs = nodes[r].score
                if pos == 0:
                    back[r] = rs
                    prev[r] = -1
                    continue
                best = -math.inf
                arg = -1
                first = True
                for left in lefts:
                    sc = rnd(back[left] + rs)
                    if first or sc > best:
                        best, arg, first = sc, left, False
                back[r] = best
                prev[r] = arg
        if n == 0:
            return back, prev, 0.0, -1
        best = -math.inf
        arg = -1
        first = True
        for left in self.end[n]:
            if first or back[left] > best:
                best, arg, first = back[left], left, False
        return back, prev, best, arg

    def viterbi(self) -> Segmentation:
        """The best segmentation and its score."""
        if not self.text:
            return Segmentation((), (), (), 0.0)
        _, prev, best, k = self._viterbi_scores()
        path = []
        while k >= 0:
            path.append(k)
            k = prev[k]
        path.reverse()
        return self._segmentation(path, best)

    # ------------------------------------------------------------------ n-best
    def nbest(self, n: int) -> list[Segmentation]:
        """The ``n`` best segmentations, best first, as SentencePiece's ``NBestEncode``
        (``n`` is clamped to 1..1024 like SentencePiece). Scores are float32 sums like
        SentencePiece's; for ``n == 1`` this is `viterbi` (SentencePiece reports score 0.0
        there, we report the path's score)."""
        if not self.text:
            return [Segmentation((), (), (), 0.0)]
        n = max(1, min(n, 1024))
        if n == 1:
            return [self.viterbi()]
        nodes = self.nodes
        # SentencePiece's A* keeps g(x), f(x) and the Viterbi h(x) in float32
        back, _, eos_back, _ = self._viterbi_scores(f32=True)
        rnd = _F32.round
        # hypothesis: [fx, gx, node, next]; node _EOS/_BOS are the sentinels
        heap = _CxxMaxHeap()
        heap.push([eos_back, 0.0, _EOS, None])
        results: list[Segmentation] = []
        text_len = len(self.text)
        while len(heap):
            top = heap.pop()
            node = top[2]
            if node == _BOS:
                path = []
                h = top[3]
                while h is not None and h[2] != _EOS:
                    path.append(h[2])
                    h = h[3]
                results.append(self._segmentation(path, top[0]))
                if len(results) == n:
                    break
                continue
            pos = text_len if node == _EOS else nodes[node].start
            gx = top[1]
            if pos == 0:
                heap.push([gx, gx, _BOS, top])  # BOS: score 0, h(BOS) = 0
            else:
                for left in self.end[pos]:
                    heap.push([rnd(back[left] + gx), rnd(nodes[left].score + gx), left, top])
            if len(heap) >= _MAX_AGENDA:
                heap.shrink(min(_MIN_AGENDA, n * 10))
        return results

    # ------------------------------------------------------------------ forward-backward
    def _prefix(self, alpha: float) -> list[float]:
        # prefix[pos]: log-sum of exp(alpha * score) over all paths from BOS to position pos
        nodes = self.nodes
        n = len(self.text)
        prefix = [0.0] * (n + 1)
        for pos in range(1, n + 1):
            prefix[pos] = _logsumexp([prefix[nodes[k].start] + alpha * nodes[k].score for k in self.end[pos]])
        return prefix

    def _suffix(self, alpha: float) -> list[float]:
        # suffix[pos]: log-sum of exp(alpha * score) over all paths from position pos to EOS
        nodes = self.nodes
        n = len(self.text)
        suffix = [0.0] * (n + 1)
        for pos in range(n - 1, -1, -1):
            suffix[pos] = _logsumexp([alpha * nodes[k].score + suffix[nodes[k].end] for k in self.begin[pos]])
        return suffix

    def forward(self, alpha: float = 1.0) -> list[float]:
        """Per node: log of the summed ``exp(alpha * score)`` of all paths from BOS to the node's
        start (SentencePiece's ``ForwardAlgorithm``: the node's own score excluded)."""
        prefix = self._prefix(alpha)
        return [prefix[node.start] for node in self.nodes]

    def backward(self, alpha: float = 1.0) -> list[float]:
        """Per node: log of the summed ``exp(alpha * score)`` of all paths from the node's end to EOS."""
        suffix = self._suffix(alpha)
        return [suffix[node.end] for node in self.nodes]

    def log_z(self, alpha: float = 1.0) -> float:
        """Log of the sum over all segmentations of ``exp(alpha * score)``."""
        if not self.text:
            return 0.0
        return self._prefix(alpha)[-1]

    def marginals(self, alpha: float = 1.0) -> list[float]:
        """Log posterior probability of every node (``nodes`` order): log P(node in path | text)."""
        if not self.text:
            return []
        prefix = self._prefix(alpha)
        suffix = self._suffix(alpha)
        z = prefix[-1]
        return [prefix[nd.start] + alpha * nd.score + suffix[nd.end] - z for nd in self.nodes]

    # ------------------------------------------------------------------ sampling
    def sample(self, *, alpha: float = 1.0, rng: random.Random | None = None) -> Segmentation:
        """Draw a segmentation with probability ``∝ exp(alpha * score)`` over all paths."""
        if not self.text:
            return Segmentation((), (), (), 0.0)
        rng = rng or random.Random()
        prefix = self._prefix(alpha)
        nodes = self.nodes
        pos = len(self.text)
        path: list[int] = []
        while pos > 0:
            # P(last node = k | path ends at pos) ∝ exp(prefix[start_k] + alpha * score_k)
            cands = self.end[pos]
            logits = [prefix[nodes[k].start] + alpha * nodes[k].score for k in cands]
            m = max(logits)
            weights = [math.exp(v - m) for v in logits]
            k = rng.choices(cands, weights=weights)[0]
            path.append(k)
            pos = nodes[k].start
        path.reverse()
        return self._segmentation(path, self.path_score(path))

    def sample_nbest(self, *, nbest_size: int, alpha: float = 1.0, rng: random.Random | None = None) -> Segmentation:
        """Draw one of the ``nbest_size`` best segmentations with probability ``∝ exp(alpha * score)``."""
        rng = rng or random.Random()
        cands = self.nbest(nbest_size)
        logits = [alpha * c.score for c in cands]
        m = max(logits)
        return rng.choices(cands, weights=[math.exp(v - m) for v in logits])[0]


    # ------------------------------------------------------------------ SentencePiece's float32 forms
    def forward32(self, inv_theta: float) -> list[float]:
        """Per position: SentencePiece's ``ForwardAlgorithm`` value (float32) of the nodes that
        start there; the last one (``len(text)``) is EOS's, the log partition function."""
        rnd = _F32.round
        inv = rnd(inv_theta)
        nodes = self.nodes
        alpha = [0.0] * (len(self.text) + 1)
        for pos in range(1, len(self.text) + 1):
            acc = 0.0
            for j, k in enumerate(self.end[pos]):
                nd = nodes[k]
                y = rnd(rnd(inv * nd.score) + alpha[nd.start])
                acc = y if j == 0 else _logsumexp32(acc, y)
            alpha[pos] = acc
        return alpha

    def entropy(self, inv_theta: float) -> float:
        """SentencePiece's ``CalculateEntropy``: the entropy of the segmentation distribution
        ``∝ exp(inv_theta * score)``, in float32 as it computes it (forward entropies)."""
        rnd = _F32.round
        inv = rnd(inv_theta)
        alpha = self.forward32(inv_theta)
        nodes = self.nodes
        h = [0.0] * (len(self.text) + 1)
        for pos in range(1, len(self.text) + 1):
            acc = 0.0
            a_r = alpha[pos]
            for k in self.end[pos]:
                nd = nodes[k]
                p = rnd(rnd(rnd(inv * nd.score) + alpha[nd.start]) - a_r)
                acc = rnd(acc + rnd(_expf(p) * rnd(h[nd.start] + p)))
            h[pos] = acc
        return -h[-1]

    def path_score32(self, path: Sequence[int], inv_theta: float) -> float:
        """``sum(inv_theta * score)`` over a path, accumulated in float32 as SentencePiece's
        ``SampleEncodeAndScore`` does."""
        rnd = _F32.round
        inv = rnd(inv_theta)
        total = 0.0
        for k in path:
            total = rnd(total + rnd(inv * self.nodes[k].score))
        return total

    def nbest_sample(self, n: int, inv_theta: float, rng: random.Random | None = None) -> list[Segmentation]:
        """SentencePiece's ``NBest(n, sample=True)``: ``n`` distinct paths drawn without
        replacement by A* over Gumbel-perturbed scores (top-down truncated Gumbels), each with its
        perturbed score (float32)."""
        if not self.text:
            return [Segmentation((), (), (), 0.0)]
        rng = rng or random.Random()
        rnd = _F32.round
        inv = rnd(inv_theta)
        alpha = self.forward32(inv_theta)
        nodes = self.nodes
        heap = _CxxMaxHeap()
        heap.push([rnd(_gumbel(rng)), 0.0, _EOS, None])
        results: list[Segmentation] = []
        while len(heap):
            top = heap.pop()
            if top[2] == _BOS:
                results.append(self._segmentation(_hyp_path(top), top[0]))
                if len(results) == n:
                    break
                continue
            pos = len(self.text) if top[2] == _EOS else nodes[top[2]].start
            lefts = self.end[pos] if pos else (_BOS,)
            z = alpha[pos]
            probs = [rnd(rnd(rnd(top[1] + (alpha[nodes[k].start] if k != _BOS else 0.0))
                             + (rnd(inv * nodes[k].score) if k != _BOS else 0.0)) - z) for k in lefts]
            perturbed = [rnd(p + rnd(_gumbel(rng))) for p in probs]
            best = max(max(perturbed), -1e8)
            for k, p, g in zip(lefts, probs, perturbed):
                v = rnd(top[0] - g + _log1p_neg_exp(g - best))
                heap.push([rnd(top[0] - max(0.0, v) - math.log1p(math.exp(-abs(v)))), p, k, top])
            if len(heap) >= _MAX_AGENDA:
                heap.shrink(min(_MIN_AGENDA, n * 10))
        return results


def _hyp_path(hyp: list) -> list[int]:
    """The node indices of a finished A* hypothesis, left to right (BOS and EOS left out)."""
    path = []
    h = hyp[3]
    while h is not None and h[2] != _EOS:
        path.append(h[2])
        h = h[3]
    return path


def _gumbel(rng: random.Random) -> float:
    """A standard Gumbel draw."""
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return -math.log(-math.log(u))


def _log1p_neg_exp(x: float) -> float:
    """``log1p(-exp(x))`` for ``x <= 0`` (``-inf`` at 0, as in C)."""
    y = math.exp(x)
    return -math.inf if y >= 1.0 else math.log1p(-y)


def _logsumexp32(x: float, y: float) -> float:
    """SentencePiece's ``LogSumExp(x, y)`` on float32 values."""
    rnd = _F32.round
    lo, hi = (x, y) if x < y else (y, x)
    if hi > rnd(lo + 50.0):
        return hi
    return rnd(hi + math.log(math.exp(rnd(lo - hi)) + 1.0))


def _load_expf():  # noqa: ANN202 - a float -> float callable
    """The C library's ``expf`` (what SentencePiece's float ``std::exp`` calls), else the
    correctly rounded float32 of ``math.exp`` (they differ by at most one unit in rare cases)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name) if name else None
        f = lib.expf if lib is not None else None
    except (OSError, AttributeError):
        f = None
    if f is None:
        return lambda x: _F32.round(math.exp(x))
    f.restype = ctypes.c_float
    f.argtypes = [ctypes.c_float]
    return f


_expf = _load_expf()


class _CxxMaxHeap:
    """``std::priority_queue`` with ``a.fx < b.fx`` as libstdc++ implements it, so hypotheses
    with equal ``fx`` come out in the same order as in SentencePiece."""

    __slots__ = ("a",)

    def __init__(self) -> None:
        self.a: list[list] = []

    def __len__(self) -> int:
        return len(self.a)

    def push(self, value: list) -> None:
        a = self.a
        a.append(value)
        self._sift_up(len(a) - 1, 0, value)

    def _sift_up(self, hole: int, top: int, value: list) -> None:
        a = self.a
        fx = value[0]
        parent = (hole - 1) // 2
        while hole > top and a[parent][0] < fx:
            a[hole] = a[parent]
            hole = parent
            parent = (hole - 1) // 2
        a[hole] = value

    def pop(self) -> list:
        a = self.a
        top = a[0]
        if len(a) > 1:
            last = len(a) - 1
            value = a[last]
            a[last] = a[0]
            self._adjust(0, last, value)
        a.pop()
        return top

    def _adjust(self, hole: int, length: int, value: list) -> None:
        # libstdc++ __adjust_heap: walk the hole down to a leaf along the larger child
        # (the right one unless the left is strictly larger), then sift the value up.
        a = self.a
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if a[child][0] < a[child - 1][0]:
                child -= 1
            a[hole] = a[child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[hole] = a[child - 1]
            hole = child - 1
        self._sift_up(hole, top, value)

    def shrink(self, size: int) -> None:
        """Keep the top ``size`` hypotheses, pushed into a fresh queue in pop order."""
        keep = [self.pop() for _ in range(min(size, len(self.a)))]
        self.a = []
        for h in keep:
            self.push(h)
