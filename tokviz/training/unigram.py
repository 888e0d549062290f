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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .bpe import run_to_result
from .events import CancelToken, Cancelled, Done, EMIteration, Event, Progress, PruneRound
from .words import PipelineSpec, count_words, metaspace_spec

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
    result += np.log(x) - 0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252)))
    return result


class _Lattice:
    """All words' lattices at once: ``edges[c, L-1]`` = id of the piece of length L ending at char c.

    Chars are numbered globally (word after word); node ``n`` of word w (0..len) is global node
    ``node0[w] + n``. ``by_offset`` lists the chars by their offset inside their word, so the
    DP advances one offset at a time for all words together.
    """

    def __init__(self, lengths: np.ndarray, edges: np.ndarray) -> None:
        self.lengths = lengths
        self.edges = edges  # int32 (nchars, maxlen), -1 = no piece
        n_words = len(lengths)
        self.char0 = np.zeros(n_words + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.char0[1:])
        self.node0 = self.char0[:-1] + np.arange(n_words)
        nchars = int(self.char0[-1])
        self.word_of_char = np.repeat(np.arange(n_words), lengths)
        self.offset = np.arange(nchars) - self.char0[:-1][self.word_of_char]
        self.end_node = self.node0[self.word_of_char] + self.offset + 1  # node after char c
        order = np.argsort(self.offset, kind="stable")
        counts = np.bincount(self.offset, minlength=1) if nchars else np.zeros(1, dtype=np.int64)
        bounds = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=bounds[1:])
        self.groups = [order[bounds[i]: bounds[i + 1]] for i in range(len(counts))]
        self.n_nodes = nchars + n_words
        self.maxlen = edges.shape[1]
        # edges by start char: starts[c, L-1] = piece of length L starting at char c
        starts = np.full_like(edges, -1)
        for L in range(1, self.maxlen + 1):
            ok = self.offset + L <= lengths[self.word_of_char]
            src = np.nonzero(ok)[0]
            starts[src, L - 1] = edges[src + L - 1, L - 1]
        self.starts = starts

    def remap(self, old_to_new: np.ndarray) -> _Lattice:
        ext = np.append(old_to_new, -1).astype(np.int32)
        new = object.__new__(_Lattice)
        new.__dict__.update(self.__dict__)
        new.edges = ext[self.edges]
        new.starts = ext[self.starts]
        return new

    def forward(self, logp: np.ndarray, *, viterbi: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """alpha per node (log-sum or max over paths); with ``viterbi`` also the best length per char."""
        lp = np.append(logp, _NEG)
        alpha = np.full(self.n_nodes, _NEG)
        alpha[self.node0] = 0.0
        best = np.zeros(len(self.edges), dtype=np.int8) if viterbi else None
        for t, cs in enumerate(self.groups):
            m = min(self.maxlen, t + 1)
            ends = self.end_node[cs]
            v = alpha[ends[:, None] - np.arange(1, m + 1)] + lp[self.edges[cs, :m]]
            if viterbi:
                arg = v.argmax(1)
                alpha[ends] = v[np.arange(len(cs)), arg]
                best[cs] = arg + 1
            else:
                mx = v.max(1)
                alpha[ends] = mx + np.log(np.exp(v - mx[:, None]).sum(1))
        return alpha, best

    def backward(self, logp: np.ndarray) -> np.ndarray:
        lp = np.append(logp, _NEG)
        beta = np.full(self.n_nodes, _NEG)
        beta[self.node0 + self.lengths] = 0.0
        for t in range(len(self.groups) - 1, -1, -1):
            cs = self.groups[t]
            starts = self.end_node[cs] - 1
            v = beta[np.minimum(starts[:, None] + np.arange(1, self.maxlen + 1), self.n_nodes - 1)]
            v = v + lp[self.starts[cs]]
            mx = v.max(1)
            beta[starts] = mx + np.log(np.exp(v - mx[:, None]).sum(1))
        return beta

    def expected_counts(
        self, logp: np.ndarray, weights: np.ndarray, *, chunk: int = 1 << 17
    ) -> tuple[np.ndarray, float, np.ndarray]:
        """(expected count per piece, corpus log-likelihood, log Z per word)."""
        alpha, _ = self.forward(logp)
        beta = self.backward(logp)
        z = alpha[self.node0 + self.lengths]
        lp = np.append(logp, _NEG)
        out = np.zeros(len(logp))
        ar = np.arange(1, self.maxlen + 1)
        for s in range(0, len(self.edges), chunk):
            e = self.edges[s: s + chunk]
            ends = self.end_node[s: s + chunk]
            w = self.word_of_char[s: s + chunk]
            starts = ends[:, None] - ar
            valid = (e >= 0) & (ar[None, :] <= (self.offset[s: s + chunk] + 1)[:, None])
            post = alpha[np.where(valid, starts, 0)] + lp[e] + beta[ends][:, None] - z[w][:, None]
            post = np.exp(np.minimum(post, 0.0)) * weights[w][:, None]
            out += np.bincount(e[valid], weights=post[valid], minlength=len(logp))
        return out, float((z * weights).sum()), z

    def viterbi_pieces(self, logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Viterbi segmentation of every word: (piece ids, word index) of every token, in order."""
        _, best = self.forward(logp, viterbi=True)
        ids: list[np.ndarray] = []
        wix: list[np.ndarray] = []
        cur = self.char0[1:] - 1  # last char of each word
        active = np.nonzero(self.lengths > 0)[0]
        cur = cur[active]
        while len(active):
            L = best[cur].astype(np.int64)
            ids.append(self.edges[cur, L - 1])
            wix.append(active)
            cur = cur - L
            keep = cur >= self.char0[:-1][active]
            active, cur = active[keep], cur[keep]
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(ids), np.concatenate(wix)


def _build_lattice(words: Sequence[str], piece_id: Mapping[str, int], maxlen: int) -> _Lattice:
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    nchars = int(lengths.sum())
    edges = np.full((nchars, maxlen), -1, dtype=np.int32)
    get = piece_id.get
    rows: list[int] = []
    cols: list[int] = []
    vals: list[int] = []
    c = 0
    for w in words:
        n = len(w)
        for j in range(n):
            for L in range(1, min(maxlen, j + 1) + 1):
                i = get(w[j + 1 - L: j + 1])
                if i is not None:
                    rows.append(c + j)
                    cols.append(L - 1)
                    vals.append(i)
        c += n
    if rows:
        edges[np.array(rows), np.array(cols)] = np.array(vals, dtype=np.int32)
    return _Lattice(lengths, edges)


class UnigramTrainer:
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

    def train(
        self, texts: Iterable[str], *, total: int | None = None, cancel: CancelToken | None = None
    ) -> Iterator[Event]:
        if total is None and isinstance(texts, Sequence):
            total = len(texts)
        counts: Counter[str] = Counter()
        yield from count_words(texts, self.spec, total=total, cancel=cancel, counts=counts)
        if cancel is not None and cancel.cancelled:
            yield Cancelled("count words")
            return
        yield from self.train_from_counts(counts, cancel=cancel)

    def train_counts(self, counts: Mapping[str, int]) -> UnigramResult:
        return run_to_result(self.train_from_counts(counts))

    def run(self, texts: Iterable[str]) -> UnigramResult:
        return run_to_result(self.train(texts))

    # ------------------------------------------------------------------------------------------

    def train_from_counts(self, counts: Mapping[str, int], *, cancel: CancelToken | None = None) -> Iterator[Event]:
        specials = set(self.special_tokens)
        words = [w for w, c in counts.items() if c > 0 and w]
        weights = np.array([counts[w] for w in words], dtype=np.float64)
        maxlen = self.max_piece_length
        n_target = self.vocab_size - len(self.special_tokens)

        # 1. seed: characters + frequent substrings (freq >= 2), ranked by freq * length
        yield Progress("seed", 0.0, f"{len(words)} distinct words")
        chars: Counter[str] = Counter()
        subs: Counter[str] = Counter()
        for w, c in zip(words, weights):
            c = int(c)
            for ch in w:
                chars[ch] += c
            n = len(w)
            for i in range(n - 1):
                top = min(n, i + maxlen)
                for j in range(i + 2, top + 1):
                    subs[w[i:j]] += c
            if cancel is not None and cancel.cancelled:
                yield Cancelled("seed")
                return
        floor = max(2, self.min_frequency)
        cand = [(f * len(s), s) for s, f in subs.items() if f >= floor and s not in specials]
        cand.sort(key=lambda x: (-x[0], x[1]))
        cand = cand[: max(0, self.seed_size - len(chars))]
        pieces: list[str] = sorted(c for c in chars if c not in specials)
        freqs = [float(chars[c]) for c in pieces]
        is_char = [True] * len(pieces)
        for _, s in cand:
            pieces.append(s)
            freqs.append(float(subs[s]))
            is_char.append(False)
        del subs
        f = np.array(freqs)
        logp = np.log(f) - math.log(f.sum())
        keep_always = np.array(is_char, dtype=bool)
        piece_id = {p: i for i, p in enumerate(pieces)}
        yield Progress("seed", 0.5, f"{len(pieces)} seed pieces")
        lattice = _build_lattice(words, piece_id, maxlen)
        yield Progress("seed", 1.0, f"{len(pieces)} seed pieces")

        desired = int(n_target * 1.1)
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
                    piece_id = None
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
            keep, losses = self._prune(pieces, logp, keep_always, lattice, weights, desired)
            removed_idx = np.nonzero(~keep)[0]
            order = np.argsort(-losses[removed_idx], kind="stable")
            removed = tuple((pieces[i], float(losses[i])) for i in removed_idx[order])
            pieces, logp, keep_always, lattice = _select(pieces, logp, keep_always, lattice, keep)
            yield PruneRound(rnd, before, len(pieces), removed, ll)
            rnd += 1

        # 4. finalize: characters always, then by probability
        order = sorted(range(len(pieces)), key=lambda i: (not keep_always[i], -logp[i], pieces[i]))
        chosen = order[: max(n_target, int(keep_always.sum()))]
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
        pid = {p: i for i, p in enumerate(pieces)}
        multi = [i for i in range(n) if not keep_always[i] and len(pieces[i]) > 1]
        strings = [pieces[i] for i in multi]
        own = _build_lattice(strings, pid, self.max_piece_length) if strings else None
        wins = np.ones(n, dtype=bool)
        alt_logprob = np.zeros(n)
        alt_count = np.zeros(n)
        if own is not None:
            ids2, w2 = own.viterbi_pieces(logp)
            single = np.bincount(w2, minlength=len(strings)) == 1
            idx = np.array(multi)
            wins[idx] = single
            # alternatives: mask the whole-string edge and decode again
            last = own.char0[1:] - 1
            lens = own.lengths
            masked = own.edges.copy()
            masked[last, lens - 1] = -1  # pieces are never longer than max_piece_length
            alt = _Lattice(own.lengths, masked)
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
    old_to_new = np.full(len(pieces), -1, dtype=np.int64)
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
