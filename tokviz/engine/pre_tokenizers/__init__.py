"""Pre-tokenizers: split normalized text into chunks the model never merges across.

A pre-tokenizer takes the list of normalized pieces (one per run of ordinary text between
added tokens) and returns the list of chunks, each a `NormalizedText` still aligned to the
original. Some also transform text (ByteLevel maps bytes to the GPT-2 alphabet, Metaspace puts
▁ for spaces). Modules: ``byte_level``, ``split`` (Split), ``whitespace`` (Whitespace,
WhitespaceSplit, CharDelimiterSplit), ``metaspace``, ``punctuation`` (Punctuation, Digits,
BertPreTokenizer, UnicodeScripts), ``sequence``.
"""

from __future__ import annotations

from abc import ABC
from typing import Any, ClassVar

from ..pretokenized import ChunkPlan
from ..registry import build_component
from ..text import NormalizedText

__all__ = ["PreTokenizer", "pre_tokenizer_from_json", "TYPES"]

TYPES: dict[str, str] = {
    "ByteLevel": "tokviz.engine.pre_tokenizers.byte_level:ByteLevel",
    "Split": "tokviz.engine.pre_tokenizers.split:Split",
    "Whitespace": "tokviz.engine.pre_tokenizers.whitespace:Whitespace",
    "WhitespaceSplit": "tokviz.engine.pre_tokenizers.whitespace:WhitespaceSplit",
    "CharDelimiterSplit": "tokviz.engine.pre_tokenizers.whitespace:CharDelimiterSplit",
    "Metaspace": "tokviz.engine.pre_tokenizers.metaspace:Metaspace",
    "Punctuation": "tokviz.engine.pre_tokenizers.punctuation:Punctuation",
    "Digits": "tokviz.engine.pre_tokenizers.punctuation:Digits",
    "BertPreTokenizer": "tokviz.engine.pre_tokenizers.punctuation:BertPreTokenizer",
    "UnicodeScripts": "tokviz.engine.pre_tokenizers.punctuation:UnicodeScripts",
    "Sequence": "tokviz.engine.pre_tokenizers.sequence:Sequence",
}


class PreTokenizer(ABC):
    """Base of every pre-tokenizer. ``type_name`` is the tokenizer.json ``"type"`` tag.

    A pre-tokenizer says what it makes of one piece as a `ChunkPlan` (`plan`); the chunk
    objects of `pre_tokenize` (the stage view) are built from that plan, and `Tokenizer.encode`
    reads the plan's columns, so the two cannot disagree. A pre-tokenizer that only cuts says so
    with `chunk_spans` (the plan then follows from it); one that also transforms its text
    (ByteLevel, Metaspace, Sequence) overrides `plan`.
    """

    type_name: ClassVar[str]
    #: A single chunk covering the whole piece is the piece itself, not its slice (HF's choice
    #: per type; see `ChunkPlan.whole_is_piece`).
    whole_is_piece: bool = False

    def plan(self, piece: NormalizedText) -> ChunkPlan:
        """The chunks of one piece (see `ChunkPlan`)."""
        spans = self.chunk_spans(piece.text)
        if spans is None:
            raise NotImplementedError(f"{type(self).__name__} must define plan() or chunk_spans()")
        return ChunkPlan.from_spans(piece, spans, whole_is_piece=self.whole_is_piece)

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        """Split (and possibly transform) every piece; return all chunks in order."""
        out: list[NormalizedText] = []
        for piece in pieces:
            out += self.plan(piece).chunks()
        return out

    def chunk_spans(self, text: str) -> list[tuple[int, int]] | None:
        """The chunks of a piece with this text as ``(start, end)`` ranges of the text, when this
        pre-tokenizer only cuts (its chunks are slices of the piece and depend on its text
        alone); None when it changes the text. A `Sequence` composes such stages by their spans.
        """
        return None

    @property
    def maps_bytes(self) -> bool:
        """True when the chunks' model text is the byte proxies of their text (ByteLevel)."""
        return False

    def pre_tokenize_str(self, s: str) -> list[tuple[str, tuple[int, int]]]:
        """Chunks of a plain string with their original char spans (like HF ``pre_tokenize_str``)."""
        return [(p.text, (p.orig_start, p.orig_end)) for p in self.pre_tokenize([NormalizedText.identity(s)])]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PreTokenizer:
        raise NotImplementedError(f"{cls.__name__}.from_json")

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}.to_json")


def pre_tokenizer_from_json(obj: Any, *, where: str = "pre_tokenizer") -> PreTokenizer | None:
    return build_component("pre_tokenizer", TYPES, obj, where=where)
