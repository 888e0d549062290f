"""Small shared building blocks of the tabs: a bold header with a grey hint, a boxed pane under
such a header, a read-only results table, a labelled combo box and a one-line label that elides
(with the whole text as its tooltip) instead of being cut.

The tabs build their panels from these (``_build_<panel>()`` methods), so a header or a table
looks the same in every tab. Nothing here knows a view-model.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

__all__ = ["ElidedLabel", "boxed", "choice", "header", "header_html", "table"]


def header_html(title: str, hint: str = "") -> str:
    """The rich text of a header: the title in bold, the hint in grey after it.

    >>> header_html("Probe")
    '<b>Probe</b>'
    """
    return f"<b>{title}</b>" + (f"&nbsp;&nbsp;<span style='color:gray'>{hint}</span>" if hint else "")


def header(title: str, hint: str = "", *, wrap: bool = True) -> QLabel:
    """A pane header; ``setText(header_html(...))`` changes it later."""
    lab = QLabel(header_html(title, hint))
    lab.setContentsMargins(2, 4, 0, 0)
    lab.setWordWrap(wrap)
    return lab


def boxed(title: str, hint: str, body: QWidget, *, wrap: bool = True) -> QWidget:
    """``body`` under a header; the header is reachable as ``.header`` of the returned widget."""
    w = QWidget()
    lay = QVBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(2)
    head = header(title, hint, wrap=wrap)
    lay.addWidget(head)
    lay.addWidget(body, 1)
    w.header = head  # type: ignore[attr-defined]
    return w


def table(cols: list[str]) -> QTableWidget:
    """A results table: the given column titles, whole-row selection, columns sized to content."""
    t = QTableWidget(0, len(cols))
    t.setHorizontalHeaderLabels(cols)
    t.verticalHeader().setVisible(False)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.setAlternatingRowColors(True)
    return t


def choice(label: str, items: list[str], changed: Callable[[], object]) -> tuple[QHBoxLayout, QComboBox]:
    """A labelled combo box calling ``changed()`` when the choice changes."""
    row = QHBoxLayout()
    row.addWidget(QLabel(label))
    box = QComboBox()
    box.addItems(items)
    box.currentIndexChanged.connect(lambda _i: changed())
    row.addWidget(box, 1)
    return row, box


class ElidedLabel(QLabel):
    """A one-line plain-text label that never shows cut text: when it is too narrow it ends in
    "…" and its tooltip holds the whole text (status lines, progress descriptions)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self._sync_tip()

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().resizeEvent(event)
        self._sync_tip()

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def _sync_tip(self) -> None:
        self.setToolTip(self.text() if self.is_elided() else "")

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(0, super().minimumSizeHint().height())

    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        p = QPainter(self)
        r = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, r.width())
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawText(r, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), shown)
        p.end()
