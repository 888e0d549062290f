"""The ``ByteLevel`` pre-tokenizer: optional prefix space, GPT-2 regex split, bytes -> proxy chars.

Each chunk's UTF-8 bytes are replaced by their proxy characters from `tokviz.engine.byte_alphabet`
(space -> ``Ġ``). Alignment, exactly HF's: every proxy character of a multi-byte character keeps
that character's original span (the first byte replaces the character, the others are inserted
after it and copy its alignment). The prefix space (``add_prefix_space``) is aligned with the
piece's first character.

The plan (`ByteLevel.plan`) is the prefixed piece cut by the regex, with the byte map as its
per-chunk text map: the encode reads the chunk texts and maps bytes inside the model call, and
the chunk objects (`to_byte_level`) are made only for the stage view.

The chunk objects' byte map (`to_byte_level`, `Gathered`) lives in `tokviz.engine.pretokenized`
(re-exported here), beside the plan that uses it.
"""

from __future__ import annotations

from ..byte_alphabet import ByteLevelOptions
from ..normalizers.basic import prepend
from ..patterns import compile_pattern, isolated_chunks, isolated_spans, trust_patterns
from ..pretokenized import ChunkPlan, Gathered, to_byte_level
from ..text import NormalizedText, split_piece
from . import PreTokenizer

__all__ = ["ByteLevel", "GPT2_PATTERN", "Gathered", "to_byte_level"]

#: The GPT-2 pre-tokenization pattern HF's ByteLevel uses when ``use_regex`` is true.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
trust_patterns(GPT2_PATTERN)

class ByteLevel(ByteLevelOptions, PreTokenizer):
    """HF ``ByteLevel`` pre-tokenizer.

    >>> ByteLevel(add_prefix_space=False).pre_tokenize_str("Hi there")
    [('Hi', (0, 2)), ('Ġthere', (2, 8))]
    >>> ByteLevel(add_prefix_space=True).pre_tokenize_str("é")
    [('ĠÃ©', (0, 1))]
    """

    type_name = "ByteLevel"

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        self._compiled = compile_pattern(GPT2_PATTERN)

    def _prepared(self, piece: NormalizedText) -> NormalizedText:
        if self.add_prefix_space and not piece.text.startswith(" "):
            return prepend(piece, " ")
        return piece

    def split(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        """The first half of `pre_tokenize`: prefix space and regex split, before the byte mapping."""
        out: list[NormalizedText] = []
        for piece in pieces:
            if piece.text:
                piece = self._prepared(piece)
                if self.use_regex:
                    out += split_piece(piece, isolated_spans(self._compiled, piece.text))
                else:
                    out.append(piece)
        return out

    @property
    def whole_is_piece(self) -> bool:  # type: ignore[override]
        return not self.use_regex  # without the regex the whole piece is mapped as it is

    @property
    def maps_bytes(self) -> bool:
        return True

    def plan(self, piece: NormalizedText) -> ChunkPlan:
        """Prefix space, the regex cut, and the byte map as the plan's chunk text map."""
        if not piece.text:
            return ChunkPlan.whole(piece, byte_map=True)
        piece = self._prepared(piece)
        if not self.use_regex:
            return ChunkPlan.whole(piece, byte_map=True)
        return ChunkPlan.from_columns(piece, isolated_chunks(self._compiled, piece.text), byte_map=True)

    def chunk_spans(self, text: str) -> list[tuple[int, int]] | None:
        if self.add_prefix_space:
            return None  # a prefix space changes the text
        if not self.use_regex:
            return [(0, len(text))]
        return isolated_spans(self._compiled, text)

    def __repr__(self) -> str:
        return (
            f"ByteLevel(add_prefix_space={self.add_prefix_space}, trim_offsets={self.trim_offsets}, "
            f"use_regex={self.use_regex})"
        )
