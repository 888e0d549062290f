"""The two text panes of the Inspect tab: the raw text (editable) and the normalized text.

Both are ``QPlainTextEdit``s (which lay out lazily and scroll a megabyte smoothly). Decorations
(the linked highlight, changed normalized spans, special-token literals, no-break and other
invisible spaces) are extra selections computed only for the blocks in view, from the last
`EncodingUpdate`. Positions cross between code points and Qt's UTF-16 positions only through the
update's `OffsetMap`s.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QMouseEvent, QTextCharFormat, QTextCursor, QTextFormat, QTextOption
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from .._compat import emit
from ..display import char_name
from ..theme import Theme, mono_font, theme_for
from ..viewmodel import EncodingUpdate, InspectViewModel
from .exact_edit import ExactTextEdit
from .lint_panel import lint_selections, normalized_lint_selections
from .span_view import UNKNOWN_PEN

__all__ = ["RawPane", "NormalizedPane"]

_INVISIBLE_CATS = {"Cf", "Cc", "Zs", "Zl", "Zp"}
LARGE_IDENTITY_CHARS = 200_000


def _visible_range(edit: QPlainTextEdit) -> tuple[int, int]:
    """UTF-16 positions ``[start, end)`` of the blocks currently in view."""
    block = edit.firstVisibleBlock()
    if not block.isValid():
        return (0, 0)
    start = block.position()
    height = edit.viewport().height()
    offset = edit.contentOffset()
    end = start
    while block.isValid():
        geo = edit.blockBoundingGeometry(block).translated(offset)
        end = block.position() + block.length()
        if geo.top() > height:
            break
        block = block.next()
    doc_len = edit.document().characterCount() - 1
    return (start, min(end, doc_len))


class _DecoratedEdit(ExactTextEdit):
    hovered_char = Signal(int)  # code point index in this pane's text, -1 when off text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(mono_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        # spaces get Qt's dot; every other invisible is a stand-in with a mark painted by ExactTextEdit
        opt = self.document().defaultTextOption()
        opt.setFlags(opt.flags() | QTextOption.Flag.ShowTabsAndSpaces)
        self.document().setDefaultTextOption(opt)
        self.setMouseTracking(True)
        self.theme: Theme = theme_for(False)
        self._redecorate = QTimer(self)
        self._redecorate.setSingleShot(True)
        self._redecorate.setInterval(0)
        self._redecorate.timeout.connect(self.decorate)
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._redecorate.start())
        self._last_hover = -2

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        bg = QColor(theme.literal)
        bg.setAlpha(40)
        self.set_mark_colors(theme.literal if not theme.dark else theme.literal.lighter(130), bg)
        self.decorate()

    def schedule_decorate(self) -> None:
        self._redecorate.start()

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().resizeEvent(event)
        self._redecorate.start()

    def decorate(self) -> None:  # overridden
        pass

    def _char_at(self, pos: QPoint) -> int:
        """UTF-16 position under the mouse, or -1 when the mouse is not over a character."""
        cur = self.cursorForPosition(pos)
        rect = self.cursorRect(cur)
        if abs(rect.center().y() - pos.y()) > rect.height():
            return -1
        p = cur.position()
        # cursorForPosition returns the nearest boundary; step back when the mouse is left of it.
        if rect.x() > pos.x() and p > 0:
            p -= 1
        return p

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseMoveEvent(event)
        u = self._char_at(event.position().toPoint())
        if u != self._last_hover:
            self._last_hover = u
            emit(self.hovered_char, u)

    def leaveEvent(self, event) -> None:  # noqa: ANN001, N802
        super().leaveEvent(event)
        self._last_hover = -2
        emit(self.hovered_char, -1)

    def _sel(self, start: int, end: int, fmt: QTextCharFormat) -> QTextEdit.ExtraSelection:
        s = QTextEdit.ExtraSelection()
        cur = QTextCursor(self.document())
        cur.setPosition(start)
        cur.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        s.cursor = cur
        s.format = fmt
        return s


class RawPane(_DecoratedEdit):
    """The user's text, editable; every keystroke goes to the view-model."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setPlaceholderText("Type or paste text here…")
        self.edited.connect(vm.apply_edit)
        vm.text_replaced.connect(self.set_text)
        vm.encoding_changed.connect(self._on_encoding)
        vm.hover_changed.connect(lambda _s: self.decorate())
        vm.selection_changed.connect(lambda _i: self.decorate())
        vm.marks_changed.connect(self.schedule_decorate)
        self.hovered_char.connect(self._on_hover)
        self.selectionChanged.connect(self._on_selection)

    def set_text(self, text: str) -> None:
        self.show_text(text)

    def _on_encoding(self, _u) -> None:  # noqa: ANN001
        # The view-model's text is the truth: if someone replaced it without telling the editor
        # (set_text with the default from_editor=True), show it rather than edit a stale mirror.
        if self.vm.text != self.exact_text():
            self.show_text(self.vm.text)
        self.schedule_decorate()

    def _current_map(self):  # noqa: ANN202
        u = self.vm.update
        if u is None or u.encoding.text != self.vm.text:
            return None
        return u

    def _on_hover(self, upos: int) -> None:
        u = self._current_map()
        if u is None or upos < 0:
            self.vm.hover(None)
            return
        c = u.offset_map.from_utf16(upos)
        if c >= len(u.encoding.text):
            self.vm.hover(None)
            return
        t = self.vm.token_at(c)
        if t >= 0:
            self.vm.hover(self.vm.token_span(t))
        else:
            self.vm.hover((c, c + 1))
        ch = u.encoding.text[c]
        cat = unicodedata.category(ch)
        if cat in _INVISIBLE_CATS or ord(ch) > 0x7F:
            QToolTip.showText(self.cursor().pos(), char_name(ch), self)

    def _on_selection(self) -> None:
        cur = self.textCursor()
        u = self._current_map()
        if u is None or not cur.hasSelection():
            return
        a = u.offset_map.from_utf16(cur.selectionStart())
        b = u.offset_map.from_utf16(cur.selectionEnd())
        self.vm.hover((a, b))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and not self.textCursor().hasSelection():
            u = self._current_map()
            if u is not None:
                c = u.offset_map.from_utf16(self.textCursor().position())
                t = self.vm.token_at(min(c, max(len(u.encoding.text) - 1, 0)))
                if t >= 0:
                    self.vm.select_token(t)

    def decorate(self) -> None:
        u = self._current_map()
        sels: list[QTextEdit.ExtraSelection] = []
        if u is not None:
            om = u.offset_map
            text = u.encoding.text
            v0, v1 = _visible_range(self)
            c0, c1 = om.from_utf16(v0), om.from_utf16(v1)
            th = self.theme
            if u.unknown:
                unk = QTextCharFormat()
                unk.setBackground(th.error_bg)
                unk.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                unk.setUnderlineColor(UNKNOWN_PEN)
                offs = u.encoding.offsets
                for i in u.unknown[bisect_left(u.unknown, self.vm.token_at(c0)) :]:
                    s, e = offs[i]
                    if s > c1:
                        break
                    if e > s and e >= c0:
                        sels.append(self._sel(om.to_utf16(s), om.to_utf16(e), unk))
            lit = QTextCharFormat()
            lit.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            lit.setUnderlineColor(th.literal)
            for s, e, _id in u.special_literals:
                if e >= c0 and s <= c1:
                    sels.append(self._sel(om.to_utf16(s), om.to_utf16(e), lit))
            sels.extend(lint_selections(self, om, c0, c1, self.vm.lint_marks))
            sel = self.vm.selected
            if 0 <= sel < len(u.encoding.ids):
                s, e = self.vm.token_span(sel)
                if e > s:
                    fmt = QTextCharFormat()
                    c = QColor(th.selection)
                    c.setAlpha(70)
                    fmt.setBackground(c)
                    fmt.setProperty(QTextFormat.Property.OutlinePen, th.selection)
                    sels.append(self._sel(om.to_utf16(s), om.to_utf16(e), fmt))
            hl = self.vm.hovered
            if hl is not None and hl[1] > hl[0]:
                fmt = QTextCharFormat()
                c = QColor(th.hover)
                c.setAlpha(110)
                fmt.setBackground(c)
                sels.append(self._sel(om.to_utf16(hl[0]), om.to_utf16(min(hl[1], len(text))), fmt))
        self.setExtraSelections(sels)


