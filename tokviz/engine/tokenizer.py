"""The pipeline: added tokens -> normalize -> pre-tokenize -> model -> post-process; and decode.

`Tokenizer` is the one engine behind the GUI, the CLI and the trainers. It is assembled from
components (see the family packages) by the loaders in `tokviz.io`, holds them as one
`Pipeline` value (``Tokenizer.pipeline``), and keeps the stages of a run in `Encoding.stages`.

Contract (other work depends on these names):
    Tokenizer(model, *, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
              added_tokens=(), special_policy="hf", name="", source=None, config=None)
    Tokenizer.encode(sequence, pair=None, is_pretokenized=False, add_special_tokens=True, *,
                     allowed_special=None, trace=False, keep_stages=True) -> Encoding
    Tokenizer.encode_batch, post_process, num_special_tokens_to_add, enable_truncation /
    no_truncation / truncation, enable_padding / no_padding / padding   (HF's names and semantics;
    the work is `tokviz.engine.model_inputs`)
    Tokenizer.decode(ids, *, skip_special_tokens=False) -> str
    Tokenizer.stages(text, *, allowed_special=None) -> Stages   (encode's stages, no model run)
    Tokenizer.pipeline, vocab_size, token_to_id, id_to_token, get_vocab, info(), clear_caches()

``special_policy="hf"`` extracts every added token from the text (HF tokenizers);
``"tiktoken"`` treats special-token literals as ordinary text unless ``allowed_special`` admits
them (``"all"`` or a set of literals), as tiktoken's ``encode(text, disallowed_special=())``.

How a run goes (HF ``encode_single_sequence`` semantics, checked against HF on every bundle):

1-2. `Pipeline.runs`: added tokens cut out, the pieces normalized, each ordinary piece a
   `ChunkPlan` (`tokviz.engine.pipeline`); 3. the model tokenizes each chunk;
4. a token's offsets are its chunk's ``original_span`` of the token's range, its word id the
   index of its chunk among all pieces (added tokens count as one); 5. `post_process` (HF's):
   truncation of the sequence and its pair, the post-processor, padding.

There is one production path (`Tokenizer._encode_plan`) and one reference path
(`tokviz.engine.reference`, the plain loop, which serves ``trace=True`` and is the oracle of
``tests/engine/test_paths.py``). The production path reads a plan's columns by blocks of
`_BLOCK` chunks: chunk texts -> one chunk cache (`tokviz.engine.chunk_cache`, with the entry
layout and the Python column kernels) -> the offsets of all tokens through the piece's alignment
and the text's `OffsetMap` (`_emit`), appended to int32 columns (`OutColumns`, then the
encoding's `TokenColumns`). A chunk whose tokens have their own offset rule (an empty token, a
byte-fallback piece ``<0xNN>``) is redone by the reference's `chunk_offsets`. The model kernels
come from the optional native core when it is built (`tokviz.engine.backend`).

Byte offsets are exact: a token holding part of a character (byte-level proxies, byte-fallback
``<0xNN>`` pieces) gets exactly its bytes; tokens of text that normalization changed get the
bytes of their character span.

Differences from HF, on purpose: ``special_tokens_mask`` also flags special added tokens found in
the text (HF flags only the post-processor's tokens) so that views can mark them; ``decode``
keeps special tokens unless ``skip_special_tokens=True`` (HF's Python default is True).

Performance notes. A cache entry holds everything about a chunk that depends on its text alone
(ids, token strings, the chars each token starts and ends in, its model spans), so a cached chunk
costs a dict lookup and its share of one column kernel over all chunks of a block: the native
``emit``, or its Python twin `emit_columns` (C-level ``map``/``chain``/``itemgetter`` passes);
no per-chunk Python code runs unless a chunk has an empty token (byte-fallback pieces get
their bytes in the column kernel). Cache misses are made by C-level passes too (``map(make,
...)`` over the distinct missing texts), and with the native core a BPE chunk's whole entry is
one C call (`Model.utf8_entry_maker` for byte-level chunks, `Model.text_entry_maker` for the
others). Chunks longer than
`CHUNK_CACHE_MAX_CHARS` are not cached. Results are int32 arrays, not a Python object per
token: a kept encoding costs the cycle collector a few objects whatever its length.
There is one path for every pipeline shape (no special path for byte-level without
normalization, or for cut-only pre-tokenizers): separate paths drift apart. Offsets are not
cached relative to a chunk's start (they would need an "exact copy" test per occurrence).
``keep_stages=False`` is the explicit way to keep less. Entries are tuples of atoms so that the
cycle collector stops tracking them. Pausing the collector during a long
encode still pays, but only on the main thread (see `Tokenizer.encode`).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import accumulate, chain
from operator import eq
from threading import current_thread, main_thread
from typing import Any, Literal

from . import kernels, reference
from .added_tokens import AddedToken, AddedVocabulary
from .byte_alphabet import bytes_to_proxy, proxy_to_bytes
from .caching import BoundedCache, clear_shared_caches
from .chunk_cache import (
    CACHE_LIMIT,
    RULE_CHARS,
    RULE_EXACT,
    RULE_HELD,
    SLOT_BYTE_PIECES,
    SLOT_EMPTIES,
    SLOT_IDS,
    SLOT_MODEL_ENDS,
    SLOT_MODEL_STARTS,
    SLOT_TOKENS,
    Block,
    OutColumns,
    emit_columns,
    entry_of,
    ids_of,
)
from .columns import int_column
from .decoders import Decoder
from .encoding import Encoding, Stages
from .model_inputs import (
    PaddingParams,
    TruncationParams,
    merge,
    pad_encodings,
    pretokenized_encoding,
    set_sequence_id,
    truncate_encodings,
)
from .models import Model
from .normalizers import Normalizer
from .pipeline import AllowedSpecial, Pipeline
from .pre_tokenizers import PreTokenizer
from .pretokenized import ChunkPlan
from .processors import PostProcessor
from .reference import BYTE_PIECES, byte_piece_span, chunk_offsets, holds_original
from .text import LEAD_BYTES, NormalizedText, OffsetMap, check_text, pick

__all__ = ["Tokenizer", "TokenizerConfig"]

# Chunks handled per round of C-level column passes: a pass holds the GIL from start to end, so
# on a long text the passes go by blocks and a GUI thread beside the encode stays responsive.
_BLOCK = 8192
# Texts at least this long are encoded with the cycle collector paused (see `Tokenizer.encode`).
_GC_PAUSE_CHARS = 100_000
_MAIN_THREAD = main_thread()
# The longest text one encode takes, in UTF-8 bytes: positions are int32 (`tokviz.engine.columns`).
_MAX_BYTES = 2**31 - 1
#: Chunks longer than this (chars) skip the chunk cache: a chunk that long (a document with no
#: pre-tokenizer, a run of letters) rarely comes again, and its entry would only pin memory.
CHUNK_CACHE_MAX_CHARS = 4096

def _plain_span_types() -> tuple[type, ...]:
    from .normalizers.precompiled import SentencePieceText

    return (NormalizedText, SentencePieceText)


# Text types whose ``original_span`` of a non-empty range is ``(starts[s], ends[e - 1])`` (or the
# identity shift), as `aligned` computes it; a piece of any other type has every chunk redone.
_PLAIN_SPAN_TYPES = _plain_span_types()


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


def _made(texts: list[str], make: Callable[[str], tuple]) -> list[tuple]:
    """Every chunk's entry made anew (a model that samples: nothing is reused)."""
    return list(map(make, texts))


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


