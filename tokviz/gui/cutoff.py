"""Rank cutoff: a real BPE tokenizer restricted to its first k merges (no Qt here).

Used by the Train tab's rank-cutoff slider ("how does this text split when the vocabulary has
grown by only k merges?") and by the merge slider's probe. Everything is built with the engine's
public constructors (`tokviz.engine.models.bpe.BPE`, `tokviz.engine.tokenizer.Tokenizer`), so
the restricted tokenizer runs exactly the same pipeline code as the full one.

What "the first k merges" means for each kind of BPE model:

* **merges mode** (tokenizer.json, GPT-2 merges.txt): the first k lines of the merges list. The
  vocabulary loses the tokens that only later merges create, so ``ignore_merges`` (a chunk that
  is itself a vocab entry is kept whole, as Llama 3 sets it) cannot bypass the cutoff.
* **rank mode** (tiktoken): there is no merges list; a token's rank is its merge order. Every
  single-byte token is kept (the alphabet) plus the k lowest-ranked multi-byte tokens; tiktoken's
  rule then applies unchanged (any pair whose concatenation is a kept token may merge, lowest
  rank first).

>>> from tokviz.engine.models.bpe import BPE
>>> m = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")])
>>> merge_count(m)
2
>>> r = restrict_bpe(m, 1)
>>> [r.id_to_token(i) for i, _, _ in r.tokenize("abc")]
['ab', 'c']
"""

from __future__ import annotations

from typing import Any

from ..engine.errors import TokvizFormatError
from ..engine.models.bpe import BPE

__all__ = ["RankCutoff", "merge_count", "restrict_bpe", "restrict_tokenizer", "cutoff_supported", "with_model"]


def cutoff_supported(tokenizer: Any) -> bool:
    """True when the tokenizer's model is a `BPE` (merges or rank mode)."""
    return isinstance(getattr(tokenizer, "model", None), BPE)


