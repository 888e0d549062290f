"""The pipeline: added tokens -> normalize -> pre-tokenize -> model -> post-process; and decode.

`Tokenizer` is the one engine behind the GUI, the CLI and the trainers. It is assembled from
components (see the family packages) by the loaders in `tokviz.io`, and keeps every stage of a
run in `Encoding.stages`.

Contract (other work depends on these names):
    Tokenizer(model, *, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
              added_tokens=(), special_policy="hf", name="", source=None, config=None)
    Tokenizer.encode(text, *, add_special_tokens=True, allowed_special=None, trace=False) -> Encoding
    Tokenizer.decode(ids, *, skip_special_tokens=False) -> str
    Tokenizer.vocab_size, token_to_id, id_to_token, get_vocab, info()

``special_policy="hf"`` extracts every added token from the text (HF tokenizers);
``"tiktoken"`` treats special-token literals as ordinary text unless ``allowed_special`` admits
them (``"all"`` or a set of literals), as tiktoken's ``encode(text, disallowed_special=())``.

How a run goes (HF ``encode_single_sequence`` semantics, checked against HF on every bundle):

1. `AddedVocabulary.extract`: non-normalized added tokens are cut out of the raw text, each
   remaining piece is normalized, then normalized added tokens are cut out of it.
2. Every ordinary piece is pre-tokenized into chunks; 3. the model tokenizes each chunk;
4. a token's offsets are its chunk's ``original_span`` of the token's range, its word id the
   index of its chunk among all pieces (added tokens count as one); 5. the post-processor.

Speed: byte-level pipelines (ByteLevel alone or after one Split) take a fast path in which a
chunk is a plain slice of the text, so its whole result (ids, tokens, relative offsets and
byte offsets) is cached under its text. Pre-tokenizers that only cut (BERT's, Whitespace,
WhitespaceSplit: `PreTokenizer.chunk_spans`) take the span path: the model output is cached per
chunk text and the offsets of all chunks of a piece come from its alignment in bulk. Other
pipelines cache the model output per chunk and reuse relative offsets when the chunk is an
exact copy of its original text. All paths run their columns as C-level passes over all chunks.
``trace=True`` runs the reference path instead (`tokviz.engine.reference`: the plain loop, no
caches), which is also the oracle every path is tested against (`tests/engine/test_paths.py`).
The model kernels come from the optional native core when it is built (`tokviz.engine.backend`).

Byte offsets are exact: a token holding part of a character (byte-level proxies, byte-fallback
``<0xNN>`` pieces) gets exactly its bytes; tokens of text that normalization changed get the
bytes of their character span.

Differences from HF, on purpose: ``special_tokens_mask`` also flags special added tokens found in
the text (HF flags only the post-processor's tokens) so that views can mark them; ``decode``
keeps special tokens unless ``skip_special_tokens=True`` (HF's Python default is True).
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat
from operator import add, eq, is_, itemgetter
from typing import Any, Literal

from .added_tokens import AddedToken, AddedVocabulary
from .decoders import Decoder
from .encoding import Encoding, PreToken, Segment, Stages, bind_source, make_encoding, make_segment, make_stages
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .pre_tokenizers.split import split_piece
from .processors import PostProcessor
from . import reference
from .reference import holds_original
from .byte_alphabet import bytes_to_proxy, proxy_to_bytes, text_to_proxy
from .text import NormalizedText, check_text, make_text

__all__ = ["Tokenizer", "TokenizerConfig"]

# Upper bound of the per-tokenizer chunk cache (entries); it is cleared when full.
_CACHE_LIMIT = 200_000
# Chunks handled per round of C-level column passes: a pass holds the GIL from start to end, so
# on a long text the passes go by blocks and a GUI thread beside the encode stays responsive.
_BLOCK = 8192
# Texts at least this long are encoded with the cycle collector paused (see `Tokenizer.encode`).
_GC_PAUSE_CHARS = 100_000
# bytes.translate table: 1 for a UTF-8 lead byte (or ASCII), 0 for a continuation byte
_LEAD_BYTES = bytes(0 if 0x80 <= b <= 0xBF else 1 for b in range(256))


@dataclass(frozen=True, slots=True)
class TokenizerConfig:
    """What tokenizer_config.json (or a .model's trainer spec) adds around the pipeline."""

    bos_token: str | None = None
    eos_token: str | None = None
    pad_token: str | None = None
    unk_token: str | None = None
    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    chat_template: str | None = None
    embedding_rows: int | None = None  # known model embedding rows, when a config says so
    extra: Mapping[str, Any] = field(default_factory=dict)


class _FastChunks:
    """Chunks of one byte-level segment as (text, start) columns; the PreTokens (with proxy text)
    are built only when the stage is looked at. ``starts`` are original positions, or positions
    in ``piece`` (normalized text) when ``piece`` is given."""

    __slots__ = ("subs", "starts", "piece")

    def __init__(self, subs: list[str], starts: list[int], piece: NormalizedText | None = None) -> None:
        self.subs = subs
        self.starts = starts
        self.piece = piece

    def pre_tokens(self) -> list[PreToken]:
        if self.piece is None:
            return [PreToken(text_to_proxy(t), s, s + len(t)) for t, s in zip(self.subs, self.starts) if t]
        span = self.piece.original_span
        return [PreToken(text_to_proxy(t), *span(s, s + len(t))) for t, s in zip(self.subs, self.starts) if t]


class _SlicedChunks:
    """Chunks of one piece cut by a span pre-tokenizer (see `PreTokenizer.chunk_spans`): the
    chunk objects are made only when the stage is looked at, by the pre-tokenizer itself."""

    __slots__ = ("pre_tokenizer", "piece")

    def __init__(self, pre_tokenizer: PreTokenizer, piece: NormalizedText) -> None:
        self.pre_tokenizer = pre_tokenizer
        self.piece = piece

    def pre_tokens(self) -> list[PreToken]:
        return [PreToken(c.text, c.orig_start, c.orig_end) for c in self.pre_tokenizer.pre_tokenize([self.piece])]


class _PreTokens(Sequence[PreToken]):
    """The pre-token stage, built on first access from what the run kept (no cost otherwise)."""

    __slots__ = ("_parts", "_items")

    def __init__(self, parts: list[list[NormalizedText] | _FastChunks | _SlicedChunks]) -> None:
        self._parts = parts
        self._items: tuple[PreToken, ...] | None = None

    def _all(self) -> tuple[PreToken, ...]:
        if self._items is None:
            items: list[PreToken] = []
            for part in self._parts:
                if isinstance(part, (_FastChunks, _SlicedChunks)):
                    items.extend(part.pre_tokens())
                else:
                    items.extend(PreToken(c.text, c.orig_start, c.orig_end) for c in part)
            self._items = tuple(items)
        return self._items

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, i):  # noqa: ANN001, ANN204 - int or slice, like a tuple
        return self._all()[i]

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


