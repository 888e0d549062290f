"""Rank cutoff of a whole tokenizer: its pipeline around its BPE cut to the first k merges.

The model-level cut is `BPE.first_merges`; this module adds what a slider over k needs on top:
the text's pre-token chunks computed once per text (so each step builds a model of only the
merges that text can use), the last few cut tokenizers kept (stepping back is instant), and the
label of each merge. Every cut tokenizer is `Tokenizer.with_model` of the original, so it runs
exactly the same pipeline code as the full one.

>>> from tokviz.engine.models.bpe import BPE
>>> from tokviz.engine.tokenizer import Tokenizer
>>> rc = RankCutoff(Tokenizer(BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")])))
>>> rc.n, rc.tokenizer(1).encode("abc").tokens
(2, ['ab', 'c'])
"""

from __future__ import annotations

from .models.bpe import BPE
from .tokenizer import Tokenizer

__all__ = ["RankCutoff", "cutoff_supported"]

_KEPT = 3  # cut tokenizers kept: a whole-vocabulary cut holds a whole vocabulary


def cutoff_supported(tokenizer: Tokenizer) -> bool:
    """True when the tokenizer's model is a `BPE` (merges or rank mode)."""
    return isinstance(tokenizer.model, BPE)


class RankCutoff:
    """A BPE tokenizer prepared for cutting at any k in ``0..n``."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        model = tokenizer.model
        if not isinstance(model, BPE):
            raise ValueError(
                f"the rank cutoff needs a BPE model (merges or tiktoken ranks); this tokenizer has {type(model).__name__}"
            )
        self.base = tokenizer
        self.model: BPE = model
        self.n = model.merge_count  # computes the merge order once, here
        self._kept: dict[tuple[int, str | None], Tokenizer] = {}
        self._chunks_of: tuple[str, frozenset[str]] | None = None  # (text, its pre-token chunks)

    def merge_label(self, k: int) -> str:
        """What merge ``k`` (0-based) adds, e.g. ``'Ġ' + 't' -> 'Ġt'``."""
        return self.model.describe_merge(k)

    def chunks(self, text: str) -> frozenset[str]:
        """The pre-token chunks of ``text`` as the model sees them (kept for the last text)."""
        if self._chunks_of is None or self._chunks_of[0] != text:
            pre = self.base.stages(text).pre_tokens  # (no model run)
            self._chunks_of = (text, frozenset(c.text for c in pre))
        return self._chunks_of[1]

    def tokenizer(self, k: int, *, text: str | None = None) -> Tokenizer:
        """The pipeline with the first ``k`` merges (with ``text``: exact for that text only)."""
        if k == self.n:
            return self.base
        key = (k, text)
        tok = self._kept.get(key)
        if tok is None:
            model = self.model.first_merges(k, text=self.chunks(text) if text is not None else None)
            tok = self.base.with_model(model, name=f"{self.base.name} (first {k} merges)")
            if len(self._kept) >= _KEPT:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = tok
        return tok

