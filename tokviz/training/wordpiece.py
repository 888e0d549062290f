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
from .events import CancelToken, Cancelled, Done, Event, MergeEvent, Progress
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
        prefix = self.continuing_subword_prefix
        id_to_token: list[str] = []
        token_to_id: dict[str, int] = {}

        def add(tok: str) -> int:
            i = token_to_id.get(tok)
            if i is None:
                i = len(id_to_token)
                id_to_token.append(tok)
                token_to_id[tok] = i
            return i

        for tok in self.special_tokens:
            add(tok)
        # Words longer than the model's limit always encode to [UNK]; do not learn from them.
        word_list = [w for w in counts if counts[w] > 0 and len(w) <= self.max_input_chars_per_word]
        word_counts = [int(counts[w]) for w in word_list]
        # alphabet: initial forms sorted, then continuation forms sorted (deterministic ids)
        initial_chars = sorted({w[0] for w in word_list})
        cont_chars = sorted({c for w in word_list for c in w[1:]})
        for c in initial_chars:
            add(c)
        for c in cont_chars:
            add(prefix + c)
        n_base = len(id_to_token)
        words: list[list[int]] = [
            [token_to_id[w[0]], *(token_to_id[prefix + c] for c in w[1:])] for w in word_list
        ]
        initial_words = [tuple(s) for s in words]

        sym_freq: dict[int, int] = {}
        pair_counts: dict[tuple[int, int], int] = {}
        where: dict[tuple[int, int], set[int]] = {}
        pairs_of: dict[int, set[tuple[int, int]]] = {}
        for wi, syms in enumerate(words):
            c = word_counts[wi]
            for s in syms:
                sym_freq[s] = sym_freq.get(s, 0) + c
            for p in zip(syms, syms[1:]):
                pair_counts[p] = pair_counts.get(p, 0) + c
                where.setdefault(p, set()).add(wi)
                pairs_of.setdefault(p[0], set()).add(p)
                pairs_of.setdefault(p[1], set()).add(p)

        def score(p: tuple[int, int], cnt: int) -> float:
            return cnt / (sym_freq[p[0]] * sym_freq[p[1]])

        heap = [(-score(p, c), -c, p[0], p[1]) for p, c in pair_counts.items() if c > 0]
        heapq.heapify(heap)
        yield Progress("count pairs", 1.0, f"{len(pair_counts)} pairs")

        record = self.record_history
        hist_k: list[list[int]] = [[] for _ in words] if record else []
        hist_seg: list[list[tuple[int, ...]]] = [[] for _ in words] if record else []
        touched_by: list[list[int]] = []
        tokens_after = [sum(len(s) * c for s, c in zip(words, word_counts))]
        merges: list[tuple[int, int, int]] = []
        merge_counts: list[int] = []
        merge_scores: list[float] = []
        dup_flags: list[bool] = []
        target = max(1, self.vocab_size - n_base)
        progress_every = max(1, target // 100)
        plen = len(prefix)

        while len(id_to_token) < self.vocab_size and heap:
            if cancel is not None and cancel.cancelled:
                yield Cancelled("merges")
                return
            neg_s, neg_c, a, b = heapq.heappop(heap)
            p = (a, b)
            cnt = pair_counts.get(p, 0)
            if cnt <= 0:
                continue
            s = score(p, cnt)
            if s != -neg_s or cnt != -neg_c:
                heapq.heappush(heap, (-s, -cnt, a, b))
                continue
            if cnt < self.min_frequency:
                # Scores are not monotone in count, so a rare pair may still beat frequent
                # ones; skip it (it cannot become frequent again without a merge creating it).
                continue
            left, right = id_to_token[a], id_to_token[b]
            new_tok = left + (right[plen:] if right.startswith(prefix) else right)
            new_id = token_to_id.get(new_tok)
            dup = new_id is not None
            if new_id is None:
                new_id = add(new_tok)
            k = len(merges)
            merges.append((a, b, new_id))
            merge_counts.append(cnt)
            merge_scores.append(s)
            dup_flags.append(dup)

            touched_pairs: set[tuple[int, int]] = set()
            removed = 0
            touched = 0
            changed: list[int] = []
            for wi in where.pop(p, ()):
                w = words[wi]
                c = word_counts[wi]
                old = list(zip(w, w[1:]))
                i = 0
                hit = 0
                out: list[int] = []
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
                    continue
                touched += 1
                removed += hit * c
                words[wi] = out
                for q in old:
                    pair_counts[q] -= c
                    touched_pairs.add(q)
                for q in zip(out, out[1:]):
                    pair_counts[q] = pair_counts.get(q, 0) + c
                    touched_pairs.add(q)
                    where.setdefault(q, set()).add(wi)
                    pairs_of.setdefault(q[0], set()).add(q)
                    pairs_of.setdefault(q[1], set()).add(q)
                sym_freq[a] -= hit * c
                sym_freq[b] -= hit * c
                sym_freq[new_id] = sym_freq.get(new_id, 0) + hit * c
                if record:
                    hist_k[wi].append(k)
                    hist_seg[wi].append(tuple(out))
                    changed.append(wi)
            if record:
                touched_by.append(changed)
            # every live pair of a symbol whose frequency changed gets a fresh entry
            for sym in (a, b, new_id):
                live = set()
                for q in pairs_of.get(sym, ()):
                    if pair_counts.get(q, 0) > 0:
                        live.add(q)
                        touched_pairs.add(q)
                pairs_of[sym] = live
            for q in touched_pairs:
                cq = pair_counts.get(q, 0)
                if cq > 0:
                    heapq.heappush(heap, (-score(q, cq), -cq, q[0], q[1]))
                else:
                    where.pop(q, None)
            tokens_after.append(tokens_after[-1] - removed)
            yield MergeEvent(
                rank=k, left=left, right=right, left_id=a, right_id=b, new_token=new_tok, new_id=new_id,
                count=cnt, words_touched=touched, occurrences=removed, vocab_size=len(id_to_token),
                score=s, duplicate=dup,
            )
            if k % progress_every == 0:
                yield Progress("merges", min(1.0, (len(id_to_token) - n_base) / target), f"{k + 1} merges")

        result = WordPieceResult(
            trainer=self,
            id_to_token=tuple(id_to_token),
            merge_ids=tuple(merges),
            merge_counts=tuple(merge_counts),
            duplicate_flags=tuple(dup_flags),
            n_base=n_base,
            words=tuple(word_list),
            word_counts=tuple(word_counts),
            initial_words=tuple(initial_words),
            hist_k=hist_k,
            hist_seg=hist_seg,
            tokens_after=tuple(tokens_after),
            touched_by=touched_by,
            final_words=None if record else tuple(tuple(w) for w in words),
        )
        result.merge_scores = tuple(merge_scores)
        yield Progress("merges", 1.0, f"{len(merges)} merges")
        yield Done(result)


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
