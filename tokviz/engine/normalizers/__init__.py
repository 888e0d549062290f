"""Normalizers: text -> text, keeping the alignment to the original (HF ``normalizer`` types).

Every normalizer takes a `NormalizedText` and returns a new one (never mutates). Modules:
``unicode`` (NFC, NFD, NFKC, NFKD), ``basic`` (Lowercase, Strip, StripAccents, Replace,
Prepend, Sequence), ``bert`` (BertNormalizer), ``precompiled`` (SentencePiece charsmaps).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from ..registry import build_component
from ..text import NormalizedText

__all__ = ["Normalizer", "normalizer_from_json", "TYPES"]

TYPES: dict[str, str] = {
    "NFC": "tokviz.engine.normalizers.unicode:NFC",
    "NFD": "tokviz.engine.normalizers.unicode:NFD",
    "NFKC": "tokviz.engine.normalizers.unicode:NFKC",
    "NFKD": "tokviz.engine.normalizers.unicode:NFKD",
    "Lowercase": "tokviz.engine.normalizers.basic:Lowercase",
    "Strip": "tokviz.engine.normalizers.basic:Strip",
    "StripAccents": "tokviz.engine.normalizers.basic:StripAccents",
    "Replace": "tokviz.engine.normalizers.basic:Replace",
    "Prepend": "tokviz.engine.normalizers.basic:Prepend",
    "Sequence": "tokviz.engine.normalizers.basic:Sequence",
    "BertNormalizer": "tokviz.engine.normalizers.bert:BertNormalizer",
    "Precompiled": "tokviz.engine.normalizers.precompiled:Precompiled",
}


class Normalizer(ABC):
    """Base of every normalizer. ``type_name`` is the tokenizer.json ``"type"`` tag."""

    type_name: ClassVar[str]

    @abstractmethod
    def normalize(self, text: NormalizedText) -> NormalizedText:
        """Return the normalized text with alignments (a new value)."""

    def normalize_str(self, s: str) -> str:
        """Normalize a plain string (like HF ``normalize_str``)."""
        return self.normalize(NormalizedText.identity(s)).text

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Normalizer:
        raise NotImplementedError(f"{cls.__name__}.from_json")

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}.to_json")


def normalizer_from_json(obj: Any, *, where: str = "normalizer") -> Normalizer | None:
    return build_component("normalizer", TYPES, obj, where=where)
