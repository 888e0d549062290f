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

`PreTokens` is the pre-token stage of a whole encode run (``Encoding.stages.pre_tokens``) over
its plans: a sequence of `PreToken` that keeps the plans' columns and makes an item object only
when one is read, so a view that needs only the spans (the GUI's chunk pane) reads the columns.

The byte map of a chunk object (`to_byte_level`): each chunk's UTF-8 bytes replaced by their
proxy characters (`tokviz.engine.byte_alphabet`), with HF's alignment: every proxy character of a
multi-byte character keeps that character's original span. A chunk's proxy text (and, for
non-ASCII, its byte->char index) is cached per chunk text; an ASCII chunk keeps its alignment
(1:1), a non-ASCII chunk gets a lazy gather over the piece's alignment (`Gathered`: no per-byte
Python loop).

Performance notes: the stage view is columns (a few lists of str and int), not one `PreToken`
per chunk: objects per chunk (even through `make_pre_token`, which skips the frozen-dataclass
``__init__``) would cost a large share of the encode on long texts and leave the cycle collector
an object per chunk to walk. Mapping every chunk's text to byte proxies is
the costly column, so it is built apart from the spans and only when asked for.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from operator import itemgetter
from typing import overload

from .byte_alphabet import BYTE_TO_CHAR, text_to_proxy
from .caching import BoundedCache
from .encoding import PreToken
from .text import NormalizedText, make_text, pick, split_piece

__all__ = [
    "ChunkPlan", "Gathered", "PreTokens", "aligned", "make_plan", "make_pre_token", "pre_token_spans", "to_byte_level",
]


# str.translate tables: latin-1 char (= one byte) -> proxy; ASCII chars that are not their own proxy.
_LATIN1_TO_PROXY = {b: c for b, c in enumerate(BYTE_TO_CHAR) if ord(c) != b}
# bytes.translate table: 1 for a UTF-8 lead byte, 0 for a continuation byte (0x80..0xBF)
_LEAD = bytes(0 if 0x80 <= b <= 0xBF else 1 for b in range(256))

# a chunk text -> its proxy text and byte->char index (process-wide: `Tokenizer.clear_caches`
# empties it through `tokviz.engine.caching.clear_shared_caches`)
_PROXY_CACHE = BoundedCache(200_000, shared=True)


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
    hit = _PROXY_CACHE.get(text)
    if hit is not None:
        return hit
    if text.isascii():
        result: tuple[str, array | None] = (text.translate(_LATIN1_TO_PROXY), None)
    else:
        data = text.encode("utf-8")
        proxy = data.decode("latin-1").translate(_LATIN1_TO_PROXY)
        # running count of lead bytes, minus one: the index of the character each byte belongs to
        result = (proxy, array("l", accumulate(data.translate(_LEAD), initial=-1))[1:])
    _PROXY_CACHE.put(text, result)
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
    def from_columns(
        cls, piece: NormalizedText, columns: tuple[list[int], list[str]], *, byte_map: bool = False
    ) -> ChunkPlan:
        """The plan of chunk columns ``(starts, texts)`` over ``piece.text`` (non-empty texts in
        order, as `tokviz.engine.patterns.tiling_chunks` and `isolated_chunks` give them)."""
        starts, texts = columns
        return make_plan(piece, starts, texts, byte_map, False)

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
            s = self.starts[k]
            chunk = split_piece(self.piece, [(s, s + len(self.texts[k]))])[0]
        if self.byte_map:
            chunk = to_byte_level(chunk)
        return chunk

    def chunks(self) -> list[NormalizedText]:
        """Every chunk object, in order: what `PreTokenizer.pre_tokenize` returns for the piece."""
        if self.fallback is not None:
            return list(self.fallback)
        if self._is_piece():
            return [self.chunk(0)]
        out = split_piece(self.piece, self.spans())
        if self.byte_map:
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

    def model_texts(self) -> list[str]:
        """The chunk texts as the model sees them (byte proxies under a byte map)."""
        texts = self.texts
        if not self.byte_map:
            return texts
        proxies = dict.fromkeys(texts)  # (chunk texts repeat, words and spaces above all: map each once)
        for t in proxies:
            proxies[t] = text_to_proxy(t)
        return list(map(proxies.__getitem__, texts))

    def model_text(self, k: int) -> str:
        """Chunk ``k``'s text as the model sees it (one item of `model_texts`)."""
        if not self.byte_map:
            return self.texts[k]
        return text_to_proxy(self.texts[k])

    def pre_tokens(self) -> list[PreToken]:
        """The pre-token stage of this piece (chunk texts as the model sees them, original spans)."""
        return list(map(make_pre_token, self.model_texts(), *self.orig_spans()))


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


_pt_text, _pt_start, _pt_end = (getattr(PreToken, name).__set__ for name in ("text", "start", "end"))


