"""A viewport-painted view of many small labelled spans (tokens or pre-token chunks).

Items flow like text: left to right, wrapping at the viewport width, with a hard line break after
an item that contains a newline. The layout is kept per *line* (the items between two hard
breaks), so an edit re-lays out only the lines it touches (`splice`) and the rest is reused with
its vertical position shifted; painting visits only the rows in view. A 1 MB text has a quarter
of a million tokens and scrolls as smoothly as a short one.

The view knows nothing about tokenizers: it gets labels (see `tokviz.gui.display`), a color key
and flags per item, and a callable giving an item's span in original code points (for
highlighting the span the view-model says is hovered).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget
from .._compat import emit

from ..display import Label, Style, color_index, neighbour_variant
from ..theme import Theme, mono_font, theme_for

__all__ = ["SpanView", "FLAG_SPECIAL", "FLAG_LITERAL", "FLAG_NEUTRAL", "FLAG_CHANGED"]

FLAG_SPECIAL = 1  # a special token
FLAG_LITERAL = 2  # a special token the user typed as a literal
FLAG_NEUTRAL = 4  # paint with the alternating neutral (chunk) colors, not per-key colors
FLAG_CHANGED = 8  # the chunk's text differs from the original text it covers

PAD = 3.0  # horizontal padding inside an item
GAP = 1.0  # separator between items


class _Line:
    __slots__ = ("count", "rows", "xs", "row_of", "widths")

    def __init__(self, count: int, rows: int, xs: list[float], row_of: list[int], widths: list[float]) -> None:
        self.count = count
        self.rows = rows
        self.xs = xs
        self.row_of = row_of
        self.widths = widths


class SpanView(QAbstractScrollArea):
    """See the module docstring."""

    item_hovered = Signal(int)  # index or -1
    item_activated = Signal(int)  # clicked or moved to with the keyboard

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._width_cache: dict[Label, float] = {}
        self._run_cache: dict[str, float] = {}
        self._lines: list[_Line] = []
        self._labels: list[Label] = []
        self.setFont(mono_font())
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.theme: Theme = theme_for(False)
        self._labels: list[Label] = []
        self._keys: list[int] = []
        self._flags: list[int] = []
        self._breaks: list[bool] = []
        self._lines: list[_Line] = []
        self._line_first: list[int] = [0]  # first item index of each line (+ total)
        self._row_first: list[int] = [0]  # first row of each line (+ total rows)
        self._span_of: Callable[[int], tuple[int, int]] = lambda i: (0, 0)
        self._tooltip: Callable[[int], str] | None = None
        self._width_cache: dict[Label, float] = {}
        self._run_cache: dict[str, float] = {}
        self.hover_span: tuple[int, int] | None = None
        self.hover_index = -1
        self.selected = -1
        self.placeholder = ""
        self._layout_width = 0.0
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(60)
        self._relayout_timer.timeout.connect(self._relayout_all)
        self._update_metrics()

    # ------------------------------------------------------------------ data in
    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.viewport().update()

    def set_tooltip_provider(self, fn: Callable[[int], str] | None) -> None:
        self._tooltip = fn

    def set_items(
        self,
        labels: list[Label],
        keys: list[int],
        flags: list[int],
        breaks: list[bool],
        span_of: Callable[[int], tuple[int, int]],
    ) -> None:
        """Replace every item and lay everything out again."""
        self._labels, self._keys, self._flags, self._breaks = labels, keys, flags, breaks
        self._span_of = span_of
        if self.selected >= len(labels):
            self.selected = -1
        self._relayout_all()

    def splice(
        self,
        first: int,
        removed: int,
        labels: Sequence[Label],
        keys: Sequence[int],
        flags: Sequence[int],
        breaks: Sequence[bool],
        span_of: Callable[[int], tuple[int, int]],
    ) -> None:
        """Replace ``removed`` items at ``first`` by new ones; only the touched lines are laid out."""
        n_old = len(self._labels)
        if not self._lines or first > n_old:
            self._labels[first : first + removed] = labels
            self._keys[first : first + removed] = keys
            self._flags[first : first + removed] = flags
            self._breaks[first : first + removed] = breaks
            self._span_of = span_of
            self._relayout_all()
            return
        lf = self._line_first
        n_lines = len(self._lines)
        l0 = min(max(bisect_right(lf, first) - 1, 0), n_lines - 1)
        last = first + removed - 1 if removed else first
        l1 = min(max(bisect_right(lf, min(last, n_old - 1)) - 1, l0), n_lines - 1)
        a = lf[l0]
        b_old = lf[l1 + 1]
        self._labels[first : first + removed] = labels
        self._keys[first : first + removed] = keys
        self._flags[first : first + removed] = flags
        self._breaks[first : first + removed] = breaks
        self._span_of = span_of
        added = len(labels)
        b_new = b_old - removed + added
        # A removed hard break merges the edited line with the next one(s).
        while l1 + 1 < n_lines and b_new > a and not self._breaks[b_new - 1]:
            l1 += 1
            extra = lf[l1 + 1] - lf[l1]
            b_new += extra
        new_lines = self._layout_range(a, b_new) if b_new > a or n_lines == 1 else []
        self._lines[l0 : l1 + 1] = new_lines
        self._rebuild_index()
        self._update_scroll()
        self.viewport().update()

    def set_highlight(self, span: tuple[int, int] | None) -> None:
        if span != self.hover_span:
            self.hover_span = span
            self.viewport().update()

    def set_selected(self, index: int) -> None:
        if index != self.selected:
            self.selected = index
            self.viewport().update()

    def count(self) -> int:
        return len(self._labels)

    def label(self, i: int) -> Label:
        return self._labels[i]

    # ------------------------------------------------------------------ layout
    def _update_metrics(self) -> None:
        fm = QFontMetricsF(self.font())
        self._fm = fm
        self._ascent = fm.ascent()
        self._row_h = fm.height() + 7.0
        self._width_cache.clear()
        self._run_cache.clear()

    def _label_width(self, label: Label) -> float:
        w = self._width_cache.get(label)
        if w is None:
            rc = self._run_cache
            fm = self._fm
            w = 0.0
            for text, _style in label:
                rw = rc.get(text)
                if rw is None:
                    rw = rc[text] = fm.horizontalAdvance(text)
                w += rw
            w += 2 * PAD
            self._width_cache[label] = w
        return w

    def _avail_width(self) -> float:
        return max(self.viewport().width() - 8.0, 40.0)

    def _layout_range(self, a: int, b: int) -> list[_Line]:
        """Lay out items ``[a, b)``, which start a line and end one (or end the document)."""
        avail = self._avail_width()
        lines: list[_Line] = []
        labels, breaks = self._labels, self._breaks
        width_of = self._width_cache.get
        label_width = self._label_width
        x = 0.0
        row = 0
        xs: list[float] = []
        rows: list[int] = []
        widths: list[float] = []
        count = 0
        for i in range(a, b):
            lab = labels[i]
            w = width_of(lab)
            if w is None:
                w = label_width(lab)
            if x > 0.0 and x + w > avail:
                row += 1
                x = 0.0
            xs.append(x)
            rows.append(row)
            widths.append(w)
            x += w + GAP
            count += 1
            if breaks[i]:
                lines.append(_Line(count, row + 1, xs, rows, widths))
                x = 0.0
                row = 0
                xs, rows, widths = [], [], []
                count = 0
        if count or not lines:
            lines.append(_Line(count, row + 1 if count else 1, xs, rows, widths))
        return lines

    def _relayout_all(self) -> None:
        self._layout_width = self._avail_width()
        self._lines = self._layout_range(0, len(self._labels)) if self._labels else []
        self._rebuild_index()
        self._update_scroll()
        self.viewport().update()

    def _rebuild_index(self) -> None:
        self._line_first = [0, *accumulate(ln.count for ln in self._lines)]
        self._row_first = [0, *accumulate(ln.rows for ln in self._lines)]

    def _update_scroll(self) -> None:
        total = self._row_first[-1] * self._row_h + 8
        sb = self.verticalScrollBar()
        sb.setPageStep(max(self.viewport().height(), 1))
        sb.setSingleStep(int(self._row_h))
        sb.setRange(0, max(int(total - self.viewport().height()), 0))

    def content_height(self) -> float:
        return self._row_first[-1] * self._row_h + 8

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if abs(self._avail_width() - self._layout_width) > 0.5:
            if len(self._labels) < 20000:
                self._relayout_all()
            else:
                self._relayout_timer.start()
        else:
            self._update_scroll()

    def changeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().changeEvent(event)
        if event.type() == event.Type.FontChange and hasattr(self, "_relayout_timer"):
            self._update_metrics()
            self._relayout_all()

    # ------------------------------------------------------------------ geometry queries
    def item_rect(self, i: int) -> QRectF | None:
        """Content rectangle of item ``i`` (unscrolled coordinates)."""
        if not (0 <= i < len(self._labels)) or not self._lines:
            return None
        li = bisect_right(self._line_first, i) - 1
        line = self._lines[li]
        k = i - self._line_first[li]
        y = (self._row_first[li] + line.row_of[k]) * self._row_h + 4
        return QRectF(line.xs[k] + 4, y, line.widths[k], self._row_h)

    def index_at(self, pos: QPointF) -> int:
        if not self._lines:
            return -1
        y = pos.y() + self.verticalScrollBar().value() - 4
        row = int(y // self._row_h)
        if row < 0 or row >= self._row_first[-1]:
            return -1
        li = bisect_right(self._row_first, row) - 1
        line = self._lines[li]
        r = row - self._row_first[li]
        x = pos.x() - 4
        for k in range(line.count):
            if line.row_of[k] == r and line.xs[k] <= x < line.xs[k] + line.widths[k] + GAP:
                return self._line_first[li] + k
        return -1

    def ensure_visible(self, i: int) -> None:
        rect = self.item_rect(i)
        if rect is None:
            return
        sb = self.verticalScrollBar()
        top = sb.value()
        h = self.viewport().height()
        if rect.top() < top:
            sb.setValue(int(rect.top() - self._row_h))
        elif rect.bottom() > top + h:
            sb.setValue(int(rect.bottom() - h + self._row_h))

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self.viewport())
        p.fillRect(event.rect(), self.theme.base)
        top = self.verticalScrollBar().value()
        if not self._labels:
            if self.placeholder:
                p.setPen(self.theme.muted)
                p.drawText(self.viewport().rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignLeft, self.placeholder)
            p.end()
            return
        try:
            self.paint_rows(p, top, top + self.viewport().height(), -top)
        finally:
            p.end()

    def paint_rows(self, p: QPainter, y0: float, y1: float, dy: float) -> None:
        """Paint the items whose rows intersect content ``[y0, y1)``, shifted by ``dy``."""
        if not self._lines:
            return
        th = self.theme
        rh = self._row_h
        fm = self._fm
        rc = self._run_cache
        r0 = max(int((y0 - 4) // rh), 0)
        r1 = int((y1 - 4) // rh) + 1
        li = max(bisect_right(self._row_first, r0) - 1, 0)
        p.setFont(self.font())
        hl = self.hover_span
        sel = self.selected
        span_of = self._span_of
        keys = self._keys
        flags = self._flags
        labels = self._labels
        pens = {
            Style.TEXT: th.text,
            Style.MARK: th.muted,
            Style.HEX: th.hex,
            Style.BRACKET: th.bracket,
            Style.SPECIAL: th.special_fg,
        }
        outlines: list[tuple[QRectF, QColor, float]] = []
        while li < len(self._lines) and self._row_first[li] <= r1:
            line = self._lines[li]
            base_row = self._row_first[li]
            first = self._line_first[li]
            for k in range(line.count):
                row = base_row + line.row_of[k]
                if row < r0:
                    continue
                if row > r1:
                    break
                i = first + k
                x = line.xs[k] + 4
                y = row * rh + 4 + dy
                w = line.widths[k]
                rect = QRectF(x, y + 1, w, rh - 2)
                f = flags[i]
                if f & FLAG_SPECIAL:
                    bg = th.special_bg
                elif f & FLAG_NEUTRAL:
                    bg = th.chunk_bg[i & 1]
                else:
                    bg = th.token_color(color_index(keys[i]), neighbour_variant(keys, i))
                p.fillRect(rect, bg)
                if f & FLAG_SPECIAL:
                    pen = QPen(th.special_fg, 1.0, Qt.PenStyle.DashLine)
                    p.setPen(pen)
                    p.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
                elif f & FLAG_NEUTRAL:
                    p.setPen(QPen(th.muted, 1.0))
                    p.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
                if f & FLAG_LITERAL:
                    p.setPen(QPen(th.literal, 2.0))
                    p.drawLine(QPointF(x + 1, y + rh - 2), QPointF(x + w - 1, y + rh - 2))
                tx = x + PAD
                base = y + 1 + (rh - 2 - fm.height()) / 2 + self._ascent
                for text, style in labels[i]:
                    p.setPen(pens.get(style, th.text))
                    p.drawText(QPointF(tx, base), text)
                    rw = rc.get(text)
                    if rw is None:
                        rw = rc[text] = fm.horizontalAdvance(text)
                    tx += rw
                if i == sel:
                    outlines.append((rect, th.selection, 2.5))
                elif i == self.hover_index or (hl is not None and _overlaps(span_of(i), hl)):
                    outlines.append((rect, th.hover, 2.0))
            li += 1
        for rect, color, width in outlines:
            p.setPen(QPen(color, width))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect.adjusted(width / 2, width / 2, -width / 2, -width / 2))

    # ------------------------------------------------------------------ interaction
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        i = self.index_at(event.position())
        if i != self.hover_index:
            self.hover_index = i
            emit(self.item_hovered, i)
            self.viewport().update()
        if i >= 0 and self._tooltip is not None:
            QToolTip.showText(event.globalPosition().toPoint(), self._tooltip(i), self.viewport())
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: ANN001, N802
        if self.hover_index != -1:
            self.hover_index = -1
            emit(self.item_hovered, -1)
            self.viewport().update()
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        i = self.index_at(event.position())
        if i >= 0:
            emit(self.item_activated, i)
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        n = len(self._labels)
        if n and key in (Qt.Key.Key_Right, Qt.Key.Key_Left, Qt.Key.Key_Home, Qt.Key.Key_End):
            cur = self.selected
            if key == Qt.Key.Key_Right:
                nxt = min(cur + 1, n - 1) if cur >= 0 else 0
            elif key == Qt.Key.Key_Left:
                nxt = max(cur - 1, 0) if cur >= 0 else 0
            elif key == Qt.Key.Key_Home:
                nxt = 0
            else:
                nxt = n - 1
            emit(self.item_activated, nxt)
            self.ensure_visible(nxt)
            return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, 200)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1]:
        return False
    if b[0] == b[1]:
        return a[0] <= b[0] < a[1]
    return a[0] < b[1] and b[0] < a[1]
