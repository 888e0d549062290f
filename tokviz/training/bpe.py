"""BPE trainer: merge-for-merge the same merges and ids as HF tokenizers' ``BpeTrainer``.

Training is not encoding: the trainer counts adjacent pairs over the (deduplicated, counted)
corpus words and records merges in order; encoding later replays those frozen ranks. The
algorithm is the incremental one: pair counts and a pair -> words index are updated only around
each merge, and a priority queue with lazy invalidation picks the next pair (no recount per merge).

How HF decides, reproduced here on purpose (tokenizers/src/models/bpe/trainer.rs):

* ids: special tokens first (in the given order, duplicates skipped), then the alphabet sorted by
  code point, then the prefixed/suffixed forms of characters (``##a``, ``a</w>``) as words are
  tokenized, then one new id per merge whose result string is new.
* ``limit_alphabet`` drops the rarest characters (``initial_alphabet`` chars count as infinitely
  frequent). HF sorts with an unstable sort over a hash map, so ties at the cut are arbitrary
  there; here the tie drops the smaller code point first.
* The queue pops the highest count; among equal counts the *smaller pair of ids* (left id, then
  right id) wins. Because ids follow code points for the alphabet and creation order for merged
  tokens, this is the tie rule the merge slider shows.
* Queue entries carry the set of words where the pair was seen when the entry was pushed. A
  stale entry (count changed) is pushed back with the current count and its *old* word set; a
  merge is applied only to the popped entry's words. HF never decrements the merged pair's own
  count, so when a merge produces a token string that already exists (``"ab"+"c"`` after
  ``"a"+"bc"``) the token id is reused and the same pair can be chosen again later for other words:
  a *duplicate* merge (flagged in `MergeEvent.duplicate`). HF's saved merges keep such a pair once,
  at its last rank; `BpeResult.model_merges` does the same.
* With a continuing-subword prefix or end-of-word suffix, HF assigns the ``##x`` / ``x</w>`` ids
  in hash-map order, so its ids (and therefore tie-breaks) differ from run to run. tokviz uses
  the order of first appearance in the corpus; ``alphabet_order`` reproduces any given HF run.

>>> from tokviz.training.bpe import BpeTrainer
>>> r = BpeTrainer(vocab_size=5).train_counts({"abab": 3, "abac": 1})
>>> r.merges[:2]
[('a', 'b'), ('ab', 'ab')]
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Trainer, run_to_result
from .events import Cancelled, CancelToken, Done, Event, MergeEvent, Progress
from .merges import MergeState, pair_queue
from .words import PipelineSpec, byte_level_spec

__all__ = ["BpeTrainer", "BpeResult", "PairRow", "run_to_result"]


@dataclass(frozen=True, slots=True)
class PairRow:
    """One row of the pair-count table at step k."""

    left: str
    right: str
    left_id: int
    right_id: int
    count: int
    chosen: bool  # this pair is merge k
    tie: bool  # same count as the chosen pair
    decided_by: str  # "" | "count" | "left id" | "right id" | "score"
    score: float | None = None



class BpeTrainer(Trainer):
    """Configuration of a BPE training run; `train` is the generator of events."""

    model_type = "bpe"

    def __init__(
        self,
        *,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        special_tokens: Sequence[str] = (),
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
        unk_token: str | None = None,
        spec: PipelineSpec | None = None,
        alphabet_order: Sequence[str] | None = None,
        record_history: bool = True,
    ) -> None:
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = list(special_tokens)
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = {c[0] for c in initial_alphabet if c}
        self.continuing_subword_prefix = continuing_subword_prefix or None
        self.end_of_word_suffix = end_of_word_suffix or None
        self.max_token_length = max_token_length
        self.unk_token = unk_token
        self.spec = spec or PipelineSpec()
        self.alphabet_order = list(alphabet_order) if alphabet_order is not None else None
        self.record_history = record_history

    @classmethod
    def byte_level(cls, *, vocab_size: int = 30000, add_prefix_space: bool = False, **kw: Any) -> BpeTrainer:
        """GPT-2 style byte-level BPE: ByteLevel pre-tokenizer and all 256 byte symbols in the alphabet."""
        from ..engine.byte_alphabet import BYTES_TO_UNICODE

        kw.setdefault("initial_alphabet", [BYTES_TO_UNICODE[b] for b in range(256)])
        return cls(vocab_size=vocab_size, spec=byte_level_spec(add_prefix_space=add_prefix_space), **kw)

    # -- the phases (tokviz.training.merges) ------------------------------------------------

    def train_from_counts(self, counts: Mapping[str, int], *, cancel: CancelToken | None = None) -> Iterator[Event]:
        """Events of training on word counts: specials, alphabet, words, pairs, merges, result."""
        state = MergeState(self.special_tokens, record=self.record_history)
        word_list = [w for w in counts if counts[w] > 0]
        word_counts = [int(counts[w]) for w in word_list]
        chars = _Chars.of(word_list)
        allowed = self._alphabet(state, chars, word_counts)
        state.mark_base()
        yield Progress("tokenize words", 0.0, f"{len(word_list)} distinct words")
        symbols = self._symbols(state, word_list, allowed, chars)
        if cancel is not None and cancel.cancelled:
            yield Cancelled("tokenize words")
            return
        state.set_words(word_list, word_counts, symbols)
        queue = pair_queue(symbols, word_counts, [1] * len(state.id_to_token), self.max_token_length)
        yield Progress("count pairs", 1.0, f"{len(queue)} pairs")
        for event in self._merges(state, queue, cancel):
            yield event
            if isinstance(event, Cancelled):
                return
        yield Progress("merges", 1.0, f"{len(state.merges)} merges")
        yield Done(state.result(BpeResult, self, None if state.record else queue.segments()))

    def _alphabet(self, state: MergeState, chars: _Chars, counts: list[int]) -> set[str]:
        """Add the alphabet (by code point, after ``limit_alphabet``); the characters kept."""
        if self.alphabet_order is not None:
            for tok in self.alphabet_order:
                state.add(tok)
            return {t for t in self.alphabet_order if len(t) == 1}
        kept: dict[str, float] = dict(chars.frequencies(counts))
        for ch in self.initial_alphabet:
            kept[ch] = float("inf")
        if self.limit_alphabet is not None and len(kept) > self.limit_alphabet:
            drop = len(kept) - self.limit_alphabet
            for ch, _ in sorted(kept.items(), key=lambda kv: (kv[1], kv[0]))[:drop]:
                del kept[ch]
        for ch in sorted(kept):
            state.add(ch)
        return set(kept)

    def _symbols(self, state: MergeState, words: list[str], allowed: set[str], chars: _Chars) -> list[list[int]]:
        """Each word as symbol ids (characters outside the alphabet dropped, as HF does); the
        ``##x`` / ``x</w>`` forms get ids in order of first appearance."""
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        if not prefix and not suffix:
            return chars.ids(state.token_to_id, allowed)
        out = []
        for w in words:
            syms: list[int] = []
            last = len(w) - 1
            for j, ch in enumerate(w):
                if ch in allowed:
                    s = prefix + ch if j and prefix else ch
                    syms.append(state.add(s + suffix if j == last and suffix else s))
            out.append(syms)
        return out

    def _merges(self, state: MergeState, queue: Any, cancel: CancelToken | None) -> Iterator[Event]:  # noqa: ANN401
        """Pop the best pair, record it, apply it to its words, until the vocabulary is full."""
        target = max(1, self.vocab_size - len(state.id_to_token))
        every = max(1, target // 100)
        while len(state.id_to_token) < self.vocab_size:
            if cancel is not None and cancel.cancelled:
                yield Cancelled("merges")
                return
            top = queue.pop()
            if top is None or top[2] < 1 or self.min_frequency > top[2]:
                break
            a, b, count = top
            new_tok, new_id, duplicate = state.merged(a, b, self.continuing_subword_prefix)
            k = state.record_merge(a, b, new_id, count, duplicate)
            touched, removed, changed = queue.merge(a, b, new_id, changed=state.record)
            state.record_words(k, changed, [queue.word(wi) for wi in changed], removed)
            t = state.id_to_token
            yield MergeEvent(
                rank=k, left=t[a], right=t[b], left_id=a, right_id=b, new_token=new_tok, new_id=new_id,
                count=count, words_touched=touched, occurrences=removed, vocab_size=len(t), duplicate=duplicate,
            )
            if k % every == 0:
                yield Progress("merges", min(1.0, (len(t) - state.n_base) / target), f"{k + 1} merges")


class _Chars:
    """The characters of the distinct words as columns: each distinct code point once, and every
    word's characters as indices into those (the alphabet's counts and the words' symbol ids
    become array operations instead of a loop per character)."""

    def __init__(self, words: list[str], uniq: np.ndarray, inverse: np.ndarray, lengths: np.ndarray) -> None:
        self.words, self.uniq, self.inverse, self.lengths = words, uniq, inverse, lengths

    @classmethod
    def of(cls, words: list[str]) -> _Chars:
        cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        uniq, inverse = np.unique(cps, return_inverse=True)
        return cls(words, uniq, inverse, np.fromiter(map(len, words), dtype=np.int64, count=len(words)))

    def frequencies(self, counts: list[int]) -> dict[str, int]:
        """Character -> occurrences over the corpus (each word weighted by its count)."""
        weights = np.repeat(np.asarray(counts, dtype=np.int64), self.lengths)
        freq = np.zeros(self.uniq.size, dtype=np.int64)
        np.add.at(freq, self.inverse, weights)
        return dict(zip(map(chr, self.uniq.tolist()), freq.tolist()))

    def ids(self, token_to_id: Mapping[str, int], allowed: set[str]) -> list[list[int]]:
        """Every word as the ids of its characters, the ones outside ``allowed`` dropped."""
        table = np.array([token_to_id[chr(u)] if chr(u) in allowed else -1 for u in self.uniq.tolist()], dtype=np.int64)
        flat = table[self.inverse].tolist()
        bounds = np.concatenate(([0], np.cumsum(self.lengths))).tolist()
        out = [flat[a:b] for a, b in zip(bounds, bounds[1:])]
        if len(allowed) < self.uniq.size:
            out = [[i for i in w if i >= 0] for w in out]
        return out


class BpeResult:
    """A finished BPE training run: vocab, merges, and everything the merge slider reads.

    Step ``k`` means "after the first k merges" (k = 0 .. len(merges)); at step k the next merge
    is ``merges[k]``. All step queries read recorded per-word deltas, never retrain.
    """

    def __init__(
        self,
        *,
        trainer: BpeTrainer,
        id_to_token: tuple[str, ...],
        merge_ids: tuple[tuple[int, int, int], ...],
        merge_counts: tuple[int, ...],
        duplicate_flags: tuple[bool, ...],
        n_base: int,
        words: tuple[str, ...],
        word_counts: tuple[int, ...],
        initial_words: tuple[tuple[int, ...], ...],
        hist_k: list[list[int]],
        hist_seg: list[list[tuple[int, ...]]],
        tokens_after: tuple[int, ...],
        touched_by: list[list[int]] | None = None,
        final_words: tuple[tuple[int, ...], ...] | None = None,
    ) -> None:
        self.trainer = trainer
        self._final = final_words
        self._touched_by = touched_by
        self.id_to_token = id_to_token
        self.token_to_id = {t: i for i, t in enumerate(id_to_token)}
        self.merge_ids = merge_ids
        self.merge_counts = merge_counts
        self.duplicate_flags = duplicate_flags
        self.n_base = n_base
        self.words = words
        self.word_counts = word_counts
        self._initial = initial_words
        self._hist_k = hist_k
        self._hist_seg = hist_seg
        self.tokens_after = tokens_after
        # the slider's cursor: pair counts at step _cur_k, moved by the words each merge touched
        self._cur_k: int | None = None
        self._cur_counts: dict[tuple[int, int], int] = {}
        self._seg_k: int | None = None
        self._seg: list[list[str]] = []
        self._full: Any = None  # the engine pipeline of this result (built on first use)
        self._probe_cache: dict[tuple[int, str | None], Any] = {}  # (k, text) -> a cut pipeline
        # vocab size after k merges (duplicates do not grow it)
        sizes = [n_base]
        for dup in duplicate_flags:
            sizes.append(sizes[-1] + (0 if dup else 1))
        self.vocab_sizes = tuple(sizes)

    # -- plain data ---------------------------------------------------------------------------

    @property
    def spec(self) -> PipelineSpec:
        return self.trainer.spec

    @property
    def special_tokens(self) -> list[str]:
        return list(self.trainer.special_tokens)

    @property
    def num_merges(self) -> int:
        return len(self.merge_ids)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """Every merge step in order (duplicates included)."""
        t = self.id_to_token
        return [(t[a], t[b]) for a, b, _ in self.merge_ids]

    @property
    def model_merges(self) -> list[tuple[str, str]]:
        """The merges as HF saves them: a pair chosen twice is kept once, at its last rank."""
        return _dedup_last(self.merges)

    @property
    def vocab(self) -> dict[str, int]:
        return dict(self.token_to_id)

    def merge_event(self, k: int) -> MergeEvent:
        """The `MergeEvent` of step k, rebuilt from the result (what the slider shows as "merge k")."""
        a, b, n = self.merge_ids[k]
        t = self.id_to_token
        scores = getattr(self, "merge_scores", ())
        return MergeEvent(
            rank=k, left=t[a], right=t[b], left_id=a, right_id=b, new_token=t[n], new_id=n,
            count=self.merge_counts[k],
            words_touched=len(self._touched_by[k]) if self._touched_by else -1,
            occurrences=self.tokens_after[k] - self.tokens_after[k + 1],
            vocab_size=self.vocab_sizes[k + 1], duplicate=self.duplicate_flags[k],
            score=scores[k] if scores else None,
        )

    # -- the slider ---------------------------------------------------------------------------

    def _check_k(self, k: int) -> int:
        if not 0 <= k <= len(self.merge_ids):
            raise ValueError(f"step {k} out of range 0..{len(self.merge_ids)}")
        return k

    def word_ids_at(self, k: int, word_index: int) -> tuple[int, ...]:
        """Symbol ids of corpus word ``word_index`` after the first k merges."""
        self._check_k(k)
        if not self._hist_k:
            if k == 0:
                return self._initial[word_index]
            if k == len(self.merge_ids) and self._final is not None:
                return self._final[word_index]
            raise ValueError("per-step history was not recorded (record_history=False): only steps 0 and the last")
        hk = self._hist_k[word_index]
        j = bisect_right(hk, k - 1)
        return self._hist_seg[word_index][j - 1] if j else self._initial[word_index]

    def segmentation_at(self, k: int, word_index: int) -> list[str]:
        t = self.id_to_token
        return [t[i] for i in self.word_ids_at(k, word_index)]

    def segmentations_at(self, k: int) -> list[list[str]]:
        """Every corpus word (in `words` order) as tokens after the first k merges.

        Like the pair counts, the list is kept for the last k and moved by the words the merges
        in between touched.
        """
        self._check_k(k)
        t = self.id_to_token
        n_words = len(self.words)
        if self._seg_k is None or self._touched_by is None or not self._hist_k:
            seg = [[t[i] for i in self.word_ids_at(k, wi)] for wi in range(n_words)]
        else:
            lo, hi = min(self._seg_k, k), max(self._seg_k, k)
            changed: set[int] = set()
            for j in range(lo, hi):
                changed.update(self._touched_by[j])
            seg = self._seg
            for wi in changed:
                seg[wi] = [t[i] for i in self.word_ids_at(k, wi)]
        self._seg_k, self._seg = k, seg
        return list(seg)

    def corpus_tokens_at(self, k: int) -> int:
        """Number of tokens in the whole training corpus after the first k merges."""
        return self.tokens_after[self._check_k(k)]

    def chart_series(self) -> dict[str, list[int]]:
        """x = k; vocab size, merge count and corpus tokens after k merges (for the chart)."""
        n = len(self.merge_ids)
        return {
            "k": list(range(n + 1)),
            "vocab_size": list(self.vocab_sizes),
            "merges": list(range(n + 1)),
            "corpus_tokens": list(self.tokens_after),
        }

    def pair_counts_at(self, k: int) -> dict[tuple[int, int], int]:
        """True corpus pair counts after the first k merges (by ids); the returned dict is shared, do not modify.

        Moving from the previous k only re-counts the words the merges in between touched, so
        stepping the slider costs what one merge changed.
        """
        self._check_k(k)
        if self._cur_k is None or self._touched_by is None or not self._hist_k:
            counts = self._count_pairs(k, range(len(self.word_counts)), {}, 1)
        else:
            k0 = self._cur_k
            if k0 == k:
                return self._cur_counts
            lo, hi = min(k0, k), max(k0, k)
            changed = set()
            for j in range(lo, hi):
                changed.update(self._touched_by[j])
            if len(changed) * 2 > len(self.word_counts):
                counts = self._count_pairs(k, range(len(self.word_counts)), {}, 1)
            else:
                counts = self._cur_counts
                self._count_pairs(k0, changed, counts, -1)
                self._count_pairs(k, changed, counts, 1)
        self._cur_k = k
        self._cur_counts = counts
        return counts

    def _count_pairs(self, k: int, word_indices: Iterable[int], counts: dict[tuple[int, int], int], sign: int) -> dict:
        get = counts.get
        wc = self.word_counts
        for wi in word_indices:
            c = wc[wi] * sign
            syms = self.word_ids_at(k, wi)
            for p in zip(syms, syms[1:]):
                v = get(p, 0) + c
                if v:
                    counts[p] = v
                else:
                    del counts[p]
        return counts

    def pair_table_at(self, k: int, *, top: int = 20) -> list[PairRow]:
        """The top pairs at step k (count, then pair ids, as the trainer's queue orders them).

        The chosen pair (merge k) is marked; rows with the same count are ties, and
        ``decided_by`` says which rule put the chosen pair ahead ("left id" / "right id": the
        smaller id wins among equal counts; "count": simply fewer occurrences).
        """
        counts = self.pair_counts_at(k)
        order = heapq.nsmallest(top, counts.items(), key=lambda kv: (-kv[1], kv[0]))
        chosen = self.merge_ids[k][:2] if k < len(self.merge_ids) else None
        chosen_count = counts.get(chosen, 0) if chosen is not None else None
        if chosen is not None and all(p != chosen for p, _ in order):
            order.append((chosen, chosen_count))
        t = self.id_to_token
        rows = []
        for (a, b), cnt in order:
            is_chosen = (a, b) == chosen
            tie = chosen is not None and cnt == chosen_count
            if is_chosen or chosen is None:
                why = ""
            elif cnt != chosen_count:
                why = "count"
            elif a != chosen[0]:
                why = "left id"
            else:
                why = "right id"
            rows.append(PairRow(t[a], t[b], a, b, cnt, is_chosen, tie and not is_chosen, why))
        return rows

    # -- the model ----------------------------------------------------------------------------

    def model_json(self, *, num_merges: int | None = None) -> dict[str, Any]:
        """The HF ``model`` object (type BPE), optionally with only the first ``num_merges`` steps."""
        tr = self.trainer
        merges = self.model_merges if num_merges is None else _dedup_last(self.merges[:num_merges])
        return {
            "type": "BPE",
            "dropout": None,
            "unk_token": tr.unk_token,
            "continuing_subword_prefix": tr.continuing_subword_prefix,
            "end_of_word_suffix": tr.end_of_word_suffix,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": dict(self.token_to_id),
            "merges": [[x, y] for x, y in merges],
        }

    def tokenizer_json(self) -> dict[str, Any]:
        from .export import tokenizer_json

        return tokenizer_json(self.model_json(), self.spec, self.special_tokens, first_ids=self._special_ids())

    def _special_ids(self) -> dict[str, int]:
        return {s: self.token_to_id[s] for s in self.special_tokens if s in self.token_to_id}

    def tokenizer(self, *, num_merges: int | None = None) -> Any:
        """The engine Tokenizer of this result (with only the first ``num_merges`` merges if given)."""
        from .export import build_tokenizer, tokenizer_json

        model = self.model_json(num_merges=num_merges)
        return build_tokenizer(tokenizer_json(model, self.spec, self.special_tokens, first_ids=self._special_ids()))

    def probe(self, text: str, k: int) -> Any:
        """Encode ``text`` with the engine pipeline using only the first k merges."""
        self._check_k(k)
        return self.tokenizer_at(k, text=text).encode(text, add_special_tokens=False)

    def tokenizer_at(self, k: int, *, text: str | None = None) -> Any:
        """The engine pipeline after the first ``k`` merge steps (the last few are kept).

        The full pipeline is built once; each k only gets a new model around it
        (`Tokenizer.with_model`). With ``text`` the model keeps only the merges that text's
        pre-token chunks can use (exact for that text only; see `BPE.first_merges`).
        """
        self._check_k(k)
        key = (k, text)
        tok = self._probe_cache.get(key)
        if tok is None:
            if len(self._probe_cache) > 16:
                self._probe_cache.clear()
            tok = self._probe_cache[key] = self._cut(k, text)
        return tok

    def _cut(self, k: int, text: str | None) -> Any:
        from ..engine.models.bpe import BPE

        if self._full is None:
            self._full = self.tokenizer()
        base = self._full
        model = base.model
        if k == self.num_merges:
            return base
        if not isinstance(model, BPE):  # WordPiece: the vocabulary as it was after k merges
            return self.tokenizer(num_merges=k)
        if any(self.duplicate_flags):
            # A pair chosen twice sits at its last rank in the final model, so the first k steps
            # are not a prefix of its merges: rebuild from the steps (BPE keeps a repeated pair
            # at its last rank, as `_dedup_last` does).
            return base.with_model(model.replace(merges=self.merges[:k]))
        chunks = None
        if text is not None:  # (the pre-token stage alone: no model run)
            chunks = [c.text for c in base.stages(text).pre_tokens]
        return base.with_model(model.first_merges(k, text=chunks))


def _dedup_last(merges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A pair chosen twice (HF's duplicate-merge quirk) is kept once, at its last rank, as HF saves it."""
    last: dict[tuple[str, str], int] = {}
    for k, p in enumerate(merges):
        last[p] = k
    return [p for p, _ in sorted(last.items(), key=lambda kv: kv[1])]
