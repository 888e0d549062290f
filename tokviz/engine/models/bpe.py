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

Kernels: with the native core (`tokviz.engine._native`) a deterministic model hands chunks
(byte-fallback pieces are made there too), or the ids of decorated symbols and unk tokens, to
its C merge loop (`_native_table`). The Python kernel, `merge`,
is the reference and the pure-Python backend: one loop over a `PairRanks` value for both
modes (a flat list of pair ranks up to `LIST_LIMIT` symbols, the heap above it, with dropout and
for traces, which mirrors HF's ``Word::merge_all`` step by step). Without the native core a
long chunk is first cut where no merge can cross (`tokviz.engine.models._py_fast`).
`BPE.tokenize` caches chunks in a `BoundedCache`; the pipeline has its own chunk cache.

Offsets are chars of the chunk. Where HF's own byte bookkeeping drifts (a char dropped for
lack of an unk token, an unk placed after byte-fallback pieces) the drifted offsets are
reproduced; the one case not reproduced is byte fallback of a prefixed/suffixed symbol, where
HF counts the prefix's bytes and reports offsets past the end of the chunk (ours are clamped).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import accumulate, filterfalse, repeat
from operator import add, itemgetter, methodcaller
from typing import Any, NamedTuple, Protocol

from .. import kernels
from ..byte_alphabet import bytes_to_proxy
from ..caching import BoundedCache
from ..encoding import BpeTrace, MergeStep
from ..errors import TokvizFormatError
from ..fields import MAX_ID, Fields, id_error, is_id
from . import DictVocabModel, ModelToken, read_vocab
from ._py_fast import BPE_CUT_MIN, BpeLongChunks

__all__ = [
    "BPE", "DEFAULT_CACHE_CAPACITY", "LIST_LIMIT", "NO_MERGE", "ConcatRanks", "MergeRanks", "Merged", "PairRanks", "merge",
    "merge_flat", "merge_heap",
]

