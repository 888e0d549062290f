"""The Unigram lattice drawn as a chart: one column per character, one box per candidate piece.

Each candidate piece is a box spanning the characters it covers, labelled with the piece and
its log-probability; its fill is shaded by its posterior marginal (forward-backward), the
Viterbi path is outlined and laid out on the first lane, and a selected path (an n-best entry
or a sample) is outlined in the selection color and joined by a line. Hover shows piece, id,
score, span and marginal. The widget only paints the values it is given (`tokviz.gui.display.LatticePicture`);
the lattice itself comes from the view-model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QScrollArea, QToolTip, QWidget

from .._compat import emit
from ..display import LatticePicture, show_piece
from ..theme import mono_font
from .charts import export_widget

__all__ = ["LatticeCanvas", "LatticeView", "assign_lanes"]


def assign_lanes(nodes: Sequence[Any], first: Sequence[int]) -> list[int]:
    """Lane (row) per node: the ``first`` path on lane 0, the others packed greedily by start."""
    lanes = [-1] * len(nodes)
    for k in first:
        lanes[k] = 0
    ends: list[int] = [10**9]  # lane 0 is reserved for the first path
    for nd in sorted((n for n in nodes if lanes[n.index] < 0), key=lambda n: (n.start, n.end)):
        for li in range(1, len(ends)):
            if ends[li] <= nd.start:
                lanes[nd.index] = li
                ends[li] = nd.end
                break
        else:
            lanes[nd.index] = len(ends)
            ends.append(nd.end)
    return lanes


class LatticeCanvas(QWidget):
    node_hovered = Signal(int)  # node index or -1
    node_clicked = Signal(int)

    COL_MIN = 30.0
    ROW_H = 38.0
    TOP = 46.0
    LEFT = 10.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.picture: LatticePicture | None = None
        self.setMouseTracking(True)
        self.setFont(mono_font())
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.5, self.font().pointSizeF() * 0.78))
        self._lanes: list[int] = []
        self._xs: list[float] = [0.0]
        self._rects: list[QRectF] = []
        self.hover = -1
        self.dark = False
        self.placeholder = "Pick a Unigram tokenizer in the Inspect tab and a text above."

    def set_picture(self, pic: LatticePicture | None) -> None:
        self.picture = pic
        self._layout()
        self.update()

    def set_selected(self, path: Sequence[int]) -> None:
        if self.picture is not None:
            p = self.picture
            self.picture = LatticePicture(p.text, p.nodes, p.marginals, p.viterbi, tuple(path))
            self.update()

    def _layout(self) -> None:
        pic = self.picture
        fm = QFontMetricsF(self.font())
        if pic is None:
            self._xs, self._rects, self._lanes = [0.0], [], []
            self.setMinimumSize(0, 0)
            self.updateGeometry()
            return
        # column widths: wide enough for the character, and for single-char pieces' scores
        sfm = QFontMetricsF(self._small)
        score_w = sfm.horizontalAdvance("-10.00") + 8
        xs = [self.LEFT]
        for ch in pic.text:
            w = max(self.COL_MIN, fm.horizontalAdvance(show_piece(ch)) + 10)
            xs.append(xs[-1] + w)
        # widen columns so every box fits its label (spread extra width over the node's span)
        for nd in pic.nodes:
            need = max(fm.horizontalAdvance(show_piece(nd.piece)), score_w) + 8
            have = xs[nd.end] - xs[nd.start]
            if have < need:
                extra = (need - have) / (nd.end - nd.start)
                for j in range(nd.start + 1, len(xs)):
                    xs[j] += extra * min(j - nd.start, nd.end - nd.start)
        self._xs = xs
        self._lanes = assign_lanes(pic.nodes, pic.viterbi)
        self._rects = []
        for nd in pic.nodes:
            lane = self._lanes[nd.index]
            y = self.TOP + lane * self.ROW_H + (10 if lane > 0 else 0)
            self._rects.append(QRectF(xs[nd.start] + 1, y, xs[nd.end] - xs[nd.start] - 2, self.ROW_H - 6))
        lanes = (max(self._lanes) + 1) if self._lanes else 1
        self.setMinimumSize(QSize(int(xs[-1] + self.LEFT), int(self.TOP + lanes * self.ROW_H + 24)))
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize().expandedTo(QSize(300, 200))

    def content_size(self) -> QSize:
        return self.minimumSize().expandedTo(QSize(200, 80))

    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.paint(p)
        p.end()

    def paint(self, p: QPainter) -> None:
        """Draw the lattice: the character axis, every candidate piece as a box in its row, the
        best path over them and the hover highlight. One paint pass over shared colours and
        geometry."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        fg = pal.color(QPalette.ColorRole.Text)
        muted = QColor("#8a8f98")
        dark = base.lightness() < 128
        p.fillRect(QRectF(0, 0, max(self.width(), self.content_size().width()), max(self.height(), self.content_size().height())), base)
        pic = self.picture
        p.setFont(self.font())
        if pic is None:
            p.setPen(muted)
            p.drawText(QRectF(10, 10, self.width() - 20, 40), Qt.AlignmentFlag.AlignLeft, self.placeholder)
            return
        fm = QFontMetricsF(self.font())
        xs = self._xs
        # character header: the chunk's characters with their positions
        grid = QColor(muted)
        grid.setAlpha(60)
        bottom = self.TOP + ((max(self._lanes) + 1) if self._lanes else 1) * self.ROW_H + 14
        for i, ch in enumerate(pic.text):
            r = QRectF(xs[i], 4, xs[i + 1] - xs[i], 22)
            p.setPen(fg)
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, show_piece(ch))
            p.setPen(muted)
            p.setFont(self._small)
            p.drawText(QRectF(xs[i], 24, xs[i + 1] - xs[i], 14), Qt.AlignmentFlag.AlignCenter, str(i))
            p.setFont(self.font())
        p.setPen(QPen(grid, 1))
        for x in xs:
            p.drawLine(QPointF(x, 4), QPointF(x, bottom))
        # lane separator under the Viterbi lane
        p.setPen(QPen(grid, 1, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(xs[0], self.TOP + self.ROW_H + 1), QPointF(xs[-1], self.TOP + self.ROW_H + 1))
        vset = set(pic.viterbi)
        sset = set(pic.selected)
        hue = QColor("#3b82f6") if not dark else QColor("#7aa2f7")
        vit = QColor("#e5a50a")
        sel = QColor("#db2777") if not dark else QColor("#f472b6")
        for nd, rect in zip(pic.nodes, self._rects):
            prob = math.exp(pic.marginals[nd.index]) if nd.index < len(pic.marginals) else 0.0
            fill = QColor(hue)
            fill.setAlphaF(0.07 + 0.6 * max(0.0, min(1.0, prob)))
            p.fillRect(rect, fill)
            if nd.index in sset:
                pen = QPen(sel, 2.5)
            elif nd.index in vset:
                pen = QPen(vit, 2.5)
            elif nd.index == self.hover:
                pen = QPen(fg, 1.5)
            else:
                pen = QPen(muted, 1)
            if nd.unknown:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
            p.setPen(fg)
            p.setFont(self.font())
            label = fm.elidedText(show_piece(nd.piece), Qt.TextElideMode.ElideRight, rect.width() - 4)
            p.drawText(QRectF(rect.x(), rect.y() + 1, rect.width(), rect.height() * 0.55),
                       Qt.AlignmentFlag.AlignCenter, label)
            p.setFont(self._small)
            p.setPen(muted if nd.index not in vset else fg)
            p.drawText(QRectF(rect.x(), rect.y() + rect.height() * 0.5, rect.width(), rect.height() * 0.5),
                       Qt.AlignmentFlag.AlignCenter, f"{nd.score:.2f}")
        # the selected path as a connecting line
        for path, color in ((pic.viterbi, vit), (pic.selected, sel)):
            if not path or (path is pic.viterbi and pic.selected):
                continue
            p.setPen(QPen(color, 1.5))
            pts = [self._rects[k].center() for k in path]
            for a, b in zip(pts, pts[1:]):
                p.drawLine(a, b)
        # legend
        p.setFont(self._small)
        y = bottom + 2
        x = xs[0]
        for color, text in ((vit, "Viterbi path (lane 1)"), (sel, "selected path"), (hue, "fill = posterior marginal")):
            p.setPen(QPen(color, 2.5))
            p.drawRect(QRectF(x, y + 3, 14, 9))
            p.setPen(muted)
            p.drawText(QPointF(x + 20, y + 12), text)
            x += 30 + QFontMetricsF(self._small).horizontalAdvance(text)

    def index_at(self, pos: QPointF) -> int:
        for k, r in enumerate(self._rects):
            if r.contains(pos):
                return k
        return -1

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        k = self.index_at(event.position())
        if k != self.hover:
            self.hover = k
            emit(self.node_hovered, k)
            self.update()
        if k >= 0 and self.picture is not None:
            nd = self.picture.nodes[k]
            prob = math.exp(self.picture.marginals[k]) if k < len(self.picture.marginals) else float("nan")
            kind = "unknown piece" if nd.unknown else f"id {nd.id}"
            on = " · on the Viterbi path" if k in set(self.picture.viterbi) else ""
            QToolTip.showText(
                event.globalPosition().toPoint(),
                f"{nd.piece!r}  ({kind}){on}\nlog-prob {nd.score:.4f}\n"
                f"chars {nd.start}–{nd.end} of the normalized chunk: {self.picture.text[nd.start:nd.end]!r}\n"
                f"posterior marginal {prob:.4f}",
                self,
            )
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: ANN001, N802
        if self.hover != -1:
            self.hover = -1
            emit(self.node_hovered, -1)
            self.update()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        k = self.index_at(event.position())
        if k >= 0:
            emit(self.node_clicked, k)


class LatticeView(QScrollArea):
    """The canvas in a scroll area (long texts scroll sideways)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = LatticeCanvas()
        self.setWidget(self.canvas)
        self.setWidgetResizable(True)
        self.setBackgroundRole(QPalette.ColorRole.Base)

    def export(self, path: str | Path) -> None:
        c = self.canvas
        size = c.content_size()
        old = c.size()
        c.resize(size)
        try:
            export_widget(c, path, c.paint)
        finally:
            c.resize(old)