class NormalizedPane(_DecoratedEdit):
    """The text after normalization (read-only); changed characters tinted, hover names their source."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self._shown: str = ""
        self._shown_map = None
        self.changed_count = 0
        vm.encoding_changed.connect(self._on_update)
        vm.hover_changed.connect(lambda _s: self.decorate())
        vm.marks_changed.connect(self.schedule_decorate)
        self.hovered_char.connect(self._on_hover)
        self.selectionChanged.connect(self._on_selection)

    def _on_update(self, u: EncodingUpdate) -> None:
        norm = u.normalized
        new = norm.text if norm is not None else u.encoding.text
        old = self._shown
        if (norm is None or norm.is_identity) and len(new) > LARGE_IDENTITY_CHARS:
            # A second copy of a long text that did not change costs a full layout for nothing:
            # say so instead (the raw pane shows the same characters, highlighted).
            if old:
                self.show_text("")
                self._shown = ""
            self.setPlaceholderText(
                f"Identical to the raw text ({len(new):,} characters): not repeated here for a text this long."
            )
            self._shown_map = None
            self.schedule_decorate()
            return
        self.setPlaceholderText("")
        if new != old:
            if not old or self._shown_map is None or abs(len(new) - len(old)) > 4096 or (u.splice is None and len(new) < 65536):
                self.show_text(new)
            else:
                # Replace only the changed middle, so a keystroke in 100 KB costs a few characters.
                from ...engine.incremental import diff_edit

                e = diff_edit(old, new)
                self.replace_shown(e.start, e.old_end, new[e.start : e.new_end])
            self._shown = new
        self._shown_map = u.normalized_map if norm is not None else u.offset_map
        self.schedule_decorate()

    def _norm(self):  # noqa: ANN202
        u = self.vm.update
        if u is None or u.normalized is None or u.normalized_map is None or u.normalized.text != self._shown:
            return None
        return u

    def _on_hover(self, upos: int) -> None:
        u = self._norm()
        if u is None or upos < 0:
            self.vm.hover(None)
            return
        norm, nm = u.normalized, u.normalized_map
        i = nm.from_utf16(upos)
        if i >= len(norm.text):
            self.vm.hover(None)
            return
        s, e = norm.align(i)
        self.vm.hover((s, e) if e > s else (s, s + 1))
        src = u.encoding.text[s:e]
        names = ", ".join(char_name(c) for c in src[:4]) + ("…" if len(src) > 4 else "")
        tip = f"normalized {char_name(norm.text[i])}\n← original chars {s}–{e}: {names or '(inserted)'}"
        QToolTip.showText(self.cursor().pos(), tip, self)

    def _on_selection(self) -> None:
        u = self._norm()
        cur = self.textCursor()
        if u is None or not cur.hasSelection():
            return
        nm = u.normalized_map
        a = nm.from_utf16(cur.selectionStart())
        b = nm.from_utf16(cur.selectionEnd())
        if b > a:
            self.vm.hover(u.normalized.original_span(a, b))

    def changed_spans(self, a: int, b: int) -> list[tuple[int, int]]:
        """Normalized index ranges in ``[a, b)`` whose characters differ from their source."""
        u = self._norm()
        if u is None or u.normalized.is_identity:
            return []
        norm = u.normalized
        orig = u.encoding.text
        out: list[tuple[int, int]] = []
        text = norm.text
        for i in range(a, min(b, len(text))):
            s, e = norm.align(i)
            if e - s != 1 or orig[s] != text[i]:
                if out and out[-1][1] == i:
                    out[-1] = (out[-1][0], i + 1)
                else:
                    out.append((i, i + 1))
        return out

    def highlighted_spans(self, a: int, b: int) -> list[tuple[int, int]]:
        """Normalized index ranges in ``[a, b)`` that came from the hovered original span."""
        u = self._norm()
        hl = self.vm.hovered
        if u is None or hl is None:
            return []
        norm = u.normalized
        out: list[tuple[int, int]] = []
        for i in range(a, min(b, len(norm.text))):
            s, e = norm.align(i)
            hit = (s < hl[1] and hl[0] < e) if e > s else (hl[0] <= s < hl[1])
            if hit:
                if out and out[-1][1] == i:
                    out[-1] = (out[-1][0], i + 1)
                else:
                    out.append((i, i + 1))
        return out

    def decorate(self) -> None:
        u = self._norm()
        sels: list[QTextEdit.ExtraSelection] = []
        if u is not None:
            nm = u.normalized_map
            norm = u.normalized
            v0, v1 = _visible_range(self)
            a, b = nm.from_utf16(v0), nm.from_utf16(v1)
            th = self.theme
            fmt = QTextCharFormat()
            fmt.setBackground(th.changed_bg)
            spans = self.changed_spans(a, b)
            self.changed_count = len(spans)
            for s, e in spans:
                sels.append(self._sel(nm.to_utf16(s), nm.to_utf16(e), fmt))
            sels.extend(normalized_lint_selections(self, nm, norm, a, b, self.vm.lint_marks))
            hl = self.vm.hovered
            if hl is not None:
                hf = QTextCharFormat()
                c = QColor(th.hover)
                c.setAlpha(110)
                hf.setBackground(c)
                for s, e in self.highlighted_spans(a, b):
                    sels.append(self._sel(nm.to_utf16(s), nm.to_utf16(e), hf))
        self.setExtraSelections(sels)
