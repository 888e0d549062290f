"""BPE model: HF tokenizers' ``"BPE"`` (merges list) and tiktoken rank files (rank mode).

Two ways to say which adjacent pair merges first:

* **merges mode** (tokenizer.json, GPT-2 ``merges.txt``): the pair ``(left, right)`` has the rank
  of its line in the merges list; a pair that is not listed never merges.
* **rank mode** (`BPE.from_ranks`, tiktoken ``.tiktoken`` files): there is no merges list; the
  priority of two adjacent parts is the rank of their concatenated bytes, and any pair whose
  concatenation is a token may merge. Symbols are GPT-2 byte-proxy strings (see
  `tokviz.engine.byte_alphabet`) so the model plugs into the same ByteLevel pipeline; a token's
  id is its rank.

Both apply the same rule, which HF (a heap keyed on ``(rank, position)``) and tiktoken (a scan
for the strictly smaller rank) agree on: repeatedly merge the adjacent pair with the lowest rank,
the leftmost one on ties, one pair at a time (merging every occurrence of the best pair at once,
as some toy implementations do, is *not* equivalent when a fresh pair outranks the next
occurrence).

Performance notes (this is the hot path of every encode). With the native core
(`tokviz.engine._native`) a deterministic model hands plain chunks and decorated symbol ids to
its C merge loop (`_native_table`); the Python kernels below are then the reference and the
pure-Python backend. Results are cached per chunk (bounded FIFO, evict the older half). A plain
chunk longer than `_CUT_MIN` chars is first cut where no merge can ever cross (`_merge_plain`)
and the pieces are cached too, which makes never-repeating Japanese sentences cheap; tried and
dropped: cutting shorter chunks (on CJK runs the per-boundary passes cost more than the cached
pieces save) and cutting in rank mode (every multi-byte token is a possible merge result, so few
boundaries are provably uncrossable and building the tables costs more than it saves). A long
chunk with chars outside the vocab (a whole document when the tokenizer has no pre-tokenizer,
as Mistral's tokenizer.json) is cut the same way around its byte-fallback/unk pieces
(`_tokenize_cut`). Pieces of up to `_LIST_LIMIT` symbols use a flat list of pair ranks whose
``min``/``index`` scans run in C; longer ones a heap of int keys plus a linked list
(O(n log n): 10,000 equal chars are fine). Dropout, tracing, and decorated symbols without the
native core take the general heap path, which mirrors HF's ``Word::merge_all`` step by step.

Offsets are chars of the chunk. Where HF's own byte bookkeeping drifts (a char dropped for
lack of an unk token, an unk placed after byte-fallback pieces) the drifted offsets are
reproduced; the one case not reproduced is byte fallback of a prefixed/suffixed symbol, where
HF counts the prefix's bytes and reports offsets past the end of the chunk (ours are clamped).
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from functools import cached_property, partial
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate, chain, compress, filterfalse, islice, pairwise, repeat
from operator import add, and_, is_, itemgetter, methodcaller, not_, or_
from typing import Any

from .. import kernels
from ..byte_alphabet import bytes_to_proxy
from ..encoding import BpeTrace, MergeStep
from ..errors import TokvizFormatError
from ..fields import MAX_ID, Fields, id_error, is_id
from . import DictVocabModel, ModelToken, read_vocab

__all__ = ["BPE", "DEFAULT_CACHE_CAPACITY"]

#: Chunks cached per model; when full the older half is dropped (HF keeps 10,000, then stops adding).
DEFAULT_CACHE_CAPACITY = 65_536
#: Chunks longer than this (in chars) are not cached (HF: 256 bytes).
CACHE_MAX_CHARS = 256
# Above this many initial symbols the heap algorithm beats the flat rank list.
_LIST_LIMIT = 24
# Plain chunks longer than this are cut where no merge can cross (see BPE._merge_plain).
_CUT_MIN = CACHE_MAX_CHARS
# Symbols of long chunks to see before building the cut tables (see BPE._merge_plain).
_CUT_AFTER = 20_000
# Larger than any rank: "this pair does not merge".
_NO_MERGE = 1 << 62


# GPT-2's byte alphabet: the proxy char of every byte (`tokenize_utf8`)
_PROXIES = bytes_to_proxy(bytes(range(256)))


def _byte_piece(b: int) -> str:
    return f"<0x{b:02X}>"


class BPE(DictVocabModel):
    """Byte-pair encoding with HF tokenizers' exact semantics.

    >>> bpe = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, [("a", "b"), ("b", "c")])
    >>> [bpe.id_to_token(i) for i, _, _ in bpe.tokenize("abc")]
    ['ab', 'c']
    """

    type_name = "BPE"

    def __init__(
        self,
        vocab: Mapping[str, int] | None = None,
        merges: Iterable[tuple[str, str] | Sequence[str] | str] | None = None,
        *,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        cache_capacity: int = DEFAULT_CACHE_CAPACITY,
        seed: int | None = None,
    ) -> None:
        if dropout is not None and not (0.0 <= dropout <= 1.0):
            raise TokvizFormatError(
                f"dropout must be between 0 and 1, got {dropout!r}", where="dropout"
            )
        self._vocab: dict[str, int] = dict(vocab or {})
        # id -> token (if two tokens share an id, the later one wins; HF's choice is arbitrary)
        self._vocab_r: dict[int, str] = dict(zip(self._vocab.values(), self._vocab.keys()))
        self.dropout = dropout
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = bool(fuse_unk)
        self.byte_fallback = bool(byte_fallback)
        self.ignore_merges = bool(ignore_merges)
        self.cache_capacity = cache_capacity
        self._rng = random.Random(seed)
        self._rank_mode = False
        # (left, right) -> rank, and (left, right) -> merged string (HF drops the prefix's
        # length from the right part); filled below
        self._ranks: dict[tuple[str, str], int]
        self._merged: dict[tuple[str, str], str]
        plen = len(continuing_subword_prefix or "")
        pairs = _parse_merges(merges or ())
        vocab_ = self._vocab
        if plen:
            results = [a + b[plen:] for a, b in pairs]
        else:
            results = list(map(add, map(itemgetter(0), pairs), map(itemgetter(1), pairs)))
        # bulk checks first (C-level set operations); the slow scan only names the culprit
        if (
            not set(map(itemgetter(0), pairs)).issubset(vocab_)
            or not set(map(itemgetter(1), pairs)).issubset(vocab_)
            or not set(results).issubset(vocab_)
        ):
            for rank, ((a, b), new) in enumerate(zip(pairs, results)):
                for part, what in ((a, repr(a)), (b, repr(b)), (new, f"result {new!r}")):
                    if part not in vocab_:
                        raise TokvizFormatError(
                            f"merge {rank} ({a!r}, {b!r}): {what} is not in the vocab",
                            where=f"merges[{rank}]",
                        )
        # a pair listed twice keeps its last rank (later entries overwrite), as HF's map does
        self._ranks = dict(zip(pairs, range(len(pairs))))
        self._merged = dict(zip(pairs, results))
        self._plain = not continuing_subword_prefix and not end_of_word_suffix
        self._sentinel = _sentinel(self._vocab)
        self._junctions: Any = None  # built on first use (see _merge_plain)
        self._cut_stats = [0, 0]  # boundaries looked at, cuts found (see _merge_plain)
        self._long_seen = 0  # symbols of long chunks merged before the cut tables exist
        self._cache: dict[str, tuple[ModelToken, ...]] | None = None
        self._native = kernels.native  # the native merge loop, or None (see `_native_table`)
        self._relevant_memo: tuple[frozenset[str], list[int]] | None = None  # see `_relevant_merges`
        self._reset_cache()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_ranks(
        cls,
        ranks: Mapping[bytes, int] | Mapping[str, int],
        *,
        dropout: float | None = None,
        seed: int | None = None,
        cache_capacity: int = DEFAULT_CACHE_CAPACITY,
    ) -> BPE:
        """A rank-mode BPE from a tiktoken rank table; a token's rank is its id.

        Keys are token bytes, or their byte-proxy spelling (``"Ġhi"`` for ``b" hi"``) as
        `tokviz.io.tiktoken_ranks` produces. Like tiktoken's ``encode_ordinary``, a chunk that is
        itself a token is returned whole (``ignore_merges``). ``dropout`` (tiktoken has none)
        works as in merges mode: each merge is skipped with probability p.

        >>> bpe = BPE.from_ranks({b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4})
        >>> [bpe.id_to_token(i) for i, _, _ in bpe.tokenize("abc")]
        ['a', 'bc']
        """
        from ..byte_alphabet import bytes_to_proxy

        key_types = set(map(type, ranks))
        if key_types <= {str}:
            vocab = dict(ranks)  # already byte-proxy strings (the common, fast case)
        elif key_types <= {bytes, str}:
            vocab = {bytes_to_proxy(k) if isinstance(k, bytes) else k: r for k, r in ranks.items()}
        else:
            bad = next(k for k in ranks if not isinstance(k, (bytes, str)))
            raise TokvizFormatError(f"rank table key must be bytes or str, got {bad!r}", where="ranks")
        if vocab and (set(map(type, vocab.values())) != {int} or min(vocab.values()) < 0 or max(vocab.values()) > MAX_ID):
            bad_tok, bad_rank = next((t, r) for t, r in vocab.items() if not is_id(r))
            raise TokvizFormatError(f"rank of {bad_tok!r:.60}: {id_error(bad_rank)}", where="ranks")
        self = cls(vocab, (), dropout=dropout, seed=seed, ignore_merges=True, cache_capacity=cache_capacity)
        self._rank_mode = True
        return self

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BPE:
        f = Fields(obj)
        if f.raw("type", "BPE") != "BPE":
            f.fail("type", f"expected a BPE model, got type {f.raw('type')!r:.60}")
        vocab = read_vocab(obj, "BPE")
        return cls(
            vocab,
            f.list("merges"),
            dropout=f.number("dropout", None, optional=True, minimum=0.0, maximum=1.0),
            unk_token=f.str("unk_token", None, optional=True),
            continuing_subword_prefix=f.str("continuing_subword_prefix", None, optional=True),
            end_of_word_suffix=f.str("end_of_word_suffix", None, optional=True),
            fuse_unk=f.bool("fuse_unk", False, optional=True),
            byte_fallback=f.bool("byte_fallback", False, optional=True),
            ignore_merges=f.bool("ignore_merges", False, optional=True),
        )

    def to_json(self) -> dict[str, Any]:
        """The tokenizer.json ``"model"`` object (HF's field order; merges as pairs).

        In rank mode the merges are derived from the ranks: for every token (by rank) each split
        into two tokens, ordered by the parts' ranks; ``ignore_merges`` is set as tiktoken does.
        """
        if self._rank_mode:
            merges = self._derived_merges()
        else:
            merges = [list(p) for p, _ in sorted(self._ranks.items(), key=lambda kv: kv[1])]
        options = self._options()
        del options["cache_capacity"]  # not part of the file format
        return {
            "type": "BPE",
            **options,
            "vocab": dict(sorted(self._vocab.items(), key=lambda kv: kv[1])),
            "merges": merges,
        }

    def _derived_merges(self) -> list[list[str]]:
        vocab = self._vocab
        found: list[tuple[int, int, int, str, str]] = []
        for tok, rank in vocab.items():
            for k in range(1, len(tok)):
                a, b = tok[:k], tok[k:]
                ra = vocab.get(a)
                if ra is None:
                    continue
                rb = vocab.get(b)
                if rb is not None:
                    found.append((rank, ra, rb, a, b))
        found.sort()
        return [[a, b] for _, _, _, a, b in found]

    # ------------------------------------------------------------------ variants
    def _options(self) -> dict[str, Any]:
        """The constructor's keyword options as this model has them (``seed`` is not kept), in
        tokenizer.json's field order (`to_json` writes them so)."""
        return {
            "dropout": self.dropout,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "cache_capacity": self.cache_capacity,
        }

    def replace(
        self,
        *,
        vocab: Mapping[str, int] | None = None,
        merges: Iterable[tuple[str, str] | Sequence[str] | str] | None = None,
        seed: int | None = None,
        **options: Any,
    ) -> BPE:
        """A new model like this one with some constructor arguments changed (nothing is shared).

        ``options`` are the constructor's (``dropout``, ``unk_token``, ``byte_fallback`` ...);
        ``vocab`` and ``merges`` default to this model's; ``seed`` seeds the new model's dropout.
        A rank-mode model (tiktoken ranks) has only ``vocab`` (the ranks), ``dropout`` and
        ``cache_capacity``.

        >>> bpe = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
        >>> [bpe.replace(dropout=1.0).id_to_token(i) for i, _, _ in bpe.replace(dropout=1.0).tokenize("ab")]
        ['a', 'b']
        """
        unknown = sorted(set(options) - set(self._options()))
        if unknown:
            raise TypeError(f"BPE.replace() got unknown option(s): {', '.join(unknown)}")
        if self._rank_mode:
            extra = sorted(set(options) - {"dropout", "cache_capacity"})
            if merges is not None or extra:
                what = ", ".join((["merges"] if merges is not None else []) + extra)
                raise ValueError(f"a rank-mode BPE (tiktoken ranks) has no {what}: its merges are its ranks")
            opts = {"dropout": self.dropout, "cache_capacity": self.cache_capacity, **options}
            return BPE.from_ranks(self._vocab if vocab is None else vocab, seed=seed, **opts)
        return BPE(
            self._vocab if vocab is None else vocab,
            self.merges if merges is None else merges,
            seed=seed,
            **{**self._options(), **options},
        )

    @property
    def merge_count(self) -> int:
        """How many merges the model has (rank mode: tokens longer than one symbol, by rank)."""
        order = self._merge_order
        return len(order.ordered) if order.rank_mode else len(order.merges)

    def describe_merge(self, k: int) -> str:
        """What merge ``k`` (0-based) adds, e.g. ``'Ġ' + 't' -> 'Ġt'`` (rank mode: the token)."""
        order = self._merge_order
        if order.rank_mode:
            token, rank = order.ordered[k]
            return f"token {token!r} (rank {rank})"
        a, b = order.merges[k]
        return f"{a!r} + {b!r} -> {order.results[k]!r}"

    def first_merges(self, k: int, *, text: str | Iterable[str] | None = None) -> BPE:
        """This model with only its first ``k`` merges: how text splits when the vocabulary has
        grown by only ``k`` merges.

        * merges mode: the first ``k`` merges; the vocabulary loses the tokens that only later
          merges create, so ``ignore_merges`` (a chunk that is itself a token stays whole) cannot
          bypass the cutoff.
        * rank mode: every single-symbol token (the alphabet) plus the ``k`` lowest-ranked longer
          ones; tiktoken's rule then applies unchanged.

        ``text``: the model inputs the result will be asked to tokenize (pre-token chunk texts,
        as `Tokenizer.encode` shows them in ``stages.pre_tokens``). A merge only ever produces a
        substring of the chunk it runs on, so keeping just the merges whose result occurs in
        these inputs (in order) gives exactly the same tokens for them, and a model of a few
        hundred entries instead of the whole vocabulary. Other inputs may then tokenize
        differently. Options (dropout, unk, byte fallback ...) are kept.

        >>> m = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")])
        >>> r = m.first_merges(1)
        >>> [r.id_to_token(i) for i, _, _ in r.tokenize("abc")], r.merge_count
        (['ab', 'c'], 1)
        """
        order = self._merge_order
        n = self.merge_count
        if not 0 <= k <= n:
            raise ValueError(f"merge cutoff {k} out of range 0..{n}")
        relevant = self._relevant_merges(text) if text is not None else None
        if order.rank_mode:
            kept = dict(order.alphabet)
            if relevant is None:
                kept.update(order.ordered[:k])
            else:
                kept.update(order.ordered[i] for i in relevant if i < k)
            return self.replace(vocab=kept)
        if relevant is not None:
            # the entries no merge creates, plus the results (and operands) of the kept merges
            vocab = dict(order.base_vocab)
            merges = [order.merges[i] for i in relevant if i < k]
            full = self._vocab
            for i in relevant:
                if i >= k:
                    break
                vocab[order.results[i]] = full[order.results[i]]
            for a, b in merges:
                vocab.setdefault(a, full[a])
                vocab.setdefault(b, full[b])
            try:
                return self.replace(vocab=vocab, merges=merges)
            except TokvizFormatError:
                pass  # an unusual vocab (an operand only a later merge creates): no filter
        merges = order.merges[:k]
        operands = {x for pair in merges for x in pair}
        drop = set(order.results[k:]) - set(order.results[:k]) - operands
        try:
            return self.replace(vocab={t: i for t, i in self._vocab.items() if t not in drop}, merges=merges)
        except TokvizFormatError:
            return self.replace(merges=merges)  # an operand that only a later merge creates: keep all

    def _relevant_merges(self, text: str | Iterable[str]) -> list[int] | None:
        """Indices (in merge order) of the merges whose result occurs in ``text``; None when the
        results carry decorations (``##``, ``</w>``) that the inputs do not. The last answer is
        kept (a slider asks for the same text at every step)."""
        if self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        inputs = frozenset((text,) if isinstance(text, str) else text)
        memo = self._relevant_memo
        if memo is not None and memo[0] == inputs:
            return memo[1]
        order = self._merge_order
        longest = order.longest
        subs: set[str] = set()
        for chunk in inputs:
            n = len(chunk)
            for i in range(n - 1):
                subs.update(chunk[i:j] for j in range(i + 2, min(n, i + longest) + 1))
        if order.rank_mode:
            relevant = [i for i, (t, _) in enumerate(order.ordered) if t in subs]
        else:
            relevant = [i for i, r in enumerate(order.results) if r in subs]
        self._relevant_memo = (inputs, relevant)
        return relevant

    @cached_property
    def _merge_order(self) -> _MergeOrder:
        """The merge order behind `first_merges` (computed once per model)."""
        vocab = self._vocab
        longest = max(map(len, vocab), default=1)
        if self._rank_mode:
            alphabet = {t: r for t, r in vocab.items() if len(t) == 1}
            ordered = sorted(((t, r) for t, r in vocab.items() if len(t) > 1), key=itemgetter(1))
            return _MergeOrder(True, [], [], {}, alphabet, ordered, longest)
        merges = self.merges
        plen = len(self.continuing_subword_prefix or "")
        results = [a + b[plen:] for a, b in merges]
        made = set(results)
        base = {t: i for t, i in vocab.items() if t not in made}  # the alphabet, byte pieces, unk ...
        return _MergeOrder(False, merges, results, base, {}, [], longest)

    # ------------------------------------------------------------------ vocab
    @property
    def rank_mode(self) -> bool:
        """True for a tiktoken rank table (pair priority = rank of the concatenation)."""
        return self._rank_mode

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in rank order (empty in rank mode)."""
        return [p for p, _ in sorted(self._ranks.items(), key=lambda kv: kv[1])]


    def clear_cache(self) -> None:
        """Forget cached chunks (results never depend on the cache)."""
        self._reset_cache()

    @property
    def deterministic(self) -> bool:
        """False with dropout (each encode samples)."""
        return not self.dropout

    def _reset_cache(self) -> None:
        self._deterministic = self.dropout is None or self.dropout == 0.0
        self._cache = {} if self._deterministic and self.cache_capacity > 0 else None
        self._piece_cache: dict[str, tuple[str, ...]] = {}

    def seed(self, seed: int | None) -> None:
        """Reseed the dropout random generator (reproducible dropout runs)."""
        self._rng.seed(seed)

    # ------------------------------------------------------------------ tokenize
    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        cache = self._cache
        if cache is not None:
            hit = cache.get(text)
            if hit is not None:
                return hit
            out = self._tokenize(text)
            if len(text) <= CACHE_MAX_CHARS:
                if len(cache) >= self.cache_capacity:
                    _evict_half(cache)
                cache[text] = out
            return out
        return self._tokenize(text)

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns; with the native core a plain chunk goes straight to the merge
        loop (not cached here: the pipeline caches whole chunk results)."""
        table = self._native_table if self._deterministic and self._plain else None
        if table is not None and not (self.ignore_merges and text in self._vocab):
            got = self._native.bpe_merge_text(table, text, True)  # type: ignore[union-attr]
            if got is not None:
                return got
        return super().tokenize_columns(text)

    def tokenize_utf8(self, text: str) -> tuple[list[int], list[int], list[int], list[int], list[int], int] | None:
        """A byte-level chunk given as its original text (see `Model.tokenize_utf8`), through
        the native merge loop; None without it, with dropout or with decorated symbols."""
        table = self._native_table if self._deterministic and self._plain else None
        if table is None:
            return None
        return self._native.bpe_merge_utf8(table, text, _PROXIES)  # type: ignore[union-attr]

    def utf8_entry_maker(
        self, id_table: list[str], byte_pieces: frozenset[str], fallback: Callable[[str], tuple]
    ) -> Callable[[str], tuple] | None:
        """`Model.utf8_entry_maker`: the native ``bpe_utf8_entry`` over this model's table."""
        table = self._native_table if self._deterministic and self._plain else None
        if table is None:
            return None
        return partial(self._native.bpe_utf8_entry, table, _PROXIES, id_table, byte_pieces, fallback)  # type: ignore[union-attr]

    def tokenize_traced(self, text: str) -> tuple[tuple[ModelToken, ...], tuple[BpeTrace, ...]]:
        """Tokens plus, per token, its initial symbols and the merges that built it, in order.

        ``MergeStep.position`` is the index of the left symbol among the chunk's symbols at the
        moment of the merge; ``rank`` is the merge's line (merges mode) or the merged token's
        rank (rank mode).
        """
        if not text:
            return (), ()
        if self.ignore_merges and self._deterministic:
            i = self._vocab.get(text)
            if i is not None:
                return ((i, 0, len(text)),), (BpeTrace((text,), ()),)
        syms, starts, ends = self._initial(text)
        if not syms:
            return (), ()
        syms, starts, ends, inits, hists = self._merge_heap(syms, starts, ends, trace=True)
        vocab = self._vocab
        tokens = tuple((vocab[s], a, b) for s, a, b in zip(syms, starts, ends))
        traces = tuple(BpeTrace(tuple(i), tuple(h)) for i, h in zip(inits, hists))  # type: ignore[arg-type]
        return tokens, traces

    def _tokenize(self, text: str) -> tuple[ModelToken, ...]:
        if not text:
            return ()
        vocab = self._vocab
        deterministic = self._deterministic
        # HF applies ignore_merges only on its deterministic (cached) path, never with dropout.
        if self.ignore_merges and deterministic:
            i = vocab.get(text)
            if i is not None:
                return ((i, 0, len(text)),)
        table = self._native_table if deterministic else None
        if table is not None and self._plain:
            # every char a symbol: the native merge loop (None: a char is no token)
            out = self._native.bpe_merge_text(table, text)  # type: ignore[union-attr]
            if out is not None:
                return out
        elif deterministic and self._plain and all(map(vocab.__contains__, text)):
            # Hot path: every char is a symbol (always so for byte-level vocabs).
            if len(text) == 1:
                return ((vocab[text], 0, 1),)
            syms = self._merge_plain(text)
            # ids and spans in C-level passes (no per-symbol Python loop)
            ends = list(accumulate(map(len, syms)))
            return tuple(zip(map(vocab.__getitem__, syms), [0, *ends], ends))
        if deterministic and len(text) > CACHE_MAX_CHARS and self._cuttable:
            # a long chunk with decorated symbols (no pre-tokenizer: a whole document)
            cut = self._tokenize_cut(text)
            if cut is not None:
                return cut
        return self._tokenize_initial(text)

    def _tokenize_initial(self, text: str) -> tuple[ModelToken, ...]:
        """`_tokenize` from `_initial` symbols (decorated symbols, dropout)."""
        deterministic = self._deterministic
        vocab = self._vocab
        syms, starts, ends = self._initial(text)
        table = self._native_table if deterministic and len(syms) > 1 and not self._rank_mode else None
        if table is not None:
            merged = self._native.bpe_merge_ids(table, list(map(vocab.__getitem__, syms)))  # type: ignore[union-attr]
            return tuple((i, starts[a], ends[b - 1]) for i, a, b in merged)
        if len(syms) > 1:
            if deterministic and len(syms) <= _LIST_LIMIT:
                syms, starts, ends = self._merge_list_spans(syms, starts, ends)
            else:
                syms, starts, ends, _, _ = self._merge_heap(syms, starts, ends, trace=False)
        return tuple((vocab[s], a, b) for s, a, b in zip(syms, starts, ends))

    @cached_property
    def _native_table(self) -> Any:
        """The pair table of the native merge loop (built on first use), or None: pure Python.

        Merges mode: ``(left id, right id) -> (rank, merged id)``; rank mode: the tokens by
        content (two parts merge when their concatenation is a token, with its rank). Symbols
        are ids there, so a vocab in which two tokens share an id keeps the Python kernels
        (they compare strings)."""
        native = self._native
        if native is None or len(self._vocab_r) != len(self._vocab):
            return None
        if self._rank_mode:
            return native.bpe_rank_table(self._vocab)
        return native.bpe_table(self._ranks, self._merged, self._vocab, self.ignore_merges)

    @cached_property
    def _cuttable(self) -> bool:
        """True when `_tokenize_cut` may cut chunks that have unknown chars: `_initial` can then
        never make HF's drifting offsets (no char is dropped; no byte pieces follow a pending
        unk), and ``ignore_merges`` (which applies to the whole chunk only) is off."""
        if not self._plain or self.ignore_merges or self._rank_mode:
            return False
        if self.byte_fallback:
            return all(_byte_piece(b) in self._vocab for b in range(256))
        return self.unk_token is not None and self.unk_token in self._vocab

    @cached_property
    def _result_pairs(self) -> set[str] | None:
        """Every two adjacent chars inside a merge result (None: a merge has an empty part, so
        nothing is ever cut). A merge result across a boundary between two plain symbols holds
        the two chars there, so a boundary whose pair is not in this set is never crossed."""
        if not all(a and b for a, b in self._ranks):
            return None
        sent = self._sentinel
        joined = sent.join(set(self._merged.values()))
        return {g for g in set(map(add, joined, joined[1:])) if sent not in g}

    @cached_property
    def _inert_fallback(self) -> bool:
        """True when no merge takes a byte-fallback piece or the unk token as a part: what
        stands for an unknown char then never merges with anything."""
        parts = set(map(itemgetter(0), self._ranks)) | set(map(itemgetter(1), self._ranks))
        fallback = {_byte_piece(b) for b in range(256)} if self.byte_fallback else set()
        if self.unk_token is not None:
            fallback.add(self.unk_token)
        return parts.isdisjoint(fallback)

    def _tokenize_cut(self, text: str) -> tuple[ModelToken, ...] | None:
        """A long chunk cut where no merge can cross, each piece tokenized (and cached) alone;
        None when there is no such boundary.

        A boundary between two plain symbols is cut when no merge result holds its two chars
        side by side (`_result_pairs`: one C-level pass, a third of the 3-char test of
        `_merge_plain` and nearly as many cuts). Chars outside the vocab become byte-fallback
        pieces or unk: when those never merge they are masked (always cut around), else their
        boundaries are never cut; unk runs stay whole for ``fuse_unk``. `_cuttable` rules out
        HF's drifting offsets, which would carry across pieces.
        """
        pairs = self._result_pairs
        if pairs is None:
            return None
        vocab = self._vocab
        strange = [c for c in set(text) if c not in vocab]
        if not strange:
            joinable = list(map(pairs.__contains__, map(add, text, text[1:])))
        elif self._inert_fallback:
            # The unknown chars' pieces never merge: mask them with the sentinel (in no vocab
            # entry), so both boundaries of an unknown char are cut; a run of unknown chars that
            # fuse into one unk stays whole.
            masked = text.translate(dict.fromkeys(map(ord, strange), self._sentinel))
            joinable = list(map(pairs.__contains__, map(add, masked, masked[1:])))
            if self.fuse_unk and not self.byte_fallback:
                unknown = list(map(self._sentinel.__eq__, masked))
                joinable = list(map(or_, joinable, map(and_, unknown, unknown[1:])))
        else:
            # a boundary next to an unknown char is never cut (its pieces may merge)
            joinable = list(map(pairs.__contains__, map(add, text, text[1:])))
            unknown = [c not in vocab for c in text]
            joinable = list(map(or_, joinable, map(or_, unknown, unknown[1:])))
        if False not in joinable:
            return None
        n = len(text)
        starts = [0, *compress(range(1, n), map(not_, joinable))]
        pieces = list(map(text.__getitem__, map(slice, starts, [*starts[1:], n])))
        cache = self._cache if self._cache is not None else {}
        results = list(map(cache.get, pieces))
        if None in results:
            capacity = self.cache_capacity
            fresh: dict[str, tuple[ModelToken, ...]] = {}
            for k in compress(range(len(pieces)), map(is_, results, repeat(None))):
                piece = pieces[k]
                toks = fresh.get(piece)
                if toks is None:
                    # the piece has no boundary to cut (ignore_merges is off: `_cuttable`)
                    if len(piece) == 1 and piece in vocab:
                        toks = ((vocab[piece], 0, 1),)
                    elif all(map(vocab.__contains__, piece)):
                        toks = self._plain_tokens(piece)
                    else:
                        toks = self._tokenize_initial(piece)
                    fresh[piece] = toks
                    if len(piece) <= CACHE_MAX_CHARS:
                        if len(cache) >= capacity:
                            _evict_half(cache)
                        cache[piece] = toks
                results[k] = toks
        # piece-relative spans shifted by the piece start, in C-level passes
        flat = list(chain.from_iterable(results))
        shifts = list(chain.from_iterable(map(repeat, starts, map(len, results))))
        out = zip(
            map(itemgetter(0), flat),
            map(add, map(itemgetter(1), flat), shifts),
            map(add, map(itemgetter(2), flat), shifts),
        )
        return tuple(out)

    # ------------------------------------------------------------------ initial symbols
    def _initial(self, text: str) -> tuple[list[str], list[int], list[int]]:
        """Symbols before any merge with their char spans, as HF's ``merge_word`` builds them.

        Unknown chars become byte-fallback pieces (``<0xNN>`` of the char's UTF-8 bytes, each
        spanning the whole char) when all of them are in the vocab, else ``unk_token`` (runs
        fused with ``fuse_unk``), else they are dropped silently (HF does the same). Where HF's
        byte-length bookkeeping makes its offsets drift (a dropped char, an unk placed after
        byte pieces) the drifted offsets are reproduced (`_hf_byte_spans`).
        """
        vocab = self._vocab
        if self._rank_mode:
            for ch in text:
                if ch not in vocab:
                    raise TokvizFormatError(
                        f"symbol {ch!r} (one byte) is not in the rank table; tiktoken cannot encode it either",
                        where="model",
                    )
            n = len(text)
            return list(text), list(range(n)), list(range(1, n + 1))
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        unk_token = self.unk_token
        syms: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        blens: list[int] = []  # HF's byte length of each symbol (its offsets are cumulative sums)
        irregular = False  # symbols out of text order, or byte pieces of a decorated symbol
        unk: list[int] | None = None  # pending unk: [start, end, byte length]
        last = len(text) - 1
        for idx, ch in enumerate(text):
            s = ch
            if prefix and idx:
                s = prefix + s
            if suffix and idx == last:
                s = s + suffix
            if s in vocab:
                if unk is not None:
                    syms.append(unk_token)  # type: ignore[arg-type]
                    starts.append(unk[0])
                    ends.append(unk[1])
                    blens.append(unk[2])
                    unk = None
                syms.append(s)
                starts.append(idx)
                ends.append(idx + 1)
                blens.append(len(ch.encode("utf-8")))
                continue
            if self.byte_fallback:
                # HF looks up the bytes of the decorated symbol (prefix/suffix included) and does
                # not flush a pending unk first: the unk lands after these pieces.
                data = s.encode("utf-8")
                pieces = [_byte_piece(b) for b in data]
                if all(p in vocab for p in pieces):
                    syms.extend(pieces)
                    starts.extend([idx] * len(pieces))
                    ends.extend([idx + 1] * len(pieces))
                    blens.extend([1] * len(pieces))
                    irregular = irregular or unk is not None or s != ch
                    continue
            if unk_token is None:
                # no unk token: HF drops the char, and its cumulative offsets then shift
                irregular = True
                continue
            blen = len(ch.encode("utf-8"))
            if unk is not None and self.fuse_unk:
                unk[1] = idx + 1
                unk[2] += blen
                continue
            if unk_token not in vocab:
                raise TokvizFormatError(
                    f"unk_token {unk_token!r} is not in the vocab", where="unk_token"
                )
            if unk is not None:
                syms.append(unk_token)
                starts.append(unk[0])
                ends.append(unk[1])
                blens.append(unk[2])
            unk = [idx, idx + 1, blen]
        if unk is not None:
            syms.append(unk_token)  # type: ignore[arg-type]
            starts.append(unk[0])
            ends.append(unk[1])
            blens.append(unk[2])
        if irregular:
            starts, ends = _hf_byte_spans(text, blens)
        return syms, starts, ends

    # ------------------------------------------------------------------ merging
    def _merge_plain(self, text: str) -> list[str]:
        """Final symbols of a plain chunk (each char a symbol, no prefix/suffix, no dropout).

        The chunk is first cut at boundaries no merge can ever cross. A symbol that crosses
        boundary k is a merge result (a vocab token) equal to ``text[a:b]`` with a < k < b;
        so if ``text[k-1:k+1]`` is no 2-char merge result and neither ``text[k-2:k+1]`` nor
        ``text[k-1:k+2]`` occurs inside any longer merge result, nothing crosses k (in merges
        mode the first merge across k must also join a part ending in ``text[k-1]`` to one
        starting with ``text[k]``). Pieces between cuts evolve independently (their merges
        commute), so each is merged alone and cached: a long chunk (a document with no
        pre-tokenizer) is made of a few thousand distinct pieces. Chunks up to `_CUT_MIN`
        chars are merged whole.
        """
        n = len(text)
        if n <= _CUT_MIN:
            # chunks the chunk cache keeps merge whole (see the performance notes)
            return self._merge_whole(text)
        pcache = self._piece_cache
        sets = self._junctions
        if sets is None and self._rank_mode:
            # rank tables (tiktoken) never cut: every multi-byte token is a possible merge
            # result, so few boundaries are provably uncrossable (see the performance notes)
            sets = self._junctions = ()
        if sets is None:
            # building the tables costs a few tenths of a second: only once a real amount of
            # long-chunk text has come by (a short GUI text never pays)
            self._long_seen += n
            if self._long_seen >= _CUT_AFTER:
                sets = self._junctions = self._build_junctions() or ()
            else:
                sets = ()
        if sets:
            joinable = _joinable(text, sets)
            # Finding cuts costs a few C-level passes per char; when a vocab almost never
            # allows one (many multi-char CJK tokens, e.g. Qwen), stop looking.
            stats = self._cut_stats
            stats[0] += n - 1
            stats[1] += joinable.count(False)
            if stats[0] > 100_000:
                if stats[1] < stats[0] // 20:
                    self._junctions = ()
                stats[0] = stats[1] = 0
        else:
            # no cut: the chunk cache (same text) already keeps the result; no piece caching
            return self._merge_whole(text)
        if False not in joinable:
            hit = pcache.get(text)
            if hit is None:
                hit = self._merge_piece(text)
            return list(hit)
        syms: list[str] = []
        start = 0
        index = joinable.index
        while start < n:
            try:
                stop = index(False, start) + 1
            except ValueError:
                stop = n
            if stop - start == 1:
                syms.append(text[start])
            else:
                piece = text[start:stop]
                hit = pcache.get(piece)
                if hit is None:
                    hit = self._merge_piece(piece)
                syms += hit
            start = stop
        return syms

    def _plain_tokens(self, text: str) -> tuple[ModelToken, ...]:
        """Tokens of a plain chunk merged without cutting (deterministic)."""
        table = self._native_table
        if table is not None:
            return self._native.bpe_merge_text(table, text)  # type: ignore[union-attr]
        syms = self._merge_whole(text)
        ends = list(accumulate(map(len, syms)))
        return tuple(zip(map(self._vocab.__getitem__, syms), [0, *ends], ends))

    def _merge_whole(self, text: str) -> list[str]:
        """Final symbols of a plain chunk merged without cutting (flat list or heap by size)."""
        return self._merge_list(text) if len(text) <= _LIST_LIMIT else self._merge_heap_plain(text)

    def _merge_piece(self, piece: str) -> tuple[str, ...]:
        out = tuple(self._merge_whole(piece))
        if len(piece) <= CACHE_MAX_CHARS and self.cache_capacity > 0:
            pcache = self._piece_cache
            if len(pcache) >= self.cache_capacity:
                _evict_half(pcache)
            pcache[piece] = out
        return out

    def _merge_heap_plain(self, text: str) -> list[str]:
        """`_merge_list` for long pieces: a heap + linked list, O(n log n).

        Heap entries are single ints ``rank << shift | position`` (int comparisons are much
        cheaper than tuple ones), so they pop by lowest rank, then leftmost position. ``cur[i]``
        is the rank of the pair currently starting at position ``i``; an entry is stale when it
        disagrees (a changed pair never keeps its rank: ranks are unique per pair in merges
        mode and per token in rank mode).
        """
        n = len(text)
        sym = list(text)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        shift = max(20, n.bit_length())
        mask = (1 << shift) - 1
        heappop, heappush = heapq.heappop, heapq.heappush
        if self._rank_mode:
            vget = self._vocab.get
            cur = list(map(vget, map(add, text, text[1:]), repeat(-1)))
            cur.append(-1)
            heap = [r << shift | i for i, r in enumerate(cur) if r >= 0]
            heapq.heapify(heap)
            while heap:
                key = heappop(heap)
                i = key & mask
                if cur[i] != key >> shift:
                    continue  # stale
                j = nxt[i]
                new = sym[i] + sym[j]
                sym[i] = new
                cur[j] = -1
                k = nxt[j]
                nxt[i] = k
                if k >= 0:
                    prv[k] = i
                    r = cur[i] = vget(new + sym[k], -1)
                    if r >= 0:
                        heappush(heap, r << shift | i)
                else:
                    cur[i] = -1
                p = prv[i]
                if p >= 0:
                    r = cur[p] = vget(sym[p] + new, -1)
                    if r >= 0:
                        heappush(heap, r << shift | p)
        else:
            pget = self._ranks.get
            cur = list(map(pget, pairwise(text), repeat(-1)))
            cur.append(-1)
            heap = [r << shift | i for i, r in enumerate(cur) if r >= 0]
            heapq.heapify(heap)
            while heap:
                key = heappop(heap)
                i = key & mask
                if cur[i] != key >> shift:
                    continue  # stale
                j = nxt[i]
                new = sym[i] + sym[j]
                sym[i] = new
                cur[j] = -1
                k = nxt[j]
                nxt[i] = k
                if k >= 0:
                    prv[k] = i
                    r = cur[i] = pget((new, sym[k]), -1)
                    if r >= 0:
                        heappush(heap, r << shift | i)
                else:
                    cur[i] = -1
                p = prv[i]
                if p >= 0:
                    r = cur[p] = pget((sym[p], new), -1)
                    if r >= 0:
                        heappush(heap, r << shift | p)
        out: list[str] = []
        i = 0
        while i >= 0:
            out.append(sym[i])
            i = nxt[i]
        return out

    def _build_junctions(self) -> tuple[set[str], set[str], set[str] | None] | None:
        """The sets `_merge_plain` cuts with (merges mode); None: never cut (an empty merge part).

        ``t2``: 2-char merge results; ``g3``: every 3-char substring of longer merge results;
        ``jm``: ``left[-1] + right[0]`` of every merge. Built with C-level map/set passes over
        all results joined by the sentinel.
        """
        if any(not a or not b for a, b in self._ranks):
            return None
        results = list(set(self._merged.values()))
        jm = {a[-1] + b[0] for a, b in self._ranks}
        sent = self._sentinel
        t2 = {t for t in results if len(t) == 2}
        joined = sent.join([t for t in results if len(t) > 2])
        g3 = {g for g in set(map(add, map(add, joined, joined[1:]), joined[2:])) if sent not in g}
        return t2, g3, jm

    def _merge_list(self, text: str) -> list[str]:
        """Symbols of a plain chunk (every char a symbol, no prefix) after all merges.

        Lowest rank first, leftmost on ties (``min`` + ``index`` scan in C). The symbol list is
        framed by a sentinel that never merges, so the loop needs no bounds checks.
        """
        nm = _NO_MERGE
        sent = self._sentinel
        syms = [sent]
        syms += text
        syms.append(sent)
        if self._rank_mode:
            get = self._vocab.get
            ranks = list(map(get, map(add, syms, syms[1:]), repeat(nm)))
            index = ranks.index
            while True:
                m = min(ranks)
                if m == nm:
                    del syms[0], syms[-1]
                    return syms
                i = index(m)
                a = syms[i] + syms[i + 1]
                syms[i] = a
                del syms[i + 1], ranks[i]
                ranks[i] = get(a + syms[i + 1], nm)
                ranks[i - 1] = get(syms[i - 1] + a, nm)
        get = self._ranks.get
        ranks = list(map(get, pairwise(syms), repeat(nm)))
        index = ranks.index
        while True:
            m = min(ranks)
            if m == nm:
                del syms[0], syms[-1]
                return syms
            i = index(m)
            a = syms[i] + syms[i + 1]
            syms[i] = a
            del syms[i + 1], ranks[i]
            ranks[i] = get((a, syms[i + 1]), nm)
            ranks[i - 1] = get((syms[i - 1], a), nm)

    def _pair(self, a: str, b: str) -> tuple[int, str] | None:
        """(rank, merged) of two adjacent symbols, or None when they never merge."""
        if self._rank_mode:
            new = a + b
            r = self._vocab.get(new)
            return None if r is None else (r, new)
        r = self._ranks.get((a, b))
        return None if r is None else (r, self._merged[(a, b)])

    def _merge_list_spans(
        self, syms: list[str], starts: list[int], ends: list[int]
    ) -> tuple[list[str], list[int], list[int]]:
        """Like `_merge_list` for decorated symbols (prefix/suffix, unk, byte pieces)."""
        pair = self._pair
        nm = _NO_MERGE
        n = len(syms)
        info = [pair(syms[i], syms[i + 1]) for i in range(n - 1)]
        ranks = [nm if x is None else x[0] for x in info]
        while n > 1:
            m = min(ranks)
            if m == nm:
                break
            i = ranks.index(m)
            new = info[i][1]  # type: ignore[index]
            syms[i] = new
            del syms[i + 1]
            del starts[i + 1]
            del ends[i]
            del ranks[i]
            del info[i]
            n -= 1
            if i < n - 1:
                x = pair(new, syms[i + 1])
                info[i] = x
                ranks[i] = nm if x is None else x[0]
            if i:
                x = pair(syms[i - 1], new)
                info[i - 1] = x
                ranks[i - 1] = nm if x is None else x[0]
        return syms, starts, ends

    def _merge_heap(
        self, syms: list[str], starts: list[int], ends: list[int], *, trace: bool
    ) -> tuple[list[str], list[int], list[int], list[list[str]] | None, list[list[MergeStep]] | None]:
        """Heap + linked list, O(n log n); also the dropout and tracing path.

        Mirrors HF's ``Word::merge_all``: entries ``(rank, position)`` pop lowest rank first,
        leftmost on ties; an entry whose pair changed since it was pushed is skipped. With
        dropout each popped entry is skipped with probability p; skipped entries go back into
        the heap as soon as one entry is not skipped (so p=1 performs no merge at all).
        """
        n = len(syms)
        sym: list[str | None] = list(syms)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        pair = self._pair
        heap: list[tuple[int, int, str]] = []
        for i in range(n - 1):
            x = pair(syms[i], syms[i + 1])
            if x is not None:
                heap.append((x[0], i, x[1]))
        heapq.heapify(heap)
        dropout = None if self._deterministic else self.dropout
        rand = self._rng.random
        skipped: list[tuple[int, int, str]] = []
        inits: list[list[str]] | None = [[s] for s in syms] if trace else None
        hists: list[list[MergeStep]] | None = [[] for _ in syms] if trace else None
        # Fenwick tree over "symbol i is alive", to report the current position of a merge.
        tree = _fenwick_ones(n) if trace else None
        heappop, heappush = heapq.heappop, heapq.heappush
        while heap:
            top = heappop(heap)
            if dropout and rand() < dropout:
                skipped.append(top)
                continue
            if skipped:
                for e in skipped:
                    heappush(heap, e)
                skipped.clear()
            rank, i, new = top
            left = sym[i]
            if left is None:
                continue
            j = nxt[i]
            if j == -1:
                continue
            right = sym[j]
            cur = pair(left, right)  # type: ignore[arg-type]
            if cur is None or cur[1] != new:
                continue  # stale: this position's pair changed since the entry was pushed
            sym[i] = new
            sym[j] = None
            ends[i] = ends[j]
            k = nxt[j]
            nxt[i] = k
            if k != -1:
                prv[k] = i
            if trace:
                position = _fenwick_prefix(tree, i)  # type: ignore[arg-type]
                _fenwick_remove(tree, j)  # type: ignore[arg-type]
                step = MergeStep(rank, left, right, new, position)  # type: ignore[arg-type]
                inits[i] = inits[i] + inits[j]  # type: ignore[index]
                hists[i] = hists[i] + hists[j] + [step]  # type: ignore[index]
            p = prv[i]
            if p != -1:
                x = pair(sym[p], new)  # type: ignore[arg-type]
                if x is not None:
                    heappush(heap, (x[0], p, x[1]))
            if k != -1:
                x = pair(new, sym[k])  # type: ignore[arg-type]
                if x is not None:
                    heappush(heap, (x[0], i, x[1]))
        out_s: list[str] = []
        out_a: list[int] = []
        out_b: list[int] = []
        out_i: list[list[str]] = []
        out_h: list[list[MergeStep]] = []
        i = 0
        while i != -1:
            out_s.append(sym[i])  # type: ignore[arg-type]
            out_a.append(starts[i])
            out_b.append(ends[i])
            if trace:
                out_i.append(inits[i])  # type: ignore[index]
                out_h.append(hists[i])  # type: ignore[index]
            i = nxt[i]
        if trace:
            return out_s, out_a, out_b, out_i, out_h
        return out_s, out_a, out_b, None, None

    def __repr__(self) -> str:
        mode = "ranks" if self._rank_mode else f"{len(self._ranks)} merges"
        return f"BPE({len(self._vocab)} tokens, {mode})"


# ---------------------------------------------------------------------- helpers
@dataclass(frozen=True, slots=True)
class _MergeOrder:
    """What `BPE.first_merges` cuts: merges mode ``merges`` (rank order), their ``results`` and
    ``base_vocab`` (entries no merge creates); rank mode the single-symbol ``alphabet`` and the
    longer tokens ``ordered`` by rank. ``longest``: the longest token, in chars."""

    rank_mode: bool
    merges: list[tuple[str, str]]
    results: list[str]
    base_vocab: dict[str, int]
    alphabet: dict[str, int]
    ordered: list[tuple[str, int]]
    longest: int


def _parse_merges(merges: Iterable[Any]) -> list[tuple[str, str]]:
    """Both tokenizer.json formats: ``"a b"`` strings (legacy) and ``["a", "b"]`` pairs.

    Like HF, legacy lines starting with ``#version`` are skipped before ranks are counted, and
    a legacy line must split on single spaces into exactly two parts.
    """
    if not isinstance(merges, list):
        merges = list(merges)
    kinds = set(map(type, merges))
    if kinds == {str}:
        lines = list(filterfalse(methodcaller("startswith", "#version"), merges))
        split = [m.split(" ") for m in lines]
        if set(map(len, split)) <= {2}:
            return list(map(tuple, split))  # type: ignore[arg-type]
    elif kinds <= {list, tuple} and set(map(len, merges)) <= {2}:
        flat = [x for m in merges for x in m]
        if set(map(type, flat)) <= {str}:
            return list(map(tuple, merges))
    # something is off (or mixed formats): go one by one to name the entry
    out: list[tuple[str, str]] = []
    for k, m in enumerate(merges):
        if isinstance(m, str):
            if m.startswith("#version"):
                continue
            parts = m.split(" ")
            if len(parts) != 2:
                raise TokvizFormatError(f'expected "a b" (two parts), got {m!r}', where=f"merges[{k}]")
            out.append((parts[0], parts[1]))
        elif isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(x, str) for x in m):
            out.append((m[0], m[1]))
        else:
            raise TokvizFormatError(f'expected "a b" or ["a", "b"], got {m!r}', where=f"merges[{k}]")
    return out


