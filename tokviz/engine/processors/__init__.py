"""Post-processors: add template tokens (BOS/EOS, [CLS]/[SEP]) and adjust offsets.

A processor takes the model's `Encoding` (and optionally a pair) and returns a new one.
Modules: ``template`` (TemplateProcessing, BertProcessing, RobertaProcessing), ``byte_level``
(ByteLevel offset trimming), ``sequence``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from ..encoding import Encoding
from ..registry import build_component

__all__ = ["PostProcessor", "post_processor_from_json", "TYPES"]

TYPES: dict[str, str] = {
    "TemplateProcessing": "tokviz.engine.processors.template:TemplateProcessing",
    "BertProcessing": "tokviz.engine.processors.template:BertProcessing",
    "RobertaProcessing": "tokviz.engine.processors.template:RobertaProcessing",
    "ByteLevel": "tokviz.engine.processors.byte_level:ByteLevel",
    "Sequence": "tokviz.engine.processors.sequence:Sequence",
}


class PostProcessor(ABC):
    type_name: ClassVar[str]

    @abstractmethod
    def added_tokens(self, is_pair: bool) -> int:
        """How many tokens `process` adds when special tokens are on."""

    @abstractmethod
    def process(self, encoding: Encoding, pair: Encoding | None = None, *, add_special_tokens: bool = True) -> Encoding:
        """Return the final encoding (a new value)."""

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PostProcessor:
        raise NotImplementedError(f"{cls.__name__}.from_json")

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}.to_json")


def post_processor_from_json(obj: Any, *, where: str = "post_processor") -> PostProcessor | None:
    return build_component("post_processor", TYPES, obj, where=where)
