"""Pre-token chunks as columns: `ChunkPlan`, what a pre-tokenizer makes of one piece.

A plan is the (possibly transformed) piece, the chunks as ``starts``/``texts`` columns over its
text, and an optional per-chunk text map (``byte_map``: a chunk's model text is the GPT-2 proxies
of its UTF-8 bytes, ByteLevel's map). Both views of the pre-token stage come from it, so they
cannot disagree: `ChunkPlan.chunks` builds the `NormalizedText` chunk objects that
`PreTokenizer.pre_tokenize` returns, and `Tokenizer.encode` reads the columns directly (one chunk
cache keyed by chunk text, offsets of all chunks in bulk through the piece's alignment).

When a pre-tokenizer cannot say its chunks this way (a `Sequence` whose later stage transforms
each chunk), the plan falls back to the chunk objects themselves (`ChunkPlan.of_chunks`): their
alignments are joined into one piece so that the same column passes apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter

from .encoding import PreToken
from .text import NormalizedText, pick

__all__ = ["ChunkPlan", "aligned", "make_plan"]


def aligned(nt: NormalizedText, first: Sequence[int], last: Sequence[int]) -> tuple[Sequence[int], Sequence[int]]:
    """For every k, the original start of char ``first[k]`` of ``nt`` and the original end of its
    char ``last[k]``: the original span of the non-empty range ``[first, last + 1)``
    (`NormalizedText.original_span` for many ranges at once; empty ranges have their own rule)."""
    if nt.starts is None:
        o = nt.orig_start
        return list(map(o.__add__, first)), list(map((o + 1).__add__, last))
    return pick(nt.starts, first), pick(nt.ends, last)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ChunkPlan:
    """The chunks of one piece: chunk ``k`` is ``piece.text[starts[k] : starts[k] + len(texts[k])]``.

    ``texts`` are non-empty. ``byte_map``: the model sees each chunk as the byte proxies of its
    text (ByteLevel). ``whole_is_piece``: a single chunk that covers the whole piece is the piece
    itself rather than its slice (the two differ only in ``orig_start``/``orig_end`` when
    normalization removed characters at the piece's edges; each pre-tokenizer keeps HF's choice).
    ``fallback`` holds the chunk objects when the plan was made from them (`of_chunks`).

    >>> from tokviz.engine.text import NormalizedText
    >>> plan = ChunkPlan.from_spans(NormalizedText.identity("ab cd"), [(0, 2), (3, 5)])
    >>> plan.texts, [(c.text, c.orig_start) for c in plan.chunks()]
    (['ab', 'cd'], [('ab', 0), ('cd', 3)])
    """

    piece: NormalizedText
    starts: list[int]
    texts: list[str]
    byte_map: bool = False
    whole_is_piece: bool = False
    fallback: list[NormalizedText] | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_spans(
        cls, piece: NormalizedText, spans: Sequence[tuple[int, int]], *, byte_map: bool = False, whole_is_piece: bool = False
    ) -> ChunkPlan:
        """The plan of ``spans`` (ranges of ``piece.text`` in order; empty ones are dropped)."""
        text = piece.text
        spans = [sp for sp in spans if sp[0] != sp[1]]
        starts = list(map(itemgetter(0), spans))
        texts = list(map(text.__getitem__, map(slice, starts, map(itemgetter(1), spans))))
        return cls(piece, starts, texts, byte_map, whole_is_piece)

    @classmethod
    def from_texts(
        cls, piece: NormalizedText, texts: list[str], *, byte_map: bool = False, whole_is_piece: bool = False
    ) -> ChunkPlan:
        """The plan of chunk strings that tile ``piece.text`` from its start (none empty)."""
        starts = list(accumulate(map(len, texts[:-1]), initial=0)) if texts else []
        return make_plan(piece, starts, texts, byte_map, whole_is_piece)

    @classmethod
    def whole(cls, piece: NormalizedText, *, byte_map: bool = False) -> ChunkPlan:
        """The piece as its one chunk (no pre-tokenizer; an empty piece has none)."""
        return make_plan(piece, [0] if piece.text else [], [piece.text] if piece.text else [], byte_map, True)

    @classmethod
    def of_chunks(cls, chunks: list[NormalizedText]) -> ChunkPlan:
        """The fallback: a plan over given chunk objects (their alignments joined into one piece)."""
        chunks = [c for c in chunks if c.text]
        if not chunks:
            return cls(NormalizedText.identity(""), [], [], fallback=[])
        texts = [c.text for c in chunks]
        return cls(NormalizedText.concat(chunks), list(accumulate(map(len, texts[:-1]), initial=0)), texts, fallback=chunks)

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.texts)

    def spans(self) -> list[tuple[int, int]]:
        """The chunks as ``(start, end)`` ranges of ``piece.text``."""
        return list(zip(self.starts, map(int.__add__, self.starts, map(len, self.texts))))

    def _is_piece(self) -> bool:
        return self.whole_is_piece and len(self.texts) == 1 and len(self.texts[0]) == len(self.piece.text)

    def chunk(self, k: int) -> NormalizedText:
        """Chunk ``k`` as the pre-tokenizer's `NormalizedText` (byte proxies mapped in)."""
        if self.fallback is not None:
            return self.fallback[k]
        if self._is_piece():
            chunk = self.piece
        else:
            from .pre_tokenizers.split import split_piece

            s = self.starts[k]
            chunk = split_piece(self.piece, [(s, s + len(self.texts[k]))])[0]
        if self.byte_map:
            from .pre_tokenizers.byte_level import to_byte_level

            chunk = to_byte_level(chunk)
        return chunk

    def chunks(self) -> list[NormalizedText]:
        """Every chunk object, in order: what `PreTokenizer.pre_tokenize` returns for the piece."""
        if self.fallback is not None:
            return list(self.fallback)
        if self._is_piece():
            return [self.chunk(0)]
        from .pre_tokenizers.split import split_piece

        out = split_piece(self.piece, self.spans())
        if self.byte_map:
            from .pre_tokenizers.byte_level import to_byte_level

            out = [to_byte_level(c) for c in out]
        return out

    def orig_spans(self, a: int = 0, b: int | None = None) -> tuple[Sequence[int], Sequence[int]]:
        """The original spans of chunks ``a..b`` as two columns (their ``orig_start``/``orig_end``)."""
        if self.fallback is not None:
            part = self.fallback[a:b]
            return [c.orig_start for c in part], [c.orig_end for c in part]
        if self._is_piece():
            return [self.piece.orig_start], [self.piece.orig_end]
        starts = self.starts[a:b]
        return aligned(self.piece, starts, list(map(int.__add__, starts, map((-1).__add__, map(len, self.texts[a:b])))))

    def pre_tokens(self) -> list[PreToken]:
        """The pre-token stage of this piece (chunk texts as the model sees them, original spans)."""
        texts = self.texts
        if self.byte_map:
            from .byte_alphabet import text_to_proxy

            proxies = dict.fromkeys(texts)  # (chunk texts repeat, words and spaces above all: map each once)
            for t in proxies:
                proxies[t] = text_to_proxy(t)
            texts = list(map(proxies.__getitem__, texts))
        return list(map(PreToken, texts, *self.orig_spans()))


_set_piece, _set_starts, _set_texts, _set_byte_map, _set_whole, _set_fallback = (
    getattr(ChunkPlan, name).__set__ for name in ("piece", "starts", "texts", "byte_map", "whole_is_piece", "fallback"))


def make_plan(
    piece: NormalizedText, starts: list[int], texts: list[str], byte_map: bool, whole_is_piece: bool
) -> ChunkPlan:
    """``ChunkPlan(piece, starts, texts, byte_map, whole_is_piece)`` without the frozen-dataclass
    ``__init__`` (a plan per line of text; the same pattern as `tokviz.engine.text.make_text`)."""
    plan = object.__new__(ChunkPlan)
    _set_piece(plan, piece)
    _set_starts(plan, starts)
    _set_texts(plan, texts)
    _set_byte_map(plan, byte_map)
    _set_whole(plan, whole_is_piece)
    _set_fallback(plan, None)
    return plan