def _fast_splitter(pre_tokenizer: object) -> Callable[[str], list[str] | list[tuple[int, int]]] | None:
    """Chunks of an unnormalized piece (as strings that tile it, or as spans), for the pre-tokenizers whose chunks are plain slices
    of the text mapped to byte proxies: ``ByteLevel`` (no prefix space) alone or after one
    ``Split``. None for every other pre-tokenizer (they take the general path).

    The spans are computed with the same pattern functions the components use
    (`find_matches`, `split_spans`), so both paths cut the text identically; the parity suite and
    `tests/engine/test_tokenizer.py` check that the fast and general paths agree.
    """
    from .patterns import PatternTimeoutError, compile_pattern, find_matches, search_timeout, split_spans
    from .pre_tokenizers.byte_level import GPT2_PATTERN
    from .pre_tokenizers.byte_level import ByteLevel as ByteLevelPre
    from .pre_tokenizers.sequence import Sequence as SequencePre
    from .pre_tokenizers.split import Split

    if type(pre_tokenizer) is SequencePre:
        items = list(pre_tokenizer.pretokenizers)  # type: ignore[attr-defined]
    else:
        items = [pre_tokenizer]
    if not items or type(items[-1]) is not ByteLevelPre or items[-1].add_prefix_space:
        return None
    byte_level = items[-1]
    splitters: list[tuple[Any, str, bool]] = []
    for item in items[:-1]:
        if type(item) is not Split:
            return None
        splitters.append((compile_pattern(item.pattern, literal=not item.is_regex), item.behavior, item.invert))
    if byte_level.use_regex:
        splitters.append((compile_pattern(GPT2_PATTERN), "Isolated", False))
    if len(splitters) > 1:
        return None
    if not splitters:
        return lambda text: [text]
    compiled, behavior, invert = splitters[0]
    # Isolated keeps every match and every gap; Removed+invert (tiktoken) keeps the matches.
    simple = compiled.groups == 0 and ((behavior == "Isolated" and not invert) or (behavior == "Removed" and invert))

    def pieces(text: str) -> list[str] | list[tuple[int, int]]:
        if simple:
            # One C call gives the chunk strings; when they cover the text without gaps they
            # are exactly the Isolated / Removed+invert pieces and positions are running sums.
            try:
                found = compiled.findall(text, timeout=search_timeout(len(text)))
            except TimeoutError:
                raise PatternTimeoutError(compiled.pattern, len(text)) from None
            if sum(map(len, found)) == len(text):
                return found
        matches = find_matches(compiled, text)
        if invert:
            matches = [(s, e, not m) for s, e, m in matches]
        return split_spans(matches, behavior)

    return pieces


def _describe(component: object) -> str | None:
    """``"Sequence[Split, ByteLevel]"``-style summary of a component tree."""
    if component is None:
        return None
    name = getattr(component, "type_name", type(component).__name__)
    children: list[object] = []
    for attr in ("normalizers", "pre_tokenizers", "pretokenizers", "processors", "decoders"):
        value = getattr(component, attr, None)
        if isinstance(value, (list, tuple)):
            children = list(value)
            break
    if children:
        return f"{name}[{', '.join(_describe(c) or '' for c in children)}]"
    return name


def _contains_type(component: object, type_name: str) -> bool:
    if component is None:
        return False
    if getattr(component, "type_name", None) == type_name:
        return True
    for attr in ("pre_tokenizers", "pretokenizers", "normalizers"):
        value = getattr(component, attr, None)
        if isinstance(value, (list, tuple)):
            return any(_contains_type(c, type_name) for c in value)
    return False


def _byte_fallback_len(token: str) -> int:
    """1 for a byte-fallback piece ``<0xNN>``, else 0."""
    if len(token) == 6 and token[:3] == "<0x" and token[5] == ">":
        try:
            int(token[3:5], 16)
        except ValueError:
            return 0
        return 1
    return 0


class _BytePos:
    """Code point -> UTF-8 byte position in one text, cheap for increasing positions."""

    __slots__ = ("text", "ascii", "c", "b", "_table")

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self.c = 0
        self.b = 0
        self._table: list[int] | None = None

    def at(self, pos: int) -> int:
        if self.ascii:
            return pos
        c = self.c
        if pos == c:
            return self.b
        if pos > c:
            b = self.b + len(self.text[c:pos].encode("utf-8"))
        else:  # backwards (a byte-fallback run re-reads its character): cost is the distance
            b = self.b - len(self.text[pos:c].encode("utf-8"))
        self.c, self.b = pos, b
        return b

    def table(self) -> list[int]:
        """The byte position of every code point position ``0..len(text)`` (built once, in C-level
        steps: the positions of the UTF-8 lead bytes, then the total length)."""
        table = self._table
        if table is None:
            data = self.text.encode("utf-8")
            table = list(compress(range(len(data)), data.translate(_LEAD_BYTES)))
            table.append(len(data))
            self._table = table
        return table


def _byte_spans(char_spans: Sequence[tuple[int, int]], toks: Sequence[str], bpos: _BytePos) -> list[tuple[int, int]]:
    """UTF-8 spans of tokens given their char spans; byte-fallback pieces ``<0xNN>`` of one
    character get one byte each, in order, instead of the whole character."""
    out: list[tuple[int, int]] = []
    cursor = -1
    for (cs, ce), tok in zip(char_spans, toks):
        bs, be = bpos.at(cs), bpos.at(ce)
        if _byte_fallback_len(tok):
            if cs == ce and cs < len(bpos.text):
                # SentencePiece gives the leading byte pieces of a character an empty char
                # span at its start: their bytes are still that character's
                be = bs + len(bpos.text[cs].encode("utf-8"))  # (no backward move of bpos)
            start = cursor if bs <= cursor < be else bs
            end = min(start + 1, be) if be > start else start
            out.append((start, end))
            cursor = end
        else:
            out.append((bs, be))
            cursor = be
    return out