def _check_input(text: Any, what: str) -> None:
    """Refuse what `Tokenizer.encode` cannot take: not a str, a lone surrogate (`check_text`),
    or more than ``_MAX_BYTES`` UTF-8 bytes at once."""
    if not isinstance(text, str):
        raise TypeError(f"{what}() expects str, got {type(text).__name__}")
    check_text(text)
    if len(text) > _MAX_BYTES // 4 and len(text.encode("utf-8")) > _MAX_BYTES:
        raise ValueError(f"text of {len(text.encode('utf-8')):,} UTF-8 bytes: encode takes up to {_MAX_BYTES:,} at once")


def _batch_item(item: Any, is_pretokenized: bool) -> tuple[Any, Any]:
    """One input of `Tokenizer.encode_batch` as ``(sequence, pair or None)``, read as HF reads it:
    a list or tuple of two is a pair when its two elements are sequences of the input's kind
    (strings; pre-tokenized: lists or tuples of words), else (pre-tokenized) it is one list of
    words.

    >>> _batch_item(["a b", "c"], False), _batch_item(("a", "b", "c"), True)
    (('a b', 'c'), (('a', 'b', 'c'), None))
    >>> _batch_item((["a", "b"], ["c"]), True)
    (['a', 'b'], ['c'])
    """
    if isinstance(item, (list, tuple)) and len(item) == 2:
        if is_pretokenized:
            if all(isinstance(part, (list, tuple)) for part in item):
                return item[0], item[1]
        else:
            return item[0], item[1]
    return item, None


