"""WordLevel model: one pre-token -> one vocab id (or ``unk_token``), HF ``"WordLevel"``.

The simplest model: no splitting inside a pre-token at all, so everything depends on the
pre-tokenizer. A word missing from the vocab becomes ``unk_token`` spanning the whole word.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..encoding import Trace
from ..errors import TokvizFormatError
from ..fields import Fields
from . import DictVocabModel, ModelToken, read_vocab

__all__ = ["WordLevel"]


class WordLevel(DictVocabModel):
    """Whole-word lookup.

    >>> wl = WordLevel({"hello": 0, "<unk>": 1})
    >>> wl.tokenize("hello"), wl.tokenize("world")
    (((0, 0, 5),), ((1, 0, 5),))
    """

    type_name = "WordLevel"

    def __init__(self, vocab: Mapping[str, int] | None = None, *, unk_token: str = "<unk>") -> None:
        self._vocab: dict[str, int] = dict(vocab or {})
        self._vocab_r: dict[int, str] = {}
        for tok, i in self._vocab.items():
            self._vocab_r.setdefault(i, tok)
        self.unk_token = unk_token

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> WordLevel:
        f = Fields(obj)
        if f.raw("type", "WordLevel") != "WordLevel":
            f.fail("type", f"expected a WordLevel model, got type {f.raw('type')!r:.60}")
        vocab = read_vocab(obj, "WordLevel")
        return cls(vocab, unk_token=f.str("unk_token", "<unk>"))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "WordLevel",
            "vocab": dict(sorted(self._vocab.items(), key=lambda kv: kv[1])),
            "unk_token": self.unk_token,
        }


    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        # HF looks the chunk up as is, even the empty string (then unk spanning nothing).
        i = self._vocab.get(text)
        if i is None:
            i = self._vocab.get(self.unk_token)
            if i is None:
                raise TokvizFormatError(
                    f"{text!r} is not in the vocab and unk_token {self.unk_token!r} is missing too",
                    where="unk_token",
                )
        return ((i, 0, len(text)),)

    def tokenize_traced(self, text: str) -> tuple[tuple[ModelToken, ...], tuple[Trace | None, ...]]:
        return self.tokenize(text), (None,)

    def __repr__(self) -> str:
        return f"WordLevel({len(self._vocab)} tokens)"
