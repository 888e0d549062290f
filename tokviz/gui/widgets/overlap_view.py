"""Vocabulary overlap of the Compare tab: a Venn diagram for two or three tokenizers, an
UpSet-style list of membership patterns beyond (each row: which vocabularies hold the surfaces,
and how many surfaces are in exactly those). Counts are surfaces at L0 (exact bytes, specials
excluded), the unit is printed in the title.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QWidget

__all__ = ["OverlapView", "SET_COLORS"]

SET_COLORS = [
    "#1c64f2",
    "#d97706",
    "#059669",
    "#db2777",
    "#7c3aed",
    "#0891b2",
    "#65a30d",
    "#dc2626",
    "#4b5563",
    "#c026d3",
    "#ca8a04",
    "#0d9488",
]
TOP_PATTERNS = 16


class OverlapView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names: tuple[str, ...] = ()
        self.sizes: tuple[int, ...] = ()
        self.patterns: dict[int, int] = {}
        self.text_color = QColor("#1a1a1a")
        self.base = QColor("#ffffff")
        self.setMinimumSize(320, 220)

    def set_colors(self, text: QColor, base: QColor) -> None:
        self.text_color, self.base = text, base
        self.update()

    def set_data(self, names: Sequence[str], sizes: Sequence[int], patterns: dict[int, int]) -> None:
        self.names, self.sizes, self.patterns = tuple(names), tuple(sizes), dict(patterns)
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        if len(self.names) > 3:
            return QSize(520, 40 + 22 * (min(TOP_PATTERNS, len(self.patterns)) + 1) + 14 * len(self.names))
        return QSize(460, 300)

    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        p = QPainter(self)
        self.paint(p)
        p.end()

    def paint(self, p: QPainter) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.base)
        p.setPen(self.text_color)
        if len(self.names) < 2:
            p.drawText(
                self.rect().adjusted(10, 10, -10, -10),
                Qt.AlignmentFlag.AlignLeft,
                "Vocabulary overlap needs two or more loaded tokenizers.",
            )
            return
        p.drawText(
            QRectF(8, 4, self.width() - 16, 18),
            Qt.AlignmentFlag.AlignLeft,
            "surfaces (exact bytes, L0, specials excluded) in exactly these vocabularies",
        )
        if len(self.names) <= 3:
            self._venn(p)
        else:
            self._upset(p)

    # ------------------------------------------------------------------ Venn (2 or 3)
    def _venn(self, p: QPainter) -> None:
        n = len(self.names)
        w, h = self.width(), self.height() - 30
        r = min(w / (3.2 if n == 2 else 3.0), h / 2.6)
        cx, cy = w / 2, 30 + h / 2 + (r * 0.1 if n == 3 else 0)
        if n == 2:
            centers = [QPointF(cx - r * 0.55, cy), QPointF(cx + r * 0.55, cy)]
        else:
            centers = [
                QPointF(cx - r * 0.55, cy - r * 0.35),
                QPointF(cx + r * 0.55, cy - r * 0.35),
                QPointF(cx, cy + r * 0.55),
            ]
        for k, c in enumerate(centers):
            col = QColor(SET_COLORS[k])
            fill = QColor(col)
            fill.setAlphaF(0.18)
            p.setBrush(fill)
            p.setPen(QPen(col, 2))
            p.drawEllipse(c, r, r)
        p.setBrush(Qt.BrushStyle.NoBrush)
        fm = QFontMetrics(self.font())
        # region label positions: away from the other centres for one-set regions, between for shared
        for mask, count in self.patterns.items():
            members = [k for k in range(n) if mask >> k & 1]
            if len(members) == 1:
                k = members[0]
                others = [centers[j] for j in range(n) if j != k]
                ox = sum(c.x() for c in others) / len(others)
                oy = sum(c.y() for c in others) / len(others)
                dx, dy = centers[k].x() - ox, centers[k].y() - oy
                norm = max(1e-6, (dx * dx + dy * dy) ** 0.5)
                pt = QPointF(centers[k].x() + dx / norm * r * 0.45, centers[k].y() + dy / norm * r * 0.45)
            else:
                pt = QPointF(
                    sum(centers[k].x() for k in members) / len(members),
                    sum(centers[k].y() for k in members) / len(members),
                )
                if len(members) == 2 and n == 3:
                    out = next(j for j in range(n) if j not in members)
                    pt = QPointF(
                        pt.x() + (pt.x() - centers[out].x()) * 0.35,
                        pt.y() + (pt.y() - centers[out].y()) * 0.35,
                    )
            label = f"{count:,}"
            p.setPen(self.text_color)
            p.drawText(
                QRectF(pt.x() - 60, pt.y() - fm.height() / 2, 120, fm.height()),
                Qt.AlignmentFlag.AlignCenter,
                label,
            )
        for k, c in enumerate(centers):
            p.setPen(QColor(SET_COLORS[k]))
            name = f"{self.names[k]} ({self.sizes[k]:,})"
            y = c.y() - r - fm.height() - 2 if (n == 2 or k < 2) else c.y() + r + 2
            p.drawText(
                QRectF(c.x() - r, y, 2 * r, fm.height() + 2),
                Qt.AlignmentFlag.AlignCenter,
                fm.elidedText(name, Qt.TextElideMode.ElideMiddle, int(2 * r)),
            )

    # ------------------------------------------------------------------ UpSet (> 3)
    def _upset(self, p: QPainter) -> None:
        n = len(self.names)
        fm = QFontMetrics(self.font())
        rows = sorted(self.patterns.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_PATTERNS]
        name_w = min(170, max(fm.horizontalAdvance(x) for x in self.names) + 8)
        dot_w = 16
        x_dots = 8
        y = 28.0
        # column headers: set names, rotated would be unreadable on small widths; use a legend
        for k in range(n):
            p.setPen(QColor(SET_COLORS[k % len(SET_COLORS)]))
            p.drawText(
                QRectF(x_dots + k * dot_w, y, dot_w, fm.height()), Qt.AlignmentFlag.AlignCenter, str(k + 1)
            )
        p.setPen(self.text_color)
        legend_x = x_dots + n * dot_w + 8 + 110 + 70
        for k, name in enumerate(self.names):
            p.setPen(QColor(SET_COLORS[k % len(SET_COLORS)]))
            p.drawText(
                QRectF(legend_x, y + k * (fm.height() + 1), name_w + 120, fm.height()),
                Qt.AlignmentFlag.AlignLeft,
                f"{k + 1} {name} ({self.sizes[k]:,})",
            )
        y += fm.height() + 4
        top = max((c for _, c in rows), default=1)
        bar_x = x_dots + n * dot_w + 8
        bar_w = 110.0
        row_h = max(18, fm.height() + 4)
        for mask, count in rows:
            for k in range(n):
                c = QPointF(x_dots + k * dot_w + dot_w / 2, y + row_h / 2)
                if mask >> k & 1:
                    p.setBrush(QColor(SET_COLORS[k % len(SET_COLORS)]))
                    p.setPen(Qt.PenStyle.NoPen)
                    p.drawEllipse(c, 5, 5)
                else:
                    p.setBrush(Qt.BrushStyle.NoBrush)
                    p.setPen(QPen(QColor("#9ca3af"), 1))
                    p.drawEllipse(c, 3, 3)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#6b7280"))
            p.drawRect(QRectF(bar_x, y + 4, bar_w * count / top, row_h - 8))
            p.setPen(self.text_color)
            p.drawText(QRectF(bar_x + bar_w + 6, y, 64, row_h), Qt.AlignmentFlag.AlignVCenter, f"{count:,}")
            y += row_h
        if len(self.patterns) > len(rows):
            rest = sum(c for m, c in self.patterns.items() if (m, c) not in rows)
            p.drawText(
                QRectF(x_dots, y + 2, 400, row_h),
                Qt.AlignmentFlag.AlignVCenter,
                f"… {len(self.patterns) - len(rows)} more patterns, {rest:,} surfaces",
            )