class Tokenizer:
    """The whole pipeline of one tokenizer file.

    >>> from tokviz.engine.models.wordlevel import WordLevel
    >>> tok = Tokenizer(WordLevel({"a": 0, "b": 1}, unk_token="a"))
    >>> tok.encode("ab").ids
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
        self.decoder = decoder
        self.added_tokens = tuple(added_tokens)
        self.special_policy = special_policy
        self.name = name
        self.source = source
        self.config = config or TokenizerConfig()
        self._truncation: TruncationParams | None = None
        self._padding: PaddingParams | None = None
        self._build(model, normalizer, pre_tokenizer, post_processor)

    def _build(
        self, model: Model, normalizer: Normalizer | None, pre_tokenizer: PreTokenizer | None,
        post_processor: PostProcessor | None,
    ) -> None:
        """(Re)build the `pipeline` value and the caches from the components."""
        added = AddedVocabulary(self.added_tokens, normalize_str=normalizer.normalize_str if normalizer is not None else None)
        self._pipeline = Pipeline(
            model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer, post_processor=post_processor,
            added=added, special_policy=self.special_policy, byte_level=_contains_type(pre_tokenizer, "ByteLevel"),
            special_ids=frozenset(id_ for id_, t in added.by_id.items() if t.special),
        )
        self._added = added
        # chunk text -> cache entry (`tokviz.engine.chunk_cache`), for chunks the model sees as
        # they are and for chunks it sees as byte proxies
        self._plain_cache = BoundedCache(CACHE_LIMIT, max_key_chars=CHUNK_CACHE_MAX_CHARS)
        self._mapped_cache = BoundedCache(CACHE_LIMIT, max_key_chars=CHUNK_CACHE_MAX_CHARS)
        self._id_table: list[str | None] | Literal[False] | None = None  # False: ids too sparse for a table
        self._utf8_maker: Callable[[str], tuple] | Literal[False] | None = None  # see `_mapped_maker`
        self._text_maker: Callable[[str], tuple] | Literal[False] | None = None  # see `_plain_maker`
        native = kernels.native  # the column kernels: native, or their Python twins
        self._emit_kernel = native.emit if native is not None else emit_columns
        self._entry_kernel = native.entry if native is not None else entry_of

    # ------------------------------------------------------------------ components
    @property
    def pipeline(self) -> Pipeline:
        """The components in pipeline order as one value (`tokviz.engine.pipeline`)."""
        return self._pipeline

    @property
    def model(self) -> Model:
        return self._pipeline.model

    @model.setter
    def model(self, value: Model) -> None:
        p = self._pipeline
        self._build(value, p.normalizer, p.pre_tokenizer, p.post_processor)

    @property
    def normalizer(self) -> Normalizer | None:
        return self._pipeline.normalizer

    @normalizer.setter
    def normalizer(self, value: Normalizer | None) -> None:
        p = self._pipeline
        self._build(p.model, value, p.pre_tokenizer, p.post_processor)

    @property
    def pre_tokenizer(self) -> PreTokenizer | None:
        return self._pipeline.pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, value: PreTokenizer | None) -> None:
        p = self._pipeline
        self._build(p.model, p.normalizer, value, p.post_processor)

    @property
    def post_processor(self) -> PostProcessor | None:
        return self._pipeline.post_processor

    @post_processor.setter
    def post_processor(self, value: PostProcessor | None) -> None:
        p = self._pipeline
        self._build(p.model, p.normalizer, p.pre_tokenizer, value)

    def __repr__(self) -> str:
        return f"Tokenizer(name={self.name!r}, model={_describe(self.model)}, pre_tokenizer={_describe(self.pre_tokenizer)})"

    def clear_caches(self) -> None:
        """Forget every cached chunk: the pipeline's, the model's and the process-wide ones (the
        byte proxies of the stage view). Results never depend on them."""
        self._plain_cache.clear()
        self._mapped_cache.clear()
        self._id_table = self._utf8_maker = self._text_maker = None
        self.model.clear_cache()
        clear_shared_caches()

    # ------------------------------------------------------------------ encode
    def encode(
        self,
        sequence: str | Sequence[str],
        pair: str | Sequence[str] | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
        *,
        allowed_special: AllowedSpecial = None,
        trace: bool = False,
        keep_stages: bool = True,
    ) -> Encoding:
        """Run the pipeline on ``sequence`` (and ``pair``); its stages are kept in ``Encoding.stages``.

        HF's ``encode``: ``pair`` is a second sequence (type ids 1, its own offsets), and the
        truncation and padding set by `enable_truncation` / `enable_padding` (or the
        tokenizer.json) apply (`post_process`). ``is_pretokenized``: each sequence is a list of
        words, each encoded on its own, its tokens' word id its index and offsets into the word.
        ``allowed_special``: ``"all"`` or a set of special-token literals to honour in the text.
        With the ``"tiktoken"`` policy the default (None) honours none of them; with ``"hf"`` the
        default honours all of them (HF extracts every added token). ``keep_stages=False``: the
        encoding holds no stages (``stages`` None; `stages` computes them when needed), which
        keeps a program that holds many encodings light. ``trace``: every token has its trace
        (merges, matches, scores), from the reference path.
        """
        options = (is_pretokenized, allowed_special, trace, keep_stages)
        first = self._encode_input(sequence, *options)
        second = None
        if pair is not None:  # HF encodes the pair with type id 1 from the start (its windows keep it)
            second = self._encode_input(pair, *options)
            second = replace(second, columns=second.columns.with_type_id(1))
        return self.post_process(first, second, add_special_tokens=add_special_tokens)

    def encode_batch(
        self,
        inputs: Sequence[str | Sequence[str] | tuple[Any, Any]],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> list[Encoding]:
        """HF ``encode_batch``: each input a sequence or a ``(sequence, pair)`` (`_batch_item`);
        padding applies to the batch as a whole (``length`` None: the longest encoding)."""
        out = []
        for item in inputs:
            first, second = _batch_item(item, is_pretokenized)
            out.append(self.encode(first, second, is_pretokenized, add_special_tokens))
        return pad_encodings(out, self._padding) if self._padding is not None else out

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """The ids of ``text``'s tokens and nothing else: `encode` with no post-processing (no
        special tokens added, no truncation, no padding) and without building offsets, stages or
        an `Encoding` (tiktoken's ``encode_ordinary``, or ``encode`` with ``allowed_special``).
        The same pipeline and chunk cache as `encode`, so the ids are ``encode(text,
        add_special_tokens=False).ids`` whenever no truncation or padding is set; what is cheaper
        is everything around them, which dominates on short texts (vocabulary audits, counts).
        """
        _check_input(text, "encode_ids")
        ids: list[int] = []
        for _piece, added_id, plan in self._pipeline.runs(text, allowed_special):
            if plan is None:
                ids.append(added_id)  # type: ignore[arg-type]
            elif plan.texts:
                entries, make = self._entry_source(plan)
                ids.extend(chain.from_iterable(map(ids_of, entries(plan.texts, make))))
        return ids

    def _encode_input(
        self, sequence: Any, is_pretokenized: bool, allowed_special: AllowedSpecial, trace: bool, keep_stages: bool,
    ) -> Encoding:
        """One sequence through steps 1-4 (no post-processing)."""
        if not is_pretokenized:
            return self._encode_text(sequence, allowed_special, trace, keep_stages)
        if isinstance(sequence, str) or not isinstance(sequence, (list, tuple)):
            raise TypeError(f"a pre-tokenized sequence is a list of str, got {type(sequence).__name__}")
        return pretokenized_encoding(
            sequence, [self._encode_text(w, allowed_special, trace, False) for w in sequence]
        )

    def _encode_text(self, text: str, allowed_special: AllowedSpecial, trace: bool, keep_stages: bool) -> Encoding:
        _check_input(text, "encode")
        if trace:  # traces are data of the plain reference path (no caches there)
            return reference.encode(self._pipeline, text, allowed_special=allowed_special, post_process=False)
        if len(text) < _GC_PAUSE_CHARS or not gc.isenabled() or current_thread() is not _MAIN_THREAD:
            return self._encode(text, allowed_special, keep_stages)
        # A long text allocates many small objects (no reference cycles), and pausing the cycle
        # collector meanwhile saves its repeated scans. Only on the main thread (a script, the
        # CLI): in another thread the application's own policy decides (the GUI's
        # `tokviz.gui.workers`), and a worker must not switch the collector of the whole process.
        gc.disable()
        try:
            return self._encode(text, allowed_special, keep_stages)
        finally:
            gc.enable()

    # ------------------------------------------------------------------ model inputs (HF's API)
    def post_process(self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        """HF ``post_process``: truncate the sequence and its pair (the post-processor's tokens
        taken off ``max_length`` when they are added), run the post-processor, pad."""
        if self._truncation is not None:
            params = self._truncation
            n_added = self.num_special_tokens_to_add(pair is not None)
            if add_special_tokens and n_added:
                # (HF's unsigned subtraction: a max_length below the added count truncates nothing)
                room = params.max_length - n_added
                params = None if room < 0 else TruncationParams(room, params.stride, params.strategy, params.direction)
            if params is not None:
                encoding, pair = truncate_encodings(encoding, pair, params)
        processor = self._pipeline.post_processor
        if processor is not None:
            encoding = processor.process(encoding, pair, add_special_tokens=add_special_tokens)
        elif pair is not None:
            encoding = merge([set_sequence_id(encoding, 0), set_sequence_id(pair, 1)])
        if self._padding is not None:
            encoding = pad_encodings([encoding], self._padding)[0]
        return encoding

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the post-processor adds to one sequence (or a pair)."""
        processor = self._pipeline.post_processor
        return 0 if processor is None else processor.added_tokens(is_pair)

    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right",
    ) -> None:
        """Truncate every encode to ``max_length`` tokens (special tokens included), the rest in
        ``Encoding.overflowing`` as windows overlapping by ``stride`` tokens (HF's)."""
        params = TruncationParams(max_length, stride, strategy, direction)
        room = max_length - self.num_special_tokens_to_add(False)
        if 0 <= room < stride:
            raise ValueError(
                f"stride {stride} must be less than the room left for text: max_length {max_length} minus"
                f" {max_length - room} special tokens = {room}"
            )
        self._truncation = params

    def no_truncation(self) -> None:
        self._truncation = None

    @property
    def truncation(self) -> dict[str, Any] | None:
        """The truncation settings as HF's dict, or None."""
        return None if self._truncation is None else self._truncation.to_dict()

    def enable_padding(
        self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]",
        length: int | None = None, pad_to_multiple_of: int | None = None,
    ) -> None:
        """Pad every encode (to ``length``, or a batch to its longest; HF's)."""
        self._padding = PaddingParams(direction, pad_id, pad_type_id, pad_token, length, pad_to_multiple_of)

    def no_padding(self) -> None:
        self._padding = None

    @property
    def padding(self) -> dict[str, Any] | None:
        """The padding settings as HF's dict, or None."""
        return None if self._padding is None else self._padding.to_dict()

    def stages(self, text: str, *, allowed_special: AllowedSpecial = None) -> Stages:
        """Steps 1-2 of `encode` alone (added tokens, normalization, pre-tokenization): the same
        value as ``encode(text, allowed_special=...).stages``, without running the model."""
        if not isinstance(text, str):
            raise TypeError(f"stages() expects str, got {type(text).__name__}")
        check_text(text)
        return self._pipeline.stages(text, allowed_special=allowed_special)

    def _encode(self, text: str, allowed_special: AllowedSpecial, keep_stages: bool) -> Encoding:
        out = OutColumns()
        omap = OffsetMap(text)
        pipeline = self._pipeline
        runs = pipeline.runs(text, allowed_special)
        word = 0
        for piece, added_id, plan in runs:
            if plan is not None:
                word = self._encode_plan(plan, text, omap, word, out)
                continue
            s, e = piece.original_span(0, len(piece.text))
            if pipeline.added.by_id[added_id].special:
                out.specials.append(len(out.ids))
            out.ids.append(added_id)  # type: ignore[arg-type]
            out.tokens.append(piece.text)  # HF: the matched text (with any lstrip/rstrip spaces)
            out.starts.append(s)
            out.ends.append(e)
            out.byte_starts.append(omap.to_utf8(s))
            out.byte_ends.append(omap.to_utf8(e))
            out.word_ids.append(word)
            word += 1
        return Encoding(text, out.finish(), pipeline.stages_of(text, runs) if keep_stages else None, None, pipeline)

    def _encode_plan(self, plan: ChunkPlan, text: str, omap: OffsetMap, word: int, out: OutColumns) -> int:
        """Steps 3-4 for the chunks of one plan, by blocks of `_BLOCK` chunks; the next word id."""
        n = len(plan.texts)
        if not n:
            return word
        entries, make = self._entry_source(plan)
        piece = plan.piece
        # byte-level chunks that hold their original text's very bytes: all (an unchanged
        # piece), or as tested per chunk
        exact: bool | None = None
        if self._pipeline.byte_level:
            o = piece.orig_start
            exact = plan.byte_map and piece.starts is None and piece.text == text[o : o + len(piece.text)]
        if n <= _BLOCK:
            return self._emit(plan, 0, n, entries(plan.texts, make), text, omap, exact, word, out)
        for a in range(0, n, _BLOCK):
            b = min(a + _BLOCK, n)
            word = self._emit(plan, a, b, entries(plan.texts[a:b], make), text, omap, exact, word, out)
        return word

    def _entry_source(self, plan: ChunkPlan) -> tuple[Callable[[list[str], Callable], list[tuple]], Callable[[str], tuple]]:
        """How the cache entries of ``plan``'s chunks are found: ``(entries, make)``, called as
        ``entries(texts, make)`` (a model that samples, BPE dropout, makes every entry anew)."""
        if plan.byte_map:
            cache, make = self._mapped_cache, self._mapped_maker()
        else:
            cache, make = self._plain_cache, self._plain_maker()
        return (cache.entries if self.model.deterministic else _made), make

    def _emit(
        self, plan: ChunkPlan, a: int, b: int, entries: list[tuple], text: str, omap: OffsetMap,
        exact: bool | None, word: int, out: OutColumns,
    ) -> int:
        """Append the tokens of chunks ``a..b`` of ``plan`` (their cache ``entries``) to ``out``.

        One column kernel (`emit_columns` or the native ``emit``) appends every column for all
        tokens at once: a token of the chunk at piece position ``p`` spans from the original
        start of piece char ``p + first`` to the original end of piece char ``p + last``; its
        bytes are those chars' UTF-8 positions, or, in a byte-level chunk that holds its
        original bytes, the chunk's first byte plus the model's span. Chunks with an empty token
        are then redone one by one by the reference's rules (`_redo`).
        """
        starts = plan.starts[a:b] if a or b < len(plan.starts) else plan.starts
        piece = plan.piece
        u8 = None if omap.is_ascii else omap.utf8_table()
        rule, bases, holds = RULE_CHARS, None, exact is True  # which chunks hold their original bytes
        if exact and u8 is not None:
            rule = RULE_EXACT
        elif exact is False:
            bases, holds = self._held(plan, a, b, text, u8)
            rule = RULE_CHARS if bases is None else RULE_HELD
        at = len(out.ids)
        block = Block(starts, piece.orig_start, piece.starts, piece.ends, u8, rule, bases, holds, word)
        irregular = self._emit_kernel(entries, block, out)
        if irregular or type(piece) not in _PLAIN_SPAN_TYPES:
            self._redo_chunks(plan, a, entries, at, irregular, out, text, omap, holds)
        return word + len(entries)

    def _held(
        self, plan: ChunkPlan, a: int, b: int, text: str, u8: Sequence[int] | None,
    ) -> tuple[Sequence[int] | None, bool | list[bool]]:
        """Which byte-level chunks ``a..b`` of a changed piece hold their original bytes
        (`holds_original`), and the first byte of each (None when none holds)."""
        texts = plan.texts[a:b]
        o_starts, o_ends = plan.orig_spans(a, b)
        if plan.byte_map:
            holds = list(map(eq, texts, map(text.__getitem__, map(slice, o_starts, o_ends))))
        else:
            holds = [holds_original(t, text[s:e], byte_level=True) for t, s, e in zip(texts, o_starts, o_ends)]
        if not any(holds):
            return None, False
        return (o_starts if u8 is None else pick(u8, o_starts)), holds

    def _redo_chunks(
        self, plan: ChunkPlan, a: int, entries: list[tuple], at0: int, irregular: list[int], out: OutColumns,
        text: str, omap: OffsetMap, holds: bool | list[bool],
    ) -> None:
        """Redo the offsets of the ``irregular`` chunks of a block (those with an empty token:
        `_redo`; the block's first token is ``out``'s token ``at0``), or of all of them when the
        piece is a text type with its own span rule (the reference's `chunk_offsets`)."""
        at = list(accumulate(map(len, map(ids_of, entries)), initial=at0))
        if type(plan.piece) in _PLAIN_SPAN_TYPES:
            for k in irregular:
                self._redo(plan, a + k, entries[k], at[k], out, text, omap, holds if type(holds) is bool else holds[k])
            return
        byte_level = self._pipeline.byte_level
        for k, entry in enumerate(entries):
            spans = list(zip(entry[SLOT_IDS], entry[SLOT_MODEL_STARTS], entry[SLOT_MODEL_ENDS]))
            chars, bytes_ = chunk_offsets(plan.chunk(a + k), spans, entry[SLOT_TOKENS], text, omap.to_utf8, byte_level=byte_level)
            i, j = at[k], at[k + 1]
            out.starts[i:j], out.ends[i:j] = int_column(s for s, _ in chars), int_column(e for _, e in chars)
            out.byte_starts[i:j], out.byte_ends[i:j] = int_column(s for s, _ in bytes_), int_column(e for _, e in bytes_)

    def _redo(
        self, plan: ChunkPlan, k: int, entry: tuple, at: int, out: OutColumns, text: str, omap: OffsetMap, holds: bool,
    ) -> None:
        """The tokens of chunk ``k`` (its first token at ``at``), which has an empty token, with
        their own offset rule, as the reference computes them: an empty token's span is its
        chunk's ``original_span``; a byte-fallback piece gets the next byte of its character
        (unless the chunk ``holds`` its original bytes: then every token already has exactly
        its bytes). (The column kernel settles the byte pieces of the other chunks itself.)"""
        m_starts, m_ends = entry[SLOT_MODEL_STARTS], entry[SLOT_MODEL_ENDS]
        pieces = entry[SLOT_BYTE_PIECES]
        if entry[SLOT_EMPTIES]:
            span = plan.chunk(k).original_span
            piece_set = frozenset(pieces)
            to_utf8, n_text = omap.to_utf8, len(text)
            for j in entry[SLOT_EMPTIES]:
                cs, ce = out.starts[at + j], out.ends[at + j] = span(m_starts[j], m_ends[j])
                if not holds:
                    bs = to_utf8(cs)
                    # (an empty byte piece stands for bytes of the character at its position)
                    be = bs + len(text[cs].encode("utf-8")) if cs == ce < n_text and j in piece_set else to_utf8(ce)
                    out.byte_starts[at + j], out.byte_ends[at + j] = bs, be
        if holds:
            return
        b_starts, b_ends = out.byte_starts, out.byte_ends
        for j in pieces:
            b_starts[at + j], b_ends[at + j] = byte_piece_span(b_starts[at + j], b_ends[at + j], b_ends[at + j - 1] if j else -1)

    def _plain_entry(self, sub: str) -> tuple:
        """Cache entry of a chunk the model sees as it is."""
        ids, m_starts, m_ends = self.model.tokenize_columns(sub)
        toks = self.model.token_values_columns(sub, ids, m_starts, m_ends, self._tokens_of(ids))
        return self._entry_kernel(ids, toks, m_starts, m_ends, m_starts, m_ends, True, BYTE_PIECES)

    def _mapped_entry(self, sub: str) -> tuple:
        """Cache entry of a chunk the model sees as the proxies of its UTF-8 bytes.

        The model's spans are byte positions; a token's chars run from the char holding its
        first byte to the one holding its last byte (the alignment HF's ByteLevel gives every
        proxy: each byte of a character is aligned to the whole character)."""
        got = self.model.tokenize_utf8(sub)
        if got is not None:  # one native call: ids, byte spans and char spans
            ids, b_start, b_end, c_start, c_end, _ = got
            return self._entry_kernel(ids, self._tokens_of(ids), c_start, c_end, b_start, b_end, False, BYTE_PIECES)
        data = sub.encode("utf-8")
        proxy = bytes_to_proxy(data)
        ids, b_start, b_end = self.model.tokenize_columns(proxy)
        toks = self.model.token_values_columns(proxy, ids, b_start, b_end, self._tokens_of(ids))
        if len(data) == len(sub):  # ASCII: one byte per character
            return self._entry_kernel(ids, toks, b_start, b_end, b_start, b_end, True, BYTE_PIECES)
        # char index of every byte: the running count of lead bytes, minus one (idx[i + 1]: byte i)
        idx = list(accumulate(data.translate(LEAD_BYTES), initial=-1))
        first = list(map(idx.__getitem__, map((1).__add__, b_start)))
        stop = list(map((1).__add__, map(idx.__getitem__, b_end)))
        return self._entry_kernel(ids, toks, first, stop, b_start, b_end, True, BYTE_PIECES)

    def _mapped_maker(self) -> Callable[[str], tuple]:
        """`_mapped_entry`, or the model's native function that makes the same entries in one
        call (`Model.utf8_entry_maker`)."""
        maker = self._utf8_maker
        if maker is None:
            table = self._vocab_table()
            # (the fallback holds a weak proxy: the tokenizer keeps no reference cycle alive)
            fallback = partial(Tokenizer._mapped_entry, weakref.proxy(self))
            maker = (table is not None and self.model.utf8_entry_maker(table, BYTE_PIECES, fallback)) or False
            self._utf8_maker = maker
        return maker or self._mapped_entry

    def _plain_maker(self) -> Callable[[str], tuple]:
        """`_plain_entry`, or the model's native function that makes the same entries in one
        call (`Model.text_entry_maker`)."""
        maker = self._text_maker
        if maker is None:
            table = self._vocab_table()
            fallback = partial(Tokenizer._plain_entry, weakref.proxy(self))
            maker = (table is not None and self.model.text_entry_maker(table, BYTE_PIECES, fallback, CHUNK_CACHE_MAX_CHARS)) or False
            self._text_maker = maker
        return maker or self._plain_entry

    def _vocab_table(self) -> list[str | None] | None:
        """The model's vocab strings indexed by id (None for very sparse ids), decided once."""
        if self._id_table is None:
            table = self.model.vocab_by_id()
            # (a list: the native entry maker reads one)
            self._id_table = False if table is None else table if isinstance(table, list) else list(table)
        return self._id_table or None

    def _tokens_of(self, ids: list[int]) -> list[str]:
        """The model's vocab strings for ``ids`` (a table lookup once the table is built)."""
        table = self._id_table or self._vocab_table()
        if table is None:
            id_to_token = self.model.id_to_token
            return [id_to_token(i) for i in ids]  # type: ignore[misc]
        try:
            out = list(map(table.__getitem__, ids))
        except IndexError:
            out = [None]
        if None in out:  # ids outside the vocab table (should not happen): ask the model
            id_to_token = self.model.id_to_token
            return [id_to_token(i) for i in ids]  # type: ignore[misc]
        return out  # type: ignore[return-value]

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

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """tiktoken ``decode_tokens_bytes``: the bytes of each token (a special token's text in
        UTF-8). Only for byte-level tokenizers (tiktoken files, GPT-2-style tokenizer.json), whose
        tokens are bytes; an id that is no token raises KeyError."""
        if not self._pipeline.byte_level:
            raise ValueError(f"{self.name or 'this tokenizer'}: token bytes need a byte-level tokenizer "
                             "(tiktoken or a ByteLevel pre-tokenizer)")
        added = self._added
        model_id_to_token = self.model.id_to_token
        out: list[bytes] = []
        for id_ in ids:
            t = added.by_id.get(id_)
            if t is not None:
                out.append(t.content.encode("utf-8"))
                continue
            s = model_id_to_token(id_)
            if s is None:
                raise KeyError(f"id {id_} is no token of {self.name or 'this tokenizer'}")
            out.append(proxy_to_bytes(s))
        return out

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """tiktoken ``decode_with_offsets``: the text and, per token, the index in it of the first
        character holding one of the token's bytes (a token that starts inside a character points
        at that character). Bytes that are not UTF-8 raise UnicodeDecodeError, as in tiktoken.

        >>> from tokviz import load
        >>> load("cl100k").decode_with_offsets([15339, 1917])
        ('hello world', [0, 5])
        """
        pieces = self.decode_tokens_bytes(ids)
        offsets: list[int] = []
        chars = 0  # characters started so far: bytes that are not UTF-8 continuation bytes
        for b in pieces:
            offsets.append(max(0, chars - (0x80 <= b[0] < 0xC0)) if b else chars)
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(pieces).decode("utf-8"), offsets

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
        ).with_inputs_of(self)

    def with_inputs_of(self, other: Tokenizer) -> Tokenizer:
        """This tokenizer with ``other``'s truncation and padding settings (returns self)."""
        self._truncation, self._padding = other._truncation, other._padding
        return self
