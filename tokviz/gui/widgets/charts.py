"""Charts of the Train and Lattice tabs: training curves (pyqtgraph) and a segmentation histogram.

`SeriesChart` stacks one pyqtgraph plot per group of series over a shared x axis (vocab size
and merge count vs k; corpus tokens vs k; or log-likelihood / vocab size per EM iteration), with
a cursor line at the current step. `Histogram` is a painted horizontal bar list of sampled
segmentations (labels are long strings, which a bar chart axis cannot show readably). Both export
as PNG and SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from .._compat import emit
from ..display import counted
from ..theme import mono_font

__all__ = ["SeriesChart", "Histogram", "export_widget"]

_COLORS = ["#1c64f2", "#d97706", "#059669", "#db2777"]


def _save_svg(path: Path, size: QSize, paint) -> None:  # noqa: ANN001
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(size)
    gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
    gen.setTitle("tokviz")
    p = QPainter(gen)
    paint(p)
    p.end()


def export_widget(widget: QWidget, path: str | Path, paint=None) -> None:  # noqa: ANN001
    """Save a widget as PNG (2x) or SVG (by suffix). ``paint(painter)`` draws the whole content."""
    path = Path(path)
    size = widget.size()
    if paint is None:
        def paint(p: QPainter) -> None:
            widget.render(p)
    if path.suffix.lower() == ".svg":
        _save_svg(path, size, paint)
        return
    dpr = 2.0
    img = QImage(int(size.width() * dpr), int(size.height() * dpr), QImage.Format.Format_ARGB32)
    img.setDevicePixelRatio(dpr)
    img.fill(widget.palette().color(QPalette.ColorRole.Base))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    paint(p)
    p.end()
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")


class SeriesChart(pg.GraphicsLayoutWidget):
    """Stacked line plots sharing x, with a cursor line at the current step."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(150)
        self._plots: list[pg.PlotItem] = []
        self._cursors: list[pg.InfiniteLine] = []
        self._dark = False
        self._last = None
        self.apply_palette()

    def apply_palette(self, dark: bool | None = None, *, base: QColor | None = None, text: QColor | None = None) -> None:
        """Colors from the theme (or the widget palette); redraws the current series."""
        pal = self.palette()
        if dark is not None:
            self._dark = dark
        self._bg = QColor(base) if base is not None else pal.color(QPalette.ColorRole.Base)
        self._fg = QColor(text) if text is not None else pal.color(QPalette.ColorRole.Text)
        self.setBackground(self._bg)
        if getattr(self, "_last", None) is not None:
            x, groups, kw = self._last
            self.set_series(x, groups, **kw)

    def set_series(self, x: Sequence[float], groups: Sequence[Sequence[tuple[str, Sequence[float]]]], *,
                   x_label: str, y_labels: Sequence[str]) -> None:
        """``groups``: one list of (name, values) per stacked plot."""
        self._last = (x, groups, {"x_label": x_label, "y_labels": y_labels})
        cursor = self._cursors[0].value() if self._cursors and self._cursors[0].isVisible() else None
        self.clear()
        self._plots = []
        self._cursors = []
        first = None
        ci = 0
        for gi, group in enumerate(groups):
            p = self.addPlot(row=gi, col=0)
            p.showGrid(x=True, y=True, alpha=0.15)
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
            p.hideButtons()
            p.getAxis("left").setWidth(64)
            for ax in ("left", "bottom"):
                p.getAxis(ax).setPen(pg.mkPen(self._fg))
                p.getAxis(ax).setTextPen(pg.mkPen(self._fg))
            # the y unit goes in the title line with the key (a rotated axis title longer than a
            # short plot was drawn over itself and over its neighbour's)
            unit = y_labels[gi] if gi < len(y_labels) else ""
            if gi == len(groups) - 1:
                p.setLabel("bottom", x_label)
            else:
                p.getAxis("bottom").setStyle(showValues=False)
            keys = []
            for name, ys in group:
                color = _COLORS[ci % len(_COLORS)]
                p.plot(list(x), list(ys), pen=pg.mkPen(color, width=2), name=name)
                keys.append(f"<span style='color:{color}'>━ {name}</span>")
                ci += 1
            # the key goes in the title, where it never hides a curve
            unit_html = f"<span style='color:{self._fg.name()}'>{unit}:</span>&nbsp;&nbsp;" if unit else ""
            p.setTitle(unit_html + "&nbsp;&nbsp;".join(keys), size="9pt", justify="left")
            if len(x):
                p.setXRange(min(x), max(x), padding=0.01)
            if first is None:
                first = p
            else:
                p.setXLink(first)
            cur = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#e5a50a", width=1.5, style=Qt.PenStyle.DashLine))
            cur.setVisible(False)
            p.addItem(cur)
            self._cursors.append(cur)
            self._plots.append(p)
        if cursor is not None and self._last is not None:
            self.set_cursor(cursor)

    def set_cursor(self, x: float | None) -> None:
        for c in self._cursors:
            c.setVisible(x is not None)
            if x is not None:
                c.setValue(x)

    def export(self, path: str | Path) -> None:
        # QSvgGenerator via render(): pyqtgraph's own SVGExporter fails on Qt 6 path data.
        export_widget(self, path)


