"""The pipeline: added tokens -> normalize -> pre-tokenize -> model -> post-process; and decode.

`Tokenizer` is the one engine behind the GUI, the CLI and the trainers. It is assembled from
components (see the family packages) by the loaders in `tokviz.io`, and keeps every stage of a
run in `Encoding.stages`.

Contract (other work depends on these names):
    Tokenizer(model, *, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
              added_tokens=(), special_policy="hf", name="", source=None, config=None)
    Tokenizer.encode(text, *, add_special_tokens=True, allowed_special=None, trace=False) -> Encoding
    Tokenizer.decode(ids, *, skip_special_tokens=False) -> str
    Tokenizer.stages(text, *, allowed_special=None) -> Stages   (encode's stages, no model run)
    Tokenizer.vocab_size, token_to_id, id_to_token, get_vocab, info(), clear_caches()

``special_policy="hf"`` extracts every added token from the text (HF tokenizers);
``"tiktoken"`` treats special-token literals as ordinary text unless ``allowed_special`` admits
them (``"all"`` or a set of literals), as tiktoken's ``encode(text, disallowed_special=())``.

How a run goes (HF ``encode_single_sequence`` semantics, checked against HF on every bundle):

1. `AddedVocabulary.extract`: non-normalized added tokens are cut out of the raw text, each
   remaining piece is normalized, then normalized added tokens are cut out of it.
2. Every ordinary piece becomes a `ChunkPlan` (`PreTokenizer.plan`; the piece as its one chunk
   when there is no pre-tokenizer); 3. the model tokenizes each chunk;
4. a token's offsets are its chunk's ``original_span`` of the token's range, its word id the
   index of its chunk among all pieces (added tokens count as one); 5. the post-processor.

There is one production path (`Tokenizer._encode_plan`) and one reference path
(`tokviz.engine.reference`, the plain loop, which serves ``trace=True`` and is the oracle of
``tests/engine/test_paths.py``). The production path reads a plan's columns by blocks of
`_BLOCK` chunks: chunk texts -> one chunk cache (`tokviz.engine.chunk_cache`, with the entry
layout and the Python column kernels) -> the offsets of all tokens through the piece's alignment
and the text's `OffsetMap` (`_emit`). A chunk whose tokens have
their own offset rule (an empty token, a byte-fallback piece ``<0xNN>``) is redone by the
reference's `chunk_offsets`. The model kernels come from the optional native core when it is
built (`tokviz.engine.backend`).

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
no per-chunk Python code runs unless a chunk is irregular. Cache misses are made by C-level
passes too (``map(make, ...)`` over the distinct missing texts), and with the native core a
byte-level chunk's whole entry is one C call (`Model.utf8_entry_maker`).
Tried and dropped: separate paths per pipeline shape (byte-level without normalization, cut-only
pre-tokenizers, no pre-tokenizer), which bought little over these passes and drifted apart;
caching offsets relative to a chunk's original start (they need an "exact copy" test per
occurrence). Entries are tuples of atoms so that the cycle collector stops tracking them.
A text shorter than `_KEEP_RUN_CHARS` gets a compact `Encoding` (its column lists built and its
stages derived, by `Tokenizer.stages`, on first read), because a program that keeps one encoding
per line pays a full-collection visit for every object each one holds; a long text keeps what
its run built (deriving its stages again would redo the normalization). Pausing the collector
during a long encode still pays, but only on the main thread (see `Tokenizer.encode`).
A short line (one piece, one chunk: SentencePiece's usual call) runs the same steps; where the
general code would do nothing useful it takes the cheap case inside the same function (one
cache lookup instead of the column passes over missing texts, the native normalizer called
without a wrapper, one tuple of zeros for the compact columns), so its cost is the frames of the
steps themselves (no second encode path for it).
"""

from __future__ import annotations

import gc
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate
from operator import eq
from threading import current_thread, main_thread
from typing import Any, Literal, NamedTuple

from . import kernels, reference
from .added_tokens import AddedToken, AddedVocabulary
from .byte_alphabet import bytes_to_proxy
from .chunk_cache import (
    CACHE_LIMIT, RULE_CHARS, RULE_EXACT, RULE_HELD, SLOT_BYTE_PIECES, SLOT_EMPTIES, SLOT_IDS, SLOT_MODEL_ENDS,
    SLOT_MODEL_STARTS, SLOT_TOKENS, emit_columns, entry_of, ids_of,
)
from .caching import BoundedCache, clear_shared_caches
from .decoders import Decoder
from .encoding import (
    DERIVE_STAGES, Encoding, Segment, Stages, bind_source, make_encoding, make_segment, make_stages,
)
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .pretokenized import ChunkPlan, PreTokens
from .processors import PostProcessor
from .reference import BYTE_PIECES, byte_piece_span, chunk_offsets, holds_original
from .text import LEAD_BYTES, NormalizedText, OffsetMap, check_text, make_text, pick

