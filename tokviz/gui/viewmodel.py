"""The Inspect view-model: the only gateway between the widgets and the engine.

Widgets call methods (``set_text``, ``load_tokenizer``, ``hover``, ``select_token`` ...) and
listen to signals (``encoding_changed``, ``hover_changed`` ...). Engine work (loading a file,
encoding, tracing one token) runs in background lanes (`tokviz.gui.workers.Lanes`): the latest
request wins and nothing blocks the GUI thread. The view-model keeps the last `Encoding` and the
text it belongs to; live typing re-encodes only a window around the edit
(`tokviz.engine.incremental`) and tells the panes which tokens changed (a `Splice`), so they redraw
only that part.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from ..analysis.facts import TokenizerFacts
from ..engine.encoding import Encoding, Token
from ..engine.incremental import Splice, line_end, line_start, reencode
from ..engine.pretokenized import PreTokens, pre_token_spans
from ..engine.text import NormalizedText, OffsetMap, check_text
from ._compat import emit
from .catalog import load_error
from .display import ViewMode, chunk_line_ends, token_line_ends
from .workers import CancelToken, Lanes, to_gui

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.tokenizer import Tokenizer

__all__ = ["InspectViewModel", "EncodingUpdate", "Stats", "TokenDetails"]

PREVIEW_MIN_CHARS = 150_000  # texts longer than this get a quick preview of their start
PREVIEW_CHARS = 16_000


@dataclass(frozen=True, slots=True)
class Stats:
    tokens: int
    chars: int
    bytes: int
    words: int
    utf16: int

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    @property
    def tokens_per_char(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0


@dataclass(frozen=True, slots=True)
class EncodingUpdate:
    """A finished encode: the encoding, what changed since the last one, and its statistics."""

    encoding: Encoding
    splice: Splice | None  # None: everything changed
    stats: Stats
    special_literals: tuple[tuple[int, int, int | None], ...]  # (start, end, id if encoded as special)
    text_bytes: bytes
    offset_map: OffsetMap
    seconds: float
    normalized: NormalizedText | None = None
    normalized_map: OffsetMap | None = None
    token_line_ends: list[int] | None = None  # for full updates: tokens / chunks holding a newline
    chunk_line_ends: list[int] | None = None
    partial: bool = False  # a quick preview of the start of a long text; the full encoding follows
    unk_id: int | None = None  # the model's unknown token ([UNK], <unk>), styled apart in every view
    unknown: tuple[int, ...] = ()  # indices of the tokens that are the unknown token
    # the pre-token chunks' original starts and ends as columns (full encodes; None after a splice)
    chunk_spans: tuple[Sequence[int], Sequence[int]] | None = None
    # a token id's own bytes (`TokenizerFacts.surface`), None for a tokenizer without facts
    surface: Callable[[int], bytes] | None = None


@dataclass(frozen=True, slots=True)
class TokenDetails:
    """What the token card shows for one token (the trace is filled in asynchronously)."""

    token: Token
    text_bytes: bytes
    utf16: tuple[int, int]
    chunk: str | None  # the pre-token chunk holding the token, as the pre-tokenizer left it (Ġ, ▁ ...)
    traced: Token | None  # the same token from an encode with trace=True, or None while pending
    chunk_original: str | None = None  # the same chunk as characters of the user's text
    unknown: bool = False  # the model's unknown token: the characters it covers are not in the vocabulary
    surface: bytes | None = None  # the token's own bytes (`TokenizerFacts.surface`), None if unknown
    exact_span: tuple[int, int] | None = None  # the exact char span, None when it cannot be computed
    exact_text: str = ""  # the original text under ``exact_span``


def unknown_token_id(tok: Any) -> int | None:
    """The id of the model's unknown token, or None: `TokenizerFacts.unknown_id`, the one rule
    Inspect, Compare and the corpus statistics share (a tokenizer_config ``unk_token`` the model
    never emits does not count)."""
    from ..engine.tokenizer import Tokenizer

    return TokenizerFacts.of(tok).unknown_id if isinstance(tok, Tokenizer) else None


# Exact spans are computed on the GUI thread (on first use, for the card, the tooltips and the exact
# span mode) only up to here: exact_alignment costs about 70 µs a character on a busy machine. Longer
# texts get them from the offset lint's worker (`tokviz.gui.lint_viewmodel`, its first 20,000 chars).
EXACT_MAX_CHARS = 4_000


def token_surface(tok: Any) -> Callable[[int], bytes] | None:
    """A token id's own bytes for ``tok`` (`TokenizerFacts.surface`), or None when ``tok`` is not
    an engine tokenizer: the text and bytes views draw the token itself with it."""
    from ..engine.tokenizer import Tokenizer

    return TokenizerFacts.of(tok).surface if isinstance(tok, Tokenizer) else None


def compute_stats(text: str, text_bytes: bytes, enc: Encoding, om: OffsetMap) -> Stats:
    return Stats(
        tokens=len(enc.ids),
        chars=len(text),
        bytes=len(text_bytes),
        words=len(text.split()),  # the runs of non-whitespace (str.split and regex \S agree on what whitespace is)
        utf16=om.to_utf16(len(text)),
    )


class InspectViewModel(QObject):
    """State of the Inspect tab (see the module docstring)."""

    tokenizer_changed = Signal(object)  # (name, path, info dict) or None
    tokenizer_loading = Signal(str)  # name being loaded
    pattern_needed = Signal(object)  # (path, name): a rank file that needs a pattern (load again with one)
    encoding_changed = Signal(object)  # EncodingUpdate
    busy_changed = Signal(bool)
    error_raised = Signal(str)
    hover_changed = Signal(object)  # (start, end) original code points, or None
    selection_changed = Signal(int)  # token index, -1 for none
    details_changed = Signal(object)  # TokenDetails or None
    view_mode_changed = Signal(object)  # ViewMode
    text_replaced = Signal(object)  # str, replaced from outside the editor (object: PySide drops a leading BOM of a str)
    options_changed = Signal()
    tokenizer_load_failed = Signal(object)  # (path, message): the previous tokenizer stays active
    marks_changed = Signal()  # lint marks or the span mode (HF-compatible / exact) changed
    span_mode_changed = Signal(str)  # "hf" or "exact": every pane that draws spans follows it

    def __init__(self, parent: QObject | None = None, *, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self._lanes = lanes or Lanes(self)
        self._lanes.busy_changed.connect(self._on_busy)
        self.tokenizer: Tokenizer | None = None
        self.tokenizer_name = ""
        self.tokenizer_path: Path | None = None
        self.text = ""
        self.add_special_tokens = True
        self.honour_special_literals = False
        self.view_mode = ViewMode.TEXT
        self.update: EncodingUpdate | None = None  # last applied
        self._base_text = ""  # text of self.update
        self.selected = -1
        self.hovered: tuple[int, int] | None = None
        self.incremental = True
        self._special_re: re.Pattern[str] | None = None
        self._special_ids: dict[str, int] = {}
        self._loading: Path | None = None  # the file being loaded, until it succeeds or fails
        # offset lint (tokviz.gui.lint_viewmodel): marks drawn in every pane, and which spans the
        # highlights use ("hf": Encoding.offsets; "exact": the exact spans of the same tokens)
        self.lint_marks: Any = None
        self.span_mode = "hf"
        self._exact_spans: tuple[Encoding, list[tuple[int, int]]] | None = None

    # ------------------------------------------------------------------ queries
    @property
    def encoding(self) -> Encoding | None:
        return self.update.encoding if self.update else None

    def is_busy(self) -> bool:
        return self._lanes.any_busy()

    def is_encoding(self) -> bool:
        """A tokenizer load or an encode is running or waiting (the tokens shown may change);
        `is_busy` also counts the other tabs' jobs that share these lanes."""
        return self._lanes.is_busy("encode") or self._lanes.is_busy("load")

    # ------------------------------------------------------------------ tokenizer
    def load_tokenizer(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        pattern: str | None = None,
        special_tokens: dict[str, int] | None = None,
    ) -> None:
        """Load a tokenizer file in the background; the current one stays until it succeeds.

        A tiktoken rank file that no published encoding matches needs ``pattern`` (and maybe
        ``special_tokens``): without them ``pattern_needed`` is emitted instead of loading.
        """
        path = Path(path)
        label = name or path.name

        def prepare():  # noqa: ANN202
            def job(token: CancelToken):  # noqa: ANN202
                from ..io.registry import shared_registry
                from ..io.tiktoken_ranks import needs_pattern

                reg = shared_registry()
                if pattern is None and special_tokens is None and not reg.holds(path, pattern=pattern, special_tokens=special_tokens) and needs_pattern(path):
                    return None
                # one tokenizer per file, shared with Compare's rows (tokviz.io.registry)
                tok = reg.get(path, pattern=pattern, special_tokens=special_tokens)
                try:
                    info = dict(tok.info())
                except Exception:  # noqa: BLE001 - info is decoration; the tokenizer itself loaded
                    info = {}
                return tok, info

            return job

        def done(result) -> None:  # noqa: ANN001
            if result is None:
                emit(self.pattern_needed, (path, label))
                return
            tok, info = result
            self.tokenizer = tok
            self.tokenizer_name = label
            self.tokenizer_path = path
            self._build_special_index(tok)
            self.update = None
            emit(self.tokenizer_changed, (label, path, info))
            self._request_encode(full=True)
            self._loading = None

        def failed(msg: str) -> None:
            self._loading = None
            emit(self.tokenizer_load_failed, (path, msg))
            emit(self.error_raised, load_error(path, msg))

        self._loading = path
        emit(self.tokenizer_loading, label)
        self._lanes.submit("load", prepare, done, failed)

    @property
    def pattern_label(self) -> str | None:
        """The pre-tokenizer pattern in use, for rank files and GGUF files (the token card's row)."""
        extra = getattr(getattr(self.tokenizer, "config", None), "extra", None) or {}
        if extra.get("format") == "tiktoken":
            preset = extra.get("pattern_preset")
            return "custom regex" if preset in (None, "custom") else f"{preset} preset"
        if extra.get("format") == "gguf" and extra.get("gguf_model") == "gpt2":
            return f"llama.cpp pre-tokenizer {extra.get('gguf_pre') or 'default'!r}"
        return None

    def set_tokenizer(self, tok: Tokenizer, *, name: str = "") -> None:
        """Use an already loaded tokenizer (tests, embedding)."""
        self.tokenizer = tok
        self.tokenizer_name = name or getattr(tok, "name", "") or "tokenizer"
        self.tokenizer_path = None
        self._build_special_index(tok)
        self.update = None
        emit(self.tokenizer_changed, (self.tokenizer_name, None, {}))
        self._request_encode(full=True)

    def _build_special_index(self, tok: Any) -> None:
        specials = [a for a in getattr(tok, "added_tokens", ()) if getattr(a, "special", False) and a.content]
        self._special_ids = {a.content: a.id for a in specials}
        if specials:
            alts = sorted((a.content for a in specials), key=len, reverse=True)
            self._special_re = re.compile("|".join(re.escape(s) for s in alts))
        else:
            self._special_re = None

    # ------------------------------------------------------------------ text and options
    def set_text(self, text: str, *, from_editor: bool = True) -> None:
        """Replace the whole text; ``from_editor=False`` (files, settings, menus) tells the editor
        through ``text_replaced``. Edits from the editor itself come through `apply_edit`."""
        if text == self.text and self.update is not None:
            return
        self.text = text
        if not from_editor:
            emit(self.text_replaced, text)
        self._request_encode(full=False)

    def apply_edit(self, start: int, end: int, text: str) -> None:
        """An edit from the editor: code points ``[start, end)`` of the text become ``text``.

        The editor reports the exact characters (see `ExactTextEdit`); the text stays the truth.
        """
        if not (0 <= start <= end <= len(self.text)):
            emit(self.error_raised, f"Ignored an edit outside the text ({start}..{end} of {len(self.text)} characters)")
            return
        self.set_text(self.text[:start] + text + self.text[end:])

    def set_add_special_tokens(self, on: bool) -> None:
        if on != self.add_special_tokens:
            self.add_special_tokens = on
            emit(self.options_changed)
            self._request_encode(full=True)

    def set_honour_special_literals(self, on: bool) -> None:
        """tiktoken-style tokenizers: treat typed special literals as special tokens (allowed_special="all")."""
        if on != self.honour_special_literals:
            self.honour_special_literals = on
            emit(self.options_changed)
            self._request_encode(full=True)

    def set_view_mode(self, mode: ViewMode | str) -> None:
        mode = ViewMode(mode)
        if mode is not self.view_mode:
            self.view_mode = mode
            emit(self.view_mode_changed, mode)

    def cancel(self) -> None:
        """Stop waiting for the running encode; the last finished encoding stays on screen."""
        self._lanes.cancel("encode")
        self._lanes.cancel("load")
        if self._loading is not None:  # the picker goes back to the tokenizer that stays active
            path, self._loading = self._loading, None
            emit(self.tokenizer_load_failed, (path, "cancelled"))

    @property
    def is_tiktoken_like(self) -> bool:
        """The tokenizer follows tiktoken's special-token policy (typed literals are plain text by default)."""
        return self.tokenizer is not None and self.tokenizer.special_policy == "tiktoken"

    @property
    def adds_special_tokens(self) -> bool:
        """The tokenizer's post-processor adds special tokens (BOS/EOS/CLS/SEP) to an encoding:
        only then does "Add special tokens" change anything."""
        post = getattr(self.tokenizer, "post_processor", None)
        return post is not None and post.added_tokens(False) > 0

    def _allowed_special(self) -> str | None:
        if self.is_tiktoken_like:
            return "all" if self.honour_special_literals else None
        return None

    def _request_encode(self, *, full: bool) -> None:
        if self.tokenizer is None:
            return
        if full:
            self.update = None

        def prepare():  # noqa: ANN202 - runs on the GUI thread when the job starts
            tok = self.tokenizer
            text = self.text
            add = self.add_special_tokens
            allowed = self._allowed_special()
            base = self.update if (self.incremental and self.update is not None and not self.update.partial) else None
            base_text = self._base_text
            # a long text that is new (or a big paste) gets a preview of its start
            special_re = self._special_re
            job = self._make_job(tok, text, add, allowed, base, base_text, special_re)
            if len(text) > PREVIEW_MIN_CHARS and (base is None or abs(len(text) - len(base_text)) > PREVIEW_CHARS):
                # Encode the first lines first and show them, then the whole text (one after the
                # other: threads share the GIL, so running both at once would only slow the preview).
                cut = text.rfind("\n", 0, PREVIEW_CHARS)
                cut = cut + 1 if cut > 0 else PREVIEW_CHARS
                preview = self._make_job(tok, text[:cut], add, allowed, None, "", special_re, partial=True)
                whole = job

                def job(token: CancelToken) -> EncodingUpdate | None:  # noqa: F811 - wraps the whole-text job
                    head = preview(token)
                    if head is not None and not token.cancelled:
                        to_gui(self, "_on_preview", (text, head))
                    return whole(token)

            return job

        def done(result: EncodingUpdate | None) -> None:
            if result is None:
                return
            self.update = result
            self._base_text = result.encoding.text
            if self.selected >= len(result.encoding.ids):
                self.select_token(-1)
            emit(self.encoding_changed, result)
            if self.selected >= 0:
                self.select_token(self.selected)

        def failed(msg: str) -> None:
            self.update = None
            emit(self.error_raised, f"Could not tokenize the text: {msg}")

        self._lanes.submit("encode", prepare, done, failed)

    def _on_preview(self, payload: tuple[str, EncodingUpdate]) -> None:
        text, result = payload
        # only while the whole encoding of this very text has not arrived
        if self.text != text or (self.update is not None and self.update.encoding.text == text):
            return
        self.update = result
        emit(self.encoding_changed, result)

    @staticmethod
    def _make_job(tok, text, add, allowed, base, base_text, special_re, *, partial: bool = False):  # noqa: ANN001, ANN205
        def job(token: CancelToken) -> EncodingUpdate | None:  # worker thread
            import time

            t0 = time.perf_counter()
            check_text(text)
            splice = None
            if base is not None:
                r = reencode(tok, base_text, base.encoding, text, add_special_tokens=add, allowed_special=allowed)
                enc, splice = r.encoding, r.splice
            else:
                enc = tok.encode(text, add_special_tokens=add, allowed_special=allowed)
            if token.cancelled:
                return None
            text_bytes = text.encode("utf-8")
            om = enc.offset_map  # the encoding's own map: the next keystroke's splice reuses it
            om.to_utf16(len(text))  # build the conversion tables here, not on the GUI thread
            om.to_utf8(len(text))
            om.from_utf8(0)
            tle = cle = spans = None
            if splice is None:  # the panes rebuild: their line breaks and chunk spans, off the GUI thread
                tle = token_line_ends(enc.byte_offsets, text_bytes)
                if enc.stages is not None:
                    spans = pre_token_spans(enc.stages.pre_tokens)
                    cle = chunk_line_ends(spans[0], text)
            norm = enc.stages.normalized if enc.stages is not None else None
            norm_map = None
            if norm is not None:  # (a map depends on the text only: an unchanged text reuses the text's)
                norm_map = om if norm.text == text else OffsetMap(norm.text)
            if norm_map is not None:
                norm_map.to_utf16(len(norm.text))
            stats = compute_stats(text, text_bytes, enc, om)
            uid = unknown_token_id(tok)
            unknown: tuple[int, ...] = ()
            if uid is not None:  # (the unknown id's positions in one C-level pass, then the special ones dropped)
                mask = enc.special_tokens_mask
                unknown = tuple(i for i in compress(range(len(enc.ids)), map(uid.__eq__, enc.ids)) if not mask[i])
            literals: list[tuple[int, int, int | None]] = []
            if special_re is not None:
                specials_at = {
                    enc.offsets[i]: enc.ids[i] for i, m in enumerate(enc.special_tokens_mask) if m
                }
                for m in special_re.finditer(text):
                    span = (m.start(), m.end())
                    literals.append((span[0], span[1], specials_at.get(span)))
            return EncodingUpdate(
                enc, splice, stats, tuple(literals), text_bytes, om, time.perf_counter() - t0, norm, norm_map, tle, cle,
                partial, uid, unknown, spans, token_surface(tok),
            )

        return job

    def _on_busy(self, lane: str, busy: bool) -> None:  # noqa: ARG002
        emit(self.busy_changed, self._lanes.any_busy())

    # ------------------------------------------------------------------ lint marks and span mode
    def set_lint_marks(self, marks: Any) -> None:
        """Marks of the offset lint (a `tokviz.gui.lint_viewmodel.LintMarks`, or None)."""
        self.lint_marks = marks
        emit(self.marks_changed)

    def set_span_mode(self, mode: str, exact: tuple[Encoding, list[tuple[int, int]]] | None = None) -> None:
        """Highlight HF-compatible (``"hf"``) or exact (``"exact"``) token spans; ``exact`` gives the
        exact spans of the tokens of one encoding (used while that encoding is shown)."""
        if mode not in ("hf", "exact"):
            raise ValueError(f"span mode must be 'hf' or 'exact', not {mode!r}")
        old = self._exact_spans
        fresh = exact is not None and (old is None or old[0] is not exact[0] or old[1] != exact[1])
        changed = mode != self.span_mode or (mode == "exact" and fresh)  # the panes redraw their spans
        self.span_mode = mode
        if exact is not None:
            self._exact_spans = exact
        if changed:
            emit(self.span_mode_changed, mode)
        emit(self.marks_changed)

    def token_span(self, index: int) -> tuple[int, int]:
        """The span the panes highlight for token ``index`` (HF's, or exact in exact mode)."""
        enc = self.encoding
        assert enc is not None
        if self.span_mode == "exact":
            ex = self.exact_spans()
            if ex is not None:
                return ex[index]
        return enc.offsets[index]

    def token_spans(self) -> Sequence[tuple[int, int]]:
        """The spans every pane draws: HF's ``offsets``, or the exact spans in exact mode."""
        enc = self.encoding
        assert enc is not None
        ex = self.exact_spans() if self.span_mode == "exact" else None
        return ex if ex is not None else enc.offsets

    def exact_spans(self) -> list[tuple[int, int]] | None:
        """The exact spans of the shown tokens (`Encoding.exact_offsets`): the lint's when it gave
        them for this encoding, else computed here for texts up to `EXACT_MAX_CHARS`; None for a
        longer text before the lint ran, or an encoding without a tokenizer behind it."""
        enc = self.encoding
        if enc is None:
            return None
        ex = self._exact_spans
        if ex is not None and ex[0] is enc:
            return ex[1]
        if len(enc.text) > EXACT_MAX_CHARS:
            return None
        try:
            spans = enc.exact_offsets
        except ValueError:
            return None
        self._exact_spans = (enc, spans)
        return spans

    # ------------------------------------------------------------------ linking
    def hover(self, span: tuple[int, int] | None) -> None:
        """Highlight the original code-point span ``[start, end)`` in every pane (None clears)."""
        if span != self.hovered:
            self.hovered = span
            emit(self.hover_changed, span)

    def token_at(self, char: int) -> int:
        """Index of the (first) token covering original char ``char``, or -1."""
        enc = self.encoding
        if enc is None:
            return -1
        offs = enc.offsets
        lo, hi = 0, len(offs)
        # Spans are ordered except for post-processor tokens with empty spans; bisect then scan.
        while lo < hi:
            mid = (lo + hi) // 2
            if offs[mid][1] <= char and offs[mid][1] > offs[mid][0]:
                lo = mid + 1
            else:
                hi = mid
        for i in range(max(lo - 2, 0), min(lo + 3, len(offs))):
            s, e = offs[i]
            if s <= char < e:
                return i
        i = enc.token_at(char) if len(offs) < 5000 else None
        return -1 if i is None else i

    def select_token(self, index: int) -> None:
        enc = self.encoding
        if enc is None or not (0 <= index < len(enc.ids)):
            index = -1
        changed = index != self.selected
        self.selected = index
        if changed:
            emit(self.selection_changed, index)
        if index < 0:
            emit(self.details_changed, None)
            return
        assert enc is not None and self.update is not None
        tok = enc.token(index)
        om = self.update.offset_map
        chunk, chunk_original = self._chunk_text(enc, tok)
        unknown = tok.id == self.update.unk_id and not tok.special
        surface = self.update.surface
        exact = self.exact_spans()
        details = TokenDetails(tok, self.update.text_bytes, om.span_to_utf16(tok.start, tok.end), chunk, None,
                               chunk_original, unknown, None if surface is None or unknown else surface(tok.id),
                               exact[index] if exact is not None else None,
                               enc.text[slice(*exact[index])] if exact is not None else "")
        emit(self.details_changed, details)
        self._request_trace(index, details)

    def _chunk_text(self, enc: Encoding, tok: Token) -> tuple[str | None, str | None]:
        if enc.stages is None:
            return None, None
        chunks = enc.stages.pre_tokens
        # the first chunk ending after the token's start (bisecting the end column when there is one)
        if isinstance(chunks, PreTokens):
            lo = bisect_right(chunks.ends, tok.start)
        else:
            lo = bisect_right(chunks, tok.start, key=attrgetter("end"))
        if lo < len(chunks) and chunks[lo].start <= tok.start < chunks[lo].end:
            c = chunks[lo]
            return c.text, enc.text[c.start : c.end]
        return None, None

    def _request_trace(self, index: int, details: TokenDetails) -> None:
        tok = self.tokenizer
        enc = self.encoding
        if tok is None or enc is None:
            return
        text = enc.text
        add = self.add_special_tokens
        allowed = self._allowed_special()
        target = details.token

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> TokenDetails | None:
                # Trace a window of whole lines around the token; accept it only if the same token
                # (id and span) comes out of it, else trace the whole text.
                if target.start == target.end:
                    return replace(details, traced=target)
                ws = line_start(text, target.start)
                ws = line_start(text, ws - 1) if ws > 0 else 0
                we = line_end(text, target.end)
                we = line_end(text, we) if we < len(text) else we
                w = tok.encode(text[ws:we], add_special_tokens=False, allowed_special=allowed, trace=True)
                for t in w:
                    if t.id == target.id and (t.start + ws, t.end + ws) == (target.start, target.end):
                        if t.trace is not None or w.traces is None:
                            return replace(details, traced=t)
                if cancel.cancelled:
                    return None
                full = tok.encode(text, add_special_tokens=add, allowed_special=allowed, trace=True)
                if target.index < len(full.ids):
                    return replace(details, traced=full.token(target.index))
                return None

            return job

        def done(result: TokenDetails | None) -> None:
            if result is not None and self.selected == index and self.encoding is enc:
                emit(self.details_changed, result)

        self._lanes.submit("trace", prepare, done, lambda msg: emit(self.error_raised, f"Could not trace the token: {msg}"))

    # ------------------------------------------------------------------ export
    def encoding_json(self) -> dict[str, Any]:
        enc = self.encoding
        if enc is None:
            raise ValueError("nothing to export yet: no encoding")
        out: dict[str, Any] = {"tokenizer": self.tokenizer_name, "text": enc.text, "add_special_tokens": self.add_special_tokens}
        out.update(enc.to_json())
        out["word_ids"] = list(enc.word_ids)
        if enc.stages is not None:
            out["pre_tokens"] = [[c.text, c.start, c.end] for c in enc.stages.pre_tokens]
            out["normalized"] = enc.stages.normalized.text
        return out

    def export_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.encoding_json(), ensure_ascii=False, indent=1), encoding="utf-8")