class Histogram(QWidget):
    """Horizontal bars: one row per distinct segmentation, count and share, most frequent first."""

    row_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, int, bool]] = []  # (label, count, is_best)
        self.selected = -1
        self.total = 0
        self.setFont(mono_font())
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.title = ""

    def set_rows(self, rows: Sequence[tuple[str, int, bool]], *, title: str = "") -> None:
        self.rows = list(rows)
        self.selected = -1
        self.total = sum(c for _, c, _ in rows)
        self.title = title
        self.updateGeometry()
        self.update()

    def _row_h(self) -> float:
        return QFontMetricsF(self.font()).height() + 6

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, int(24 + self._row_h() * max(1, len(self.rows))))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(200, 60)

    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        p = QPainter(self)
        self.paint(p)
        p.end()

    def paint(self, p: QPainter) -> None:
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        p.setFont(self.font())
        fm = QFontMetricsF(self.font())
        fg = pal.color(QPalette.ColorRole.Text)
        muted = QColor("#8a8f98")
        rh = self._row_h()
        y = 4.0
        if self.title:
            p.setPen(muted)
            p.drawText(QRectF(8, y, self.width() - 16, rh), Qt.AlignmentFlag.AlignVCenter, self.title)
            y += rh
        if not self.rows:
            p.setPen(muted)
            p.drawText(QRectF(8, y, self.width() - 16, rh), Qt.AlignmentFlag.AlignVCenter, "No samples yet.")
            return
        num_w = fm.horizontalAdvance(f"{max(c for _, c, _ in self.rows):,}  100.0%") + 12
        bar_w = max(60.0, min(220.0, self.width() * 0.25))
        top = max(c for _, c, _ in self.rows)
        bar = QColor("#1c64f2")
        bar.setAlpha(150)
        best = QColor("#e5a50a")
        for i, (label, count, is_best) in enumerate(self.rows):
            share = count / self.total if self.total else 0.0
            p.setPen(fg)
            p.drawText(QRectF(8, y, num_w - 12, rh), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       f"{count:,}  {share * 100:5.1f}%")
            w = bar_w * count / top
            p.fillRect(QRectF(num_w, y + 3, w, rh - 6), best if is_best else bar)
            p.setPen(fg)
            if i == self.selected:
                sel = QColor("#db2777")
                p.setPen(sel)
                p.drawRect(QRectF(2, y + 1, self.width() - 4, rh - 2))
                p.setPen(fg)
            text = fm.elidedText(label, Qt.TextElideMode.ElideRight, self.width() - num_w - bar_w - 24)
            p.drawText(QRectF(num_w + bar_w + 10, y, self.width(), rh), Qt.AlignmentFlag.AlignVCenter, text)
            y += rh

    def mouseMoveEvent(self, event) -> None:  # noqa: ANN001, N802
        i = self.row_at(event.position().y())
        if i >= 0:
            label, count, is_best = self.rows[i]
            extra = " (the Viterbi / deterministic segmentation)" if is_best else ""
            QToolTip.showText(event.globalPosition().toPoint(), f"{count:,} of {counted(self.total, 'sample')}{extra}\n{label}", self)

    def row_at(self, y: float) -> int:
        rh = self._row_h()
        i = int((y - 4 - (rh if self.title else 0)) // rh)
        return i if 0 <= i < len(self.rows) else -1

    def mousePressEvent(self, event) -> None:  # noqa: ANN001, N802
        i = self.row_at(event.position().y())
        if i >= 0:
            self.selected = i
            self.update()
            emit(self.row_activated, i)

    def export(self, path: str | Path) -> None:
        export_widget(self, path, self.paint)