__all__ = ["Tokenizer", "TokenizerConfig"]

# Chunks handled per round of C-level column passes: a pass holds the GIL from start to end, so
# on a long text the passes go by blocks and a GUI thread beside the encode stays responsive.
_BLOCK = 8192
# Texts at least this long are encoded with the cycle collector paused (see `Tokenizer.encode`).
_GC_PAUSE_CHARS = 100_000
_MAIN_THREAD = main_thread()
_new_tuple = tuple.__new__
# Texts at least this long keep the stages and the `OffsetMap` their run built, and list columns;
# a shorter one gets a compact `Encoding` (columns listed and stages derived on first access).
_KEEP_RUN_CHARS = 2048

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


class _LastRun(NamedTuple):
    """Steps 1-2 of the last short text encoded (`Tokenizer._runs`): a compact `Encoding` derives
    its stages from them when they are read right after the encode (the GUI's and most callers'
    order), instead of normalizing and pre-tokenizing again. One entry: it keeps no results alive."""

    text: str
    allowed_special: object
    runs: list[tuple[NormalizedText, int | None, ChunkPlan | None]]


def _made(texts: list[str], make: Callable[[str], tuple]) -> list[tuple]:
    """Every chunk's entry made anew (a model that samples: nothing is reused)."""
    return list(map(make, texts))