def make_pre_token(text: str, start: int, end: int) -> PreToken:
    """``PreToken(text, start, end)`` without the frozen-dataclass ``__init__`` (see `make_plan`)."""
    pt = object.__new__(PreToken)
    _pt_text(pt, text)
    _pt_start(pt, start)
    _pt_end(pt, end)
    return pt


_FEW = 256  # a slice this short is made item by item (see PreTokens.__getitem__)


class PreTokens(Sequence[PreToken]):
    """The pre-token stage of one encode run, over the run's plans (see the module docstring).

    ``starts``/``ends`` (original code points) and ``texts`` (as the model sees them) are columns
    built on first access; reading one item builds only that item; iterating builds every item
    once and keeps them.

    >>> from tokviz.engine.text import NormalizedText
    >>> pts = PreTokens([ChunkPlan.from_spans(NormalizedText.identity("ab cd"), [(0, 2), (3, 5)])])
    >>> len(pts), pts.starts, pts.ends, pts[1]
    (2, [0, 3], [2, 5], PreToken(text='cd', start=3, end=5))
    """

    __slots__ = ("_plans", "_firsts", "_starts", "_ends", "_texts", "_items")

    def __init__(self, plans: list[ChunkPlan]) -> None:
        self._plans = plans
        self._firsts = [0, *accumulate(map(len, plans))]  # first item of each plan, plus the count
        self._starts: Sequence[int] | None = None
        self._ends: Sequence[int] | None = None
        self._texts: Sequence[str] | None = None
        self._items: tuple[PreToken, ...] | None = None

    # ------------------------------------------------------------------ columns
    def _spans(self) -> None:
        cols = [p.orig_spans() for p in self._plans]
        if len(cols) == 1:
            self._starts, self._ends = cols[0]
        else:
            self._starts = list(chain.from_iterable(map(itemgetter(0), cols)))
            self._ends = list(chain.from_iterable(map(itemgetter(1), cols)))

    @property
    def starts(self) -> Sequence[int]:
        """The original start of every chunk."""
        if self._starts is None:
            self._spans()
        return self._starts  # type: ignore[return-value]

    @property
    def ends(self) -> Sequence[int]:
        """The original end of every chunk."""
        if self._ends is None:
            self._spans()
        return self._ends  # type: ignore[return-value]

    @property
    def plan_texts(self) -> list[tuple[Sequence[str], bool]]:
        """Per plan, its chunk texts before the byte map and whether the model sees them through
        it (`ChunkPlan.model_texts`): what a word counter maps once per distinct word."""
        return [(p.texts, p.byte_map) for p in self._plans]

    @property
    def texts(self) -> Sequence[str]:
        """Every chunk's text as the model sees it (``PreToken.text``)."""
        if self._texts is None:
            plans = self._plans
            self._texts = plans[0].model_texts() if len(plans) == 1 else list(chain.from_iterable(p.model_texts() for p in plans))
        return self._texts

    # ------------------------------------------------------------------ the sequence
    def _all(self) -> tuple[PreToken, ...]:
        if self._items is None:
            self._items = tuple(map(make_pre_token, self.texts, self.starts, self.ends))
        return self._items

    def __len__(self) -> int:
        return self._firsts[-1]

    def __getitem__(self, i):  # noqa: ANN001, ANN204 - int or slice, like a tuple
        if self._items is not None:
            return self._items[i]
        n = self._firsts[-1]
        if isinstance(i, slice):
            picked = range(*i.indices(n))
            if self._texts is None and len(picked) <= _FEW:  # (a window: no column of every text)
                return tuple(map(self._item, picked))
            return tuple(map(make_pre_token, self.texts[i], self.starts[i], self.ends[i]))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("pre-token index out of range")
        return self._item(i)

    def _item(self, i: int) -> PreToken:
        """Item ``i`` (in range): from the columns built so far, the rest from its plan."""
        if self._texts is not None and self._starts is not None:
            return make_pre_token(self._texts[i], self._starts[i], self._ends[i])  # type: ignore[index]
        j = bisect_right(self._firsts, i) - 1
        plan, k = self._plans[j], i - self._firsts[j]
        if self._starts is not None:
            start, end = self._starts[i], self._ends[i]  # type: ignore[index]
        else:
            (start,), (end,) = plan.orig_spans(k, k + 1)
        return make_pre_token(self._texts[i] if self._texts is not None else plan.model_text(k), start, end)

    def __iter__(self) -> Iterator[PreToken]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"PreTokens({list(self._all())!r})"


def pre_token_spans(chunks: Sequence[PreToken]) -> tuple[Sequence[int], Sequence[int]]:
    """The original starts and ends of a pre-token stage, as two columns (read from a
    `PreTokens` as they are, gathered from the items of any other sequence).

    >>> pre_token_spans([PreToken("a", 0, 1), PreToken("b", 2, 3)])
    ([0, 2], [1, 3])
    """
    if isinstance(chunks, PreTokens):
        return chunks.starts, chunks.ends
    return [c.start for c in chunks], [c.end for c in chunks]
