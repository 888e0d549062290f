"""The ``ByteLevel`` pre-tokenizer: optional prefix space, GPT-2 regex split, bytes -> proxy chars.

Each chunk's UTF-8 bytes are replaced by their proxy characters from `tokviz.engine.byte_alphabet`
(space -> ``Ġ``). Alignment, exactly HF's: every proxy character of a multi-byte character keeps
that character's original span (the first byte replaces the character, the others are inserted
after it and copy its alignment). The prefix space (``add_prefix_space``) is aligned with the
piece's first character.

The plan (`ByteLevel.plan`) is the prefixed piece cut by the regex, with the byte map as its
per-chunk text map: the encode reads the chunk texts and maps bytes inside the model call, and
the chunk objects (`to_byte_level`) are made only for the stage view.

Performance notes: a chunk's proxy text (and, for non-ASCII, its byte->char index) is cached per
chunk text; an ASCII chunk keeps its alignment (1:1), a non-ASCII chunk gets a lazy gather over
the piece's alignment (`Gathered`: no per-byte Python loop).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import overload

from ..byte_alphabet import BYTE_TO_CHAR, ByteLevelOptions
from ..normalizers.basic import prepend
from ..patterns import compile_pattern, isolated_chunks, isolated_spans, trust_patterns
from ..pretokenized import ChunkPlan
from ..text import NormalizedText, make_text
from . import PreTokenizer
from .split import split_piece

__all__ = ["ByteLevel", "GPT2_PATTERN", "Gathered", "to_byte_level"]

#: The GPT-2 pre-tokenization pattern HF's ByteLevel uses when ``use_regex`` is true.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
trust_patterns(GPT2_PATTERN)

# str.translate tables: latin-1 char (= one byte) -> proxy; ASCII chars that are not their own proxy.
_LATIN1_TO_PROXY = {b: c for b, c in enumerate(BYTE_TO_CHAR) if ord(c) != b}
# bytes.translate table: 1 for a UTF-8 lead byte, 0 for a continuation byte (0x80..0xBF)
_LEAD = bytes(0 if 0x80 <= b <= 0xBF else 1 for b in range(256))

_CACHE_LIMIT = 200_000
_proxy_cache: dict[str, tuple[str, array]] = {}


class Gathered(Sequence[int]):
    """``Gathered(src, idx)[k] == src[idx[k]]``: a lazy alignment column.

    Used for the alignment of a byte-level chunk: proxy character ``k`` came from normalized
    character ``idx[k]``, whose original start (or end) is ``src[idx[k]]``. Only the two ends of
    a token are ever looked up, so the column is never materialized on the hot path.
    """

    __slots__ = ("src", "idx")

    def __init__(self, src: Sequence[int], idx: array) -> None:
        self.src = src
        self.idx = idx

    def __len__(self) -> int:
        return len(self.idx)

    @overload
    def __getitem__(self, k: int) -> int: ...
    @overload
    def __getitem__(self, k: slice) -> Gathered: ...
    def __getitem__(self, k):  # noqa: ANN001, ANN204
        if isinstance(k, slice):
            return Gathered(self.src, self.idx[k])
        return self.src[self.idx[k]]

    def __iter__(self) -> Iterator[int]:
        src = self.src
        return (src[i] for i in self.idx)

    def __repr__(self) -> str:
        return f"Gathered({list(self)!r})"


def _proxy(text: str) -> tuple[str, array | None]:
    """Proxy text of a chunk and, for a non-ASCII chunk, the index of each proxy char's source
    character (``None``: ASCII, 1:1)."""
    hit = _proxy_cache.get(text)
    if hit is not None:
        return hit
    if text.isascii():
        result: tuple[str, array | None] = (text.translate(_LATIN1_TO_PROXY), None)
    else:
        data = text.encode("utf-8")
        proxy = data.decode("latin-1").translate(_LATIN1_TO_PROXY)
        # running count of lead bytes, minus one: the index of the character each byte belongs to
        result = (proxy, array("l", accumulate(data.translate(_LEAD), initial=-1))[1:])
    if len(_proxy_cache) >= _CACHE_LIMIT:
        _proxy_cache.clear()
    _proxy_cache[text] = result
    return result


def to_byte_level(chunk: NormalizedText) -> NormalizedText:
    """The chunk with its text replaced by the proxy characters of its UTF-8 bytes."""
    proxy, idx = _proxy(chunk.text)
    if idx is None:
        # 1:1 — the alignment (identity or not) is unchanged
        return make_text(chunk.original, proxy, chunk.orig_start, chunk.orig_end, chunk.starts, chunk.ends)
    if chunk.starts is None:
        o = chunk.orig_start
        n = len(chunk.text)
        starts: Sequence[int] = range(o, o + n)
        ends: Sequence[int] = range(o + 1, o + n + 1)
    else:
        starts, ends = chunk.starts, chunk.ends  # type: ignore[assignment]
    return make_text(chunk.original, proxy, chunk.orig_start, chunk.orig_end, Gathered(starts, idx), Gathered(ends, idx))


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
