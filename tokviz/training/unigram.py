"""Unigram LM trainer (Kudo 2018): seed vocabulary, EM with forward-backward, pruning by loss.

Training runs top-down, the reverse of BPE:

1. **Seed**: every character, plus the most frequent substrings of the corpus words (length 2 ..
   ``max_piece_length``, seen at least twice, ranked by frequency x length as SentencePiece does).
2. **EM**: the E-step runs forward-backward over the lattice of *all* segmentations of every
   word and adds each piece's posterior expected count (not Viterbi counts); the M-step sets
   log p = digamma(count) - digamma(total) and drops pieces whose expected count is under 0.5
   (SentencePiece's sparse prior), never single characters or special pieces.
3. **Pruning**: each piece's loss is how much the corpus likelihood drops if its Viterbi
   occurrences are re-segmented by its best alternative segmentation; the pieces with the
   smallest loss are removed until ``shrinking_factor`` of the vocabulary remains. Pieces that
   Viterbi never uses, or that do not even win on their own string, go first. Characters and
   special pieces are always kept.
4. Repeat until the vocabulary is within 10% of ``vocab_size``, then keep the most probable
   pieces (characters always) to exactly ``vocab_size``.

The lattice work is batched with numpy over all words at once: one dense (positions x
max_piece_length) table of candidate piece ids is built for the seed vocabulary and re-mapped
after each pruning round. This training-time lattice is separate from the engine's encoding
model on purpose (it processes every word of the corpus in one vectorized pass); encoding the
result goes through the engine's Unigram model via the exported tokenizer.json.

Events: `EMIteration` per EM iteration (log-likelihood, vocab size, expected tokens) and
`PruneRound` per pruning round (the removed pieces with their loss).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .base import Trainer
from .events import Cancelled, CancelToken, Done, EMIteration, Event, Progress, PruneRound
from .words import PipelineSpec, metaspace_spec

__all__ = ["UnigramTrainer", "UnigramResult", "default_unigram_spec"]

_NEG = -1e30


def default_unigram_spec() -> PipelineSpec:
    """SentencePiece-like pipeline: NFKC, Metaspace (``▁`` for spaces, prepended), Metaspace decoder."""
    return metaspace_spec(normalizer={"type": "NFKC"})


def _digamma(x: np.ndarray) -> np.ndarray:
    """Digamma for x > 0 (recurrence up to 6, then the asymptotic series)."""
    x = np.asarray(x, dtype=np.float64).copy()
    result = np.zeros_like(x)
    small = x < 6.0
    while np.any(small):
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 6.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = 1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132))))
    result += np.log(x) - 0.5 * inv - inv2 * series
    return result


class _Lattice:
    """All words' lattices at once, as edge lists (one edge per candidate piece occurrence).

    Nodes are numbered globally: node ``node0[w] + j`` is position j (0..len) of word w. Each
    edge is (start node, end node, piece id, word). Edges are kept sorted by the offset of their
    end inside the word (then end node) for the forward pass, with a permutation that sorts them
    by start offset for the backward pass; the DP advances one offset at a time for all words
    together, and per-node log-sum-exp is a `reduceat` over contiguous groups.
    """

    def __init__(
        self,
        lengths: np.ndarray,
        e_start: np.ndarray,
        e_end: np.ndarray,
        e_piece: np.ndarray,
        e_word: np.ndarray,
        *,
        presorted: bool = False,
    ) -> None:
        self.lengths = lengths.astype(np.int64)
        n_words = len(lengths)
        self.node0 = np.zeros(n_words, dtype=np.int64)
        if n_words:
            self.node0[1:] = np.cumsum(self.lengths + 1)[:-1]
        self.n_nodes = int((self.lengths + 1).sum())
        if not presorted:
            end_off = e_end - self.node0[e_word]
            o = np.lexsort((e_end, end_off))
            e_start, e_end, e_piece, e_word = e_start[o], e_end[o], e_piece[o], e_word[o]
        self.e_start = e_start.astype(np.int64)
        self.e_end = e_end.astype(np.int64)
        self.e_piece = e_piece.astype(np.int64)
        self.e_word = e_word.astype(np.int64)
        self._index()

    def _index(self) -> None:
        node0w = self.node0[self.e_word]
        end_off = self.e_end - node0w
        start_off = self.e_start - node0w
        self.fwd = _steps(end_off, self.e_end)
        self.bperm = np.lexsort((self.e_start, start_off))
        self.bwd = _steps(start_off[self.bperm], self.e_start[self.bperm])

    @classmethod
    def from_table(cls, lengths: np.ndarray, edges: np.ndarray) -> _Lattice:
        """From a dense ``edges[c, L-1]`` table (piece of length L ending at global char c, -1 = none)."""
        n_words = len(lengths)
        word_of_char = np.repeat(np.arange(n_words), lengths)
        char0 = np.zeros(n_words, dtype=np.int64)
        if n_words:
            char0[1:] = np.cumsum(lengths)[:-1]
        node0 = char0 + np.arange(n_words)
        offset = np.arange(len(word_of_char)) - char0[word_of_char]
        c, lm1 = np.nonzero(edges >= 0)
        w = word_of_char[c]
        end = node0[w] + offset[c] + 1
        return cls(lengths, end - lm1 - 1, end, edges[c, lm1], w)

    def remap(self, old_to_new: np.ndarray) -> _Lattice:
        """The same lattice with piece ids mapped (edges of pieces mapped to -1 are dropped)."""
        piece = old_to_new[self.e_piece]
        keep = piece >= 0
        new = object.__new__(_Lattice)
        new.lengths, new.node0, new.n_nodes = self.lengths, self.node0, self.n_nodes
        new.e_start, new.e_end, new.e_word = self.e_start[keep], self.e_end[keep], self.e_word[keep]
        new.e_piece = piece[keep]
        new._index()
        return new

    def subset(self, word_keep: np.ndarray) -> _Lattice:
        """Only the words where ``word_keep`` is true (renumbered in order)."""
        new_w = np.cumsum(word_keep) - 1
        lengths = self.lengths[word_keep]
        keep = word_keep[self.e_word]
        w_old = self.e_word[keep]
        w_new = new_w[w_old]
        node0 = np.zeros(len(lengths), dtype=np.int64)
        if len(lengths):
            node0[1:] = np.cumsum(lengths + 1)[:-1]
        shift = node0[w_new] - self.node0[w_old]
        return _Lattice(lengths, self.e_start[keep] + shift, self.e_end[keep] + shift, self.e_piece[keep], w_new,
                        presorted=True)

    def without_whole_words(self) -> _Lattice:
        """Drop each word's single edge spanning the whole word (the piece's own edge)."""
        whole = (self.e_start == self.node0[self.e_word]) & (self.e_end == self.node0[self.e_word] + self.lengths[self.e_word])
        keep = ~whole
        return _Lattice(self.lengths, self.e_start[keep], self.e_end[keep], self.e_piece[keep], self.e_word[keep],
                        presorted=True)

    def forward(self, logp: np.ndarray, *, viterbi: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """alpha per node (log-sum-exp, or max with ``viterbi``) and, for Viterbi, the best edge per node."""
        lp = logp[self.e_piece]
        alpha = np.full(self.n_nodes, _NEG)
        alpha[self.node0] = 0.0
        best = np.full(self.n_nodes, -1, dtype=np.int64) if viterbi else None
        st = self.e_start
        for lo, hi, red, reps, nodes in self.fwd:
            v = alpha[st[lo:hi]] + lp[lo:hi]
            mx = np.maximum.reduceat(v, red)
            if viterbi:
                alpha[nodes] = mx
                hit = np.flatnonzero(v == np.repeat(mx, reps))
                grp = np.repeat(np.arange(len(red)), reps)[hit]
                first = np.unique(grp, return_index=True)[1]
                best[nodes] = hit[first] + lo
            else:
                alpha[nodes] = mx + np.log(np.add.reduceat(np.exp(v - np.repeat(mx, reps)), red))
        return alpha, best

    def backward(self, logp: np.ndarray) -> np.ndarray:
        perm = self.bperm
        lp = logp[self.e_piece[perm]]
        en = self.e_end[perm]
        beta = np.full(self.n_nodes, _NEG)
        beta[self.node0 + self.lengths] = 0.0
        for lo, hi, red, reps, nodes in reversed(self.bwd):
            v = beta[en[lo:hi]] + lp[lo:hi]
            mx = np.maximum.reduceat(v, red)
            beta[nodes] = mx + np.log(np.add.reduceat(np.exp(v - np.repeat(mx, reps)), red))
        return beta

    def expected_counts(self, logp: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        """(expected count per piece, corpus log-likelihood, log Z per word)."""
        alpha, _ = self.forward(logp)
        beta = self.backward(logp)
        z = alpha[self.node0 + self.lengths]
        post = alpha[self.e_start] + logp[self.e_piece] + beta[self.e_end] - z[self.e_word]
        post = np.exp(np.minimum(post, 0.0)) * weights[self.e_word]
        out = np.bincount(self.e_piece, weights=post, minlength=len(logp))
        return out, float((z * weights).sum()), z

    def viterbi_pieces(self, logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Viterbi segmentation of every word: (piece ids, word index) of every token."""
        _, best = self.forward(logp, viterbi=True)
        active = np.nonzero(self.lengths > 0)[0]
        cur = (self.node0 + self.lengths)[active]
        ids: list[np.ndarray] = []
        wix: list[np.ndarray] = []
        while len(active):
            e = best[cur]
            ids.append(self.e_piece[e])
            wix.append(active)
            cur = self.e_start[e]
            keep = cur > self.node0[active]
            active, cur = active[keep], cur[keep]
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(ids), np.concatenate(wix)


