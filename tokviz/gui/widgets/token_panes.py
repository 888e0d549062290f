"""The pre-token chunk pane and the token pane: `SpanView`s fed from the view-model's encoding.

They turn an `EncodingUpdate` into labels (`tokviz.gui.display`), and on a live-typing update
(`Splice`) they rebuild only the labels of the tokens that changed.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ..display import Label, ViewMode, char_name, chunk_label, hex_bytes, label_text, token_label
from ..viewmodel import EncodingUpdate, InspectViewModel
from .span_view import FLAG_LITERAL, FLAG_NEUTRAL, FLAG_SPECIAL, SpanView

__all__ = ["TokenPane", "ChunkPane"]


class TokenPane(SpanView):
    """Final tokens as colored spans, spelled by the view-model's view mode."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.placeholder = "Tokens appear here."
        self._cache: dict[object, Label] = {}
        vm.encoding_changed.connect(self._on_update)
        vm.view_mode_changed.connect(lambda _m: self.rebuild())
        vm.hover_changed.connect(self._on_vm_hover)
        vm.selection_changed.connect(self._on_vm_select)
        self.item_hovered.connect(self._on_item_hovered)
        self.item_activated.connect(vm.select_token)
        self.set_tooltip_provider(self._tip)

    # -------------------------------------------------------------- labels
    def _make_labels(self, u: EncodingUpdate, a: int, b: int) -> tuple[list[Label], list[int], list[int], list[bool]]:
        enc = u.encoding
        mode = self.vm.view_mode
        tb = u.text_bytes
        n_bytes = len(tb)
        om = u.offset_map
        cache = self._cache
        ids, toks, bofs, mask, offs = enc.ids, enc.tokens, enc.byte_offsets, enc.special_tokens_mask, enc.offsets
        labels: list[Label] = []
        flags: list[int] = []
        breaks: list[bool] = []
        for i in range(a, b):
            bs, be = bofs[i]
            sp = mask[i]
            piece = tb[bs:be]
            # A token is "clean" when both ends fall on character boundaries (UTF-8 lead bytes).
            clean = (bs >= n_bytes or tb[bs] & 0xC0 != 0x80) and (be >= n_bytes or tb[be] & 0xC0 != 0x80)
            # labels are cached per view mode (the cache is keyed by what the label depends on)
            if mode is ViewMode.IDS:
                key: object = (1, ids[i], sp)
            elif mode is ViewMode.VOCAB:
                key = (2, toks[i], sp)
            elif clean:
                key = (3 if mode is ViewMode.BYTES else 4, piece, sp, be == bs and toks[i])
            else:
                key = None
            lab = cache.get(key) if key is not None else None
            if lab is None:
                lab = token_label(
                    mode,
                    token_id=ids[i],
                    vocab=toks[i],
                    special=bool(sp),
                    text_bytes=tb,
                    byte_span=(bs, be),
                    offset_map=om,
                )
                if key is not None:
                    cache[key] = lab
            labels.append(lab)
            f = 0
            if sp:
                f = FLAG_SPECIAL
                s, e = offs[i]
                if e > s:
                    f |= FLAG_LITERAL
            flags.append(f)
            breaks.append(b"\n" in piece)
        if len(cache) > 200_000:
            cache.clear()
        return labels, list(ids[a:b]), flags, breaks

    def _on_update(self, u: EncodingUpdate) -> None:
        sp = u.splice
        span_of = u.encoding.offsets.__getitem__
        if sp is not None and self.count() == len(u.encoding.ids) - sp.added + sp.removed:
            labels, keys, flags, breaks = self._make_labels(u, sp.first, sp.first + sp.added)
            self.splice(sp.first, sp.removed, labels, keys, flags, breaks, span_of)
        else:
            self.rebuild()

    def rebuild(self) -> None:
        u = self.vm.update
        if u is None:
            self.set_items([], [], [], [], lambda i: (0, 0))
            return
        labels, keys, flags, breaks = self._make_labels(u, 0, len(u.encoding.ids))
        self.set_items(labels, keys, flags, breaks, u.encoding.offsets.__getitem__)

    # -------------------------------------------------------------- linking
    def _on_item_hovered(self, i: int) -> None:
        enc = self.vm.encoding
        if enc is None or i < 0:
            self.vm.hover(None)
            return
        s, e = enc.offsets[i]
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
        kind = " (special)" if t.special else ""
        return (
            f"token #{i}{kind} · id {t.id}\n"
            f"vocab {t.value!r}\n"
            f"bytes {hex_bytes(piece) or '—'}\n"
            f"chars {t.start}–{t.end} · UTF-8 bytes {t.byte_start}–{t.byte_end}"
        )

    def label_texts(self) -> list[str]:
        """The painted text of every item (tests and exports)."""
        return [label_text(self.label(i)) for i in range(self.count())]


class ChunkPane(SpanView):
    """Pre-token chunks as the pre-tokenizer left them (boxes show their boundaries)."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.placeholder = "Pre-token chunks appear here."
        vm.encoding_changed.connect(self._on_update)
        vm.view_mode_changed.connect(lambda _m: self._rebuild())
        vm.hover_changed.connect(self.set_highlight)
        self.item_hovered.connect(self._on_item_hovered)
        self.item_activated.connect(self._on_activated)
        self.set_tooltip_provider(self._tip)

    def _items(self, u: EncodingUpdate, a: int, b: int):  # noqa: ANN202
        chunks = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        text = u.encoding.text
        if self.vm.view_mode is ViewMode.VOCAB:
            # as the pre-tokenizer left it (byte-level proxies Ġ, Metaspace ▁ ...)
            labels = [chunk_label(c.text) for c in chunks[a:b]]
        else:
            labels = [chunk_label(text[c.start : c.end]) for c in chunks[a:b]]
        n = b - a
        breaks = ["\n" in text[c.start : c.end] for c in chunks[a:b]]
        return labels, list(range(a, b)), [FLAG_NEUTRAL] * n, breaks

    def _chunk_span_fn(self, u: EncodingUpdate):  # noqa: ANN202
        chunks = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        return lambda i: (chunks[i].start, chunks[i].end)

    def _on_update(self, u: EncodingUpdate) -> None:
        chunks = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        sp = u.splice
        if sp is not None and self.count() == len(chunks) - sp.chunk_added + sp.chunk_removed:
            labels, keys, flags, breaks = self._items(u, sp.chunk_first, sp.chunk_first + sp.chunk_added)
            self.splice(sp.chunk_first, sp.chunk_removed, labels, keys, flags, breaks, self._chunk_span_fn(u))
        else:
            self._rebuild()

    def _rebuild(self) -> None:
        u = self.vm.update
        if u is None:
            return
        chunks = u.encoding.stages.pre_tokens if u.encoding.stages is not None else ()
        labels, keys, flags, breaks = self._items(u, 0, len(chunks))
        self.set_items(labels, keys, flags, breaks, self._chunk_span_fn(u))

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