#: Chunks `BPE.tokenize` caches; when full the older half is dropped (HF keeps 10,000, then stops adding).
DEFAULT_CACHE_CAPACITY = 65_536
#: Chunks longer than this (in chars) are not cached (HF: 256 bytes).
CACHE_MAX_CHARS = 256
#: Up to this many initial symbols `merge` scans a flat list of ranks; above it, a heap.
LIST_LIMIT = 24
#: Larger than any rank: "this pair does not merge" (`PairRanks.rank`).
NO_MERGE = 1 << 62


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
        plen = len(continuing_subword_prefix or "")
        # The merges as three columns in file order (a merge's rank is its index): the parts and
        # the merged string (HF drops the prefix's length from the right part), each the vocab's
        # own string object, so the file's copies of them are freed after the load. The pair
        # tables of the Python kernels (`_ranks`, `_merged`) are built from them when asked.
        self._lefts, self._rights, self._results = _checked_merges(merges or (), self._vocab, plen)
        self._plain = not continuing_subword_prefix and not end_of_word_suffix
        self._prefix_len = plen
        self._deterministic = dropout is None or dropout == 0.0
        self._cache = BoundedCache(cache_capacity if self._deterministic else 0, max_key_chars=CACHE_MAX_CHARS)
        self._native = kernels.native  # the native merge loop, or None (see `_native_table`)
        self._relevant_memo: tuple[frozenset[str], list[int]] | None = None  # see `_relevant_merges`

    # ------------------------------------------------------------------ lazy tables
    # Built on first read (`functools.cached_property`, see `tokviz.engine.caching`): an encode
    # through the native merge loop needs only `_native_table`.
    @cached_property
    def _vocab_r(self) -> dict[int, str]:  # type: ignore[override]
        """id -> token (if two tokens share an id, the later one wins; HF's choice is arbitrary)."""
        return dict(zip(self._vocab.values(), self._vocab.keys()))

    @cached_property
    def _ranks(self) -> dict[tuple[str, str], int]:
        """``(left, right) -> rank``; a pair listed twice keeps its last rank (later entries
        overwrite), as HF's map does."""
        return dict(zip(zip(self._lefts, self._rights), range(len(self._lefts))))

    @cached_property
    def _merged(self) -> dict[tuple[str, str], str]:
        """``(left, right) -> merged string``."""
        return dict(zip(zip(self._lefts, self._rights), self._results))

    def _pair_tables(self) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], str]]:
        """`_ranks` and `_merged`: the built ones, else made for the caller and not kept."""
        built = vars(self)
        if "_ranks" in built and "_merged" in built:
            return built["_ranks"], built["_merged"]
        pairs = list(zip(self._lefts, self._rights))
        return dict(zip(pairs, range(len(pairs)))), dict(zip(pairs, self._results))

    @cached_property
    def _pairs(self) -> PairRanks:
        """The pair ranks of the Python kernel (`merge`)."""
        return MergeRanks(self._ranks, self._merged, self._prefix_len)

    @cached_property
    def _fast(self) -> BpeLongChunks | None:
        """The tuned pure-Python kernel for long chunks (`_py_fast`), only without the native core."""
        return BpeLongChunks.of(self) if self._native is None else None

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
            vocab = ranks  # already byte-proxy strings (the common, fast case; the model copies it)
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
        self._pairs = ConcatRanks(self._vocab)
        self._fast = None  # (rank mode is never cut: every multi-byte token is a merge result)
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
        self._cache.clear()

    @property
    def deterministic(self) -> bool:
        """False with dropout (each encode samples)."""
        return self._deterministic

    def seed(self, seed: int | None) -> None:
        """Reseed the dropout random generator (reproducible dropout runs)."""
        self._rng.seed(seed)

    # ------------------------------------------------------------------ tokenize
    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        """Tokens of one chunk; a deterministic model caches chunks of up to `CACHE_MAX_CHARS`
        chars (`BoundedCache` of ``cache_capacity`` entries; the pipeline has its own cache)."""
        if not self._deterministic:
            return self._tokenize(text)
        hit = self._cache.get(text)
        if hit is None:
            hit = self._tokenize(text)
            self._cache.put(text, hit)
        return hit

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns; a plain chunk goes straight to the native merge loop when
        there is one (not cached here: the pipeline caches whole chunk results)."""
        table = self._native_table if self._deterministic and self._plain else None
        if table is not None and not (self.ignore_merges and text in self._vocab):
            got = self._native.bpe_merge_text(table, text, True)  # type: ignore[union-attr]
            if got is not None:
                return got
        spans = self._tokenize(text)
        return [t[0] for t in spans], [t[1] for t in spans], [t[2] for t in spans]

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

    def text_entry_maker(
        self, id_table: list[str], byte_pieces: frozenset[str], fallback: Callable[[str], tuple], limit: int
    ) -> Callable[[str], tuple] | None:
        """`Model.text_entry_maker`: the native ``bpe_text_entry`` over this model's table."""
        table = self._native_table if self._deterministic and self._plain else None
        if table is None:
            return None
        return partial(self._native.bpe_text_entry, table, id_table, byte_pieces, fallback, limit)  # type: ignore[union-attr]

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
        got = merge_heap(syms, self._pairs, dropout=self._dropout_rng(), trace=True)
        tokens = _spans(self._vocab, got.symbols, got.firsts, starts, ends)
        traces = tuple(BpeTrace(tuple(i), tuple(h)) for i, h in zip(got.initials, got.histories))  # type: ignore[arg-type]
        return tokens, traces

    def _tokenize(self, text: str) -> tuple[ModelToken, ...]:
        """HF's ``merge_word`` + ``merge_all`` on one chunk (tiktoken's ``_byte_pair_merge`` in
        rank mode): the native merge loop when there is one, else `merge`."""
        if not text:
            return ()
        deterministic = self._deterministic
        # HF applies ignore_merges only on its deterministic (cached) path, never with dropout.
        if self.ignore_merges and deterministic:
            i = self._vocab.get(text)
            if i is not None:
                return ((i, 0, len(text)),)
        table = self._native_table if deterministic else None
        if table is not None and self._plain:
            out = self._native.bpe_merge_text(table, text)  # type: ignore[union-attr]
            if out is not None:  # (None: a char is no token)
                return out
        if self._fast is not None and len(text) > BPE_CUT_MIN:
            out = self._fast.tokenize(text)
            if out is not None:
                return out
        return self._merge_chunk(text)

    def _merge_chunk(self, text: str) -> tuple[ModelToken, ...]:
        """`_initial` symbols merged: the native loop on ids when there is one, else `merge`."""
        if not text:
            return ()
        vocab = self._vocab
        if (self._plain or self._rank_mode) and all(map(vocab.__contains__, text)):
            # every char a symbol (the native loop took the chunk already when there is one):
            # a token's span is the running length of the symbols before it
            syms = merge(list(text), self._pairs, dropout=self._dropout_rng()).symbols
            ends = list(accumulate(map(len, syms)))
            return tuple(zip(map(vocab.__getitem__, syms), [0, *ends[:-1]], ends))
        table = self._native_table if self._deterministic else None
        syms, starts, ends = self._initial(text)
        if table is not None and len(syms) > 1 and not self._rank_mode:
            merged = self._native.bpe_merge_ids(table, list(map(vocab.__getitem__, syms)))  # type: ignore[union-attr]
            return tuple((i, starts[a], ends[b - 1]) for i, a, b in merged)
        got = merge(syms, self._pairs, dropout=self._dropout_rng())
        return _spans(vocab, got.symbols, got.firsts, starts, ends)

    def _dropout_rng(self) -> tuple[float, Callable[[], float]] | None:
        return None if self._deterministic else (self.dropout, self._rng.random)  # type: ignore[return-value]

    @cached_property
    def _native_table(self) -> Any:
        """The pair table of the native merge loop (built on first use), or None: pure Python.

        Merges mode: ``(left id, right id) -> (rank, merged id)``; rank mode: the tokens by
        content (two parts merge when their concatenation is a token, with its rank). Symbols
        are ids there, so a vocab in which two tokens share an id keeps the Python kernels
        (they compare strings)."""
        native = self._native
        if native is None or len(set(self._vocab.values())) != len(self._vocab):
            return None
        if self._rank_mode:
            return native.bpe_rank_table(self._vocab)
        ranks, merged = self._pair_tables()
        return native.bpe_table(ranks, merged, self._vocab, self.ignore_merges, self.byte_fallback)

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
        if self._plain or self._rank_mode:
            runs = self._initial_runs(text)
            if runs is not None:
                return runs
        if self._rank_mode:
            ch = next(c for c in text if c not in vocab)
            raise TokvizFormatError(
                f"symbol {ch!r} (one byte) is not in the rank table; tiktoken cannot encode it either", where="model"
            )
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

    def _initial_runs(self, text: str) -> tuple[list[str], list[int], list[int]] | None:
        """`_initial` without a prefix or suffix when every char is a symbol or byte-falls back
        whole (a newline in a Llama vocabulary): the runs of symbol chars are copied in slices,
        so only the other chars are looked at one by one. None when an unknown or dropped char
        needs the general loop."""
        vocab = self._vocab
        odd = [i for i, c in enumerate(text) if c not in vocab]
        n = len(text)
        if not odd:
            return list(text), list(range(n)), list(range(1, n + 1))
        if not self.byte_fallback:
            return None
        syms: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        prev = 0
        fallback: dict[str, list[str] | None] = {}  # char -> its byte pieces (None: not all in the vocab)
        for i in odd:
            ch = text[i]
            pieces = fallback.get(ch, ())
            if pieces == ():
                pieces = fallback[ch] = [_byte_piece(b) for b in ch.encode("utf-8")]
                if not all(p in vocab for p in pieces):
                    pieces = fallback[ch] = None
            if pieces is None:
                return None
            syms += text[prev:i]
            starts += range(prev, i)
            ends += range(prev + 1, i + 1)
            syms += pieces
            starts += [i] * len(pieces)
            ends += [i + 1] * len(pieces)
            prev = i + 1
        syms += text[prev:]
        starts += range(prev, n)
        ends += range(prev + 1, n + 1)
        return syms, starts, ends

    def __repr__(self) -> str:
        mode = "ranks" if self._rank_mode else f"{len(self._ranks)} merges"
        return f"BPE({len(self._vocab)} tokens, {mode})"