class RankCutoff:
    """A BPE tokenizer prepared for cutting: the merge order is computed once, ``tokenizer(k)``
    builds the restricted pipeline (the last few are cached, so stepping back is instant)."""

    def __init__(self, tokenizer: Any) -> None:
        if not cutoff_supported(tokenizer):
            model = getattr(tokenizer, "model", None)
            raise ValueError(
                f"the rank cutoff needs a BPE model (merges or tiktoken ranks); this tokenizer has {type(model).__name__}"
            )
        self.base = tokenizer
        model: BPE = tokenizer.model
        self.model = model
        self.vocab = model.get_vocab()
        if model.rank_mode:
            self.alphabet = {t: r for t, r in self.vocab.items() if len(t) == 1}
            self.ordered = sorted(((t, r) for t, r in self.vocab.items() if len(t) > 1), key=lambda tr: tr[1])
            self.merges: list[tuple[str, str]] = []
            self.n = len(self.ordered)
        else:
            self.merges = model.merges
            plen = len(model.continuing_subword_prefix or "")
            self.results = [a + b[plen:] for a, b in self.merges]
            self.n = len(self.merges)
            made = set(self.results)
            # entries no merge creates: the alphabet, byte-fallback pieces, unk ...
            self.base_vocab = {t: i for t, i in self.vocab.items() if t not in made}
        self._cache: dict[Any, Any] = {}
        self._text: str | None = None  # the text the relevance filter below was computed for
        self._relevant: list[int] | None = None
        self.max_len = max((len(t) for t in self.vocab), default=1)

    # A merge can only ever produce a substring of the chunk it runs on. For one text, keeping
    # just the merges (rank mode: tokens) whose result occurs in its pre-token chunks -- in the
    # same order -- gives exactly the same tokens, and a model of a few thousand entries instead
    # of the whole vocabulary is cheap to build on every slider step.
    def _filter_for(self, text: str) -> list[int] | None:
        """Indices (in merge order) of the merges that can apply to ``text``; None: no filter."""
        if self.model.continuing_subword_prefix or self.model.end_of_word_suffix:
            return None  # results carry decorations that chunks do not: keep every merge
        if text == self._text:
            return self._relevant
        enc = self.base.encode(text, add_special_tokens=False)
        if enc.stages is None:
            return None
        subs: set[str] = set()
        m = self.max_len
        for c in {pt.text for pt in enc.stages.pre_tokens}:
            n = len(c)
            for i in range(n - 1):
                for j in range(i + 2, min(n, i + m) + 1):
                    subs.add(c[i:j])
        if self.model.rank_mode:
            relevant = [i for i, (t, _) in enumerate(self.ordered) if t in subs]
        else:
            relevant = [i for i, r in enumerate(self.results) if r in subs]
        self._text, self._relevant = text, relevant
        return relevant

    def merge_label(self, k: int) -> str:
        """What merge ``k`` (0-based) adds, e.g. ``'Ġ' + 't' -> 'Ġt'``."""
        if self.model.rank_mode:
            return f"token {self.ordered[k][0]!r} (rank {self.ordered[k][1]})"
        a, b = self.merges[k]
        return f"{a!r} + {b!r} -> {self.results[k]!r}"

    def restricted_model(self, k: int, *, text: str | None = None) -> BPE:
        """The model with the first ``k`` merges; with ``text``, exact for that text only (and
        much smaller: see `_filter_for`)."""
        if not 0 <= k <= self.n:
            raise ValueError(f"merge cutoff {k} out of range 0..{self.n}")
        model = self.model
        relevant = self._filter_for(text) if text is not None else None
        if model.rank_mode:
            kept = dict(self.alphabet)
            if relevant is None:
                kept.update(self.ordered[:k])
            else:
                kept.update(self.ordered[i] for i in relevant if i < k)
            return BPE.from_ranks(kept)
        opts = dict(
            unk_token=model.unk_token,
            continuing_subword_prefix=model.continuing_subword_prefix,
            end_of_word_suffix=model.end_of_word_suffix,
            fuse_unk=model.fuse_unk,
            byte_fallback=model.byte_fallback,
            ignore_merges=model.ignore_merges,
        )
        if relevant is not None:
            # Only what this text can use: the entries no merge creates, plus the results (and
            # operands) of the relevant merges among the first k.
            merges = [self.merges[i] for i in relevant if i < k]
            vocab = dict(self.base_vocab)
            full = self.vocab
            for i in relevant:
                if i >= k:
                    break
                r = self.results[i]
                vocab[r] = full[r]
            for a, b in merges:
                vocab.setdefault(a, full[a])
                vocab.setdefault(b, full[b])
            try:
                return BPE(vocab, merges, **opts)
            except TokvizFormatError:
                relevant = None  # unusual vocab: fall back to the whole-vocabulary model
        merges = self.merges[:k]
        operands = {x for pair in merges for x in pair}
        drop = set(self.results[k:]) - set(self.results[:k]) - operands
        try:
            return BPE({t: i for t, i in self.vocab.items() if t not in drop}, merges, **opts)
        except TokvizFormatError:
            # An unusual vocab (a merge operand that only a later merge creates): keep it whole.
            return BPE(self.vocab, merges, **opts)

    def tokenizer(self, k: int, *, text: str | None = None) -> Any:
        """The pipeline with the first ``k`` merges (with ``text``: exact for that text only)."""
        if k == self.n:
            return self.base
        key = (k, text)
        tok = self._cache.get(key)
        if tok is None:
            if len(self._cache) >= 3:  # a full restricted model holds a whole vocabulary
                self._cache.pop(next(iter(self._cache)))
            tok = with_model(self.base, self.restricted_model(k, text=text), name=f"{self.base.name} (first {k} merges)")
            self._cache[key] = tok
        return tok


def merge_count(model: BPE) -> int:
    """How many merges the model has (rank mode: multi-byte tokens)."""
    if model.rank_mode:
        return sum(1 for t in model.get_vocab() if len(t) > 1)
    return len(model.merges)


def restrict_bpe(model: BPE, k: int) -> BPE:
    """A new `BPE` with only the first ``k`` merges (see the module docstring)."""
    from ..engine.tokenizer import Tokenizer

    return RankCutoff(Tokenizer(model)).restricted_model(k)


def restrict_tokenizer(tokenizer: Any, k: int) -> Any:
    """The same pipeline as ``tokenizer`` around ``restrict_bpe(tokenizer.model, k)``."""
    return RankCutoff(tokenizer).tokenizer(k)


def with_model(tokenizer: Any, model: Any, *, name: str | None = None) -> Any:
    """A `Tokenizer` with ``tokenizer``'s pipeline around another ``model``."""
    from ..engine.tokenizer import Tokenizer

    return Tokenizer(
        model,
        normalizer=tokenizer.normalizer,
        pre_tokenizer=tokenizer.pre_tokenizer,
        post_processor=tokenizer.post_processor,
        decoder=tokenizer.decoder,
        added_tokens=tokenizer.added_tokens,
        special_policy=tokenizer.special_policy,
        name=name if name is not None else tokenizer.name,
        source=tokenizer.source,
        config=tokenizer.config,
    )
