"""Decoders: token strings -> text (HF ``decoder`` types).

``decode_chain(tokens)`` maps the list of vocab strings to a list of text pieces (HF's
``decode_chain``, so a Sequence can feed one decoder's output to the next); ``decode`` joins.
Modules: ``byte_level`` (ByteLevel), ``metaspace`` (Metaspace), ``wordpiece`` (WordPiece),
``basic`` (ByteFallback, Fuse, Strip, Replace, BPEDecoder, CTC, Sequence).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from ..registry import build_component

__all__ = ["Decoder", "decoder_from_json", "TYPES"]

TYPES: dict[str, str] = {
    "ByteLevel": "tokviz.engine.decoders.byte_level:ByteLevel",
    "Metaspace": "tokviz.engine.decoders.metaspace:Metaspace",
    "WordPiece": "tokviz.engine.decoders.wordpiece:WordPiece",
    "ByteFallback": "tokviz.engine.decoders.basic:ByteFallback",
    "Fuse": "tokviz.engine.decoders.basic:Fuse",
    "Strip": "tokviz.engine.decoders.basic:Strip",
    "Replace": "tokviz.engine.decoders.basic:Replace",
    "BPEDecoder": "tokviz.engine.decoders.basic:BPEDecoder",
    "CTC": "tokviz.engine.decoders.basic:CTC",
    "Sequence": "tokviz.engine.decoders.basic:Sequence",
}


class Decoder(ABC):
    type_name: ClassVar[str]

    @abstractmethod
    def decode_chain(self, tokens: list[str]) -> list[str]:
        """Transform the token strings (HF ``decode_chain``)."""

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(tokens))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Decoder:
        raise NotImplementedError(f"{cls.__name__}.from_json")

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}.to_json")


def decoder_from_json(obj: Any, *, where: str = "decoder") -> Decoder | None:
    return build_component("decoder", TYPES, obj, where=where)
