"""Tokens, encodings and stage snapshots: what a pipeline run returns (data, never prints).

An `Encoding` is columnar (parallel lists, like HF's ``Encoding``) so that encoding a megabyte
does not build a million objects; `Encoding.token(i)` / iteration give a `Token` view on demand.
`Stages` keeps every intermediate value of the run (added-token segments, normalized text,
pre-token chunks) for the GUI. Traces (BPE merges, WordPiece matches, Unigram scores) exist only
when ``encode(..., trace=True)`` asked for them.

All offsets are code points of the original text; ``byte_offsets`` are the exact UTF-8 byte
spans (a byte-level token that holds part of a character has a byte span inside that character
while its char span covers the whole character, as HF reports it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .text import NormalizedText, OffsetMap

if TYPE_CHECKING:  # pragma: no cover
    from .exact import ExactAlignment

__all__ = [
    "MergeStep",
    "BpeTrace",
    "WordPieceTrace",
    "UnigramTrace",
    "Trace",
    "Segment",
    "PreToken",
    "Stages",
    "Token",
    "Encoding",
    "COLUMNS",
    "DERIVE_STAGES",
    "column",
    "is_compact",
    "make_encoding",
    "with_columns",
]


# ---------------------------------------------------------------------- traces
@dataclass(frozen=True, slots=True)
class MergeStep:
    """One BPE merge applied while encoding a chunk: ``left + right -> merged`` at ``rank``."""

    rank: int
    left: str
    right: str
    merged: str
    position: int  # index (in symbols of the chunk at that moment) of the left symbol


@dataclass(frozen=True, slots=True)
class BpeTrace:
    """How a BPE model produced the tokens of one chunk.

    ``initial`` are the symbols before any merge (characters, byte proxies or byte-fallback
    pieces); ``merges`` are applied in order. Each token's own history is the subset of merges
    whose ``merged`` result lies inside it (`Tokenizer` attaches that subset per token).
    """

    initial: tuple[str, ...]
    merges: tuple[MergeStep, ...]


@dataclass(frozen=True, slots=True)
class WordPieceTrace:
    """WordPiece greedy longest-match: the candidates tried at this position, longest first."""

    tried: tuple[str, ...]
    matched: str | None  # None: no match, the whole word became unk


@dataclass(frozen=True, slots=True)
class UnigramTrace:
    """A Unigram piece on the Viterbi path: its log-probability score."""

    score: float


Trace = BpeTrace | WordPieceTrace | UnigramTrace


# ---------------------------------------------------------------------- stages
@dataclass(frozen=True, slots=True)
class Segment:
    """One part of the input after added-token extraction.

    Either an added token matched in the text (``added_id`` set) or a normalized span of
    ordinary text. ``start``/``end`` are original code points.
    """

    start: int
    end: int
    normalized: NormalizedText
    added_id: int | None = None
    special: bool = False


@dataclass(frozen=True, slots=True)
class PreToken:
    """One pre-token chunk: its text after pre-tokenization (e.g. ``"Ġhello"``) and its span."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Stages:
    """Every intermediate value of one encode run, in pipeline order."""

    original: str
    segments: tuple[Segment, ...]
    pre_tokens: tuple[PreToken, ...]

    @property
    def normalized(self) -> NormalizedText:
        """The whole text after normalization (added tokens kept verbatim), aligned to the original."""
        if not self.segments:
            return NormalizedText.identity(self.original)
        return NormalizedText.concat([s.normalized for s in self.segments])


