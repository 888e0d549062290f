"""``tokenizers.implementations``: HF's Python-side wrappers. `BaseTokenizer` forwards to the
`Tokenizer` it wraps; `BertWordPieceTokenizer` is built from tokviz's own tokenizer.json of a
BERT ``vocab.txt`` (`tokviz.io.wordpiece_vocab.bert_tokenizer_json`, the same pipeline HF's
class assembles). The other implementations read files that need a download, and training is
not offered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokviz.io.wordpiece_vocab import bert_tokenizer_json, read_vocab_lines

_COMPONENTS = ("model", "normalizer", "pre_tokenizer", "post_processor", "decoder")


class BaseTokenizer:
    """HF's ``BaseTokenizer(tokenizer)``: every call and component goes to ``tokenizer``."""

    def __init__(self, tokenizer: Any, parameters: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "_tokenizer", tokenizer)
        object.__setattr__(self, "_parameters", parameters or {})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_tokenizer"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _COMPONENTS:
            raise AttributeError(f"{type(self).__name__} has no settable attribute {name!r}")
        setattr(self._tokenizer, name, value)

    def train_from_iterator(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("training is not offered by tokviz")

    def train(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("training is not offered by tokviz")


class BertWordPieceTokenizer(BaseTokenizer):
    """HF's ``BertWordPieceTokenizer(vocab, lowercase=True)`` with its default options."""

    def __init__(self, vocab: str | dict[str, int] | None = None, lowercase: bool = True, **kwargs: Any) -> None:
        from . import Tokenizer

        if kwargs:
            raise NotImplementedError(f"BertWordPieceTokenizer options {sorted(kwargs)} are not translated")
        if vocab is None:
            raise NotImplementedError("a BertWordPieceTokenizer without a vocabulary is for training, not offered")
        if isinstance(vocab, str):
            vocab = read_vocab_lines(Path(vocab).read_text(encoding="utf-8"))
        obj = bert_tokenizer_json(dict(vocab), lowercase=lowercase)
        super().__init__(Tokenizer.from_str(json.dumps(obj)), {"model": "BertWordPiece", "lowercase": lowercase})

    @staticmethod
    def from_file(vocab: str, **kwargs: Any) -> BertWordPieceTokenizer:
        return BertWordPieceTokenizer(vocab, **kwargs)
