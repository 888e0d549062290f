"""The ``Sequence`` pre-tokenizer: run several pre-tokenizers one after the other."""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..text import NormalizedText
from . import PreTokenizer, pre_tokenizer_from_json

__all__ = ["Sequence"]


class Sequence(PreTokenizer):
    """Each pre-tokenizer splits (and transforms) the chunks of the previous one (HF ``Sequence``)."""

    type_name = "Sequence"

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = list(pretokenizers)
        self._fused = self._fusable()

    def _fusable(self):  # noqa: ANN202 - compiled pattern or None
        """The pattern of ``[Split(Isolated), ByteLevel(no prefix, no regex)]`` (Qwen, Llama 3,
        tiktoken-style files): that pair can cut and map an unnormalized piece in one pass."""
        from .byte_level import ByteLevel
        from .split import Split

        if len(self.pretokenizers) != 2:
            return None
        split, byte_level = self.pretokenizers
        if type(split) is not Split or type(byte_level) is not ByteLevel:
            return None
        if split.behavior != "Isolated" or byte_level.add_prefix_space or byte_level.use_regex:
            return None
        return split._compiled

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        if self._fused is not None and all(p.starts is None for p in pieces):
            from ..patterns import isolated_strings
            from .byte_level import _identity_chunks

            out: list[NormalizedText] = []
            for piece in pieces:
                if piece.text:
                    _identity_chunks(piece, isolated_strings(self._fused, piece.text), out)
            return out
        for p in self.pretokenizers:
            pieces = p.pre_tokenize(pieces)
        return pieces

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        items = Fields(obj).list("pretokenizers")
        built = []
        for i, item in enumerate(items):
            p = pre_tokenizer_from_json(item, where=f"pretokenizers[{i}]")
            if p is None:
                raise TokvizFormatError("expected a pre_tokenizer object, got null", where=f"pretokenizers[{i}]")
            built.append(p)
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    def __repr__(self) -> str:
        return f"Sequence({self.pretokenizers!r})"