def _hf_byte_spans(text: str, blens: list[int]) -> tuple[list[int], list[int]]:
    """Char spans HF reports when its cumulative byte offsets disagree with symbol order.

    HF gives each symbol the next ``blen`` bytes of the chunk regardless of where its text
    came from; a pending unk placed after byte-fallback pieces thus shifts offsets. The byte
    span is mapped to the chars containing its first and last byte (clamped to the chunk).
    """
    char_of_byte: list[int] = []
    for k, ch in enumerate(text):
        char_of_byte.extend([k] * len(ch.encode("utf-8")))
    total = len(char_of_byte)
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for blen in blens:
        a = min(pos, total - 1)
        b = min(pos + blen, total) - 1
        starts.append(char_of_byte[a])
        ends.append(char_of_byte[max(a, b)] + 1)
        pos += blen
    return starts, ends


def _joinable(text: str, sets: tuple[set[str], set[str], set[str] | None]) -> list[bool]:
    """For each boundary between ``text[k-1]`` and ``text[k]`` (k = 1..n-1): False when no merge
    can ever cross it (see `BPE._merge_plain`), given every char is its own symbol there."""
    t2, g3, jm = sets
    g2 = list(map(add, text, text[1:]))
    in3 = list(map(g3.__contains__, map(add, g2, text[2:])))
    joinable = list(map(or_, map(or_, map(t2.__contains__, g2), [False, *in3]), [*in3, False]))
    if jm is not None:
        joinable = list(map(and_, joinable, map(jm.__contains__, g2)))
    return joinable