# ---------------------------------------------------------------------- the merge kernel
class PairRanks(Protocol):
    """Which adjacent pair merges first: the one place rank mode and merges mode differ."""

    def rank(self, left: str, right: str) -> int:
        """The rank of merging two adjacent symbols (lower merges first), `NO_MERGE` if never."""

    def ranks(self, symbols: list[str]) -> list[int]:
        """`rank` of every adjacent pair of ``symbols``, in one pass."""

    def join(self, left: str, right: str) -> str:
        """The symbol two merged symbols become."""


class MergeRanks:
    """Merges mode: a pair's rank is its line in the merges list; the merged symbol drops the
    right part's ``continuing_subword_prefix`` (HF)."""

    __slots__ = ("join", "rank", "ranks")

    def __init__(self, ranks: dict[tuple[str, str], int], merged: dict[tuple[str, str], str], prefix_len: int) -> None:
        get = ranks.get
        self.rank: Callable[[str, str], int] = lambda left, right: get((left, right), NO_MERGE)
        self.ranks: Callable[[list[str]], list[int]] = lambda s: list(map(get, zip(s, s[1:]), repeat(NO_MERGE)))
        self.join: Callable[[str, str], str] = (lambda left, right: merged[left, right]) if prefix_len else add


class ConcatRanks:
    """Rank mode (tiktoken): two parts merge when their concatenation is a token, at its rank."""

    __slots__ = ("join", "rank", "ranks")

    def __init__(self, vocab: dict[str, int]) -> None:
        get = vocab.get
        self.rank: Callable[[str, str], int] = lambda left, right: get(left + right, NO_MERGE)
        self.ranks: Callable[[list[str]], list[int]] = lambda s: list(map(get, map(add, s, s[1:]), repeat(NO_MERGE)))
        self.join: Callable[[str, str], str] = add


