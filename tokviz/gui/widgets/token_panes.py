"""The pre-token chunk pane and the token pane: `SpanView`s fed from the view-model's encoding.

Each pane wraps the current `EncodingUpdate` in an item source that spells items lazily (only
lines being laid out are spelled, through a label cache), finds hard line breaks from the
newline positions of the text, and on a live-typing update (`Splice`) re-spells only the items
that changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from PySide6.QtWidgets import QWidget

from ..display import (
    Label,
    ViewMode,
    char_name,
    chunk_label,
    chunk_line_ends,
    hex_bytes,
    label_text,
    token_is_break,
    token_label,
    token_line_ends,
)
from ..viewmodel import EncodingUpdate, InspectViewModel
from .lint_panel import chunk_marks, paint_marks
from .span_view import FLAG_LITERAL, FLAG_NEUTRAL, FLAG_SPECIAL, FLAG_UNKNOWN, SpanView

__all__ = ["TokenPane", "ChunkPane", "TokenSource", "ChunkSource"]

_NL = re.compile(b"\n")


class TokenSource:
    """Tokens of one encoding, spelled in one view mode (see `tokviz.gui.display.token_label`)."""

    def __init__(self, u: EncodingUpdate, mode: ViewMode, cache: dict,
                 spans: Sequence[tuple[int, int]] | None = None) -> None:
        enc = u.encoding
        self.u = u
        self._spans = spans if spans is not None else enc.offsets  # HF's, or exact in exact mode
        self.mode = mode
        self.cache = cache
        self.keys = enc.ids
        self._tb = u.text_bytes
        self._n_bytes = len(u.text_bytes)
        self._enc = enc

    def __len__(self) -> int:
        return len(self._enc.ids)

    def span(self, i: int) -> tuple[int, int]:
        return self._spans[i]

    def surface(self, i: int) -> bytes | None:
        """Token ``i``'s own bytes, or None (no facts, or the unknown token: its text is shown)."""
        enc = self._enc
        get = self.u.surface
        if get is None or enc.special_tokens_mask[i] or enc.ids[i] == self.u.unk_id:
            return None
        return get(enc.ids[i])

    def flags(self, i: int) -> int:
        enc = self._enc
        if not enc.special_tokens_mask[i]:
            return FLAG_UNKNOWN if enc.ids[i] == self.u.unk_id else 0
        s, e = enc.offsets[i]
        return FLAG_SPECIAL | FLAG_LITERAL if e > s else FLAG_SPECIAL

    def is_break(self, i: int) -> bool:
        return token_is_break(self._enc.byte_offsets, self._tb, i)

    def label(self, i: int) -> Label:
        enc = self._enc
        mode = self.mode
        tb = self._tb
        n_bytes = self._n_bytes
        bs, be = enc.byte_offsets[i]
        sp = enc.special_tokens_mask[i]
        # Labels are cached by what they depend on. A token is "clean" when both ends fall on
        # character boundaries (not UTF-8 continuation bytes); a split one depends on its context.
        if mode is ViewMode.IDS:
            key: object = (1, enc.ids[i], sp)
        elif mode is ViewMode.VOCAB:
            key = (2, enc.tokens[i], sp)
        elif (bs >= n_bytes or tb[bs] & 0xC0 != 0x80) and (be >= n_bytes or tb[be] & 0xC0 != 0x80):
            surface = self.surface(i)
            key = (3 if mode is ViewMode.BYTES else 4, tb[bs:be], sp, be == bs and enc.tokens[i],
                   None if surface == tb[bs:be] else surface)
        else:
            key = None
        lab = self.cache.get(key) if key is not None else None
        if lab is None:
            lab = token_label(
                mode,
                token_id=enc.ids[i],
                vocab=enc.tokens[i],
                special=bool(sp),
                text_bytes=tb,
                byte_span=(bs, be),
                offset_map=self.u.offset_map,
                surface=None if mode is ViewMode.IDS or mode is ViewMode.VOCAB else self.surface(i),
            )
            if key is not None:
                if len(self.cache) > 300_000:
                    self.cache.clear()
                self.cache[key] = lab
        return lab

    def line_ends(self) -> list[int]:
        if self.u.token_line_ends is not None and self.u.encoding is self._enc:
            return self.u.token_line_ends
        return token_line_ends(self._enc.byte_offsets, self._tb)