# ---------------------------------------------------------------------- tokens
@dataclass(frozen=True, slots=True)
class Token:
    """One token of an encoding, with every coordinate the views need."""

    index: int
    id: int
    value: str  # the vocab string as the model stores it (Ġ, ▁, ##, <0xE9>)
    start: int  # char offsets into the original text (HF offsets convention)
    end: int
    byte_start: int  # exact UTF-8 byte span in the original text
    byte_end: int
    special: bool = False
    type_id: int = 0
    word: int | None = None
    trace: Trace | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Encoding:
    """The result of `Tokenizer.encode`: parallel lists, one entry per token.

    The lists are owned by the encoding; treat them as read-only. An encoding of a short text
    made by `Tokenizer.encode` builds its column lists on first access and derives its
    ``stages`` on first access (from the tokenizer: normalization and pre-tokenization are
    deterministic); the values are the same as if they had been kept (see the notes below).
    """

    text: str
    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]
    byte_offsets: list[tuple[int, int]]
    special_tokens_mask: list[int]
    type_ids: list[int]
    word_ids: list[int | None]
    stages: Stages | None = None
    traces: list[Trace | None] | None = field(default=None)
    # the `OffsetMap` of ``text`` the encode built (None: built on first use)
    _offset_map: OffsetMap | None = field(default=None, repr=False)
    # the tokenizer that produced this encoding (for its exact spans and derived stages)
    _source: Any = field(default=None, repr=False)
    _exact: ExactAlignment | None = field(default=None, init=False, repr=False)
    # what a compact encoding has not built yet: the columns as tuples (None once built) and
    # the ``allowed_special`` of the run (slots `_PENDING_SLOTS`)
    _pending: tuple | None = field(default=None, init=False, repr=False)

    def __getattr__(self, name: str) -> Any:
        # Called only for an unset slot: a column or the stages of a compact encoding.
        k = _PENDING_INDEX.get(name)
        pending = self._pending if k is not None else None
        if pending is None:
            raise AttributeError(f"'Encoding' object has no attribute {name!r}")
        if k == _ALLOWED:  # the stages
            value = self._source.stages(self.text, allowed_special=pending[_ALLOWED])
        else:
            value = list(pending[k])
            _enc_pending(self, pending[:k] + (None,) + pending[k + 1 :])
        _PENDING_SETTERS[k](self, value)
        return value

    def __getstate__(self) -> tuple:
        # A pickled encoding is its values (columns as lists, the stages built), without the
        # tokenizer that made it: it must not drag a whole tokenizer along, and a native model
        # does not pickle. Its exact spans travel only if they were computed.
        return (self.text, *(getattr(self, n) for n in COLUMNS), self.stages, self.traces, self._exact)

    def __setstate__(self, state: tuple) -> None:
        text, *columns, stages, traces, exact = state
        _enc_text(self, text)
        for setter, value in zip(_PENDING_SETTERS, columns):
            setter(self, value)
        _enc_stages(self, stages)
        _enc_traces(self, traces)
        _enc_map(self, None)
        _enc_source(self, None)
        _enc_exact(self, exact)
        _enc_pending(self, None)

    def __len__(self) -> int:
        return len(column(self, "ids"))

    def token(self, i: int) -> Token:
        s, e = self.offsets[i]
        bs, be = self.byte_offsets[i]
        return Token(
            index=i,
            id=self.ids[i],
            value=self.tokens[i],
            start=s,
            end=e,
            byte_start=bs,
            byte_end=be,
            special=bool(self.special_tokens_mask[i]),
            type_id=self.type_ids[i],
            word=self.word_ids[i],
            trace=self.traces[i] if self.traces is not None else None,
        )

    def __iter__(self) -> Iterator[Token]:
        return (self.token(i) for i in range(len(self)))

    @property
    def offset_map(self) -> OffsetMap:
        """Unit conversion for this encoding's text (built once, on first use)."""
        m = self._offset_map
        if m is None:
            m = OffsetMap(self.text)
            _enc_map(self, m)
        return m

    @property
    def exact_alignment(self) -> ExactAlignment:
        """Exact spans and the per-character facts behind them (`tokviz.engine.exact`), computed
        on first use. ``offsets`` stay HF's; these say which original code points each token
        really came from (composition -> union, prepended marker -> zero-width, deleted -> none).
        """
        got = self._exact
        if got is None:
            from .exact import exact_alignment

            if self._source is None:
                raise ValueError("exact spans need the tokenizer: this encoding was not made by Tokenizer.encode")
            got = exact_alignment(self._source, self)
            _enc_exact(self, got)
        return got

    @property
    def exact_offsets(self) -> list[tuple[int, int]]:
        """Exact char spans, one per token, beside the HF-compatible ``offsets``."""
        return self.exact_alignment.offsets

    def utf16_offsets(self) -> list[tuple[int, int]]:
        """Token spans in UTF-16 units (Qt text positions)."""
        m = self.offset_map
        return [m.span_to_utf16(s, e) for s, e in self.offsets]

    def token_at(self, char: int) -> int | None:
        """Index of the first token whose char span contains ``char``, or None."""
        for i, (s, e) in enumerate(self.offsets):
            if s <= char < e:
                return i
        return None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (what ``tokviz encode --json`` prints, plus byte offsets)."""
        return {
            "ids": list(self.ids),
            "tokens": list(self.tokens),
            "offsets": [list(o) for o in self.offsets],
            "byte_offsets": [list(o) for o in self.byte_offsets],
            "special_tokens_mask": list(self.special_tokens_mask),
        }


# Performance notes. A kept `Encoding` costs the cycle collector one visit per tracked object
# it holds, at every full collection, for as long as it lives; a program keeping one encoding
# per line of a file kept ~20 each (seven column lists, boxes, the stages' objects). A compact
# encoding (`make_encoding(compact=True)`, what `Tokenizer.encode` makes of a short text) holds
# its columns as tuples of atoms, which the collector stops tracking, and makes each list on
# first access (the public slot stays unset until then, so `__getattr__` runs once per column
# and later reads are plain slot reads); its stages are derived on first access by
# `Tokenizer.stages`. Tried and dropped: properties over private slots (every read of a column
# then runs Python code, and the views read columns per token); keeping columns as tuples
# (they must compare equal to lists, as HF's do).

#: The per-token columns of an `Encoding`, in field order.
COLUMNS = ("ids", "tokens", "offsets", "byte_offsets", "special_tokens_mask", "type_ids", "word_ids")
# The slots of `Encoding._pending`: one per column, then the run's ``allowed_special`` (whose
# public counterpart is the stages)
_PENDING_SLOTS = COLUMNS + ("stages",)
_ALLOWED = len(COLUMNS)
_COLUMN_SET = frozenset(COLUMNS)
_PENDING_INDEX = {name: k for k, name in enumerate(_PENDING_SLOTS)}

_new_object = object.__new__


def _setters(cls: type, names: Sequence[str]) -> tuple:
    return tuple(getattr(cls, name).__set__ for name in names)


_PENDING_SETTERS = _setters(Encoding, _PENDING_SLOTS)
(_enc_text, _enc_ids, _enc_tokens, _enc_offsets, _enc_bytes, _enc_mask, _enc_types, _enc_words, _enc_stages,
 _enc_traces, _enc_map, _enc_source, _enc_exact, _enc_pending) = _setters(Encoding, (
    "text", "ids", "tokens", "offsets", "byte_offsets", "special_tokens_mask", "type_ids", "word_ids", "stages",
    "traces", "_offset_map", "_source", "_exact", "_pending"))
_st_original, _st_segments, _st_pre_tokens = _setters(Stages, ("original", "segments", "pre_tokens"))
_seg_start, _seg_end, _seg_normalized, _seg_added_id, _seg_special = _setters(
    Segment, ("start", "end", "normalized", "added_id", "special"))
# "derive the stages on first access" (a `make_encoding` ``stages`` argument)
DERIVE_STAGES: Any = object()


def make_encoding(
    text: str,
    ids: Sequence[int],
    tokens: Sequence[str],
    offsets: Sequence[tuple[int, int]],
    byte_offsets: Sequence[tuple[int, int]],
    special_tokens_mask: Sequence[int],
    type_ids: Sequence[int],
    word_ids: Sequence[int | None],
    stages: Stages | None = None,
    traces: list[Trace | None] | None = None,
    offset_map: OffsetMap | None = None,
    *,
    source: object = None,
    allowed_special: object = None,
    compact: bool = False,
) -> Encoding:
    """Build an `Encoding` without the frozen-dataclass ``__init__`` (several times cheaper; the
    per-call cost of encoding one short line). Same value as ``Encoding(...)``; no validation.

    ``offset_map``: the `OffsetMap` of ``text`` the encode already built. ``source``: the
    tokenizer that made it. ``stages=DERIVE_STAGES``: ``source.stages(text,
    allowed_special=allowed_special)`` on first access. ``compact``: the columns are kept as
    tuples until read (see the performance notes); ``traces`` must then be None."""
    e = _new_object(Encoding)
    _enc_text(e, text)
    if compact:
        _enc_pending(e, _pending_of(ids, tokens, offsets, byte_offsets, special_tokens_mask, type_ids, word_ids,
                                    allowed_special))
    else:
        _enc_ids(e, ids)
        _enc_tokens(e, tokens)
        _enc_offsets(e, offsets)
        _enc_bytes(e, byte_offsets)
        _enc_mask(e, special_tokens_mask)
        _enc_types(e, type_ids)
        _enc_words(e, word_ids)
        _enc_pending(e, None if stages is not DERIVE_STAGES else (None,) * _ALLOWED + (allowed_special,))
    if stages is not DERIVE_STAGES:
        _enc_stages(e, stages)
    _enc_traces(e, traces)
    _enc_map(e, offset_map)
    _enc_source(e, source)
    _enc_exact(e, None)
    return e


def _pending_of(
    ids: Sequence[int], tokens: Sequence[str], offsets: Sequence[tuple[int, int]],
    byte_offsets: Sequence[tuple[int, int]], mask: Sequence[int], type_ids: Sequence[int],
    word_ids: Sequence[int | None], allowed_special: object,
) -> tuple:
    """The `Encoding._pending` of a compact encoding (equal columns share one tuple: fewer new
    tracked objects per encoding)."""
    offsets_t, mask_t, types_t, words_t = tuple(offsets), tuple(mask), tuple(type_ids), tuple(word_ids)
    # (``tuple`` of a tuple is the tuple itself: a column given as a tuple costs no copy)
    types_t = mask_t if types_t == mask_t else types_t
    return (tuple(ids), tuple(tokens), offsets_t, offsets_t if byte_offsets == offsets else tuple(byte_offsets),
            mask_t, types_t, types_t if words_t == types_t else words_t, allowed_special)


def column(encoding: Encoding, name: str) -> Sequence:
    """The column ``name`` of ``encoding`` as it is stored (a list, or the tuple of a compact
    encoding), without building the list: for code that reads it once to make a new column."""
    pending = encoding._pending
    if pending is not None and pending[_PENDING_INDEX[name]] is not None:
        return pending[_PENDING_INDEX[name]]
    return getattr(encoding, name)


def is_compact(encoding: Encoding) -> bool:
    """True when some column of ``encoding`` is still stored as a tuple (`make_encoding`)."""
    pending = encoding._pending
    return pending is not None and any(c is not None for c in pending[:_ALLOWED])


def with_columns(encoding: Encoding, **columns: Sequence) -> Encoding:
    """A copy of ``encoding`` with some columns (and ``traces``) replaced: the post-processors'
    ``dataclasses.replace``, which keeps the stages still to be derived, the offset map and the
    source as they are, and a compact encoding compact."""
    traces = columns.pop("traces", encoding.traces)
    if not _COLUMN_SET.issuperset(columns):
        raise TypeError(f"not columns: {sorted(set(columns) - _COLUMN_SET)}")
    pending = encoding._pending
    compact = traces is None and is_compact(encoding)
    values = [columns[n] if n in columns else column(encoding, n) for n in COLUMNS]
    if not compact:
        values = [list(v) if type(v) is tuple else v for v in values]
    return make_encoding(
        encoding.text, *values,
        stages=DERIVE_STAGES if pending is not None and _stages_unset(encoding) else encoding.stages,
        traces=traces, offset_map=encoding._offset_map, source=encoding._source,
        allowed_special=pending[_ALLOWED] if pending is not None else None, compact=compact,
    )


def _stages_unset(encoding: Encoding) -> bool:
    try:
        _get_stages(encoding)
    except AttributeError:
        return True
    return False


_get_stages = Encoding.stages.__get__  # type: ignore[attr-defined]  (the slot itself: no derivation)


def bind_source(encoding: Encoding, tokenizer: object) -> Encoding:
    """Record which tokenizer made ``encoding`` (for its lazily computed exact spans)."""
    _enc_source(encoding, tokenizer)
    _enc_exact(encoding, None)
    return encoding


def make_stages(original: str, segments: tuple[Segment, ...], pre_tokens: Sequence[PreToken]) -> Stages:
    """`Stages` without the dataclass ``__init__`` (see `make_encoding`)."""
    st = _new_object(Stages)
    _st_original(st, original)
    _st_segments(st, segments)
    _st_pre_tokens(st, pre_tokens)
    return st


def make_segment(
    start: int, end: int, normalized: NormalizedText, added_id: int | None = None, special: bool = False
) -> Segment:
    """`Segment` without the dataclass ``__init__`` (see `make_encoding`)."""
    seg = _new_object(Segment)
    _seg_start(seg, start)
    _seg_end(seg, end)
    _seg_normalized(seg, normalized)
    _seg_added_id(seg, added_id)
    _seg_special(seg, special)
    return seg


def empty_encoding(text: str = "") -> Encoding:
    return Encoding(text, [], [], [], [], [], [], [])


def token_spans_tile(byte_offsets: Sequence[tuple[int, int]], n_bytes: int) -> bool:
    """True when the byte spans cover ``[0, n_bytes)`` exactly, in order, without overlap."""
    pos = 0
    for s, e in byte_offsets:
        if s != pos or e < s:
            return False
        pos = e
    return pos == n_bytes