def _steps(off: np.ndarray, node: np.ndarray) -> list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per offset: (lo, hi, reduceat starts, group sizes, node per group) over arrays sorted by (off, node)."""
    out = []
    if len(off) == 0:
        return out
    bounds = np.searchsorted(off, np.arange(int(off.max()) + 2))
    change = np.ones(len(node), dtype=bool)
    change[1:] = node[1:] != node[:-1]
    for t in range(len(bounds) - 1):
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        if lo == hi:
            continue
        red = np.flatnonzero(change[lo:hi])
        reps = np.diff(np.append(red, hi - lo))
        out.append((lo, hi, red, reps, node[lo:hi][red]))
    return out


def _build_lattice(words: Sequence[str], piece_id: Mapping[str, int], maxlen: int) -> _Lattice:
    """The lattice of ``words`` over a vocabulary given as a dict (small inputs, tests, pruning)."""
    get = piece_id.get
    starts: list[int] = []
    ends: list[int] = []
    ids: list[int] = []
    wix: list[int] = []
    node = 0
    for wi, w in enumerate(words):
        n = len(w)
        for j in range(n):
            for L in range(1, min(maxlen, j + 1) + 1):
                i = get(w[j + 1 - L: j + 1])
                if i is not None:
                    starts.append(node + j + 1 - L)
                    ends.append(node + j + 1)
                    ids.append(i)
                    wix.append(wi)
        node += n + 1
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    arr = lambda xs: np.array(xs, dtype=np.int64)  # noqa: E731
    return _Lattice(lengths, arr(starts), arr(ends), arr(ids), arr(wix))


_CUT_AFTER = set("。、．，！？!?,.;；：:」』）)")


def _training_units(counts: Mapping[str, int], max_chars: int) -> tuple[list[str], np.ndarray]:
    """Distinct words with counts; words longer than ``max_chars`` are trained as chunks.

    Like SentencePiece's ``max_sentence_length`` (which drops such lines), this bounds the
    lattice's sequential depth; we cut instead of dropping, preferably after punctuation, so
    no text is lost. Segmentations across a cut are the only ones the E-step does not see.
    """
    units: Counter[str] = Counter()
    for w, c in counts.items():
        if c <= 0 or not w:
            continue
        if len(w) <= max_chars:
            units[w] += c
            continue
        start = 0
        n = len(w)
        while n - start > max_chars:
            end = start + max_chars
            cut = end
            for j in range(end - 1, start + max_chars // 2, -1):
                if w[j] in _CUT_AFTER:
                    cut = j + 1
                    break
            units[w[start:cut]] += c
            start = cut
        units[w[start:]] += c
    words = list(units)
    return words, np.array([units[w] for w in words], dtype=np.float64)


def _seed(
    words: Sequence[str], weights: np.ndarray, maxlen: int, seed_size: int, floor: int, specials: set[str]
) -> tuple[list[str], list[float], list[bool], _Lattice]:
    """Seed pieces (chars, then substrings by freq x length) and the corpus lattice over them.

    All suffixes (cut to ``maxlen`` chars and to their word) are sorted once; substrings of
    length L seen at least ``floor`` times are the runs of adjacent suffixes sharing L chars,
    so counting, ranking and filling the edge table are array operations.
    """
    text = "".join(words)
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    n = len(text)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    word_of_char = np.repeat(np.arange(len(words)), lengths)
    char0 = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=char0[1:])
    rem = char0[1:][word_of_char] - np.arange(n)  # chars left in the word from c on
    keys = np.full((n, maxlen), -1, dtype=np.int64)
    for j in range(maxlen):
        ok = rem > j
        idx = np.nonzero(ok)[0]
        keys[idx, j] = codes[idx + j]
    order = np.lexsort(keys.T[::-1])
    ks = keys[order]
    same = (ks[1:] == ks[:-1]) & (ks[1:] >= 0)
    lcp = np.cumprod(same, axis=1).sum(axis=1)
    w_sorted = weights[word_of_char[order]]
    rem_sorted = rem[order]
    del keys, ks, same

    # single characters (ids 0..), in code point order
    uniq, inv = np.unique(codes, return_inverse=True)
    chars = [chr(int(u)) for u in uniq]
    char_freq = np.bincount(inv, weights=weights[word_of_char], minlength=len(uniq))
    keep_char = np.array([ch not in specials for ch in chars], dtype=bool)
    char_id = np.full(len(uniq), -1, dtype=np.int64)
    char_id[keep_char] = np.arange(int(keep_char.sum()))
    pieces = [ch for ch, k in zip(chars, keep_char) if k]
    freqs = [float(f) for f, k in zip(char_freq, keep_char) if k]

    # candidate runs per length
    cand_L: list[np.ndarray] = []
    cand_first: list[np.ndarray] = []
    cand_freq: list[np.ndarray] = []
    run_ids: list[np.ndarray] = []
    for L in range(2, maxlen + 1):
        is_start = np.ones(n, dtype=bool)
        is_start[1:] = lcp < L
        rid = np.cumsum(is_start) - 1
        run_w = np.bincount(rid, weights=w_sorted)
        first = np.nonzero(is_start)[0]
        good = (rem_sorted[first] >= L) & (run_w >= floor)
        sel = np.nonzero(good)[0]
        cand_L.append(np.full(len(sel), L))
        cand_first.append(first[sel])
        cand_freq.append(run_w[sel])
        run_ids.append(rid)
    all_L = np.concatenate(cand_L)
    all_first = np.concatenate(cand_first)
    all_freq = np.concatenate(cand_freq)
    budget = max(0, seed_size - len(pieces))
    # rank by freq * length, ties by the substring's sort position then length (deterministic)
    rank = np.lexsort((all_L, all_first, -(all_freq * all_L)))[:budget]
    seed_of_run = [np.full(int(r[-1]) + 1 if len(r) else 0, -1, dtype=np.int64) for r in run_ids]
    # run index of candidate: run id at its first sorted position
    for ci in rank:
        L = int(all_L[ci])
        c = int(order[all_first[ci]])
        sub = text[c: c + L]
        if sub in specials:
            continue
        seed_of_run[L - 2][run_ids[L - 2][all_first[ci]]] = len(pieces)
        pieces.append(sub)
        freqs.append(float(all_freq[ci]))
    is_char = [True] * int(keep_char.sum()) + [False] * (len(pieces) - int(keep_char.sum()))

    starts = np.full((n, maxlen), -1, dtype=np.int32)
    starts[:, 0] = char_id[inv]
    for L in range(2, maxlen + 1):
        sid = seed_of_run[L - 2][run_ids[L - 2]]
        hit = np.nonzero(sid >= 0)[0]
        starts[order[hit], L - 1] = sid[hit]
    # edges from the by-start table: piece of length L starting at global char c
    c, lm1 = np.nonzero(starts >= 0)
    w = word_of_char[c]
    node0 = char0[:-1] + np.arange(len(words))
    start = node0[w] + (c - char0[:-1][w])
    return pieces, freqs, is_char, _Lattice(lengths, start, start + lm1 + 1, starts[c, lm1], w)


class UnigramTrainer(Trainer):
    model_type = "unigram"

    def __init__(
        self,
        *,
        vocab_size: int = 8000,
        special_tokens: Sequence[str] = ("<unk>",),
        unk_token: str = "<unk>",
        max_piece_length: int = 16,
        seed_size: int = 1_000_000,
        shrinking_factor: float = 0.75,
        em_iterations: int = 2,
        spec: PipelineSpec | None = None,
        min_frequency: int = 0,
        max_word_chars: int = 512,
    ) -> None:
        specials = list(special_tokens)
        if unk_token not in specials:
            specials.insert(0, unk_token)
        self.vocab_size = vocab_size
        self.special_tokens = specials
        self.unk_token = unk_token
        self.max_piece_length = max_piece_length
        self.seed_size = seed_size
        self.shrinking_factor = shrinking_factor
        self.em_iterations = em_iterations
        self.spec = spec or default_unigram_spec()
        self.min_frequency = min_frequency
        self.max_word_chars = max_word_chars


    # ------------------------------------------------------------------------------------------

    def train_from_counts(self, counts: Mapping[str, int], *, cancel: CancelToken | None = None) -> Iterator[Event]:
        """SentencePiece's Unigram training as a stream of events: seed pieces, EM rounds each
        followed by a prune round until the vocabulary size is reached, then the final vocabulary.
        The phases share the growing piece list and the cancel checks between them, so they stay
        one generator; the work of each phase is in its own function or lattice method (`_seed`,
        `_Lattice.expected_counts`, `_prune`, `_select`)."""
        specials = set(self.special_tokens)
        words, weights = _training_units(counts, self.max_word_chars)
        maxlen = self.max_piece_length
        n_target = self.vocab_size - len(self.special_tokens)

        # 1. seed: characters + frequent substrings (freq >= 2), ranked by freq * length
        yield Progress("seed", 0.0, f"{len(words)} distinct words")
        if cancel is not None and cancel.cancelled:
            yield Cancelled("seed")
            return
        floor = max(2, self.min_frequency)
        pieces, freqs, is_char, lattice = _seed(words, weights, maxlen, self.seed_size, floor, specials)
        f = np.array(freqs)
        logp = np.log(f) - math.log(f.sum())
        keep_always = np.array(is_char, dtype=bool)
        yield Progress("seed", 1.0, f"{len(pieces)} seed pieces")

        desired = int(n_target * 1.1)
        prune_cache: dict[str, Any] = {}
        history_ll: list[float] = []
        history_size: list[int] = []
        rnd = 0
        ll = 0.0
        while True:
            # 2. EM
            for it in range(self.em_iterations):
                if cancel is not None and cancel.cancelled:
                    yield Cancelled("em")
                    return
                expected, ll, _ = lattice.expected_counts(logp, weights)
                total_tokens = float(expected.sum())
                yield EMIteration(rnd, it, ll, len(pieces), total_tokens)
                history_ll.append(ll)
                history_size.append(len(pieces))
                # M-step with the sparse prior: drop pieces expected under 0.5 times
                keep = (expected >= 0.5) | keep_always
                expected = np.where(keep_always, np.maximum(expected, 0.5), np.where(keep, expected, 0.0))
                lp = _digamma(np.maximum(expected, 1e-12)) - _digamma(np.array([expected.sum()]))[0]
                if not keep.all():
                    pieces, logp, keep_always, lattice = _select(pieces, lp, keep_always, lattice, keep)
                else:
                    logp = lp
            yield Progress("em", min(1.0, desired / max(1, len(pieces))), f"round {rnd}: {len(pieces)} pieces")
            if len(pieces) <= desired:
                break
            # 3. prune
            if cancel is not None and cancel.cancelled:
                yield Cancelled("prune")
                return
            before = len(pieces)
            keep, losses = self._prune(pieces, logp, keep_always, lattice, weights, desired, prune_cache)
            removed_idx = np.nonzero(~keep)[0]
            order = np.argsort(-losses[removed_idx], kind="stable")
            # a piece Viterbi never uses loses nothing by the approximation: report 0.0, not -inf
            removed = tuple((pieces[i], float(losses[i]) if np.isfinite(losses[i]) else 0.0) for i in removed_idx[order])
            pieces, logp, keep_always, lattice = _select(pieces, logp, keep_always, lattice, keep)
            yield PruneRound(rnd, before, len(pieces), removed, ll)
            rnd += 1
            if len(pieces) == before:
                break  # only characters are left: nothing more can be pruned

        # 4. finalize: characters always, then by probability
        order = sorted(range(len(pieces)), key=lambda i: (not keep_always[i], -logp[i], pieces[i]))
        # Characters are kept, unless there are more distinct characters than the vocabulary
        # allows: then the rarest ones are left out (they encode as the unknown token), like
        # SentencePiece's character_coverage.
        chosen = order[:n_target]
        chosen.sort(key=lambda i: (-logp[i], pieces[i]))
        final = [(pieces[i], float(logp[i])) for i in chosen]
        # one more likelihood figure on the final vocab for the chart
        keep = np.zeros(len(pieces), dtype=bool)
        keep[chosen] = True
        fp, flp, fk, flat = _select(pieces, logp, keep_always, lattice, keep)
        expected, ll, _ = flat.expected_counts(flp, weights)
        yield EMIteration(rnd, self.em_iterations, ll, len(fp), float(expected.sum()))
        history_ll.append(ll)
        history_size.append(len(fp))
        result = UnigramResult(
            trainer=self,
            pieces=tuple(final),
            log_likelihoods=tuple(history_ll),
            vocab_sizes=tuple(history_size),
            words=tuple(words),
            word_counts=tuple(int(x) for x in weights),
        )
        yield Done(result)

    def _prune(
        self,
        pieces: list[str],
        logp: np.ndarray,
        keep_always: np.ndarray,
        lattice: _Lattice,
        weights: np.ndarray,
        desired: int,
        cache: dict[str, Any],
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keep mask, loss per piece) for one pruning round (SentencePiece's approximation)."""
        n = len(pieces)
        # Viterbi over the corpus: how often each piece is used, and in how many words
        ids, wix = lattice.viterbi_pieces(logp)
        freq = np.bincount(ids, weights=weights[wix], minlength=n)
        occ_words = np.bincount(ids, weights=weights[wix], minlength=n)  # per occurrence, as SentencePiece
        vsum = float(weights.sum())
        total = float(freq.sum())
        logsum = math.log(total) if total > 0 else 0.0
        # Viterbi of every piece's own string: does it win there, and what is its best alternative?
        # The lattice of the piece strings is built once and re-mapped each round, like the corpus's.
        pid = {p: i for i, p in enumerate(pieces)}
        if cache.get("own") is None:
            multi = [i for i in range(n) if not keep_always[i] and len(pieces[i]) > 1]
            cache["strings"] = [pieces[i] for i in multi]
            cache["pieces"] = list(pieces)
            cache["own"] = _build_lattice(cache["strings"], pid, self.max_piece_length) if multi else None
        else:
            old_to_new = np.array([pid.get(p, -1) for p in cache["pieces"]] + [-1], dtype=np.int64)
            alive = np.array([pid.get(p, -1) >= 0 for p in cache["strings"]], dtype=bool)
            cache["own"] = cache["own"].remap(old_to_new).subset(alive) if cache["own"] is not None else None
            cache["strings"] = [p for p, a in zip(cache["strings"], alive) if a]
            cache["pieces"] = list(pieces)
        strings = cache["strings"]
        multi = [pid[p] for p in strings]
        own = cache["own"] if strings else None
        wins = np.ones(n, dtype=bool)
        alt_logprob = np.zeros(n)
        alt_count = np.zeros(n)
        if own is not None:
            ids2, w2 = own.viterbi_pieces(logp)
            single = np.bincount(w2, minlength=len(strings)) == 1
            idx = np.array(multi)
            wins[idx] = single
            # alternatives: drop the whole-string edge and decode again
            alt = own.without_whole_words()
            ids3, w3 = alt.viterbi_pieces(logp)
            owner = idx[w3]
            fi = freq[owner]
            alt_count = np.bincount(w3, minlength=len(strings)).astype(np.float64)
            # log prob of each alternative piece after it absorbs the removed piece's frequency
            contrib = np.log(np.maximum(freq[ids3] + fi, 1e-300))
            alt_sum = np.bincount(w3, weights=contrib, minlength=len(strings))
            fi_all = freq[idx]
            logsum_alt = np.log(np.maximum(total + fi_all * (alt_count - 1), 1e-300))
            alt_logprob[idx] = alt_sum - alt_count * logsum_alt
        losses = np.full(n, np.inf)
        cand = (~keep_always) & (freq > 0) & wins
        with np.errstate(divide="ignore"):
            logprob_sp = np.log(np.maximum(freq, 1e-300)) - logsum
        F = occ_words / vsum
        losses[cand] = F[cand] * (logprob_sp[cand] - alt_logprob[cand])
        dead = (~keep_always) & ~cand
        losses[dead] = -np.inf
        target = max(desired, int(self.shrinking_factor * n))
        keep = keep_always.copy()
        n_keep = int(keep.sum())
        order = np.argsort(-losses, kind="stable")
        for i in order:
            if n_keep >= target:
                break
            if keep[i] or dead[i]:
                continue
            keep[i] = True
            n_keep += 1
        return keep, losses