class Merged(NamedTuple):
    """What `merge` returns: the final ``symbols`` and, for each, the index of the first initial
    symbol it covers (``firsts``; it covers up to the next one's first). Traced: each final
    symbol's initial symbols and its merge history, in order."""

    symbols: list[str]
    firsts: list[int]
    initials: list[list[str]] | None = None
    histories: list[list[MergeStep]] | None = None


def merge(symbols: list[str], pairs: PairRanks, *, dropout: tuple[float, Callable[[], float]] | None = None) -> Merged:
    """Merge adjacent symbols, the lowest ``pairs.rank`` first and the leftmost on ties, until no
    pair merges (`NO_MERGE`). The pure-Python reference of the native merge loop (tiktoken's
    ``_educational.py`` shape): a flat list of pair ranks for up to `LIST_LIMIT` symbols, the
    heap above it and with dropout.

    >>> pairs = MergeRanks({("a", "b"): 0, ("ab", "c"): 1}, {}, 0)
    >>> m = merge(list("abcab"), pairs)
    >>> m.symbols, m.firsts
    (['abc', 'ab'], [0, 3])
    """
    if dropout is None and len(symbols) <= LIST_LIMIT:
        return merge_flat(symbols, pairs)
    return merge_heap(symbols, pairs, dropout=dropout)


