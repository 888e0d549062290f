"""The ``Sequence`` pre-tokenizer: run several pre-tokenizers one after the other."""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..text import NormalizedText
from . import PreTokenizer, pre_tokenizer_from_json

__all__ = ["Sequence"]


class Sequence(PreTokenizer):
    """Each pre-tokenizer splits (and transforms) the chunks of the previous one (HF ``Sequence``)."""

    type_name = "Sequence"

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = list(pretokenizers)

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        for p in self.pretokenizers:
            pieces = p.pre_tokenize(pieces)
        return pieces

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        items = obj.get("pretokenizers")
        if not isinstance(items, list):
            raise TokvizFormatError(f"Sequence.pretokenizers must be a list, got {type(items).__name__}")
        built = []
        for i, item in enumerate(items):
            p = pre_tokenizer_from_json(item, where=f"pre_tokenizer.pretokenizers[{i}]")
            if p is None:
                raise TokvizFormatError(f"Sequence.pretokenizers[{i}] is null")
            built.append(p)
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    def __repr__(self) -> str:
        return f"Sequence({self.pretokenizers!r})"
