"""Small shared building blocks of the tabs: a bold header with a grey hint, a boxed pane under
such a header, a read-only results table and a labelled combo box.

The tabs build their panels from these (``_build_<panel>()`` methods), so a header or a table
looks the same in every tab. Nothing here knows a view-model.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

__all__ = ["boxed", "choice", "header", "header_html", "table"]


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