def merge_flat(symbols: list[str], pairs: PairRanks) -> Merged:
    """`merge` over a flat list of the current pairs' ranks: each step finds the lowest with a
    ``min`` + ``index`` scan (C loops), merges it and re-ranks its two neighbours. O(n²), the
    fastest for the few symbols of a word."""
    syms = list(symbols)
    firsts = list(range(len(syms)))
    ranks = pairs.ranks(syms)
    rank, join = pairs.rank, pairs.join
    while ranks:
        m = min(ranks)
        if m == NO_MERGE:
            break
        i = ranks.index(m)
        new = syms[i] = join(syms[i], syms[i + 1])
        del syms[i + 1], firsts[i + 1], ranks[i]
        if i < len(ranks):
            ranks[i] = rank(new, syms[i + 1])
        if i:
            ranks[i - 1] = rank(syms[i - 1], new)
    return Merged(syms, firsts)


def merge_heap(
    symbols: list[str], pairs: PairRanks, *, dropout: tuple[float, Callable[[], float]] | None = None,
    trace: bool = False,
) -> Merged:
    """`merge` with a heap of ``(rank, position)`` and a linked list, O(n log n); HF's
    ``Word::merge_all`` step by step. An entry whose pair changed since it was pushed is
    skipped (stale: ``cur[i]``, the rank of the pair now at ``i``, differs from its rank; equal
    ranks are the same merge). ``dropout = (p, random)``: each popped entry is skipped with probability
    p, and the skipped ones go back into the heap as soon as one is not skipped (so p = 1
    merges nothing). ``trace``: the initial symbols and merge steps of every final symbol."""
    n = len(symbols)
    if not n:
        return Merged([], [], [] if trace else None, [] if trace else None)
    sym: list[str | None] = list(symbols)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    # entries are single ints ``rank << shift | position`` (cheaper to compare than tuples):
    # they pop by lowest rank, then leftmost position
    shift = n.bit_length()
    mask = (1 << shift) - 1
    rank_of, join = pairs.rank, pairs.join
    cur = pairs.ranks(symbols)
    cur.append(NO_MERGE)
    heap = [r << shift | i for i, r in enumerate(cur) if r != NO_MERGE]
    heapq.heapify(heap)
    heappop, heappush = heapq.heappop, heapq.heappush
    skipped: list[int] = []
    inits = [[s] for s in symbols] if trace else None
    hists: list[list[MergeStep]] | None = [[] for _ in symbols] if trace else None
    tree = _fenwick_ones(n) if trace else None  # "symbol i is alive": a merge's current position
    while heap:
        key = heappop(heap)
        if dropout is not None and dropout[1]() < dropout[0]:
            skipped.append(key)
            continue
        if skipped:
            for e in skipped:
                heappush(heap, e)
            skipped.clear()
        rank, i = key >> shift, key & mask
        if cur[i] != rank:
            continue  # stale: this position's pair changed since the entry was pushed
        j = nxt[i]
        left, right = sym[i], sym[j]
        new = sym[i] = join(left, right)  # type: ignore[arg-type]
        sym[j] = None
        cur[j] = NO_MERGE
        k = nxt[i] = nxt[j]
        if k >= 0:
            prv[k] = i
        if trace:
            step = MergeStep(rank, left, right, new, _fenwick_prefix(tree, i))  # type: ignore[arg-type]
            _fenwick_remove(tree, j)  # type: ignore[arg-type]
            inits[i] = inits[i] + inits[j]  # type: ignore[index]
            hists[i] = hists[i] + hists[j] + [step]  # type: ignore[index]
        p = prv[i]
        if p >= 0:
            r = cur[p] = rank_of(sym[p], new)  # type: ignore[arg-type]
            if r != NO_MERGE:
                heappush(heap, r << shift | p)
        r = cur[i] = rank_of(new, sym[k]) if k >= 0 else NO_MERGE  # type: ignore[arg-type]
        if r != NO_MERGE:
            heappush(heap, r << shift | i)
    alive: list[int] = []
    i = 0
    while i >= 0:
        alive.append(i)
        i = nxt[i]
    out = [sym[i] for i in alive]
    if not trace:
        return Merged(out, alive)  # type: ignore[arg-type]
    return Merged(out, alive, [inits[i] for i in alive], [hists[i] for i in alive])  # type: ignore[arg-type, index]


