"""The caret panel (docked beside Inspect): what the tokenizer will still change at the caret.

Top: the stable prefix | unstable suffix boundary (the last stable tokens, then the unstable
bytes), the rule (tiktoken's or the probe-verified word rule), the completion count, the
one-token extensions and prefix pieces, the two healing previews and the warnings. Bottom: the
special literals near the caret and the mode matrix (ids and count per API convention); literals
treated differently between modes and double BOS are highlighted. Shows a `CaretViewModel`.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

__all__ = ["CaretPanel"]

_SHOWN = 40  # tokens listed per candidate line


def _cell(text: str, bg: str, fg: str = "", bold: bool = False) -> str:
    shown = text.replace("\n", "↵").replace("\t", "→").replace(" ", "␣") or "∅"
    style = f"background:{bg};" + (f" color:{fg};" if fg else "") + (" font-weight:bold;" if bold else "")
    return f"<span style='{style} font-family:monospace'>{html.escape(shown)}</span>"


class _WidthScroll(QScrollArea):
    """A vertical scroll area whose content always takes the viewport width (labels wrap)."""

    def resizeEvent(self, event) -> None:  # noqa: ANN001, N802
        super().resizeEvent(event)
        if self.widget() is not None:
            self.widget().setMaximumWidth(self.viewport().width())


class CaretPanel(QWidget):
    def __init__(self, vm: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.theme: Any = None
        self.summary = QLabel("Move the caret in the raw text.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.hits = QTableWidget(0, 4)
        self.hits.setHorizontalHeaderLabels(["At", "Literal", "Id", "Kind"])
        self.modes = QTableWidget(0, 3)
        self.modes.setHorizontalHeaderLabels(["Mode", "Tokens", "Ids / error"])
        for t in (self.hits, self.modes):
            t.verticalHeader().setVisible(False)
            t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            t.horizontalHeader().setStretchLastSection(True)
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            t.horizontalHeader().setSectionResizeMode(t.columnCount() - 1, QHeaderView.ResizeMode.Stretch)
            t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            t.setWordWrap(False)
        self.specials_head = QLabel("<b>Special literals</b>")
        self.specials_note = QLabel()
        self.specials_note.setWordWrap(True)
        self.specials_head.setWordWrap(True)
        self.specials_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.specials_head.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(QLabel("<b>At the caret</b>&nbsp;&nbsp;<span style='color:gray'>stable prefix | unstable suffix</span>"))
        lay.addWidget(self.summary)
        lay.addWidget(self.specials_head)
        lay.addWidget(self.hits)
        lay.addWidget(self.specials_note)
        lay.addWidget(self.modes)
        lay.addStretch(1)
        scroll = _WidthScroll()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        vm.result_changed.connect(self.show_view)
        vm.error_raised.connect(lambda msg: self.summary.setText(f"<span style='color:#c0392b'>{html.escape(msg)}</span>"))

    def set_theme(self, theme: Any) -> None:
        self.theme = theme
        if self.vm.view is not None:
            self.show_view(self.vm.view)

    # ------------------------------------------------------------------ drawing
    def _colors(self) -> tuple[str, str, str, str, str]:
        t = self.theme
        if t is None:
            return "#e8e8e8", "#ffe2b8", "#e9d5ff", "#5b21b6", "#c0392b"
        stable = "#34373d" if t.dark else "#e6e6e6"
        unstable = "#6b4a1f" if t.dark else "#ffd8a8"
        return stable, unstable, t.special_bg.name(), t.special_fg.name(), t.literal.name()

    def _tokens(self, ids: Any, pieces: dict[int, str], bg: str, total: int | None = None) -> str:
        total = len(ids) if total is None else total
        shown = [_cell(pieces.get(i, f"#{i}"), bg) for i in list(ids)[:_SHOWN]]
        more = f" <span style='color:gray'>… +{total - len(shown):,}</span>" if total > len(shown) else ""
        return " ".join(shown) + more

    def show_view(self, view: Any) -> None:
        h = view.healing
        stable_bg, unstable_bg, _sbg, _sfg, alert = self._colors()
        n_stable = len(h.stable)
        tail = h.stable[-6:]
        lead = "… " if n_stable > len(tail) else ""
        unstable_text = h.unstable.decode("utf-8", "backslashreplace")
        boundary = (lead + " ".join(_cell(view.pieces.get(i, f"#{i}"), stable_bg) for i in tail)
                    + " <b>│</b> " + (_cell(unstable_text, unstable_bg, bold=True) if h.unstable else "<i>nothing unstable</i>"))
        rule = "tiktoken's rule (encode_with_unstable)" if h.rule == "tiktoken" else (
            "word rule · " + ("verified by probes" if h.verified else "<span style='color:%s'>unverified</span>" % alert))
        where = f"char {view.caret:,} of {view.text_length:,}"
        if view.window_start:
            where += f" · last {view.caret - view.window_start:,} chars analysed"
        lines = [
            f"<span style='color:gray'>{where} · {rule}</span>",
            boundary,
            f"stable <b>{n_stable:,}</b> tokens · unstable <b>{len(h.unstable)}</b> bytes "
            f"<span style='color:gray'>{html.escape(h.unstable.hex(' '))}</span>",
            f"completions: <b>{len(h.completions):,}</b> sequences · <b>{len(h.single_token_completions):,}</b> single tokens",
        ]
        multi = [c for c in h.completion_examples(len(h.completions)) if len(c) > 1][:4] if len(h.completions) < 5000 else []
        if multi:
            lines.append("multi-token completions: " + " · ".join(
                "".join(_cell(view.pieces.get(i, f"#{i}"), (unstable_bg, stable_bg)[k % 2]) for k, i in enumerate(c))
                for c in multi))
        if h.single_token_completions:
            lines.append("one-token extensions: " + self._tokens(h.single_token_completions, view.pieces, unstable_bg))
        if h.prefix_pieces:
            lines.append("prefix pieces: " + self._tokens(h.prefix_pieces, view.pieces, stable_bg))
        for p, label in ((h.rollback_one, "heal 1 (roll back one token)"), (h.rollback_covering, "heal d1 (roll back while a token covers)")):
            if p is None:
                continue
            removed = p.removed.decode("utf-8", "backslashreplace")
            lines.append(f"{label}: k = {p.k}, removed {_cell(removed, unstable_bg)} → <b>{p.candidate_count:,}</b> "
                         f"candidates " + self._tokens(p.candidates, view.pieces, stable_bg, p.candidate_count))
        for w in h.warnings:
            lines.append(f"<span style='color:{alert}'>⚠ {html.escape(w)}</span>")
        self.summary.setText("<br>".join(lines))
        self._show_specials(view)

    def _show_specials(self, view: Any) -> None:
        rep = view.specials
        _s, _u, sbg, sfg, alert = self._colors()
        self.specials_head.setText(f"<b>Special literals</b>&nbsp;&nbsp;<span style='color:gray'>{len(rep.hits)} in the "
                                   "text near the caret · * = this tokenizer's own API</span>")
        self.hits.setRowCount(len(rep.hits))
        differing = set(rep.differing)
        for r, hit in enumerate(rep.hits):
            cells = [str(view.specials_start + hit.start), hit.literal, "" if hit.id is None else str(hit.id), hit.kind]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if hit.literal in differing:
                    item.setForeground(QBrush(QColor(alert)))
                    f = QFont()
                    f.setBold(True)
                    item.setFont(f)
                self.hits.setItem(r, c, item)
        notes = []
        if rep.differing:
            notes.append(f"<span style='color:{alert}'>treated differently between modes: "
                         + ", ".join(html.escape(x) for x in rep.differing) + "</span>")
        if rep.double_bos:
            notes.append(f"<span style='color:{alert}'>double BOS in: {', '.join(rep.double_bos)}</span>")
        self.specials_note.setText("<br>".join(notes))
        self.specials_note.setVisible(bool(notes))
        self.modes.setRowCount(len(rep.modes))
        for r, m in enumerate(rep.modes):
            name = ("* " if m.native else "  ") + m.mode
            body = m.error if m.ids is None else " ".join(map(str, m.ids[:24])) + (" …" if len(m.ids) > 24 else "")
            cells = [name, "—" if m.count is None else f"{m.count:,}", body]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if m.mode in rep.double_bos or (m.ids is None and c == 2):
                    item.setForeground(QBrush(QColor(alert)))
                if m.native:
                    item.setBackground(QBrush(QColor(sbg)))
                    item.setForeground(QBrush(QColor(sfg if m.mode not in rep.double_bos else alert)))
                self.modes.setItem(r, c, item)
        for t in (self.hits, self.modes):
            t.setFixedHeight(t.horizontalHeader().height() + sum(t.rowHeight(i) for i in range(t.rowCount())) + 4)
