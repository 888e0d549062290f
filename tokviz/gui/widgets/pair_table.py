"""Tables of the Train tab: the pair-count table at step k and the Unigram pruning rounds.

The pair table shows the top pairs as the trainer's queue orders them; the chosen pair is
bold, pairs with the same count (or score) are ties and say which tie-break rule put the chosen
pair ahead ("smaller left id wins" ...), the way the trainer decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from ..display import show_piece
from ..theme import mono_font

__all__ = ["PairTable", "PruneTable", "show_piece"]

_WHY = {
    "": "",
    "count": "lower count",
    "score": "lower score",
    "left id": "tie: smaller left id wins",
    "right id": "tie: smaller right id wins",
}


def _item(text: str, *, mono: bool = False, align_right: bool = False, tip: str = "") -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if mono:
        it.setFont(mono_font())
    if align_right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        it.setToolTip(tip)
    return it


class _Table(QTableWidget):
    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.horizontalHeader().setHighlightSections(False)
        self.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


class PairTable(_Table):
    """Top pairs at a step: rank, left, right, merged, count, (score), why it lost."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(["#", "left", "right", "→ new token", "count", "score", "decided by"], parent)
        h = self.horizontalHeader()
        for c in range(6):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
        self.setColumnHidden(5, True)
        self.chosen_row = -1
        self.rows: Sequence[Any] = ()

    def set_rows(self, rows: Sequence[Any], *, prefix: str | None = None, show_score: bool = False,
                 chosen_is_next: bool = False) -> None:
        self.setColumnHidden(5, not show_score)
        self.rows = rows
        self.setRowCount(len(rows))
        bold = QFont(mono_font())
        bold.setBold(True)
        tie_bg = QColor(229, 165, 10, 60)
        chosen_bg = QColor(28, 100, 242, 55)
        self.chosen_row = -1
        for r, row in enumerate(rows):
            right = row.right
            if prefix and right.startswith(prefix):
                right_merged = right[len(prefix):]
            else:
                right_merged = right
            cells = [
                _item(str(r + 1), align_right=True),
                _item(show_piece(row.left), mono=True, tip=f"id {row.left_id}"),
                _item(show_piece(row.right), mono=True, tip=f"id {row.right_id}"),
                _item(show_piece(row.left + right_merged), mono=True),
                _item(f"{row.count:,}", align_right=True),
                _item(f"{row.score:.3g}" if row.score is not None else "", align_right=True,
                      tip="f(xy) / (f(x) · f(y))"),
            ]
            if row.chosen:
                why = "next merge (highest)" if chosen_is_next else "chosen: highest"
                why += " score" if show_score else " count"
            elif row.tie:
                why = _WHY.get(row.decided_by, row.decided_by)
            else:
                why = _WHY.get(row.decided_by, row.decided_by)
            cells.append(_item(why, tip="Double-click or Enter: jump to the step that merges this pair"))
            for c, it in enumerate(cells):
                if row.chosen:
                    it.setFont(bold)
                    it.setBackground(chosen_bg)
                elif row.tie:
                    it.setBackground(tie_bg)
                self.setItem(r, c, it)
            if row.chosen:
                self.chosen_row = r


def _loss(loss: float) -> str:
    # The trainer gives -inf to pieces the Viterbi segmentation never uses (removed first).
    return "unused" if loss == float("-inf") else f"{loss:.3g}"


class PruneTable(_Table):
    """Unigram pruning rounds: round, vocab before -> after, log-likelihood, removed pieces (loss)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(["round", "pieces", "log-likelihood", "removed (lowest loss first)"], parent)
        h = self.horizontalHeader()
        for c in range(3):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)

    def set_rounds(self, rounds: Sequence[Any]) -> None:
        self.setRowCount(len(rounds))
        for r, pr in enumerate(rounds):
            removed = sorted(pr.removed, key=lambda pl: pl[1])
            shown = ", ".join(f"{show_piece(p)} ({_loss(loss)})" for p, loss in removed[:40])
            if len(removed) > 40:
                shown += f", … {len(removed) - 40:,} more"
            tip = "\n".join(f"{show_piece(p)}\tloss {_loss(loss)}" for p, loss in removed[:200])
            cells = [
                _item(str(pr.round), align_right=True),
                _item(f"{pr.vocab_before:,} → {pr.vocab_after:,}", align_right=True),
                _item(f"{pr.log_likelihood:,.1f}", align_right=True, tip="corpus log-likelihood (natural log)"),
                _item(shown, mono=True, tip=tip),
            ]
            for c, it in enumerate(cells):
                self.setItem(r, c, it)
