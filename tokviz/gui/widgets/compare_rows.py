"""The aligned rows of the Compare tab: one row per tokenizer over the same text, like a diff.

The text is laid out once on a grid of monospace cells (a wide CJK character or an emoji takes
two cells) and wrapped into visual lines; every tokenizer's row is drawn on the same grid, so a
boundary at character p sits at the same x in every row. Above the rows a strip marks each cut
by its votes: consensus cuts (all tokenizers cut there) as a thin grey line, contested cuts
coloured by how few tokenizers cut there, with the vote count. Tokens are coloured as in Inspect
(`tokviz.gui.display.color_index`, neighbours never share a colour). Hover a token to outline
its span in every row; click to open it in Inspect.

Only the visible lines are painted, and what painting needs is found then (a unit's shade) or kept
across analyses of the same text (the line layout), so a 100 KB text with 8 rows scrolls smoothly
and adding a row costs nothing proportional to the text here.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from ...analysis.compare import Analysis
from .._compat import emit
from ..display import Style, color_index, counted, neighbour_variant, visible_runs
from ..theme import Theme, mono_font, theme_for

__all__ = ["CompareRows", "cell_width", "vote_color"]

LABEL_W = 150  # px of the name column


def cell_width(ch: str) -> int:
    """Cells a character takes: 2 for East Asian wide/fullwidth and emoji, else 1."""
    if ch in "\n\t":
        return 1
    o = ord(ch)
    if unicodedata.east_asian_width(ch) in ("W", "F") or 0x1F000 <= o <= 0x1FAFF:
        return 2
    return 1


def _glyph(ch: str) -> tuple[str, bool]:
    """What to draw in the cells of ``ch`` and whether it is a visible-whitespace mark."""
    runs = visible_runs(ch)
    if len(runs) == 1 and runs[0][1] == Style.MARK:
        return (runs[0][0] if len(runs[0][0]) == 1 else "¤"), True
    return ch, False


def vote_color(votes: int, n: int, theme: Theme) -> QColor:
    """Contested cuts: red when one tokenizer cuts there, towards amber as more agree."""
    if n <= 1 or votes >= n:
        return theme.muted
    t = (votes - 1) / max(1, n - 2) if n > 2 else 0.0
    c = QColor.fromHslF((0.0 + 0.12 * t), 0.85, 0.45 if not theme.dark else 0.6)
    return c


@dataclass(frozen=True, slots=True)
class _Line:
    start: int  # first char
    end: int  # one past the last char (a newline ends its line)


class CompareRows(QWidget):
    """Paints an `Analysis`; emits hover / click with (row, char start, char end)."""

    hovered = Signal(object)  # (start, end) or None
    clicked = Signal(int, int, int)  # side index in the analysis, start, end

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.theme = theme_for(False)
        self.setFont(mono_font())
        self.analysis: Analysis | None = None
        self.vote_unit = "char_collapsed"
        self.highlight: tuple[int, int] | None = None
        self._lines: list[_Line] = []
        self._col: list[int] = []  # cell column of each char in its line
        self._line_of: list[int] = []  # visual line of each char
        self._shades: list[dict[int, int]] = []  # per row: unit -> shade, filled as lines are painted
        self._layout_width = -1

    # ------------------------------------------------------------------ inputs
    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def set_analysis(self, analysis: Analysis | None) -> None:
        """Show ``analysis``. Nothing here is proportional to the text when only the rows
        changed: the line layout is kept for the same text, shades are found as lines are painted."""
        same_text = analysis is not None and self.analysis is not None and analysis.text == self.analysis.text
        self.analysis = analysis
        self._shades = [{} for _ in analysis.units] if analysis is not None else []
        if not same_text:
            self._layout_width = -1
        self._relayout()
        self.update()

    def set_vote_unit(self, unit: str) -> None:
        self.vote_unit = unit
        self.update()

    def set_highlight(self, span: tuple[int, int] | None) -> None:
        if span != self.highlight:
            self.highlight = span
            self.update()

    # ------------------------------------------------------------------ geometry
    def _metrics(self) -> tuple[int, int, int, int]:
        fm = QFontMetrics(self.font())
        cw = max(6, fm.horizontalAdvance("M"))
        rh = fm.height() + 6
        strip = max(12, fm.height() * 3 // 4)
        return cw, rh, strip, fm.ascent()

    def _n_rows(self) -> int:
        return len(self.analysis.units) if self.analysis is not None else 0

    def _block_h(self) -> int:
        _, rh, strip, _ = self._metrics()
        return strip + rh * (self._n_rows() + 1) + 8

    def _cells_per_line(self) -> int:
        cw = self._metrics()[0]
        w = self.parent().width() if self.parent() is not None else self.width()  # the scroll viewport
        return max(16, (max(w, 400) - LABEL_W - 12) // cw)

    def _relayout(self) -> None:
        per = self._cells_per_line()
        if per != self._layout_width:
            self._layout_lines(per)
        self.setMinimumHeight(len(self._lines) * self._block_h() + 4)  # the row count may have changed
        self.updateGeometry()

    def _layout_lines(self, per: int) -> None:
        self._layout_width = per
        text = self.analysis.text if self.analysis is not None else ""
        lines: list[_Line] = []
        col: list[int] = []
        line_of: list[int] = []
        start, c = 0, 0
        for i, ch in enumerate(text):
            w = cell_width(ch)
            if c + w > per and c > 0:
                lines.append(_Line(start, i))
                start, c = i, 0
            col.append(c)
            line_of.append(len(lines))
            c += w
            if ch == "\n":
                lines.append(_Line(start, i + 1))
                start, c = i + 1, 0
        if start < len(text) or not lines:
            lines.append(_Line(start, len(text)))
        self._lines, self._col, self._line_of = lines, col, line_of

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(900, max(200, len(self._lines) * self._block_h() + 4))

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().resizeEvent(event)
        self._relayout()

    def _x_of(self, p: int, line: _Line) -> int:
        """x of char boundary p (line.start <= p <= line.end) on this line."""
        cw = self._metrics()[0]
        text = self.analysis.text  # type: ignore[union-attr]
        if p >= line.end:
            if line.end == line.start:
                return LABEL_W
            last = line.end - 1
            return LABEL_W + (self._col[last] + cell_width(text[last])) * cw
        return LABEL_W + self._col[p] * cw

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        p = QPainter(self)
        p.fillRect(event.rect(), self.theme.base)
        if self.analysis is None:
            p.setPen(self.theme.muted)
            p.drawText(
                self.rect().adjusted(12, 12, -12, -12),
                Qt.AlignmentFlag.AlignLeft,
                "Add two or more tokenizers to compare them on this text.",
            )
            return
        bh = self._block_h()
        first = max(0, event.rect().top() // bh)
        last = min(len(self._lines) - 1, event.rect().bottom() // bh)
        for k in range(first, last + 1):
            self._paint_block(p, k, k * bh)
        p.end()

    def _paint_block(self, p: QPainter, k: int, y0: int) -> None:
        a = self.analysis
        assert a is not None
        cw, rh, strip, ascent = self._metrics()
        line = self._lines[k]
        th = self.theme
        n = self._n_rows()
        # name column
        p.setFont(self.font())
        small = self.font()
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.75))
        fm = QFontMetrics(self.font())
        y_text = y0 + strip
        p.setPen(th.muted)
        p.drawText(
            QRect(4, y_text, LABEL_W - 10, rh),
            Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(f"text {line.start}–{line.end}", Qt.TextElideMode.ElideRight, LABEL_W - 10),
        )
        for r in range(n):
            yr = y_text + rh * (r + 1)
            p.setPen(th.text)
            label = f"{a.names[r]} · {a.tokens[r]:,}"
            p.drawText(
                QRect(4, yr, LABEL_W - 10, rh),
                Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(label, Qt.TextElideMode.ElideMiddle, LABEL_W - 10),
            )
        # the text row (muted glyphs)
        text = a.text
        for i in range(line.start, line.end):
            g, mark = _glyph(text[i])
            p.setPen(th.muted if mark else th.text)
            p.drawText(LABEL_W + self._col[i] * cw, y_text + ascent + 3, g)
        # token rows
        for r in range(n):
            self._paint_row(p, r, line, y_text + rh * (r + 1), rh, ascent)
        # cut marks by votes
        votes = a.votes.get(self.vote_unit, {})
        p.setFont(small)
        top, bottom = y0 + 1, y_text + rh * (n + 1)
        last_label = -100  # x of the last vote number (neighbours closer than a number's width skip theirs)
        for pos in range(line.start + 1, line.end + 1):
            v = votes.get(pos, 0)
            if not v:
                continue
            x = self._x_of(pos, line)
            if v >= n:  # consensus: a small grey tick in the strip
                p.setPen(QPen(th.muted, 1))
                p.drawLine(x, top + strip - 4, x, y_text)
                continue
            col = vote_color(v, n, th)
            p.setPen(QPen(col, 2))
            p.drawLine(x, top + strip - 3, x, y_text + rh - 2)  # strip and text row
            thin = QColor(col)
            thin.setAlpha(150)
            p.setPen(QPen(thin, 1))
            p.drawLine(x, y_text + rh, x, bottom)
            if x - last_label >= cw + 4:
                p.setPen(col)
                p.drawText(QRect(x - 10, top - 2, 20, strip), Qt.AlignmentFlag.AlignCenter, str(v))
                last_label = x
        p.setFont(self.font())
        # hover outline across every row
        if self.highlight is not None:
            s, e = self.highlight
            s, e = max(s, line.start), min(e, line.end)
            if s < e:
                x0, x1 = self._x_of(s, line), self._x_of(e, line)
                p.setPen(QPen(th.selection, 2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(QRectF(x0, y_text + 1, x1 - x0, rh * (n + 1) - 2))

    def _shade(self, r: int, j: int) -> int:
        """The Inspect shade of unit j of row r (`neighbour_variant`: neighbours never share a colour)."""
        hit = self._shades[r].get(j)
        if hit is None:
            hit = self._shades[r][j] = neighbour_variant(self.analysis.units[r].first_ids, j)  # type: ignore[union-attr]
        return hit

    def _paint_row(self, p: QPainter, r: int, line: _Line, y: int, rh: int, ascent: int) -> None:
        a = self.analysis
        assert a is not None
        units = a.units[r]
        starts, ends, first_ids = units.starts, units.ends, units.first_ids
        th = self.theme
        text = a.text
        cw = self._metrics()[0]
        j = max(0, bisect_right(starts, line.start) - 1)
        while j < len(starts) and starts[j] < line.end:
            s, e = max(starts[j], line.start), min(ends[j], line.end)
            if s < e:
                x0, x1 = self._x_of(s, line), self._x_of(e, line)
                color = th.token_color(color_index(first_ids[j]), self._shade(r, j))
                p.fillRect(QRectF(x0, y + 1, x1 - x0, rh - 2), color)
                p.setPen(th.text)
                for i in range(s, e):
                    g, mark = _glyph(text[i])
                    if mark:
                        p.setPen(th.muted)
                    p.drawText(LABEL_W + self._col[i] * cw, y + ascent + 3, g)
                    if mark:
                        p.setPen(th.text)
                if units.size(j) > 1:  # several byte tokens inside one character: a dotted underline
                    p.setPen(QPen(th.text, 1, Qt.PenStyle.DotLine))
                    p.drawLine(int(x0) + 1, y + rh - 3, int(x1) - 1, y + rh - 3)
                # boundary separator
                if starts[j] >= line.start:
                    p.setPen(QPen(th.separator if not th.dark else th.base, 2))
                    p.drawLine(int(x0), y + 1, int(x0), y + rh - 2)
            j += 1

    # ------------------------------------------------------------------ mouse
    def hit(self, pos: QPoint) -> tuple[int, int] | None:
        """(side, token unit index) under ``pos``, or None."""
        a = self.analysis
        if a is None or not self._lines:
            return None
        cw, rh, strip, _ = self._metrics()
        bh = self._block_h()
        k = pos.y() // bh
        if not 0 <= k < len(self._lines):
            return None
        r = (pos.y() - k * bh - strip) // rh - 1
        if not 0 <= r < self._n_rows():
            return None
        line = self._lines[k]
        cell = (pos.x() - LABEL_W) // cw
        if cell < 0:
            return None
        char = None
        for i in range(line.start, line.end):
            if self._col[i] <= cell < self._col[i] + cell_width(a.text[i]):
                char = i
                break
        if char is None:
            return None
        units = a.units[r]
        j = bisect_right(units.starts, char) - 1
        if 0 <= j < len(units) and units.starts[j] <= char < units.ends[j]:
            return r, j
        return None

    def row_at(self, pos: QPoint) -> int | None:
        """The tokenizer row whose label column holds ``pos`` (labels elide: their tooltip is whole)."""
        if self.analysis is None or not self._lines or pos.x() >= LABEL_W:
            return None
        _cw, rh, strip, _ = self._metrics()
        k = pos.y() // self._block_h()
        r = (pos.y() - k * self._block_h() - strip) // rh - 1
        return r if 0 <= k < len(self._lines) and 0 <= r < self._n_rows() else None

    def mouseMoveEvent(self, event) -> None:  # noqa: ANN001, N802
        pos = event.position().toPoint()
        r = self.row_at(pos)
        if r is not None:
            a = self.analysis
            QToolTip.showText(event.globalPosition().toPoint(), f"{a.names[r]} · {counted(a.tokens[r], 'token')}", self)  # type: ignore[union-attr]
            emit(self.hovered, None)
            return
        h = self.hit(pos)
        if h is None:
            emit(self.hovered, None)
            QToolTip.hideText()
            return
        r, j = h
        u = self.analysis.units[r][j]  # type: ignore[union-attr]
        emit(self.hovered, (u.start, u.end))
        QToolTip.showText(event.globalPosition().toPoint(), self.describe(r, j), self)

    def describe(self, r: int, j: int) -> str:
        a = self.analysis
        assert a is not None
        u = a.units[r][j]
        piece = a.text[u.start : u.end]
        ids = ", ".join(map(str, u.ids))
        extra = f" ({len(u.ids)} byte tokens in one character)" if len(u.ids) > 1 else ""
        return f"{a.names[r]}: {piece!r} · id {ids}{extra} · chars {u.start}–{u.end}"

    def leaveEvent(self, event) -> None:  # noqa: ANN001, N802
        emit(self.hovered, None)
        super().leaveEvent(event)

    def mousePressEvent(self, event) -> None:  # noqa: ANN001, N802
        h = self.hit(event.position().toPoint())
        if h is not None and event.button() == Qt.MouseButton.LeftButton:
            r, j = h
            u = self.analysis.units[r][j]  # type: ignore[union-attr]
            emit(self.clicked, r, u.start, u.end)