def _plain_span_types() -> tuple[type, ...]:
    from .normalizers.precompiled import SentencePieceText

    return (NormalizedText, SentencePieceText)


# Text types whose ``original_span`` of a non-empty range is ``(starts[s], ends[e - 1])`` (or
# the identity shift): `Tokenizer._chunk_spans` maps their tokens in bulk.
_PLAIN_SPAN_TYPES = _plain_span_types()
_MINUS_ONE = (-1).__add__
_PLUS_ONE = (1).__add__


def _pick(values: Sequence[int], indices: Sequence[int]) -> Sequence[int]:
    """``[values[i] for i in indices]`` in one C call (a tuple; ``itemgetter`` of one index
    would give the bare value, of none an error)."""
    if len(indices) > 1:
        return itemgetter(*indices)(values)
    return [values[i] for i in indices]


def _aligned(nt: NormalizedText, first: Sequence[int], last: Sequence[int]) -> tuple[Sequence[int], Sequence[int]]:
    """For every k, the original start of char ``first[k]`` of ``nt`` and the original end of its
    char ``last[k]``: the original span of a non-empty normalized range ``[first, last + 1)``
    (`NormalizedText.original_span` for all tokens at once; empty ranges have their own rule)."""
    if nt.starts is None:
        o = nt.orig_start
        return list(map(o.__add__, first)), list(map((o + 1).__add__, last))
    return _pick(nt.starts, first), _pick(nt.ends, last)  # type: ignore[arg-type]