def _spans(
    vocab: Mapping[str, int], symbols: list[str], firsts: list[int], starts: list[int], ends: list[int]
) -> tuple[ModelToken, ...]:
    """``(id, start, end)`` of merged symbols: from the start of their first initial symbol to
    the end of their last one (the one before the next symbol's first)."""
    lasts = [f - 1 for f in firsts[1:]]
    lasts.append(len(starts) - 1)
    return tuple(zip(map(vocab.__getitem__, symbols), map(starts.__getitem__, firsts), map(ends.__getitem__, lasts)))


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


def _checked_merges(merges: Iterable[Any], vocab: dict[str, int], plen: int) -> tuple[list[str], list[str], list[str]]:
    """The merges as columns ``(lefts, rights, results)``, each string the vocab's own object;
    `TokvizFormatError` naming the first merge whose part or result is not in the vocab.

    Both tokenizer.json formats: ``"a b"`` strings (legacy) and ``["a", "b"]`` pairs. Like HF,
    legacy lines starting with ``#version`` are skipped before ranks are counted, and a legacy
    line must split on single spaces into exactly two parts. The checks are bulk (C-level
    passes); the one-by-one scans run only to name the culprit.
    """
    lefts, rights = _merge_columns(merges)
    if not lefts:
        return [], [], []
    # token -> the vocab's own string object: the file's copies of the parts are not kept
    own = dict(zip(vocab, vocab)).get
    a_s = list(map(own, lefts))
    b_s = list(map(own, rights))
    results = list(map(add, lefts, rights) if not plen else (a + b[plen:] for a, b in zip(lefts, rights)))
    new_s = list(map(own, results))
    if None in a_s or None in b_s or None in new_s:
        for rank, (a, b, new) in enumerate(zip(lefts, rights, results)):
            for part, what in ((a, repr(a)), (b, repr(b)), (new, f"result {new!r}")):
                if part not in vocab:
                    raise TokvizFormatError(
                        f"merge {rank} ({a!r}, {b!r}): {what} is not in the vocab", where=f"merges[{rank}]"
                    )
    return a_s, b_s, new_s  # type: ignore[return-value]


def _merge_columns(merges: Iterable[Any]) -> tuple[list[str], list[str]]:
    """The left and right parts of the merges, in both formats (see `_checked_merges`)."""
    if not isinstance(merges, list):
        merges = list(merges)
    kinds = set(map(type, merges))
    if kinds == {str}:
        joined = "\n".join(merges)
        lines = list(filterfalse(methodcaller("startswith", "#version"), merges)) if "#version" in joined else merges
        # one space per line: then the lines, joined and cut at every space and line end, are
        # left, right, left, right ... (unless a merge holds a line end itself)
        if set(map(str.count, lines, repeat(" "))) <= {1} and joined.count("\n") == len(merges) - 1:
            parts = ("\n".join(lines) if lines is not merges else joined).replace(" ", "\n").split("\n")
            return (parts[0::2], parts[1::2]) if lines else ([], [])
    elif kinds <= {list, tuple} and set(map(len, merges)) <= {2}:
        lefts = list(map(itemgetter(0), merges))
        rights = list(map(itemgetter(1), merges))
        if set(map(type, lefts)) <= {str} and set(map(type, rights)) <= {str}:
            return lefts, rights
    # something is off (or mixed formats): go one by one to name the entry
    lefts, rights = [], []
    for k, m in enumerate(merges):
        if isinstance(m, str):
            if m.startswith("#version"):
                continue
            parts = m.split(" ")
            if len(parts) != 2:
                raise TokvizFormatError(f'expected "a b" (two parts), got {m!r}', where=f"merges[{k}]")
        elif isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(x, str) for x in m):
            parts = m
        else:
            raise TokvizFormatError(f'expected "a b" or ["a", "b"], got {m!r}', where=f"merges[{k}]")
        lefts.append(parts[0])
        rights.append(parts[1])
    return lefts, rights


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