def _evict_half(cache: dict[str, Any]) -> None:
    """Drop the older half of a cache (dicts keep insertion order): a bounded FIFO."""
    # list(islice(...)) runs in C without releasing the GIL; pop() tolerates a key another
    # thread already dropped.
    for key in list(islice(cache, len(cache) // 2 + 1)):
        cache.pop(key, None)


def _sentinel(vocab: Mapping[str, int]) -> str:
    """A one-char string that occurs in no vocab entry, to frame symbol lists."""
    joined = "".join(vocab)
    for c in ("\x00", "\uffff", "\U0010ffff", "\x01"):
        if c not in joined:
            return c
    used = set(joined)
    return next(chr(cp) for cp in range(0xE000, 0x110000) if chr(cp) not in used)


def _fenwick_ones(n: int) -> list[int]:
    """A Fenwick tree (1-based) over n ones."""
    tree = [0] * (n + 1)
    for i in range(1, n + 1):
        tree[i] += 1
        j = i + (i & -i)
        if j <= n:
            tree[j] += tree[i]
    return tree


def _fenwick_remove(tree: list[int], i: int) -> None:
    i += 1
    n = len(tree) - 1
    while i <= n:
        tree[i] -= 1
        i += i & -i


def _fenwick_prefix(tree: list[int], i: int) -> int:
    """Number of alive symbols before index i (0-based)."""
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s