class ChunkSource:
    """Pre-token chunks: as the pre-tokenizer left them (vocab view) or as original text.

    Spans come from the update's span columns when it has them (a full encode: the worker built
    them), so laying out a line makes no chunk objects; a stage spliced by live typing is read
    item by item.
    """

    def __init__(self, u: EncodingUpdate, mode: ViewMode, cache: dict) -> None:
        self.u = u
        self.chunks: Sequence = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        self.text = u.encoding.text
        self.raw = mode is ViewMode.VOCAB
        self.cache = cache
        self.keys = _Indices(len(self.chunks))
        self._n = len(self.chunks)
        self._starts, self._ends = u.chunk_spans or (None, None)

    def __len__(self) -> int:
        return self._n

    def span(self, i: int) -> tuple[int, int]:
        if self._starts is not None:
            return (self._starts[i], self._ends[i])  # type: ignore[index]
        c = self.chunks[i]
        return (c.start, c.end)

    def flags(self, i: int) -> int:
        return FLAG_NEUTRAL

    def is_break(self, i: int) -> bool:
        s, e = self.span(i)
        end = self.span(i + 1)[0] if i + 1 < self._n else len(self.text)
        return self.text.find("\n", s, max(end, e)) >= 0

    def label(self, i: int) -> Label:
        if self.raw:
            s = self.chunks[i].text
        else:
            a, b = self.span(i)
            s = self.text[a:b]
        lab = self.cache.get(s)
        if lab is None:
            lab = self.cache[s] = chunk_label(s)
            if len(self.cache) > 300_000:
                self.cache.clear()
        return lab

    def line_ends(self) -> list[int]:
        if self.u.chunk_line_ends is not None:
            return self.u.chunk_line_ends
        starts = self._starts if self._starts is not None else [c.start for c in self.chunks]
        return chunk_line_ends(starts, self.text)


class _Indices(Sequence[int]):
    """keys for chunks: their index (colors alternate by index)."""

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):  # noqa: ANN001, ANN204
        if isinstance(i, slice):
            return list(range(self._n))[i]
        return i