def _mask(n: int, specials: list[int]) -> list[int]:
    """The special-tokens mask of ``n`` tokens: 1 at the positions ``specials``."""
    mask = [0] * n
    for i in specials:
        mask[i] = 1
    return mask


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
        self._no_added = self._added.is_empty  # (the added vocabulary is fixed at construction)
        self._byte_level = _contains_type(pre_tokenizer, "ByteLevel")
        self._last_run: _LastRun | None = None
        # chunk text -> cache entry (`tokviz.engine.chunk_cache`), for chunks the model sees as
        # they are and for chunks it sees as byte proxies
        self._plain_cache = BoundedCache(CACHE_LIMIT)
        self._mapped_cache = BoundedCache(CACHE_LIMIT)
        self._id_table: list[str | None] | Literal[False] | None = None  # False: ids too sparse for a table
        self._utf8_maker: Callable[[str], tuple] | Literal[False] | None = None  # see `_mapped_maker`
        native = kernels.native  # the column kernels: native, or their Python twins
        self._emit_kernel = native.emit if native is not None else emit_columns
        self._entry_kernel = native.entry if native is not None else entry_of

    def __repr__(self) -> str:
        return f"Tokenizer(name={self.name!r}, model={_describe(self.model)}, pre_tokenizer={_describe(self.pre_tokenizer)})"

    def clear_caches(self) -> None:
        """Forget every cached chunk: the pipeline's, the model's and the process-wide ones (the
        byte proxies of the stage view). Results never depend on them."""
        self._last_run = None
        self._plain_cache.clear()
        self._mapped_cache.clear()
        self._id_table = self._utf8_maker = None
        self.model.clear_cache()
        clear_shared_caches()

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
        if len(text) < _GC_PAUSE_CHARS or not gc.isenabled() or current_thread() is not _MAIN_THREAD:
            return self._encode(text, add_special_tokens, allowed_special)
        # A long text allocates millions of small tuples and lists (no reference cycles), and
        # pausing the cycle collector meanwhile saves its repeated scans. Only on the main thread
        # (a script, the CLI): in another thread the application's own policy decides (the GUI's
        # `tokviz.gui.workers`), and a worker must not switch the collector of the whole process.
        gc.disable()
        try:
            return self._encode(text, add_special_tokens, allowed_special)
        finally:
            gc.enable()

    def stages(
        self, text: str, *, allowed_special: str | set[str] | frozenset[str] | None = None
    ) -> Stages:
        """Steps 1-2 of `encode` alone (added tokens, normalization, pre-tokenization): the same
        value as ``encode(text, allowed_special=...).stages``, without running the model."""
        if not isinstance(text, str):
            raise TypeError(f"stages() expects str, got {type(text).__name__}")
        check_text(text)
        last = self._last_run
        if last is not None and last.text is text and last.allowed_special == allowed_special:
            return self._stages_of(text, last.runs)
        return self._stages_of(text, self._runs(text, allowed_special))

    def _runs(
        self, text: str, allowed_special: str | set[str] | frozenset[str] | None
    ) -> list[tuple[NormalizedText, int | None, ChunkPlan | None]]:
        """Steps 1-2: added-token segments (with their id) and normalized ordinary pieces (id
        None), each with its chunk plan (None: an added token)."""
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        plan_of = self.pre_tokenizer.plan if self.pre_tokenizer is not None else ChunkPlan.whole
        if allowed_special is not None or not self._no_added:
            pieces = self._added.extract(text, normalize, skip_ids=self._skip_ids(allowed_special))
            return [(piece, added_id, None if added_id is not None else plan_of(piece)) for piece, added_id in pieces]
        if not text:
            return []
        normed = make_text(text, text, 0, len(text))
        if normalize is not None:
            normed = normalize(normed)
        return [(normed, None, plan_of(normed))] if normed.text else []

    def _stages_of(self, text: str, runs: list[tuple[NormalizedText, int | None, ChunkPlan | None]]) -> Stages:
        """The `Stages` of a run: its segments, and its pre-tokens from its plans."""
        segments: list[Segment] = []
        plans: list[ChunkPlan] = []
        for piece, added_id, plan in runs:
            if plan is not None:
                segments.append(make_segment(piece.orig_start, piece.orig_end, piece))
                plans.append(plan)
            else:
                special = self._added.by_id[added_id].special
                segments.append(make_segment(piece.orig_start, piece.orig_end, piece, added_id, special))
        return make_stages(text, tuple(segments), PreTokens(plans))

    def _encode(
        self,
        text: str,
        add_special_tokens: bool,
        allowed_special: str | set[str] | frozenset[str] | None,
    ) -> Encoding:
        out = _Columns()
        omap = OffsetMap(text)
        runs = self._runs(text, allowed_special)
        word = 0
        for piece, added_id, plan in runs:
            if plan is not None:
                word = self._encode_plan(plan, text, omap, word, out)
                continue
            s, e = piece.original_span(0, len(piece.text))
            if self._added.by_id[added_id].special:
                out.specials.append(len(out.ids))
            out.ids.append(added_id)
            out.tokens.append(piece.text)  # HF: the matched text (with any lstrip/rstrip spaces)
            out.offsets.append((s, e))
            out.byte_offsets.append((omap.to_utf8(s), omap.to_utf8(e)))
            out.word_ids.append(word)
            word += 1
        return self._finish(text, out, word, runs, omap, add_special_tokens, allowed_special)

    def _finish(
        self, text: str, out: _Columns, words: int, runs: list[tuple[NormalizedText, int | None, ChunkPlan | None]],
        omap: OffsetMap, add_special_tokens: bool, allowed_special: str | set[str] | frozenset[str] | None,
    ) -> Encoding:
        """The `Encoding` and step 5: a long text's keeps what its run built, a short text's is
        compact (see the performance notes)."""
        n = len(out.ids)
        if len(text) >= _KEEP_RUN_CHARS:
            enc = make_encoding(text, out.ids, out.tokens, out.offsets, out.byte_offsets, _mask(n, out.specials),
                                [0] * n, out.word_ids, self._stages_of(text, runs), None, omap, source=self)
        else:
            if allowed_special is not None and not isinstance(allowed_special, str):
                allowed_special = frozenset(allowed_special)  # (the caller's set may change later)
            # (its stages are often read next; ``tuple.__new__``: the NamedTuple's own ``__new__`` is Python)
            self._last_run = _new_tuple(_LastRun, (text, allowed_special, runs))
            # (compact columns are tuples: one tuple of zeros serves as the type ids, and as the
            # mask without special tokens and the word ids of one word; equal columns share it)
            zeros = (0,) * n
            mask = _mask(n, out.specials) if out.specials else zeros
            enc = make_encoding(text, out.ids, out.tokens, out.offsets, out.byte_offsets, mask, zeros,
                                zeros if words <= 1 else out.word_ids, DERIVE_STAGES,
                                source=self, allowed_special=allowed_special, compact=True)
        if self.post_processor is not None:  # (a processor's own `Encoding` is bound to us too)
            enc = bind_source(self.post_processor.process(enc, add_special_tokens=add_special_tokens), self)
        return enc

    def _encode_plan(self, plan: ChunkPlan, text: str, omap: OffsetMap, word: int, out: _Columns) -> int:
        """Steps 3-4 for the chunks of one plan, by blocks of `_BLOCK` chunks; the next word id."""
        n = len(plan.texts)
        if not n:
            return word
        if plan.byte_map:
            cache, make = self._mapped_cache, self._mapped_maker()
        else:
            cache, make = self._plain_cache, self._plain_entry
        entries = cache.entries if self.model.deterministic else _made  # (BPE dropout: sampled anew)
        piece = plan.piece
        # byte-level chunks that hold their original text's very bytes: all (an unchanged
        # piece), or as tested per chunk
        exact: bool | None = None
        if self._byte_level:
            o = piece.orig_start
            exact = plan.byte_map and piece.starts is None and piece.text == text[o : o + len(piece.text)]
        if n <= _BLOCK:
            return self._emit(plan, 0, n, entries(plan.texts, make), text, omap, exact, word, out)
        for a in range(0, n, _BLOCK):
            b = min(a + _BLOCK, n)
            word = self._emit(plan, a, b, entries(plan.texts[a:b], make), text, omap, exact, word, out)
        return word

    def _emit(
        self, plan: ChunkPlan, a: int, b: int, entries: list[tuple], text: str, omap: OffsetMap,
        exact: bool | None, word: int, out: _Columns,
    ) -> int:
        """Append the tokens of chunks ``a..b`` of ``plan`` (their cache ``entries``) to ``out``.

        One column kernel (`emit_columns` or the native ``emit``) appends every column for all
        tokens at once: a token of the chunk at piece position ``p`` spans from the original
        start of piece char ``p + first`` to the original end of piece char ``p + last``; its
        bytes are those chars' UTF-8 positions, or, in a byte-level chunk that holds its
        original bytes, the chunk's first byte plus the model's span. Irregular chunks are then
        redone one by one by the reference's `chunk_offsets`.
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
        irregular = self._emit_kernel(
            entries, starts, piece.orig_start, piece.starts, piece.ends, u8, rule, bases, holds, word,
            out.ids, out.tokens, out.offsets, out.byte_offsets, out.word_ids)
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
        self, plan: ChunkPlan, a: int, entries: list[tuple], at0: int, irregular: list[int], out: _Columns,
        text: str, omap: OffsetMap, holds: bool | list[bool],
    ) -> None:
        """Redo the offsets of the ``irregular`` chunks of a block (`_redo`; the block's first
        token is ``out``'s token ``at0``), or of all of them when the piece is a text type with
        its own span rule (the reference's `chunk_offsets`)."""
        at = list(accumulate(map(len, map(ids_of, entries)), initial=at0))
        offsets, byte_offsets = out.offsets, out.byte_offsets
        if type(plan.piece) in _PLAIN_SPAN_TYPES:
            for k in irregular:
                self._redo(plan, a + k, entries[k], at[k], offsets, byte_offsets, text, omap,
                           holds if type(holds) is bool else holds[k])
            return
        for k, entry in enumerate(entries):
            spans = list(zip(entry[SLOT_IDS], entry[SLOT_MODEL_STARTS], entry[SLOT_MODEL_ENDS]))
            offsets[at[k] : at[k + 1]], byte_offsets[at[k] : at[k + 1]] = chunk_offsets(
                plan.chunk(a + k), spans, entry[SLOT_TOKENS], text, omap.to_utf8, byte_level=self._byte_level)

    def _redo(
        self, plan: ChunkPlan, k: int, entry: tuple, at: int, offsets: list[tuple[int, int]],
        byte_offsets: list[tuple[int, int]], text: str, omap: OffsetMap, holds: bool,
    ) -> None:
        """The tokens of chunk ``k`` (its first token at ``at``) with their own offset rule, as
        the reference computes them: an empty token's span is its chunk's ``original_span``;
        a byte-fallback piece gets the next byte of its character (unless the chunk ``holds``
        its original bytes: then every token already has exactly its bytes)."""
        m_starts, m_ends = entry[SLOT_MODEL_STARTS], entry[SLOT_MODEL_ENDS]
        pieces = entry[SLOT_BYTE_PIECES]
        if entry[SLOT_EMPTIES]:
            span = plan.chunk(k).original_span
            piece_set = frozenset(pieces)
            to_utf8, n_text = omap.to_utf8, len(text)
            for j in entry[SLOT_EMPTIES]:
                cs, ce = offsets[at + j] = span(m_starts[j], m_ends[j])
                if not holds:
                    bs = to_utf8(cs)
                    # (an empty byte piece stands for bytes of the character at its position)
                    be = bs + len(text[cs].encode("utf-8")) if cs == ce < n_text and j in piece_set else to_utf8(ce)
                    byte_offsets[at + j] = (bs, be)
        if holds:
            return
        for j in pieces:
            bs, be = byte_offsets[at + j]
            byte_offsets[at + j] = byte_piece_span(bs, be, byte_offsets[at + j - 1][1] if j else -1)

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

    def _vocab_table(self) -> list[str | None] | None:
        """The model's vocab strings indexed by id (None for very sparse ids), decided once."""
        if self._id_table is None:
            vocab = self.model.get_vocab()
            size = max(vocab.values(), default=-1) + 1
            if size > 4 * len(vocab) + 1024:  # very sparse ids: do not build a huge table
                self._id_table = False
            else:
                table = [None] * size
                # (later entries win, as in the loop `for tok, i in vocab.items(): table[i] = tok`)
                deque(map(table.__setitem__, vocab.values(), vocab.keys()), maxlen=0)
                self._id_table = table
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