def _select(
    pieces: list[str], logp: np.ndarray, keep_always: np.ndarray, lattice: _Lattice, keep: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray, _Lattice]:
    old_to_new = np.full(len(pieces) + 1, -1, dtype=np.int64)
    kept = np.nonzero(keep)[0]
    old_to_new[kept] = np.arange(len(kept))
    return [pieces[i] for i in kept], logp[kept], keep_always[kept], lattice.remap(old_to_new)


class UnigramResult:
    """A finished Unigram run: pieces with log-probabilities and the EM/pruning history."""

    def __init__(
        self,
        *,
        trainer: UnigramTrainer,
        pieces: tuple[tuple[str, float], ...],
        log_likelihoods: tuple[float, ...],
        vocab_sizes: tuple[int, ...],
        words: tuple[str, ...],
        word_counts: tuple[int, ...],
    ) -> None:
        self.trainer = trainer
        self.pieces = pieces
        self.log_likelihoods = log_likelihoods
        self.vocab_sizes = vocab_sizes
        self.words = words
        self.word_counts = word_counts

    @property
    def spec(self) -> PipelineSpec:
        return self.trainer.spec

    @property
    def special_tokens(self) -> list[str]:
        return list(self.trainer.special_tokens)

    @property
    def vocab(self) -> dict[str, int]:
        return {p: i for i, (p, _) in enumerate(self.vocab_list())}

    def vocab_list(self) -> list[tuple[str, float]]:
        """Specials first (score 0.0, as HF/SentencePiece write them), then pieces by probability."""
        return [(s, 0.0) for s in self.special_tokens] + list(self.pieces)

    def model_json(self) -> dict[str, Any]:
        vocab = self.vocab_list()
        unk = self.trainer.unk_token
        return {
            "type": "Unigram",
            "unk_id": next(i for i, (p, _) in enumerate(vocab) if p == unk),
            "vocab": [[p, s] for p, s in vocab],
            "byte_fallback": False,
        }

    def tokenizer_json(self) -> dict[str, Any]:
        from .export import tokenizer_json

        ids = {p: i for i, (p, _) in enumerate(self.vocab_list())}
        return tokenizer_json(self.model_json(), self.spec, self.special_tokens, first_ids=ids)

    def tokenizer(self) -> Any:
        from .export import build_tokenizer

        return build_tokenizer(self.tokenizer_json())

    def chart_series(self) -> dict[str, list[float]]:
        n = len(self.log_likelihoods)
        return {"iteration": list(range(n)), "log_likelihood": list(self.log_likelihoods), "vocab_size": list(self.vocab_sizes)}
