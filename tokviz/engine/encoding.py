"""Tokens, encodings and stage snapshots: what a pipeline run returns (data, never prints).

An `Encoding` is a frozen value over `TokenColumns` (int32 arrays, `tokviz.engine.columns`), so
that encoding a megabyte does not build a million objects. Its HF-style columns (``ids``,
``offsets``, ...) are Python lists built on first read and kept; `Encoding.token(i)` and
iteration give a `Token` view on demand. `Stages` keeps every intermediate value of the run
(added-token segments, normalized text, pre-token chunks) for the GUI when the encode kept them
(``keep_stages``, the default). Traces (BPE merges, WordPiece matches, Unigram scores) exist
only when ``encode(..., trace=True)`` asked for them.

All offsets are code points of the original text; ``byte_offsets`` are the exact UTF-8 byte
spans (a byte-level token that holds part of a character has a byte span inside that character
while its char span covers the whole character, as HF reports it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .columns import NO_WORD, TokenColumns
from .exact import ExactAlignment, ExactSource, exact_alignment
from .text import NormalizedText, OffsetMap

__all__ = [
    "COLUMNS", "BpeTrace", "Encoding", "MergeStep", "PreToken", "Segment", "SequenceRanges", "Stages", "Token", "Trace",
    "UnigramTrace", "WordPieceTrace", "empty_encoding", "token_spans_tile",
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


#: The per-token columns of an `Encoding` as HF names them, each read as a list.
COLUMNS = (
    "ids", "tokens", "offsets", "byte_offsets", "special_tokens_mask", "type_ids", "word_ids", "attention_mask",
    "sequence_ids",
)

#: ``Encoding.sequence_ranges``: ``(sequence id, start, stop)`` token ranges, in insertion order.
SequenceRanges = tuple[tuple[int, int, int], ...]


@dataclass(frozen=True, slots=True, eq=False)
class Encoding:
    """The result of `Tokenizer.encode`: the run's `TokenColumns`, its stages and traces.

    ``ids``, ``tokens``, ``offsets``, ``byte_offsets``, ``special_tokens_mask``, ``type_ids``
    and ``word_ids`` read as lists equal to HF's (built on first read and kept: treat them as
    read-only). ``stages``: None when the encode did not keep them (``keep_stages=False``).
    ``source``: the `tokviz.engine.pipeline.Pipeline` that made it, for `exact_offsets` (an
    encoding built by hand or unpickled has none).

    Model inputs (`tokviz.engine.model_inputs`): ``overflowing`` are the windows that truncation
    cut off (each an `Encoding`, HF's nesting kept), ``sequence_ranges`` HF's map from sequence
    id to token range (what ``sequence_ids`` and the ``sequence_index`` look-ups read). Offsets of
    a pair's second sequence are into that sequence's own text, as HF's; ``text`` is the first's.
    """

    text: str
    columns: TokenColumns
    stages: Stages | None = None
    traces: list[Trace | None] | None = None
    source: ExactSource | None = field(default=None, repr=False)
    # what was derived from the fields so far (lists, offset map, exact spans), by name
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    overflowing: tuple[Encoding, ...] = field(default=(), repr=False)
    sequence_ranges: SequenceRanges = field(default=(), repr=False)

    @classmethod
    def of_lists(
        cls,
        text: str,
        ids: Sequence[int],
        tokens: Sequence[str],
        offsets: Sequence[tuple[int, int]],
        byte_offsets: Sequence[tuple[int, int]],
        special_tokens_mask: Sequence[int] | None = None,
        type_ids: Sequence[int] | None = None,
        word_ids: Sequence[int | None] | None = None,
        *,
        stages: Stages | None = None,
        traces: list[Trace | None] | None = None,
        source: ExactSource | None = None,
    ) -> Encoding:
        """An encoding from HF-style lists.

        >>> Encoding.of_lists("ab", [1, 2], ["a", "b"], [(0, 1), (1, 2)], [(0, 1), (1, 2)]).offsets
        [(0, 1), (1, 2)]
        """
        columns = TokenColumns.of_lists(
            ids, tokens, offsets, byte_offsets, special_tokens_mask=special_tokens_mask, type_ids=type_ids,
            word_ids=word_ids,
        )
        return cls(text, columns, stages, traces, source)

    def __repr__(self) -> str:
        tokens = list(self.columns.tokens[:8])
        more = f" +{len(self) - 8}" if len(self) > 8 else ""
        return f"Encoding({len(self)} tokens {tokens!r}{more}, text={self.text[:40]!r})"

    def __reduce__(self) -> tuple:
        # A pickled encoding is its values, without the pipeline that made it (it must not drag
        # a whole tokenizer along, and a native model does not pickle). Its exact spans travel
        # only if they were computed.
        return (_unpickle, (
            self.text, self.columns, self.stages, self.traces, self._memo.get("exact"), self.overflowing,
            self.sequence_ranges,
        ))

    def _view(self, name: str, make: Callable[[TokenColumns], Any]) -> Any:
        got = self._memo.get(name)
        if got is None:
            got = self._memo[name] = make(self.columns)
        return got

    @property
    def ids(self) -> list[int]:
        return self._view("ids", TokenColumns.ids_list)

    @property
    def tokens(self) -> list[str]:
        return self._view("tokens", TokenColumns.tokens_list)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Char spans into ``text`` (HF's ``offsets``)."""
        return self._view("offsets", TokenColumns.offsets_list)

    @property
    def byte_offsets(self) -> list[tuple[int, int]]:
        """Exact UTF-8 byte spans into ``text``."""
        return self._view("byte_offsets", TokenColumns.byte_offsets_list)

    @property
    def special_tokens_mask(self) -> list[int]:
        return self._view("special_tokens_mask", TokenColumns.special_list)

    @property
    def type_ids(self) -> list[int]:
        return self._view("type_ids", TokenColumns.type_ids_list)

    @property
    def word_ids(self) -> list[int | None]:
        return self._view("word_ids", TokenColumns.word_ids_list)

    @property
    def attention_mask(self) -> list[int]:
        """1 for a real token, 0 for padding (HF's ``attention_mask``)."""
        return self._view("attention_mask", TokenColumns.attention_list)

    # ------------------------------------------------------------------ sequences (HF's semantics)
    @property
    def n_sequences(self) -> int:
        return len(self.sequence_ranges) or 1

    def _sequence_range(self, sequence_index: int) -> tuple[int, int]:
        for seq, start, stop in self.sequence_ranges:
            if seq == sequence_index:
                return start, stop
        return 0, len(self)

    @property
    def sequence_ids(self) -> list[int | None]:
        """The sequence each token belongs to (None: a token the post-processor added).

        As HF: without ranges every token is sequence 0, and only the ids ``0..n_sequences-1``
        are filled in.
        """
        got = self._memo.get("sequence_ids")
        if got is None:
            got = [None] * len(self)
            for seq in range(self.n_sequences):
                start, stop = self._sequence_range(seq)
                got[start:stop] = [seq] * (stop - start)
            self._memo["sequence_ids"] = got
        return got

    def token_to_sequence(self, token_index: int) -> int | None:
        if token_index < 0 or token_index > len(self):
            return None
        if not self.sequence_ranges:
            return 0
        return next((seq for seq, start, stop in self.sequence_ranges if start <= token_index < stop), None)

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The char span of token ``token_index`` in its own sequence's text."""
        if self.token_to_sequence(token_index) is None or token_index >= len(self):
            return None
        return self.columns.starts[token_index], self.columns.ends[token_index]

    def token_to_word(self, token_index: int) -> int | None:
        if self.token_to_sequence(token_index) is None or token_index >= len(self):
            return None
        word = self.columns.word_ids[token_index]
        return None if word == NO_WORD else word

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The token range ``(start, stop)`` of word ``word_index`` of sequence ``sequence_index``."""
        lo, hi = self._sequence_range(sequence_index)
        words = self.columns.word_ids
        found = None
        for i in range(lo, min(hi, len(self))):
            w = words[i]
            if w > word_index:  # HF reads words in order and stops past the word (no word: -1)
                break
            if w == word_index:
                found = (i, i + 1) if found is None else (found[0], i + 1)
        return found

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        span = self.word_to_tokens(word_index, sequence_index)
        if span is None or span[1] == 0:
            return None
        return self.columns.starts[span[0]], self.columns.ends[span[1] - 1]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The first token of sequence ``sequence_index`` whose char span holds ``char_pos``."""
        lo, hi = self._sequence_range(sequence_index)
        starts, ends = self.columns.starts, self.columns.ends
        for i in range(lo, min(hi, len(self))):
            if starts[i] <= char_pos < ends[i]:
                return i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    def __len__(self) -> int:
        return len(self.columns.ids)

    def token(self, i: int) -> Token:
        """Token ``i`` with all its coordinates (read from the columns; no list is built)."""
        c = self.columns
        word = c.word_ids[i]
        return Token(
            index=i,
            id=c.ids[i],
            value=c.tokens[i],
            start=c.starts[i],
            end=c.ends[i],
            byte_start=c.byte_starts[i],
            byte_end=c.byte_ends[i],
            special=bool(c.special[i]) if c.special is not None else False,
            type_id=c.type_ids[i] if c.type_ids is not None else 0,
            word=None if word == NO_WORD else word,
            trace=self.traces[i] if self.traces is not None else None,
        )

    def __iter__(self) -> Iterator[Token]:
        return (self.token(i) for i in range(len(self)))

    @property
    def offset_map(self) -> OffsetMap:
        """Unit conversion for this encoding's text (built once, on first use)."""
        m = self._memo.get("offset_map")
        if m is None:
            m = self._memo["offset_map"] = OffsetMap(self.text)
        return m

    @property
    def exact_alignment(self) -> ExactAlignment:
        """Exact spans and the per-character facts behind them (`tokviz.engine.exact`), computed
        on first use. ``offsets`` stay HF's; these say which original code points each token
        really came from (composition -> union, prepended marker -> zero-width, deleted -> none).
        """
        got = self._memo.get("exact")
        if got is None:
            if self.source is None:
                raise ValueError("exact spans need the tokenizer: this encoding was not made by Tokenizer.encode")
            got = self._memo["exact"] = exact_alignment(self.source, self)
        return got

    @property
    def exact_offsets(self) -> list[tuple[int, int]]:
        """Exact char spans, one per token, beside the HF-compatible ``offsets``."""
        return self.exact_alignment.offsets

    def utf16_offsets(self) -> list[tuple[int, int]]:
        """Token spans in UTF-16 units (Qt text positions)."""
        m = self.offset_map
        return [m.span_to_utf16(s, e) for s, e in zip(self.columns.starts, self.columns.ends)]

    def token_at(self, char: int) -> int | None:
        """Index of the first token whose char span contains ``char``, or None."""
        for i, (s, e) in enumerate(zip(self.columns.starts, self.columns.ends)):
            if s <= char < e:
                return i
        return None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (what ``tokviz encode --json`` prints, plus byte offsets)."""
        c = self.columns
        return {
            "ids": c.ids_list(),
            "tokens": c.tokens_list(),
            "offsets": [list(o) for o in zip(c.starts, c.ends)],
            "byte_offsets": [list(o) for o in zip(c.byte_starts, c.byte_ends)],
            "special_tokens_mask": c.special_list(),
        }


def _unpickle(
    text: str, columns: TokenColumns, stages: Stages | None, traces: list[Trace | None] | None,
    exact: ExactAlignment | None, overflowing: tuple[Encoding, ...] = (), sequence_ranges: SequenceRanges = (),
) -> Encoding:
    enc = Encoding(text, columns, stages, traces, overflowing=overflowing, sequence_ranges=sequence_ranges)
    if exact is not None:
        enc._memo["exact"] = exact
    return enc


def empty_encoding(text: str = "") -> Encoding:
    return Encoding(text, TokenColumns.empty())


def token_spans_tile(byte_offsets: Sequence[tuple[int, int]], n_bytes: int) -> bool:
    """True when the byte spans cover ``[0, n_bytes)`` exactly, in order, without overlap."""
    pos = 0
    for s, e in byte_offsets:
        if s != pos or e < s:
            return False
        pos = e
    return pos == n_bytes
