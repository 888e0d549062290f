"""A viewport-painted view of many small labelled spans (tokens or pre-token chunks).

Items flow like text: left to right, wrapping at the viewport width, with a hard line break after
an item that contains a newline. Layout is lazy and per *line* (the items between two hard
breaks): a line is measured only when it is painted or asked about; lines never seen carry an
estimated row count so the scroll bar is right on average. An edit (`splice`) re-measures only
the lines it touches and shifts the rest. So a megabyte of text (over half a million tokens)
opens in the time it takes to find its line breaks, and scrolling costs only the rows in view.

The view knows nothing about tokenizers: it reads items from an `ItemSource` (label, color key,
flags, span in original code points) and highlights the span the view-model says is hovered.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Protocol

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from .._compat import emit
from ..display import Label, Style, color_index, neighbour_variant
from ..theme import Theme, mono_font, theme_for

__all__ = ["SpanView", "ItemSource", "ListSource", "FLAG_SPECIAL", "FLAG_LITERAL", "FLAG_NEUTRAL", "FLAG_CHANGED", "FLAG_UNKNOWN"]

FLAG_SPECIAL = 1  # a special token
FLAG_LITERAL = 2  # a special token the user typed as a literal
FLAG_NEUTRAL = 4  # paint with the alternating neutral (chunk) colors, not per-key colors
FLAG_CHANGED = 8  # the chunk's text differs from the original text it covers
FLAG_UNKNOWN = 16  # the model's unknown token ([UNK], <unk>): the text it covers is lost
UNKNOWN_PEN = QColor("#d32f2f")

PAD = 3.0  # horizontal padding inside an item
BLOCK_ROWS = 8  # long lines are cached in blocks of this many rows
GAP = 1.0  # separator between items


class ItemSource(Protocol):
    """What a `SpanView` shows; every method is called only for items being laid out or painted."""

    keys: Sequence[int]  # color key per item (the token id)

    def __len__(self) -> int: ...
    def label(self, i: int) -> Label: ...
    def flags(self, i: int) -> int: ...
    def span(self, i: int) -> tuple[int, int]: ...
    def is_break(self, i: int) -> bool: ...


class _EmptySource:
    keys: Sequence[int] = ()

    def __len__(self) -> int:
        return 0

    def label(self, i: int) -> Label:
        return ()

    def flags(self, i: int) -> int:
        return 0

    def span(self, i: int) -> tuple[int, int]:
        return (0, 0)

    def is_break(self, i: int) -> bool:
        return False


class ListSource:
    """An `ItemSource` over ready-made lists (small views: the Train tab's words and probe text)."""

    def __init__(
        self,
        labels: Sequence[Label],
        keys: Sequence[int],
        flags: Sequence[int],
        breaks: Sequence[bool],
        span_of: Callable[[int], tuple[int, int]],
    ) -> None:
        self.labels, self.keys, self._flags, self.breaks, self._span_of = labels, keys, flags, breaks, span_of

    def __len__(self) -> int:
        return len(self.labels)

    def label(self, i: int) -> Label:
        return self.labels[i]

    def flags(self, i: int) -> int:
        return self._flags[i]

    def span(self, i: int) -> tuple[int, int]:
        return self._span_of(i)

    def is_break(self, i: int) -> bool:
        return bool(self.breaks[i])


class _Line:
    __slots__ = ("rows", "xs", "row_of", "widths", "labels", "flags", "pix", "blocks")

    def __init__(self, rows: int, xs: list[float], row_of: list[int], widths: list[float], labels: list[Label], flags: list[int]) -> None:
        self.rows = rows
        self.xs = xs
        self.row_of = row_of
        self.widths = widths
        self.labels = labels
        self.flags = flags
        self.pix: QPixmap | None = None  # the painted line, reused until the line changes
        self.blocks: dict[int, QPixmap] = {}  # long lines: painted blocks of BLOCK_ROWS rows


class SpanView(QAbstractScrollArea):
    """See the module docstring."""

    item_hovered = Signal(int)  # index or -1
    item_activated = Signal(int)  # clicked or moved to with the keyboard

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._width_cache: dict[Label, float] = {}
        self._run_cache: dict[str, float] = {}
        self._src: ItemSource = _EmptySource()
        self._n = 0
        self._line_first: list[int] = [0]  # first item of each line, plus the item count
        self._line_rows: list[int] = []  # rows of each line (exact once laid out, else estimated)
        self._laid: list[_Line | None] = []
        self._row_first: list[int] = [0]  # first row of each line, plus the total
        self._avg_w = 40.0
        self._ready = False
        self._cached: deque[_Line] = deque()  # lines holding a pixmap, oldest first
        self.setFont(mono_font())
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # always on: a scroll bar that appears would change the width and force a relayout
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.theme: Theme = theme_for(False)
        self._tooltip: Callable[[int], str] | None = None
        self.hover_span: tuple[int, int] | None = None
        self.hover_index = -1
        self.selected = -1
        self.placeholder = ""
        self._layout_width = 0.0
        self._ready = True
        self._update_metrics()

    # ------------------------------------------------------------------ data in
    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._drop_pixmaps()
        self.viewport().update()

    def _drop_pixmaps(self) -> None:
        for line in self._cached:
            line.pix = None
            line.blocks = {}
        self._cached.clear()

    def set_tooltip_provider(self, fn: Callable[[int], str] | None) -> None:
        self._tooltip = fn

    def set_source(self, source: ItemSource, line_ends: Sequence[int]) -> None:
        """Show ``source``; ``line_ends`` are the (sorted) items after which a hard break follows."""
        self._src = source
        self._n = n = len(source)
        starts = [0]
        starts.extend(e + 1 for e in line_ends if e + 1 < n)
        if n == 0:
            starts = []
        self._line_first = [*starts, n]
        self._reset_layout()
        if self.selected >= n:
            self.selected = -1

    def set_items(
        self,
        labels: Sequence[Label],
        keys: Sequence[int],
        flags: Sequence[int],
        breaks: Sequence[bool],
        span_of: Callable[[int], tuple[int, int]],
    ) -> None:
        """Show ready-made lists (a `ListSource`)."""
        self.set_source(ListSource(labels, keys, flags, breaks, span_of), [i for i, b in enumerate(breaks) if b])

    @property
    def _keys(self) -> Sequence[int]:
        return self._src.keys

    def item_flags(self, i: int) -> int:
        return self._src.flags(i)

    def splice(self, first: int, removed: int, added: int, source: ItemSource) -> None:
        """Items ``[first, first+removed)`` became ``added`` new ones; re-measure only those lines."""
        n_old = self._n
        n_lines = len(self._line_rows)
        if n_lines == 0 or first > n_old:
            self._src = source
            self.set_source(source, [i for i in range(len(source)) if source.is_break(i)])
            return
        self._src = source
        n_new = len(source)
        delta = added - removed
        lf = self._line_first
        l0 = min(max(bisect_right(lf, first) - 1, 0), n_lines - 1)
        last = min(first + removed - 1, n_old - 1) if removed else first
        l1 = min(max(bisect_right(lf, last) - 1, l0), n_lines - 1)
        a = lf[l0]
        b = lf[l1 + 1] + delta  # end of the region in new coordinates
        # A removed hard break merges the region with the following line(s).
        while l1 + 1 < n_lines and b > a and not source.is_break(b - 1):
            l1 += 1
            b = lf[l1 + 1] + delta
        old_end = lf[l1 + 1]
        # Gather the region's items: unchanged ones reuse what their old (laid out) line knew,
        # only the new items are spelled and measured.
        labels: list[Label] = []
        flags: list[int] = []
        widths: list[float] = []
        breaks: list[bool] = []
        label_width = self._label_width

        def take_old(j0: int, j1: int, shift: int) -> None:
            lj = max(bisect_right(lf, j0) - 1, 0) if j0 < j1 else 0
            j = j0
            while j < j1:
                line_end = lf[lj + 1]
                stop = min(j1, line_end)
                line = self._laid[lj]
                base = lf[lj]
                if line is not None:
                    labels.extend(line.labels[j - base : stop - base])
                    flags.extend(line.flags[j - base : stop - base])
                    widths.extend(line.widths[j - base : stop - base])
                    breaks.extend([False] * (stop - j))
                    if stop == line_end:
                        # the last item of an old line ends it, except at the very end of the document
                        breaks[-1] = lj + 1 < n_lines or source.is_break(stop - 1 + shift)
                else:
                    for i in range(j + shift, stop + shift):
                        lab = source.label(i)
                        labels.append(lab)
                        flags.append(source.flags(i))
                        widths.append(label_width(lab))
                        breaks.append(source.is_break(i))
                j = stop
                lj += 1

        take_old(a, first, 0)
        for i in range(first, first + added):
            lab = source.label(i)
            labels.append(lab)
            flags.append(source.flags(i))
            widths.append(label_width(lab))
            breaks.append(source.is_break(i))
        take_old(first + removed, old_end, delta)
        new_lines, starts = self._make_lines(a, labels, flags, widths, breaks)
        tail = [x + delta for x in lf[l1 + 1 :]]
        self._line_first = lf[:l0] + starts + tail
        self._n = n_new
        k = len(starts)
        self._laid[l0 : l1 + 1] = new_lines
        self._line_rows[l0 : l1 + 1] = [ln.rows for ln in new_lines]
        nxt = l0 + k
        if nxt < len(self._laid) and self._laid[nxt] is not None:
            self._laid[nxt].pix = None  # its first item's shade depends on the line before
            self._laid[nxt].blocks = {}
        if self._line_first[-1] != n_new or len(self._line_first) != len(self._line_rows) + 1:
            self.set_source(source, [i for i in range(n_new) if source.is_break(i)])  # defensive: never show a torn layout
            return
        self._rebuild_rows()
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
        return self._n

    def label(self, i: int) -> Label:
        return self._src.label(i)

    # ------------------------------------------------------------------ layout
    def _update_metrics(self) -> None:
        fm = QFontMetricsF(self.font())
        self._fm = fm
        self._ascent = fm.ascent()
        self._row_h = fm.height() + 7.0
        self._avg_w = fm.horizontalAdvance("abcd") + 2 * PAD + GAP
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

    def _reset_layout(self) -> None:
        self._drop_pixmaps()
        self._layout_width = self._avail_width()
        lf = self._line_first
        n_lines = len(lf) - 1
        self._laid = [None] * n_lines
        est = self._avg_w / self._layout_width
        self._line_rows = [int((lf[i + 1] - lf[i]) * est) + 1 for i in range(n_lines)]
        self._rebuild_rows()
        self.viewport().update()

    def _layout_line(self, li: int) -> _Line:
        """Measure line ``li`` (exact rows); cached until the width or the items change."""
        line = self._laid[li]
        if line is not None:
            return line
        src = self._src
        a, b = self._line_first[li], self._line_first[li + 1]
        avail = self._avail_width()
        width_of = self._width_cache.get
        label_width = self._label_width
        labels = [src.label(i) for i in range(a, b)]
        flags = [src.flags(i) for i in range(a, b)]
        x = 0.0
        row = 0
        xs: list[float] = []
        rows: list[int] = []
        widths: list[float] = []
        for lab in labels:
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
        line = _Line(row + 1, xs, rows, widths, labels, flags)
        self._laid[li] = line
        if widths:  # keep the estimate for unseen lines close to what we measure
            self._avg_w = 0.9 * self._avg_w + 0.1 * (sum(widths) / len(widths) + GAP)
        self._line_rows[li] = line.rows
        return line

    def _make_lines(
        self, a: int, labels: list[Label], flags: list[int], widths: list[float], breaks: list[bool]
    ) -> tuple[list[_Line], list[int]]:
        """Lines (and their first items) for consecutive items starting at item ``a``."""
        avail = self._avail_width()
        lines: list[_Line] = []
        starts: list[int] = []
        n = len(labels)
        s0 = 0
        while s0 < n:
            e = s0
            while e < n - 1 and not breaks[e]:
                e += 1
            e += 1  # items [s0, e) form a line
            x = 0.0
            row = 0
            xs: list[float] = []
            rows: list[int] = []
            for w in widths[s0:e]:
                if x > 0.0 and x + w > avail:
                    row += 1
                    x = 0.0
                xs.append(x)
                rows.append(row)
                x += w + GAP
            lines.append(_Line(row + 1, xs, rows, widths[s0:e], labels[s0:e], flags[s0:e]))
            starts.append(a + s0)
            s0 = e
        return lines, starts

    def _rebuild_rows(self) -> None:
        self._row_first = [0, *accumulate(self._line_rows)]
        self._update_scroll()

    def _ensure_rows(self, r0: int, r1: int) -> None:
        """Lay out the lines covering rows ``[r0, r1]``; fix the row index if estimates were off."""
        for _ in range(8):
            changed = False
            li = max(bisect_right(self._row_first, r0) - 1, 0)
            while li < len(self._laid) and self._row_first[li] <= r1:
                if self._laid[li] is None:
                    est = self._line_rows[li]
                    if self._layout_line(li).rows != est:
                        changed = True
                li += 1
            if not changed:
                return
            self._rebuild_rows()

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
            self._reset_layout()
        else:
            self._update_scroll()

    def changeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().changeEvent(event)
        if event.type() == event.Type.FontChange and getattr(self, "_ready", False):
            self._update_metrics()
            self._reset_layout()

    # ------------------------------------------------------------------ geometry queries
    def _line_of_item(self, i: int) -> int:
        return bisect_right(self._line_first, i) - 1

    def item_rect(self, i: int) -> QRectF | None:
        """Content rectangle of item ``i`` (unscrolled coordinates)."""
        if not (0 <= i < self._n) or not self._laid:
            return None
        li = self._line_of_item(i)
        if self._laid[li] is None:
            est = self._line_rows[li]
            if self._layout_line(li).rows != est:
                self._rebuild_rows()
        line = self._laid[li]
        k = i - self._line_first[li]
        y = (self._row_first[li] + line.row_of[k]) * self._row_h + 4
        return QRectF(line.xs[k] + 4, y, line.widths[k], self._row_h)

    def visible_items(self) -> tuple[int, int]:
        """Items ``[first, end)`` of the lines in view (a row of margin on each side)."""
        if not self._laid:
            return (0, 0)
        top = self.verticalScrollBar().value()
        r0 = max(int(top // self._row_h) - 1, 0)
        r1 = int((top + self.viewport().height()) // self._row_h) + 1
        lf, rf = self._line_first, self._row_first
        l0 = max(bisect_right(rf, r0) - 1, 0)
        l1 = min(bisect_right(rf, r1), len(lf) - 1)
        return lf[l0], lf[l1]

    def index_at(self, pos: QPointF) -> int:
        if not self._laid:
            return -1
        y = pos.y() + self.verticalScrollBar().value() - 4
        row = int(y // self._row_h)
        if row < 0 or row >= self._row_first[-1]:
            return -1
        self._ensure_rows(row, row)
        li = bisect_right(self._row_first, row) - 1
        line = self._layout_line(li)
        r = row - self._row_first[li]
        x = pos.x() - 4
        for k in range(len(line.xs)):
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
        if not self._n:
            if self.placeholder:
                p.setPen(self.theme.muted)
                p.drawText(self.viewport().rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignLeft, self.placeholder)
            p.end()
            return
        try:
            self.paint_rows(p, top, top + self.viewport().height(), -top, cached=True)
            self.paint_overlay(p, -top)
        finally:
            p.end()

    def paint_overlay(self, p: QPainter, dy: float) -> None:
        """Draw over the painted items (content y + ``dy`` = viewport y); nothing by default.
        Subclasses draw marks here (lint marks), outside the cached line pixmaps."""

    def _pens(self) -> dict[int, QColor]:
        th = self.theme
        return {
            Style.TEXT: th.text,
            Style.MARK: th.muted,
            Style.HEX: th.hex,
            Style.BRACKET: th.bracket,
            Style.SPECIAL: th.special_fg,
            Style.OWN: th.bracket,
        }

    def _paint_line(
        self, p: QPainter, li: int, line: _Line, y_top: float, pens: dict[int, QColor], rows: tuple[int, int] | None = None
    ) -> None:
        """Paint the items of line ``li`` (only those in line rows ``rows`` when given); row 0's top is at ``y_top``."""
        th = self.theme
        rh = self._row_h
        fm = self._fm
        rc = self._run_cache
        keys = self._src.keys
        first = self._line_first[li]
        flags = line.flags
        labels = line.labels
        base_off = 1 + (rh - 2 - fm.height()) / 2 + self._ascent
        cur_pen = None
        k0, k1 = 0, len(line.xs)
        if rows is not None:
            row_of = line.row_of
            k0 = bisect_right(row_of, rows[0] - 1)
            k1 = bisect_right(row_of, rows[1])
        for k in range(k0, k1):
            i = first + k
            x = line.xs[k] + 4
            y = y_top + line.row_of[k] * rh
            w = line.widths[k]
            rect = QRectF(x, y + 1, w, rh - 2)
            f = flags[k]
            if f & FLAG_UNKNOWN:
                bg = th.error_bg
            elif f & FLAG_SPECIAL:
                bg = th.special_bg
            elif f & FLAG_NEUTRAL:
                bg = th.chunk_bg[i & 1]
            else:
                bg = th.token_color(color_index(keys[i]), neighbour_variant(keys, i))
            p.fillRect(rect, bg)
            if f & (FLAG_SPECIAL | FLAG_NEUTRAL):
                p.setPen(QPen(th.special_fg, 1.0, Qt.PenStyle.DashLine) if f & FLAG_SPECIAL else QPen(th.muted, 1.0))
                cur_pen = None
                p.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
            if f & FLAG_UNKNOWN:
                p.setPen(QPen(UNKNOWN_PEN, 1.5))
                cur_pen = None
                p.drawRect(rect.adjusted(0.75, 0.75, -0.75, -0.75))
            if f & FLAG_LITERAL:
                p.setPen(QPen(th.literal, 2.0))
                cur_pen = None
                p.drawLine(QPointF(x + 1, y + rh - 2), QPointF(x + w - 1, y + rh - 2))
            tx = x + PAD
            base = y + base_off
            for text, style in labels[k]:
                if style != cur_pen:
                    p.setPen(pens.get(style, th.text))
                    cur_pen = style
                p.drawText(QPointF(tx, base), text)
                rw = rc.get(text)
                if rw is None:
                    rw = rc[text] = fm.horizontalAdvance(text)
                tx += rw

    def _line_pixmap(self, li: int, line: _Line, pens: dict[int, QColor]) -> QPixmap:
        if line.pix is None:
            dpr = self.viewport().devicePixelRatioF()
            w = self.viewport().width()
            h = int(line.rows * self._row_h + 1)
            pm = QPixmap(max(int(w * dpr), 1), max(int(h * dpr), 1))
            pm.setDevicePixelRatio(dpr)
            pm.fill(self.theme.base)
            lp = QPainter(pm)
            lp.setFont(self.font())
            self._paint_line(lp, li, line, 0.0, pens)
            lp.end()
            line.pix = pm
            self._cached.append(line)
            self._trim_cache()
        return line.pix

    def _trim_cache(self) -> None:
        while len(self._cached) > 400:
            old = self._cached.popleft()
            old.pix = None
            old.blocks = {}

    def _block_pixmap(self, li: int, line: _Line, b: int, pens: dict[int, QColor]) -> QPixmap:
        """Rows ``[b*BLOCK_ROWS, (b+1)*BLOCK_ROWS)`` of a long line, painted once."""
        pm = line.blocks.get(b)
        if pm is None:
            dpr = self.viewport().devicePixelRatioF()
            w = self.viewport().width()
            h = int(BLOCK_ROWS * self._row_h + 1)
            pm = QPixmap(max(int(w * dpr), 1), max(int(h * dpr), 1))
            pm.setDevicePixelRatio(dpr)
            pm.fill(self.theme.base)
            lp = QPainter(pm)
            lp.setFont(self.font())
            r0 = b * BLOCK_ROWS
            self._paint_line(lp, li, line, -r0 * self._row_h, pens, (r0, r0 + BLOCK_ROWS - 1))
            lp.end()
            if not line.blocks:
                self._cached.append(line)
                self._trim_cache()
            line.blocks[b] = pm
        return pm

    def paint_rows(self, p: QPainter, y0: float, y1: float, dy: float, *, cached: bool = False) -> None:
        """Paint the items whose rows intersect content ``[y0, y1)``, shifted by ``dy``.

        ``cached`` paints each line from a pixmap kept until the line changes (the screen);
        exports pass False to draw vectors.
        """
        if not self._laid:
            return
        th = self.theme
        rh = self._row_h
        r0 = max(int((y0 - 4) // rh), 0)
        r1 = int((y1 - 4) // rh) + 1
        self._ensure_rows(r0, r1)
        li = max(bisect_right(self._row_first, r0) - 1, 0)
        p.setFont(self.font())
        hl = self.hover_span
        sel = self.selected
        span_of = self._src.span
        pens = self._pens()
        outlines: list[tuple[QRectF, QColor, float]] = []
        while li < len(self._laid) and self._row_first[li] <= r1:
            line = self._layout_line(li)
            y_top = self._row_first[li] * rh + 4 + dy
            base_row = self._row_first[li]
            # rows of this line that are in view (a paragraph can be hundreds of rows long)
            vis = (max(r0 - base_row, 0), min(r1 - base_row, line.rows - 1))
            if cached and line.rows <= 16:
                p.drawPixmap(QPointF(0, y_top), self._line_pixmap(li, line, pens))
            elif cached:
                for blk in range(vis[0] // BLOCK_ROWS, vis[1] // BLOCK_ROWS + 1):
                    p.drawPixmap(QPointF(0, y_top + blk * BLOCK_ROWS * rh), self._block_pixmap(li, line, blk, pens))
            else:
                self._paint_line(p, li, line, y_top, pens, vis if line.rows > 16 else None)
            first = self._line_first[li]
            k0 = bisect_right(line.row_of, vis[0] - 1)
            k1 = bisect_right(line.row_of, vis[1])
            for k in range(k0, k1):
                i = first + k
                if i == sel or i == self.hover_index or hl is not None:
                    if i == sel:
                        color, width = th.selection, 2.5
                    elif i == self.hover_index or _overlaps(span_of(i), hl):  # type: ignore[arg-type]
                        color, width = th.hover, 2.0
                    else:
                        continue
                    rect = QRectF(line.xs[k] + 4, y_top + line.row_of[k] * rh + 1, line.widths[k], rh - 2)
                    outlines.append((rect, color, width))
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
        n = self._n
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
