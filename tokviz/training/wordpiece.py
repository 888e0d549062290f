"""WordPiece trainer: bottom-up merges chosen by score, not by raw frequency.

Each step merges the adjacent pair with the highest

    score(x, y) = f(xy) / (f(x) * f(y))

where f counts symbols and pairs over the current segmentation of the corpus words (weighted
by word counts). Its log is log f(xy) - log f(x) - log f(y), a PMI-like "stickiness": a pair
whose parts rarely occur apart wins over a pair that is merely frequent (the q/u example of the
toy corpus: ``q ##u`` beats the far more frequent ``a ##b`` because ``a`` and ``##b`` mostly occur apart).
Ties: higher score, then higher pair count, then the smaller pair of ids.

Non-initial symbols carry the ``##`` continuation prefix (``u`` inside a word is ``##u``); the
merged token of ``x`` and ``##y`` is ``xy`` (``##`` only at the front). Encoding is the engine's
WordPiece model: longest match first, and a word with any unmatchable position becomes the whole
word ``[UNK]`` (not the matched prefix plus ``[UNK]``).

How this differs from HF tokenizers: HF's ``WordPieceTrainer`` actually runs its BPE trainer
(frequency-ranked merges) with a ``##`` prefix and only stores the vocab. We implement the
score the WordPiece literature describes, because showing *why* WordPiece picks a
different pair than BPE is the point of the Train tab; the vocabularies therefore differ from
HF's. The exported tokenizer.json is still a standard HF WordPiece model, and HF encodes it
identically to tokviz.

The algorithm is incremental: pair counts, symbol counts and a pair -> words index are updated
around each merge; a heap with lazy re-validation picks the best score. Because removing
occurrences of ``x`` and ``y`` *raises* the score of their other pairs, all live pairs of the
merged symbols are re-pushed after each merge (a stale lower score would otherwise hide them).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .base import Trainer
from .bpe import BpeResult, PairRow
from .events import Cancelled, CancelToken, Done, Event, MergeEvent, Progress
from .merges import MergeState
from .words import PipelineSpec

__all__ = ["WordPieceTrainer", "WordPieceResult", "default_wordpiece_spec"]


def default_wordpiece_spec() -> PipelineSpec:
    """BERT-like pre-tokenization (whitespace + punctuation), WordPiece decoder."""
    return PipelineSpec(
        pre_tokenizer={"type": "BertPreTokenizer"},
        decoder={"type": "WordPiece", "prefix": "##", "cleanup": True},
    )


class WordPieceTrainer(Trainer):
    model_type = "wordpiece"

    def __init__(
        self,
        *,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        special_tokens: Sequence[str] = ("[UNK]",),
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
        spec: PipelineSpec | None = None,
        record_history: bool = True,
    ) -> None:
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        specials = list(special_tokens)
        if unk_token not in specials:
            specials.insert(0, unk_token)
        self.special_tokens = specials
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = None
        self.max_input_chars_per_word = max_input_chars_per_word
        self.spec = spec or default_wordpiece_spec()
        self.record_history = record_history

    def train_from_counts(self, counts: Mapping[str, int], *, cancel: CancelToken | None = None) -> Iterator[Event]:
        """Events of training on word counts: specials, alphabet, words, pairs, merges, result."""
        state = MergeState(self.special_tokens, record=self.record_history)
        # Words longer than the model's limit always encode to [UNK]; do not learn from them.
        word_list = [w for w in counts if counts[w] > 0 and len(w) <= self.max_input_chars_per_word]
        word_counts = [int(counts[w]) for w in word_list]
        self._alphabet(state, word_list)
        state.mark_base()
        ids, prefix = state.token_to_id, self.continuing_subword_prefix
        words = [[ids[w[0]], *(ids[prefix + c] for c in w[1:])] for w in word_list]
        state.set_words(word_list, word_counts, words)
        pairs = _ScoredPairs(words, word_counts)
        yield Progress("count pairs", 1.0, f"{len(pairs.counts)} pairs")
        for event in self._merges(state, pairs, cancel):
            yield event
            if isinstance(event, Cancelled):
                return
        result = state.result(WordPieceResult, self, None if state.record else words)
        result.merge_scores = tuple(state.scores)
        yield Progress("merges", 1.0, f"{len(state.merges)} merges")
        yield Done(result)

    def _alphabet(self, state: MergeState, words: list[str]) -> None:
        """Initial forms sorted, then continuation forms sorted (deterministic ids)."""
        for c in sorted({w[0] for w in words}):
            state.add(c)
        for c in sorted({c for w in words for c in w[1:]}):
            state.add(self.continuing_subword_prefix + c)

    def _merges(self, state: MergeState, pairs: _ScoredPairs, cancel: CancelToken | None) -> Iterator[Event]:
        """Pop the best-scoring pair, record it, apply it to its words, until the vocabulary is full."""
        target = max(1, self.vocab_size - state.n_base)
        every = max(1, target // 100)
        while len(state.id_to_token) < self.vocab_size:
            if cancel is not None and cancel.cancelled:
                yield Cancelled("merges")
                return
            top = pairs.pop(self.min_frequency)
            if top is None:
                break
            a, b, cnt, score = top
            new_tok, new_id, dup = state.merged(a, b, self.continuing_subword_prefix)
            k = state.record_merge(a, b, new_id, cnt, dup, score)
            touched, removed, changed = pairs.merge(a, b, new_id)
            state.record_words(k, changed, [pairs.words[wi] for wi in changed], removed)
            t = state.id_to_token
            yield MergeEvent(
                rank=k, left=t[a], right=t[b], left_id=a, right_id=b, new_token=new_tok, new_id=new_id,
                count=cnt, words_touched=touched, occurrences=removed, vocab_size=len(t), score=score, duplicate=dup,
            )
            if k % every == 0:
                yield Progress("merges", min(1.0, (len(t) - state.n_base) / target), f"{k + 1} merges")


class _ScoredPairs:
    """WordPiece's pairs phase: pair and symbol counts, pair -> words and symbol -> pairs indexes,
    and a heap of (-score, -count, left, right) re-validated on pop."""

    def __init__(self, words: list[list[int]], counts: list[int]) -> None:
        self.words, self.word_counts = words, counts
        self.sym_freq: dict[int, int] = {}
        self.counts: dict[tuple[int, int], int] = {}
        self.where: dict[tuple[int, int], set[int]] = {}
        self.pairs_of: dict[int, set[tuple[int, int]]] = {}
        for wi, syms in enumerate(words):
            c = counts[wi]
            for sym in syms:
                self.sym_freq[sym] = self.sym_freq.get(sym, 0) + c
            for p in zip(syms, syms[1:]):
                self.counts[p] = self.counts.get(p, 0) + c
                self._index(p, wi)
        self.heap = [(-self.score(p, c), -c, p[0], p[1]) for p, c in self.counts.items() if c > 0]
        heapq.heapify(self.heap)

    def score(self, p: tuple[int, int], cnt: int) -> float:
        return cnt / (self.sym_freq[p[0]] * self.sym_freq[p[1]])

    def _index(self, p: tuple[int, int], wi: int) -> None:
        self.where.setdefault(p, set()).add(wi)
        self.pairs_of.setdefault(p[0], set()).add(p)
        self.pairs_of.setdefault(p[1], set()).add(p)

    def pop(self, min_frequency: int) -> tuple[int, int, int, float] | None:
        """(left, right, count, score) of the best current pair; None when none is left."""
        while self.heap:
            neg_s, neg_c, a, b = heapq.heappop(self.heap)
            cnt = self.counts.get((a, b), 0)
            if cnt <= 0:
                continue
            s = self.score((a, b), cnt)
            if s != -neg_s or cnt != -neg_c:
                heapq.heappush(self.heap, (-s, -cnt, a, b))
                continue
            if cnt < min_frequency:
                # Scores are not monotone in count, so a rare pair may still beat frequent
                # ones; skip it (it cannot become frequent again without a merge creating it).
                continue
            return a, b, cnt, s
        return None

    def merge(self, a: int, b: int, new_id: int) -> tuple[int, int, list[int]]:
        """Apply (a, b) -> new_id everywhere it occurs: (words touched, tokens removed, words changed)."""
        touched_pairs: set[tuple[int, int]] = set()
        removed = 0
        changed: list[int] = []
        for wi in self.where.pop((a, b), ()):
            hit = self._merge_word(wi, a, b, new_id, touched_pairs)
            if hit:
                removed += hit * self.word_counts[wi]
                changed.append(wi)
        # every live pair of a symbol whose frequency changed gets a fresh entry: removing
        # occurrences of a and b raises the score of their other pairs
        for sym in (a, b, new_id):
            live = {q for q in self.pairs_of.get(sym, ()) if self.counts.get(q, 0) > 0}
            touched_pairs |= live
            self.pairs_of[sym] = live
        for q in touched_pairs:
            cq = self.counts.get(q, 0)
            if cq > 0:
                heapq.heappush(self.heap, (-self.score(q, cq), -cq, q[0], q[1]))
            else:
                self.where.pop(q, None)
        return len(changed), removed, changed

    def _merge_word(self, wi: int, a: int, b: int, new_id: int, touched: set[tuple[int, int]]) -> int:
        """Merge (a, b) in word ``wi``, updating every count; how many times it occurred."""
        w, c = self.words[wi], self.word_counts[wi]
        out: list[int] = []
        i = hit = 0
        n = len(w)
        while i < n:
            if i + 1 < n and w[i] == a and w[i + 1] == b:
                out.append(new_id)
                i += 2
                hit += 1
            else:
                out.append(w[i])
                i += 1
        if not hit:
            return 0
        for q in zip(w, w[1:]):
            self.counts[q] -= c
            touched.add(q)
        for q in zip(out, out[1:]):
            self.counts[q] = self.counts.get(q, 0) + c
            touched.add(q)
            self._index(q, wi)
        self.sym_freq[a] -= hit * c
        self.sym_freq[b] -= hit * c
        self.sym_freq[new_id] = self.sym_freq.get(new_id, 0) + hit * c
        self.words[wi] = out
        return hit


class WordPieceResult(BpeResult):
    """Like `BpeResult` (same slider queries), plus merge scores and a WordPiece model."""

    merge_scores: tuple[float, ...] = ()

    def symbol_counts_at(self, k: int) -> dict[int, int]:
        self._check_k(k)
        freq: dict[int, int] = {}
        for wi, c in enumerate(self.word_counts):
            for s in self.word_ids_at(k, wi):
                freq[s] = freq.get(s, 0) + c
        return freq

    def pair_table_at(self, k: int, *, top: int = 20) -> list[PairRow]:
        """Top pairs at step k by score (then count, then ids); ``score`` is filled in."""
        counts = self.pair_counts_at(k)
        freq = self.symbol_counts_at(k)

        def key(item: tuple[tuple[int, int], int]) -> tuple[float, int, int, int]:
            (a, b), c = item
            return (-c / (freq[a] * freq[b]), -c, a, b)

        order = heapq.nsmallest(top, counts.items(), key=key)
        chosen = self.merge_ids[k][:2] if k < len(self.merge_ids) else None
        if chosen is not None and all(p != chosen for p, _ in order) and chosen in counts:
            order.append((chosen, counts[chosen]))
        t = self.id_to_token
        ck = key((chosen, counts[chosen])) if chosen in counts else None
        rows = []
        for (a, b), c in order:
            sc = c / (freq[a] * freq[b])
            is_chosen = (a, b) == chosen
            kk = key(((a, b), c))
            if is_chosen or ck is None:
                why = ""
            elif kk[0] != ck[0]:
                why = "score"
            elif kk[1] != ck[1]:
                why = "count"
            elif a != chosen[0]:
                why = "left id"
            else:
                why = "right id"
            tie = ck is not None and not is_chosen and kk[0] == ck[0]
            rows.append(PairRow(t[a], t[b], a, b, c, is_chosen, tie, why, score=sc))
        return rows

    def model_json(self, *, num_merges: int | None = None) -> dict[str, Any]:
        tr = self.trainer
        if num_merges is None:
            vocab = dict(self.token_to_id)
        else:
            # the vocabulary as it was after k merges: base symbols plus the first k results
            keep = set(range(self.n_base)) | {n for _, _, n in self.merge_ids[:num_merges]}
            vocab = {t: i for t, i in self.token_to_id.items() if i in keep}
        return {
            "type": "WordPiece",
            "unk_token": tr.unk_token,
            "continuing_subword_prefix": tr.continuing_subword_prefix,
            "max_input_chars_per_word": tr.max_input_chars_per_word,
            "vocab": vocab,
        }