class _NoCache(dict):
    """A cache that keeps nothing (for models that sample, e.g. BPE dropout)."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def _cached_entries(cache: dict[str, tuple], subs: list[str], make: Callable[[int, str], tuple]) -> list[tuple]:
    """The cache entry of every chunk text in ``subs``; a missing one is ``make(k, subs[k])``,
    stored (the cache is emptied when full). One C-level lookup pass; Python code per miss only."""
    entries = list(map(cache.get, subs))
    if None in entries:
        for k in compress(range(len(subs)), map(is_, entries, repeat(None))):
            sub = subs[k]
            entry = cache.get(sub)  # an earlier chunk of this run may have been the same
            if entry is None:
                entry = make(k, sub)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[sub] = entry
            entries[k] = entry
    return entries


def _extend_ids_tokens(out: _Columns, entries: list[tuple]) -> list[int]:
    """Append the ids and tokens of chunk entries ``(ids, tokens, ...)``; their token counts."""
    out.ids.extend(chain.from_iterable(map(itemgetter(0), entries)))
    out.tokens.extend(chain.from_iterable(map(itemgetter(1), entries)))
    return list(map(len, map(itemgetter(0), entries)))


class _Columns:
    """The growing columns of one encode run."""

    __slots__ = ("ids", "tokens", "offsets", "byte_offsets", "specials", "word_ids")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.tokens: list[str] = []
        self.offsets: list[tuple[int, int]] = []
        self.byte_offsets: list[tuple[int, int]] = []
        self.specials: list[int] = []  # positions of special added tokens (the special mask)
        self.word_ids: list[int | None] = []


class Tokenizer:
    """The whole pipeline of one tokenizer file.

    >>> from tokviz.engine.models.wordlevel import WordLevel  # doctest: +SKIP
    >>> tok = Tokenizer(WordLevel({"a": 0, "b": 1}, unk_token="a"))  # doctest: +SKIP
    >>> tok.encode("ab").ids  # doctest: +SKIP
    [0]
    """

    def __init__(
        self,
        model: Model,
        *,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
        added_tokens: Sequence[AddedToken] = (),
        special_policy: Literal["hf", "tiktoken"] = "hf",
        name: str = "",
        source: str | None = None,
        config: TokenizerConfig | None = None,
    ) -> None:
        if special_policy not in ("hf", "tiktoken"):
            raise ValueError(f"special_policy must be 'hf' or 'tiktoken', got {special_policy!r}")
        self.model = model
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.added_tokens = tuple(added_tokens)
        self.special_policy = special_policy
        self.name = name
        self.source = source
        self.config = config or TokenizerConfig()
        self._added = AddedVocabulary(
            self.added_tokens, normalize_str=normalizer.normalize_str if normalizer is not None else None
        )
        self._special_ids = frozenset(id_ for id_, t in self._added.by_id.items() if t.special)
        self._byte_level = _contains_type(pre_tokenizer, "ByteLevel")
        # chunk text -> (original text, ids, tokens, relative offsets, relative byte offsets, n bytes)
        self._chunk_cache: dict[str, tuple] = {}
        # the fast path for unnormalized byte-level text (None when the pre-tokenizer has another shape)
        self._fast = _fast_splitter(pre_tokenizer) if self._byte_level else None
        self._fast_cache: dict[str, tuple] = {}
        # pre-tokenizers that only cut (BERT's, Whitespace...): all chunks of a piece in bulk
        self._spans = None
        if self._fast is None and pre_tokenizer is not None and type(pre_tokenizer).chunk_spans is not PreTokenizer.chunk_spans:
            self._spans = pre_tokenizer.chunk_spans
        # chunk text -> (ids, tokens, model starts, model ends, irregular) for `_encode_spans`
        self._span_cache: dict[str, tuple] = {}
        self._id_table: list[str | None] | None = None
        self._byte_piece_memo: dict[str, bool] = {}  # 6-char token -> is it "<0xNN>" (`_byte_pieces`)
        # no added tokens and no pre-tokenizer: `_encode_whole`
        self._whole_text = self._added.is_empty and pre_tokenizer is None

    def __repr__(self) -> str:
        return f"Tokenizer(name={self.name!r}, model={_describe(self.model)}, pre_tokenizer={_describe(self.pre_tokenizer)})"

    # ------------------------------------------------------------------ encode
    def _skip_ids(self, allowed_special: str | set[str] | frozenset[str] | None) -> frozenset[int] | None:
        """Added-token ids to leave as ordinary text for this call."""
        if allowed_special == "all":
            return None
        if allowed_special is None:
            # tiktoken: encode(text, disallowed_special=()) -> special literals are plain text
            return self._special_ids if self.special_policy == "tiktoken" else None
        if isinstance(allowed_special, str):
            allowed_special = {allowed_special}
        allowed = frozenset(allowed_special)
        unknown = allowed - self._added.special_contents
        if unknown:
            raise ValueError(f"allowed_special names tokens that are not special tokens: {sorted(unknown)!r}")
        return frozenset(i for i in self._special_ids if self._added.by_id[i].content not in allowed)

    def encode(
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        allowed_special: str | set[str] | frozenset[str] | None = None,
        trace: bool = False,
    ) -> Encoding:
        """Run the pipeline on ``text``; every stage is kept in ``Encoding.stages``.

        ``allowed_special``: ``"all"`` or a set of special-token literals to honour in the text.
        With the ``"tiktoken"`` policy the default (None) honours none of them; with ``"hf"`` the
        default honours all of them (HF extracts every added token).
        """
        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        check_text(text)
        if trace:  # traces are data of the plain reference path (no caches there)
            return bind_source(
                reference.encode(self, text, add_special_tokens=add_special_tokens, allowed_special=allowed_special),
                self,
            )
        if len(text) < _GC_PAUSE_CHARS or not gc.isenabled():
            return bind_source(self._encode(text, add_special_tokens, allowed_special), self)
        # A long text allocates millions of small tuples and lists (no reference cycles);
        # pausing the cycle collector meanwhile saves its repeated full scans (~20% of the run).
        gc.disable()
        try:
            return bind_source(self._encode(text, add_special_tokens, allowed_special), self)
        finally:
            gc.enable()

    def _encode(
        self,
        text: str,
        add_special_tokens: bool,
        allowed_special: str | set[str] | frozenset[str] | None,
    ) -> Encoding:
        if self._whole_text and allowed_special is None:
            return self._encode_whole(text, add_special_tokens)
        skip = self._skip_ids(allowed_special)
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        if self._added.is_empty:
            extracted: list[tuple[NormalizedText, int | None]] = []
            if text:
                whole = NormalizedText.identity(text)
                normed = normalize(whole) if normalize is not None else whole
                if normed.text:
                    extracted.append((normed, None))
        else:
            extracted = self._added.extract(text, normalize, skip_ids=skip)

        out = _Columns()
        segments: list[Segment] = []
        stage_parts: list[list[NormalizedText] | _FastChunks | _SlicedChunks] = []
        bpos = _BytePos(text)
        added_by_id = self._added.by_id
        pre_tokenizer = self.pre_tokenizer
        fast = self._fast
        word = 0
        for piece, added_id in extracted:
            o_start, o_end = piece.orig_start, piece.orig_end
            if added_id is not None:
                tok = added_by_id[added_id]
                segments.append(Segment(o_start, o_end, piece, added_id, tok.special))
                s, e = piece.original_span(0, len(piece.text))
                if tok.special:
                    out.specials.append(len(out.ids))
                out.ids.append(added_id)
                out.tokens.append(piece.text)  # HF: the matched text (with any lstrip/rstrip spaces)
                out.offsets.append((s, e))
                out.byte_offsets.append((bpos.at(s), bpos.at(e)))
                out.word_ids.append(word)
                word += 1
                continue
            segments.append(Segment(o_start, o_end, piece))
            if fast is not None:
                ptext = piece.text
                # (an identity alignment is not enough: a 1:1 normalization may change a char's
                # UTF-8 length, e.g. the Kelvin sign lowercased, and the bytes are the chunk's)
                identity = ptext == text[o_start:o_end]
                base = o_start if identity else 0
                parts = fast(ptext)
                if parts and isinstance(parts[0], tuple):
                    subs = [ptext[s:e] for s, e in parts]  # type: ignore[misc]
                    starts = [base + s for s, _ in parts]  # type: ignore[misc]
                else:
                    subs = parts  # type: ignore[assignment]
                    starts = list(accumulate(map(len, subs[:-1]), initial=base))
                if identity:
                    stage_parts.append(_FastChunks(subs, starts))
                    word = self._encode_fast(subs, starts, text, bpos, word, out)  # type: ignore[arg-type]
                else:
                    stage_parts.append(_FastChunks(subs, starts, piece))
                    word = self._encode_fast_normalized(piece, subs, starts, text, bpos, word, out)  # type: ignore[arg-type]
                continue
            if self._spans is not None:
                spans = self._spans(piece.text)
                if spans is not None:
                    stage_parts.append(_SlicedChunks(pre_tokenizer, piece))
                    word = self._encode_spans(piece, spans, text, bpos, word, out)
                    continue
            chunks = pre_tokenizer.pre_tokenize([piece]) if pre_tokenizer is not None else [piece]
            stage_parts.append(chunks)
            word = self._encode_chunks(chunks, text, bpos, word, out)

        n = len(out.ids)
        mask = [0] * n
        for i in out.specials:
            mask[i] = 1
        enc = Encoding(
            text=text,
            ids=out.ids,
            tokens=out.tokens,
            offsets=out.offsets,
            byte_offsets=out.byte_offsets,
            special_tokens_mask=mask,
            type_ids=[0] * n,
            word_ids=out.word_ids,
            stages=Stages(text, tuple(segments), _PreTokens(stage_parts)),  # type: ignore[arg-type]
            traces=None,
        )
        if self.post_processor is not None:
            enc = self.post_processor.process(enc, add_special_tokens=add_special_tokens)
        return enc

    def _encode_whole(self, text: str, add_special_tokens: bool) -> Encoding:
        """`_encode` for pipelines without added tokens and pre-tokenizer (SentencePiece .model
        files): the normalized text is the one chunk. The same steps and values as the general
        loop, without its per-call bookkeeping (one line of text costs a few microseconds here)."""
        out = _Columns()
        segments: tuple[Segment, ...] = ()
        stage_parts: list = []
        if text:
            whole = make_text(text, text, 0, len(text))
            piece = self.normalizer.normalize(whole) if self.normalizer is not None else whole
            if piece.text:
                segments = (make_segment(piece.orig_start, piece.orig_end, piece),)
                chunks = [piece]
                stage_parts.append(chunks)
                self._encode_chunks(chunks, text, _BytePos(text), 0, out)
        n = len(out.ids)
        zeros = [0] * n
        enc = make_encoding(
            text, out.ids, out.tokens, out.offsets, out.byte_offsets, zeros, list(zeros), out.word_ids,
            make_stages(text, segments, _PreTokens(stage_parts)), None,
        )
        if self.post_processor is not None:
            enc = self.post_processor.process(enc, add_special_tokens=add_special_tokens)
        return enc

    def _encode_fast(
        self,
        subs: list[str],
        starts: list[int],
        text: str,
        bpos: _BytePos,
        word: int,
        out: _Columns,
    ) -> int:
        """The hot loop for unnormalized byte-level segments (see `_fast_splitter`).

        A chunk is a plain slice of the text (``subs[i]`` at original position ``starts[i]``), so
        everything about it (ids, tokens, offsets and byte offsets relative to its start, its
        UTF-8 length) depends on its text only and is cached under it; a cached chunk costs a
        dict lookup and its share of a few C-level passes.
        """
        if len(subs) > _BLOCK:
            for i in range(0, len(subs), _BLOCK):
                word = self._encode_fast(subs[i : i + _BLOCK], starts[i : i + _BLOCK], text, bpos, word, out)
            return word
        cache = self._fast_cache if self._deterministic() else _NoCache()
        if "" in subs:
            subs, starts = [s for s in subs if s], [c for s, c in zip(subs, starts) if s]
        if not subs:
            return word
        entries = _cached_entries(cache, subs, lambda k, sub: self._fast_entry(text, sub, starts[k], starts[k] + len(sub)))
        # The columns are built in C-level passes over all chunks (no per-chunk Python code):
        # each token's chunk-relative spans plus its chunk's start, repeated per token.
        counts = _extend_ids_tokens(out, entries)
        shift = list(chain.from_iterable(map(repeat, starts, counts)))
        rel = list(chain.from_iterable(map(itemgetter(2), entries)))
        offsets = list(zip(map(add, map(itemgetter(0), rel), shift), map(add, map(itemgetter(1), rel), shift)))
        out.offsets.extend(offsets)
        if bpos.ascii:  # one byte per character: the byte spans are the char spans
            out.byte_offsets.extend(offsets)
        else:
            nbytes = list(map(itemgetter(4), entries))
            first = bpos.at(starts[0])
            if list(map(add, starts, map(len, subs)))[:-1] == starts[1:]:  # chunks tile the piece
                bstarts = list(accumulate(nbytes[:-1], initial=first))
            else:  # gaps between chunks (e.g. a Removed split): count their bytes too
                bstarts = []
                c, b = starts[0], first
                for sub, cs, nb in zip(subs, starts, nbytes):
                    if cs > c:
                        b += len(text[c:cs].encode("utf-8"))
                    elif cs < c:
                        b -= len(text[cs:c].encode("utf-8"))
                    bstarts.append(b)
                    c, b = cs + len(sub), b + nb
            bpos.c, bpos.b = starts[-1] + len(subs[-1]), bstarts[-1] + nbytes[-1]
            shift = list(chain.from_iterable(map(repeat, bstarts, counts)))
            rel = list(chain.from_iterable(map(itemgetter(3), entries)))
            out.byte_offsets.extend(zip(map(add, map(itemgetter(0), rel), shift), map(add, map(itemgetter(1), rel), shift)))
        out.word_ids.extend(chain.from_iterable(map(repeat, range(word, word + len(entries)), counts)))
        return word + len(entries)

    def _encode_spans(
        self,
        piece: NormalizedText,
        spans: list[tuple[int, int]],
        text: str,
        bpos: _BytePos,
        word: int,
        out: _Columns,
    ) -> int:
        """All chunks of one piece cut by a span pre-tokenizer, in bulk (``spans``: some or all
        of the piece's chunks, by blocks of `_BLOCK`).

        A chunk is ``piece.text[s:e]`` with the piece's alignment sliced (`split_piece`), so the
        model's result is cached under the chunk's text, and a non-empty token ``[a, b)`` of the
        chunk at ``s`` has the original span ``original_span`` gives it: the original start of
        piece char ``s + a`` to the original end of piece char ``s + b - 1``; its byte span comes
        from the text's char -> byte table. Both are computed for all tokens of the piece with
        C-level maps. Chunks with an empty token or a byte-fallback piece (their own offset rules)
        are redone like the general path, from the chunk objects the pre-tokenizer makes.
        """
        ptext = piece.text
        if not spans:
            return word
        if len(spans) > _BLOCK:
            for i in range(0, len(spans), _BLOCK):
                word = self._encode_spans(piece, spans[i : i + _BLOCK], text, bpos, word, out)
            return word
        cache = self._span_cache if self._deterministic() else _NoCache()
        s_list = list(map(itemgetter(0), spans))
        subs = list(map(ptext.__getitem__, map(slice, s_list, map(itemgetter(1), spans))))
        entries = _cached_entries(cache, subs, lambda k, sub: self._span_entry(sub))
        counts = _extend_ids_tokens(out, entries)
        shift = list(chain.from_iterable(map(repeat, s_list, counts)))
        first = list(map(add, chain.from_iterable(map(itemgetter(2), entries)), shift))  # piece positions
        stop = list(map(add, chain.from_iterable(map(itemgetter(3), entries)), shift))
        # (an empty token would read a wrong char here: its chunk is redone below)
        cs, ce = _aligned(piece, first, list(map(_MINUS_ONE, stop)))
        offsets = list(zip(cs, ce))
        if bpos.ascii:
            byte_offsets = list(offsets)
        else:
            table = bpos.table()
            byte_offsets = list(zip(map(table.__getitem__, cs), map(table.__getitem__, ce)))
        irregular = list(compress(range(len(entries)), map(itemgetter(4), entries)))
        if irregular:
            # each such chunk is made from its own span (the pre-tokenizer's chunk, `chunk_spans`):
            # no second pre-tokenization of the whole piece per block
            at = list(accumulate(counts, initial=0))
            for k in irregular:
                chunk, entry, a = split_piece(piece, [spans[k]])[0], entries[k], at[k]
                char_spans = [chunk.original_span(s, e) for s, e in zip(entry[2], entry[3])]
                offsets[a : at[k + 1]] = char_spans
                byte_offsets[a : at[k + 1]] = _byte_spans(char_spans, entry[1], bpos)
        out.offsets.extend(offsets)
        out.byte_offsets.extend(byte_offsets)
        out.word_ids.extend(chain.from_iterable(map(repeat, range(word, word + len(entries)), counts)))
        return word + len(entries)

    def _model_columns_of(self, text: str) -> tuple[list[int], list[str], list[int], list[int]]:
        """The model's result for one chunk text as columns: ids, tokens (the values HF shows:
        e.g. Unigram's unknown token shows its text), and the char spans' starts and ends."""
        ids, s_col, e_col = self.model.tokenize_columns(text)
        toks = self.model.token_values_columns(text, ids, s_col, e_col, self._tokens_of(ids))
        return ids, toks, s_col, e_col

    def _span_entry(self, text: str) -> tuple:
        """Cache entry of one `_encode_spans` chunk: ``(ids, tokens, starts, ends, irregular)``,
        the model's char spans in the chunk as columns; ``irregular`` when a token is empty or a
        byte-fallback piece."""
        ids, toks, s_col, e_col = self._model_columns_of(text)
        irregular = any(map(eq, s_col, e_col)) or bool(self._byte_pieces(toks))
        return (tuple(ids), tuple(toks), tuple(s_col), tuple(e_col), irregular)

    def _encode_fast_normalized(
        self,
        piece: NormalizedText,
        subs: list[str],
        starts: list[int],
        text: str,
        bpos: _BytePos,
        word: int,
        out: _Columns,
    ) -> int:
        """The fast path for a byte-level segment that normalization changed somewhere.

        Chunks are cut from the normalized text exactly as the pre-tokenizer cuts them. A chunk
        whose characters map one to one onto the same characters of the original (most of them:
        normalization usually touches a few characters) uses the cache like `_encode_fast`; any
        other chunk is built as the pre-tokenizer builds it (slice + ByteLevel mapping) and its
        offsets come from its own alignment.
        """
        from .pre_tokenizers.byte_level import to_byte_level

        cache = self._fast_cache if self._deterministic() else _NoCache()
        ids, tokens, offsets, byte_offsets, word_ids = out.ids, out.tokens, out.offsets, out.byte_offsets, out.word_ids
        pst, pen = piece.starts, piece.ends
        ascii_text = bpos.ascii
        for sub, ns in zip(subs, starts):
            n_sub = len(sub)
            if not n_sub:
                continue
            if pst is None:  # an identity alignment (the text may still differ)
                cs, ce = piece.orig_start + ns, piece.orig_start + ns + n_sub
            else:
                cs, ce = pst[ns], pen[ns + n_sub - 1]
            if ce - cs == n_sub and text[cs:ce] == sub:
                entry = cache.get(sub)
                if entry is None:
                    entry = self._fast_entry(text, sub, cs, ce)
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[sub] = entry
                c_ids, c_toks, rel, rel_bytes, nbytes = entry
                if ascii_text:
                    bs = cs
                else:
                    bs = bpos.at(cs)
                    bpos.c, bpos.b = ce, bs + nbytes  # the cursor moves past the chunk for free
                if len(c_ids) == 1:
                    ids.append(c_ids[0])
                    tokens.append(c_toks[0])
                    a, b = rel[0]
                    offsets.append((cs + a, cs + b))
                    a, b = rel_bytes[0]
                    byte_offsets.append((bs + a, bs + b))
                    word_ids.append(word)
                    word += 1
                    continue
                ids.extend(c_ids)
                tokens.extend(c_toks)
                offsets.extend([(cs + a, cs + b) for a, b in rel])
                byte_offsets.extend([(bs + a, bs + b) for a, b in rel_bytes])
            else:
                chunk = to_byte_level(piece.slice(ns, ns + n_sub))
                entry = self._chunk_entry(chunk, text[chunk.orig_start : chunk.orig_end])
                c_ids, c_toks = entry[0], entry[1]
                ids.extend(c_ids)
                tokens.extend(c_toks)
                span = chunk.original_span
                char_spans = [span(s, e) for s, e in zip(entry[2], entry[6])]
                offsets.extend(char_spans)
                byte_offsets.extend(_byte_spans(char_spans, c_toks, bpos))
            word_ids.extend([word] * len(c_ids))
            word += 1
        return word

    def _fast_entry(self, text: str, sub: str, start: int, end: int) -> tuple:
        """Cache entry of one fast-path chunk: ``(ids, tokens, rel offsets, rel byte offsets, n bytes)``.

        The chunk's proxy characters are its UTF-8 bytes, so a token's byte span is its span in
        the chunk, and its char span runs from the character holding its first byte to the one
        holding its last byte: the alignment HF's ByteLevel gives every proxy character (each
        byte of a character is aligned to the whole character), relative to the chunk start.
        """
        got = self.model.tokenize_utf8(sub)
        if got is not None:
            ids, b_start, b_end, c_start, c_end, nbytes = got
            rel_bytes = list(zip(b_start, b_end))
            rel = rel_bytes if c_start is b_start else list(zip(c_start, c_end))
            return (ids, self._tokens_of(ids), rel, rel_bytes, nbytes)
        data = sub.encode("utf-8")
        proxy = bytes_to_proxy(data)
        ids, b_start, b_end = self.model.tokenize_columns(proxy)
        toks = self.model.token_values_columns(proxy, ids, b_start, b_end, self._tokens_of(ids))
        rel_bytes = list(zip(b_start, b_end))
        if len(data) == len(sub):  # ASCII: one byte per character
            rel = rel_bytes
        else:
            # char index of every byte: running count of lead (non-continuation) bytes, minus one
            idx = list(accumulate(data.translate(_LEAD_BYTES), initial=-1))
            if any(map(eq, b_start, b_end)):
                # an empty range keeps its chunk-relative position (NormalizedText.original_span quirk)
                rel = [(idx[s + 1], idx[e] + 1) if s != e else (s, e) for s, e in rel_bytes]
            else:
                rel = list(zip(map(idx.__getitem__, map(_PLUS_ONE, b_start)), map(_PLUS_ONE, map(idx.__getitem__, b_end))))
        return (ids, toks, rel, rel_bytes, len(data))

    def _deterministic(self) -> bool:
        """False while the model samples (BPE dropout): then no chunk result may be reused."""
        return self.model.deterministic

    def _tokens_of(self, ids: list[int]) -> list[str]:
        """The model's vocab strings for ``ids`` (a table lookup once the table is built)."""
        table = self._id_table
        if table is None:
            vocab = self.model.get_vocab()
            size = max(vocab.values(), default=-1) + 1
            if size > 4 * len(vocab) + 1024:  # very sparse ids: do not build a huge table
                id_to_token = self.model.id_to_token
                return [id_to_token(i) for i in ids]  # type: ignore[misc]
            table = [None] * size  # type: ignore[list-item]
            # (later entries win, as in the loop `for tok, i in vocab.items(): table[i] = tok`)
            deque(map(table.__setitem__, vocab.values(), vocab.keys()), maxlen=0)
            self._id_table = table
        try:
            out = list(map(table.__getitem__, ids))
        except IndexError:
            out = [None]
        if None in out:  # ids outside the vocab table (should not happen): ask the model
            id_to_token = self.model.id_to_token
            return [id_to_token(i) for i in ids]  # type: ignore[misc]
        return out  # type: ignore[return-value]

    def _chunk_entry(self, chunk: NormalizedText, orig: str) -> tuple:
        """Model output for one chunk, plus chunk-relative offsets when they can be reused.

        Entry: ``(ids, tokens, starts, orig, rel_offsets, rel_byte_offsets, ends, safe_starts,
        safe_lasts, empties, byte_pieces)``. ``starts``/``ends`` are the model's char spans in the
        chunk text (columns). When the chunk's text reproduces its original text exactly (identity
        normalization; byte-level proxies of unchanged bytes) the offsets relative to the chunk's
        original start depend only on the chunk, so they are kept (``orig`` records which original
        text they are valid for); otherwise ``orig`` is None. The last four serve `_chunk_spans`:
        indices into the chunk's alignment for the first and last character of every token (0 for
        an empty token), the positions of empty tokens, and of byte-fallback pieces ``<0xNN>``.
        """
        text = chunk.text
        ids, toks, s_col, e_col = self._model_columns_of(text)
        n = len(ids)
        empties = list(compress(range(n), map(eq, s_col, e_col)))
        if empties:
            safe_s = list(s_col)
            safe_l = [e - 1 for e in e_col]
            for k in empties:
                safe_s[k] = safe_l[k] = 0
        else:
            safe_s = s_col
            safe_l = list(map(_MINUS_ONE, e_col))
        # byte-fallback pieces: only tokens of 6 characters can be one (C-level prefilter)
        byte_pieces = self._byte_pieces(toks)
        # (tuples of atoms: the cycle collector stops tracking cached entries after one pass)
        entry = (tuple(ids), tuple(toks), tuple(s_col), None, None, None, tuple(e_col), tuple(safe_s),
                 tuple(safe_l), tuple(empties), tuple(byte_pieces))
        exact_bytes = holds_original(text, orig, byte_level=self._byte_level)
        if not exact_bytes:
            return entry
        exact_bytes = self._byte_level
        os_ = chunk.orig_start
        span = chunk.original_span
        rel = []
        for s, e in zip(s_col, e_col):
            a, b = span(s, e)
            rel.append((a - os_, b - os_))
        if exact_bytes:
            rel_bytes = list(zip(s_col, e_col))
        else:
            rel_bytes = _byte_spans(rel, toks, _BytePos(orig))
        return entry[:3] + (orig, tuple(rel), tuple(rel_bytes)) + entry[6:]

    def _byte_pieces(self, toks: Sequence[str]) -> list[int]:
        """Positions of the byte-fallback pieces ``<0xNN>`` among ``toks``: only tokens of 6
        characters can be one (C-level prefilter); the verdict per string is memoized."""
        six = list(compress(range(len(toks)), map((6).__eq__, map(len, toks))))
        if not six:
            return six
        memo = self._byte_piece_memo
        flags = list(map(memo.get, map(toks.__getitem__, six)))
        if None in flags:
            if len(memo) > _CACHE_LIMIT:
                memo.clear()
            for j, k in enumerate(six):
                if flags[j] is None:
                    t = toks[k]
                    v = memo.get(t)  # (met earlier in this loop)
                    if v is None:
                        v = memo[t] = bool(_byte_fallback_len(t))
                    flags[j] = v
        return list(compress(six, flags))

    def _chunk_spans(
        self, entry: tuple, chunk: NormalizedText, bpos: _BytePos
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Offsets and byte offsets of one chunk's tokens from the chunk's own alignment.

        Exactly ``chunk.original_span(s, e)`` and `_byte_spans` per token, computed for all
        tokens at once with C-level maps: a non-empty token spans from the original start of its
        first character to the original end of its last one (both `NormalizedText` and
        `SentencePieceText`); empty tokens (their own rule per class) and byte-fallback pieces
        (their byte cursor) are then redone one by one, in order.
        """
        s_col, e_col = entry[2], entry[6]
        if type(chunk) not in _PLAIN_SPAN_TYPES:  # a text type with its own span rule
            char_spans = [chunk.original_span(s, e) for s, e in zip(s_col, e_col)]
            return char_spans, _byte_spans(char_spans, entry[1], bpos)
        cs, ce = _aligned(chunk, entry[7], entry[8])
        empties = entry[9]
        if empties:
            cs, ce = list(cs), list(ce)
            starts = chunk.starts
            if type(chunk) is _PLAIN_SPAN_TYPES[1] and starts is not None:
                # `SentencePieceText.original_span` of an empty range, inlined (the leading byte
                # pieces of every byte-fallback character have one): norm_to_orig there
                n_chunk = len(chunk.text)
                at_end = chunk.ends[-1] if n_chunk else chunk.orig_start  # type: ignore[index]
                for k in empties:
                    a = s_col[k]
                    cs[k] = ce[k] = starts[a] if a < n_chunk else at_end
            else:
                span = chunk.original_span
                for k in empties:
                    cs[k], ce[k] = span(s_col[k], e_col[k])
        offsets = list(zip(cs, ce))
        byte_pieces = entry[10]
        if bpos.ascii:
            if not byte_pieces:
                return offsets, offsets
            byte_offsets = list(offsets)
            table = None
        else:
            table = bpos.table()
            byte_offsets = list(zip(_pick(table, cs), _pick(table, ce)))
        if byte_pieces:
            text = bpos.text
            n_text = len(text)
            for k in byte_pieces:
                # `_byte_spans` for one byte piece: its cursor is the byte end of the token before
                # it in this chunk (-1 for the first), already final since k increases
                a, b = cs[k], ce[k]
                bs, be = (a, b) if table is None else (table[a], table[b])
                if a == b and a < n_text:
                    be = bs + len(text[a].encode("utf-8"))
                cursor = byte_offsets[k - 1][1] if k else -1
                start = cursor if bs <= cursor < be else bs
                byte_offsets[k] = (start, min(start + 1, be) if be > start else start)
        return offsets, byte_offsets

    def _encode_chunks(self, chunks: list[NormalizedText], text: str, bpos: _BytePos, word: int, out: _Columns) -> int:
        cache = self._chunk_cache if self._deterministic() else _NoCache()
        ids, tokens, offsets, byte_offsets, word_ids = out.ids, out.tokens, out.offsets, out.byte_offsets, out.word_ids
        for chunk in chunks:
            os_, oe = chunk.orig_start, chunk.orig_end
            orig = text[os_:oe]
            key = chunk.text
            entry = cache.get(key)
            if entry is None or (entry[3] is None and holds_original(key, orig, byte_level=self._byte_level)):
                # (new, or cached from an occurrence that was no exact copy while this one is:
                # only an exact copy's entry carries the offsets exact copies reuse)
                entry = self._chunk_entry(chunk, orig)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[key] = entry
            c_ids = entry[0]
            n = len(c_ids)
            if entry[3] == orig:
                bs = bpos.at(os_)
                if n == 1:  # one token: no per-chunk lists
                    ids.append(c_ids[0])
                    tokens.append(entry[1][0])
                    a, b = entry[4][0]
                    offsets.append((os_ + a, os_ + b))
                    a, b = entry[5][0]
                    byte_offsets.append((bs + a, bs + b))
                    word_ids.append(word)
                    word += 1
                    continue
                ids.extend(c_ids)
                tokens.extend(entry[1])
                offsets.extend([(os_ + a, os_ + b) for a, b in entry[4]])
                byte_offsets.extend([(bs + a, bs + b) for a, b in entry[5]])
            else:
                ids.extend(c_ids)
                tokens.extend(entry[1])
                # this occurrence is not an exact copy: offsets from its own alignment
                c_offsets, c_bytes = self._chunk_spans(entry, chunk, bpos)
                offsets.extend(c_offsets)
                byte_offsets.extend(c_bytes)
            word_ids.extend([word] * n)
            word += 1
        return word

    # ------------------------------------------------------------------ decode
    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        """HF ``decode``: ids -> token strings (added vocabulary first, then the model; unknown
        ids are dropped), special tokens dropped on request, then the decoder (or a join with
        spaces when there is no decoder)."""
        added = self._added
        model_id_to_token = self.model.id_to_token
        tokens: list[str] = []
        for id_ in ids:
            t = added.id_to_token(id_)
            if t is None:
                t = model_id_to_token(id_)
                if t is None:
                    continue
            if skip_special_tokens and added.is_special(t):
                continue
            tokens.append(t)
        if self.decoder is not None:
            return self.decoder.decode(tokens)
        return " ".join(tokens)

    # ------------------------------------------------------------------ vocabulary
    @property
    def vocab_size(self) -> int:
        """HF ``get_vocab_size(with_added_tokens=True)``: model entries plus added tokens not in the model.

        With the ``"tiktoken"`` policy it is tiktoken's ``n_vocab``: max id + 1 (cl100k and o200k
        have unused ids, so that is more than the number of entries).
        """
        if self.special_policy == "tiktoken":
            top = max(self.model.get_vocab().values(), default=-1)
            return max(top, max(self._added.by_id, default=-1)) + 1
        return self._entry_count()

    def _entry_count(self) -> int:
        """Distinct entries: model entries plus added tokens not in the model."""
        model = self.model
        overlap = sum(1 for c in self._added.by_content if model.token_to_id(c) is not None)
        return model.vocab_size + len(self._added.by_content) - overlap

    def token_to_id(self, token: str) -> int | None:
        id_ = self._added.by_content.get(token)
        return id_ if id_ is not None else self.model.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:  # noqa: A002 - HF's name
        t = self._added.id_to_token(id)
        return t if t is not None else self.model.id_to_token(id)

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self.model.get_vocab())
        vocab.update(self._added.by_content)
        return vocab

    def is_special_id(self, id: int) -> bool:  # noqa: A002
        t = self._added.by_id.get(id)
        return t is not None and t.special

    def info(self) -> dict[str, Any]:
        """Model, pipeline and the five vocabulary numbers that must never be mixed up.

        ``normal_entries`` are the model's own (mergeable) entries, ``added_entries`` the added /
        special tokens, ``total_entries`` the distinct strings (HF ``get_vocab_size(True)``),
        ``id_space`` the largest id + 1 (ids may have holes), ``embedding_rows`` the model's
        embedding matrix rows when a config says so (often padded beyond the id space).
        """
        model_vocab = self.model.get_vocab()
        ids = list(model_vocab.values()) + list(self._added.by_id)
        return {
            "name": self.name,
            "source": self.source,
            "model": getattr(self.model, "type_name", type(self.model).__name__),
            "pipeline": {
                "normalizer": _describe(self.normalizer),
                "pre_tokenizer": _describe(self.pre_tokenizer),
                "model": _describe(self.model),
                "post_processor": _describe(self.post_processor),
                "decoder": _describe(self.decoder),
            },
            "special_policy": self.special_policy,
            "normal_entries": self.model.vocab_size,
            "added_entries": len(self._added.by_id),
            "special_entries": sum(1 for t in self._added.by_id.values() if t.special),
            "total_entries": self._entry_count(),
            "id_space": (max(ids) + 1) if ids else 0,
            "embedding_rows": self.config.embedding_rows,
        }

    def with_model(self, model: Model, *, name: str | None = None) -> Tokenizer:
        """A new `Tokenizer` with this one's pipeline (normalizer, pre-tokenizer, added tokens,
        post-processor, decoder, policy) around another ``model``, e.g. ``BPE.first_merges(k)``
        or ``BPE.replace(dropout=0.1)``. The components are shared (they hold no per-run state);
        the caches are the new tokenizer's own."""
        return Tokenizer(
            model,
            normalizer=self.normalizer,
            pre_tokenizer=self.pre_tokenizer,
            post_processor=self.post_processor,
            decoder=self.decoder,
            added_tokens=self.added_tokens,
            special_policy=self.special_policy,
            name=self.name if name is None else name,
            source=self.source,
            config=self.config,
        )