class TokenPane(SpanView):
    """Final tokens as colored spans, spelled by the view-model's view mode."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.placeholder = "Tokens appear here."
        self._cache: dict[object, Label] = {}
        vm.encoding_changed.connect(self._on_update)
        vm.view_mode_changed.connect(lambda _m: self.rebuild())
        vm.span_mode_changed.connect(lambda _m: self.rebuild())
        vm.hover_changed.connect(self._on_vm_hover)
        vm.selection_changed.connect(self._on_vm_select)
        vm.marks_changed.connect(self.viewport().update)
        self.item_hovered.connect(self._on_item_hovered)
        self.item_activated.connect(vm.select_token)
        self.set_tooltip_provider(self._tip)

    def paint_overlay(self, p, dy: float) -> None:  # noqa: ANN001
        marks = self.vm.lint_marks
        if marks is not None and self.vm.update is not None:
            paint_marks(self, p, dy, marks.tokens, marks.brackets)

    def _on_update(self, u: EncodingUpdate) -> None:
        sp = u.splice
        if sp is not None and self.count() == len(u.encoding.ids) - sp.added + sp.removed:
            # one item more in front: whether it ends a line depends on the text after it
            f = max(sp.first - 1, 0)
            src = TokenSource(u, self.vm.view_mode, self._cache, self.vm.token_spans())
            self.splice(f, sp.removed + sp.first - f, sp.added + sp.first - f, src)
        else:
            self.rebuild()

    def rebuild(self) -> None:
        u = self.vm.update
        if u is None:
            self.set_source(_empty(), [])
            return
        src = TokenSource(u, self.vm.view_mode, self._cache, self.vm.token_spans())
        self.set_source(src, src.line_ends())
    # -------------------------------------------------------------- linking
    def _on_item_hovered(self, i: int) -> None:
        enc = self.vm.encoding
        if enc is None or i < 0:
            self.vm.hover(None)
            return
        s, e = self.vm.token_span(i)
        self.vm.hover((s, e) if e > s else None)

    def _on_vm_hover(self, span) -> None:  # noqa: ANN001
        self.set_highlight(span)

    def _on_vm_select(self, i: int) -> None:
        self.set_selected(i)
        if i >= 0:
            self.ensure_visible(i)

    def _tip(self, i: int) -> str:
        u = self.vm.update
        if u is None or i >= len(u.encoding.ids):
            return ""
        t = u.encoding.token(i)
        piece = u.text_bytes[t.byte_start : t.byte_end]
        surface = TokenSource(u, self.vm.view_mode, self._cache).surface(i)
        own = surface if surface is not None else piece
        kind = " (special)" if t.special else " (UNKNOWN: the text it covers is lost)" if t.id == u.unk_id else ""
        lines = [f"token #{i}{kind} · id {t.id}", f"vocab {t.value!r}", f"bytes {hex_bytes(own) or '—'}"]
        ex = self.vm.exact_spans()
        exact = ex[i] if ex is not None else None
        if surface is not None and surface != piece:
            lines.append(f"HF span chars {t.start}–{t.end} covers {u.encoding.text[t.start:t.end]!r}"
                         f" ({hex_bytes(piece) or 'no bytes'}), not this token's text")
        else:
            lines.append(f"chars {t.start}–{t.end} · UTF-8 bytes {t.byte_start}–{t.byte_end}")
        if exact is not None and exact != (t.start, t.end):
            a, b = exact
            lines.append(f"exact span {a}–{b}: {u.encoding.text[a:b]!r}" if b > a else f"exact span {a}–{b}: covers no text")
            lines.append("the offset lint says why (click the token, then “Why?” in its card)")
        return "\n".join(lines)

    def label_texts(self) -> list[str]:
        """The painted text of every item (tests and exports)."""
        return [label_text(self.label(i)) for i in range(self.count())]


class ChunkPane(SpanView):
    """Pre-token chunks (boxes show their boundaries): original text, or pre-tokenized in the vocab view."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.placeholder = "Pre-token chunks appear here."
        self._cache: dict[str, Label] = {}
        vm.encoding_changed.connect(self._on_update)
        vm.view_mode_changed.connect(lambda _m: self._rebuild())
        vm.hover_changed.connect(self.set_highlight)
        vm.marks_changed.connect(self.viewport().update)
        self.item_hovered.connect(self._on_item_hovered)
        self.item_activated.connect(self._on_activated)
        self.set_tooltip_provider(self._tip)

    def paint_overlay(self, p, dy: float) -> None:  # noqa: ANN001
        u = self.vm.update
        if self.vm.lint_marks is not None and u is not None and u.encoding.stages is not None:
            paint_marks(self, p, dy, chunk_marks(u.encoding.stages.pre_tokens, self.vm.lint_marks, u.chunk_spans))

    def _on_update(self, u: EncodingUpdate) -> None:
        chunks = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        sp = u.splice
        if sp is not None and self.count() == len(chunks) - sp.chunk_added + sp.chunk_removed:
            f = max(sp.chunk_first - 1, 0)
            d = sp.chunk_first - f
            self.splice(f, sp.chunk_removed + d, sp.chunk_added + d, ChunkSource(u, self.vm.view_mode, self._cache))
        else:
            self._rebuild()

    def _rebuild(self) -> None:
        u = self.vm.update
        if u is None:
            self.set_source(_empty(), [])
            return
        src = ChunkSource(u, self.vm.view_mode, self._cache)
        self.set_source(src, src.line_ends())

    def label_texts(self) -> list[str]:
        return [label_text(self.label(i)) for i in range(self.count())]

    def _on_item_hovered(self, i: int) -> None:
        u = self.vm.update
        if u is None or i < 0 or u.encoding.stages is None:
            self.vm.hover(None)
            return
        c = u.encoding.stages.pre_tokens[i]
        self.vm.hover((c.start, c.end))

    def _on_activated(self, i: int) -> None:
        u = self.vm.update
        if u is None or u.encoding.stages is None:
            return
        c = u.encoding.stages.pre_tokens[i]
        t = self.vm.token_at(c.start)
        self.set_selected(i)
        if t >= 0:
            self.vm.select_token(t)

    def _tip(self, i: int) -> str:
        u = self.vm.update
        if u is None or u.encoding.stages is None:
            return ""
        c = u.encoding.stages.pre_tokens[i]
        src = u.encoding.text[c.start : c.end]
        first = char_name(src[0]) if src else "(empty)"
        return f"chunk #{i} as pre-tokenized: {c.text!r}\noriginal chars {c.start}–{c.end}: {src!r}\nstarts with {first}"


def _empty():  # noqa: ANN202
    from .span_view import _EmptySource

    return _EmptySource()
