"""The offset-lint panel of the Inspect tab, and the lint marks the token and chunk panes draw.

`LintPanel` lists the findings of `tokviz.gui.lint_viewmodel.LintViewModel` grouped by check
(with counts per severity), toggles HF-compatible / exact spans, shows "which stage moved this
offset" for the selected token, lints a corpus file (progress + cancel) and exports the report or
one finding as a regression test. `paint_marks` draws the marks over a `SpanView`: a severity
colored underline under affected items and one bracket over the tokens sharing a character.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from PySide6.QtCore import QModelIndex, QPointF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QTextCharFormat
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...analysis.lint import CHECKS, Finding, SpanIndex
from .._compat import emit
from ..display import counted
from ..lint_viewmodel import SEVERITY_RANK, LintMarks, LintView, LintViewModel

__all__ = ["LintPanel", "paint_marks", "chunk_marks", "lint_selections", "normalized_lint_selections", "severity_color"]

_COLORS = {"error": "#d0342c", "warn": "#d98200", "info": "#3f7fd0"}
_FINDING = Qt.ItemDataRole.UserRole + 1
_MORE = Qt.ItemDataRole.UserRole + 2
_GROUP = Qt.ItemDataRole.UserRole + 3

#: finding rows made per page when a group is opened
ROWS_PER_PAGE = 200


def severity_color(severity: str) -> QColor:
    return QColor(_COLORS.get(severity, "#888888"))


def paint_marks(
    view,  # noqa: ANN001 - a SpanView
    p: QPainter,
    dy: float,
    severities: dict[int, str],
    brackets: tuple[tuple[int, ...], ...] = (),
) -> None:
    """Underline the items in ``severities`` in their severity color, and draw one bracket over
    each group of ``brackets`` (items on one row; a group that wraps gets one per row)."""
    vis_top, vis_bottom = -dy, -dy + view.viewport().height()
    first, end = view.visible_items()  # item_rect lays a line out: only ask for lines in view
    for i, sev in severities.items():
        if not first <= i < end:
            continue
        r = view.item_rect(i)
        if r is None or r.bottom() < vis_top or r.top() > vis_bottom:
            continue
        p.setPen(QPen(severity_color(sev), 2.5 if sev == "error" else 2.0))
        y = r.bottom() + dy - 2.5
        p.drawLine(QPointF(r.left() + 1, y), QPointF(r.right() - 1, y))
    pen = QPen(view.theme.bracket, 1.2)
    for group in brackets:
        if not any(first <= i < end for i in group):
            continue
        rects = [r for r in (view.item_rect(i) for i in group) if r is not None]
        rows: dict[float, list] = {}
        for r in rects:
            rows.setdefault(r.top(), []).append(r)
        for top, rs in rows.items():
            if top > vis_bottom or top + rs[0].height() < vis_top:
                continue
            x0, x1 = min(r.left() for r in rs) + 1, max(r.right() for r in rs) - 1
            y = top + dy + 1.5
            p.setPen(pen)
            p.drawLine(QPointF(x0, y), QPointF(x1, y))
            p.drawLine(QPointF(x0, y), QPointF(x0, y + 4))
            p.drawLine(QPointF(x1, y), QPointF(x1, y + 4))


def _underline(severity: str) -> QTextCharFormat:
    """Errors and warnings: a tint and a wavy underline; infos: a dotted underline only."""
    fmt = QTextCharFormat()
    color = severity_color(severity)
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline if severity != "info" else QTextCharFormat.UnderlineStyle.DotLine)
    fmt.setUnderlineColor(color)
    if severity != "info":
        tint = QColor(color)
        tint.setAlpha(45)
        fmt.setBackground(tint)
    return fmt


def lint_selections(pane, om, c0: int, c1: int, marks: LintMarks | None) -> list:  # noqa: ANN001
    """Extra selections of a text pane over the original text: marked spans in ``[c0, c1]``
    underlined in their severity color (a zero-width span marks the character after it)."""
    if marks is None:
        return []
    text = om.text
    n = len(text)
    out = []
    for s, e, sev in marks.spans:
        if e > n:
            continue  # marks of a longer text before (the next lint replaces them)
        e = max(e, min(s + 1, n))
        while 0 < s < n and unicodedata.combining(text[s]):  # a lone mark shows with its base
            s -= 1
        if e > s and e >= c0 and s <= c1:
            out.append(pane._sel(om.to_utf16(s), om.to_utf16(e), _underline(sev)))  # noqa: SLF001
    return out


def _mark_index(marks: LintMarks) -> tuple[SpanIndex, list[str]]:
    """The marked spans by position (a zero-width span counts as its next character)."""
    spans = [(s, max(e, s + 1)) for s, e, _ in marks.spans]
    return SpanIndex(range(len(spans)), spans.__getitem__), [sev for _, _, sev in marks.spans]


def _worst(severities: list[str], hits: list[int]) -> str | None:
    return min((severities[k] for k in hits), key=SEVERITY_RANK.__getitem__, default=None)


def normalized_lint_selections(pane, nm, norm, a: int, b: int, marks: LintMarks | None) -> list:  # noqa: ANN001
    """The same marks in the normalized pane: normalized characters whose source meets a span."""
    if marks is None or not marks.spans:
        return []
    index, sevs = _mark_index(marks)
    out = []
    for i in range(a, min(b, len(norm.text))):
        s, e = norm.align(i)
        worst = _worst(sevs, index.overlapping(s, max(e, s + 1)))
        if worst is not None:
            out.append(pane._sel(nm.to_utf16(i), nm.to_utf16(i + 1), _underline(worst)))  # noqa: SLF001
    return out


def chunk_marks(chunks, marks: LintMarks | None, spans: tuple[Sequence[int], Sequence[int]] | None = None) -> dict[int, str]:  # noqa: ANN001
    """Worst severity per pre-token chunk overlapping a marked span (an empty chunk: one whose
    position lies in the span). ``spans``: the chunks' starts and ends as columns, when the
    update has them (then no chunk object is read). Painted often: the last answer is kept while
    both stay."""
    if marks is None or not marks.spans:
        return {}
    last = _CHUNK_MARKS.get("last")
    if last is not None and last[0] is chunks and last[1] is marks:
        return last[2]
    # a chunk as a span (an empty one as its next character), then the chunks each mark meets
    if spans is not None:
        starts = spans[0]
        index = SpanIndex.of_columns(starts, list(map(max, spans[1], map((1).__add__, starts))))
    else:
        index = SpanIndex(range(len(chunks)), lambda k: (chunks[k].start, max(chunks[k].end, chunks[k].start + 1)))
    out: dict[int, str] = {}
    for s, e, sev in marks.spans:
        for k in index.overlapping(s, max(e, s + 1)):
            if k not in out or SEVERITY_RANK[sev] < SEVERITY_RANK[out[k]]:
                out[k] = sev
    _CHUNK_MARKS["last"] = (chunks, marks, out)
    return out


_CHUNK_MARKS: dict[str, tuple] = {}


class LintPanel(QWidget):
    """Findings grouped by check, the span-mode toggle, the stage trace, corpus lint and export."""

    def __init__(self, lint_vm: LintViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lvm = lint_vm
        self._save_dialog: Callable[[str, str], str] = lambda title, filt: QFileDialog.getSaveFileName(self, title, "", filt)[0]
        self._open_dialog: Callable[[str, str], str] = lambda title, filt: QFileDialog.getOpenFileName(self, title, "", filt)[0]
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.addLayout(self._build_toolbar())
        lay.addWidget(self._build_trees(), 1)
        self.corpus_label = QLabel("")
        self.corpus_label.setWordWrap(True)
        self.corpus_label.hide()
        lay.addWidget(self.corpus_label)
        lint_vm.view_changed.connect(self._on_view)
        lint_vm.corpus_progress.connect(self._on_progress)
        lint_vm.corpus_finished.connect(self._on_corpus)
        lint_vm.vm.selection_changed.connect(self._on_selection)

    def _build_toolbar(self) -> QHBoxLayout:
        """The span toggle, the summary, corpus lint with its progress, and the exports."""
        row = QHBoxLayout()
        self.exact_box = QCheckBox("Exact spans")
        self.exact_box.setToolTip(
            "Lint and highlight the exact spans (which original characters each token came from) "
            "instead of the HF-compatible offsets"
        )
        self.exact_box.toggled.connect(self.lvm.set_exact)
        row.addWidget(self.exact_box)
        self.summary = QLabel("No lint yet")
        row.addWidget(self.summary, 1)
        self.corpus_button = QPushButton("Lint file…")
        self.corpus_button.setToolTip("Lint every line of a UTF-8 text file: counts per check and first examples")
        self.corpus_button.clicked.connect(self._pick_corpus)
        row.addWidget(self.corpus_button)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(140)
        self.progress.hide()
        row.addWidget(self.progress)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.lvm.cancel_corpus)
        self.cancel_button.hide()
        row.addWidget(self.cancel_button)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the findings (and the last corpus lint) as JSON")
        self.export_button.clicked.connect(self._export)
        row.addWidget(self.export_button)
        self.test_button = QPushButton("Export test…")
        self.test_button.setToolTip("Save the selected finding as a regression test (tokenizer, text, expected spans)")
        self.test_button.clicked.connect(self._export_test)
        row.addWidget(self.test_button)
        return row

    def _build_trees(self) -> QSplitter:
        """The findings by check beside the selected token's stage trace."""
        split = QSplitter(Qt.Orientation.Horizontal)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(5)
        self.tree.setHeaderLabels(["Check", "Tokens", "Span", "Text", "Reason"])
        self.tree.headerItem().setToolTip(1, "token numbers as in the Tokens pane")
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setStretchLastSection(True)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemExpanded.connect(self._on_expanded)
        self._groups: dict[str, list[Finding]] = {}
        self._view: LintView | None = None
        split.addWidget(self.tree)
        self.stages = QTreeWidget()
        self.stages.setColumnCount(4)
        self.stages.setHeaderLabels(["Stage", "HF span", "Exact span", "Text"])
        self.stages.setRootIsDecorated(False)
        self.stages.setWordWrap(True)
        self.stages.header().setStretchLastSection(True)
        self.stages.setToolTip("Which stage moved this offset: the selected token's span at every stage")
        split.addWidget(self.stages)
        split.setSizes([640, 360])
        return split

    # ------------------------------------------------------------------ findings
    def _on_view(self, view: LintView | None) -> None:
        self.tree.clear()
        # the trace belongs to the previous encoding (another tokenizer or text): redo it for the
        # token selected now, or leave it empty
        self._on_selection(self.lvm.vm.selected if view is not None else -1)
        self._groups: dict[str, list[Finding]] = {}
        self._view = view
        if view is None:
            self.summary.setText("No lint yet")
            return
        report = view.report(self.lvm.exact)
        errors = sum(1 for f in report.findings if f.severity == "error")
        kind = "exact" if self.lvm.exact else "HF-compatible"
        text = f"{counted(len(report.findings), 'finding')} · {counted(errors, 'error')} · {kind} spans" if report.findings else f"no findings · {kind} spans"
        if view.partial:
            text += f" · linted the first {view.linted:,} of {view.total:,} characters"
        self.summary.setText(text)
        self.summary.setToolTip(
            "A long text is linted over its first lines only; lint the whole file with “Lint file…”" if view.partial else ""
        )
        for check, items in report.by_check().items():
            counts: dict[str, int] = {}
            for f in items:
                counts[f.severity] = counts.get(f.severity, 0) + 1
            worst = min(counts, key=SEVERITY_RANK.__getitem__)
            top = QTreeWidgetItem([f"{check} · {CHECKS[check]} ({len(items):,})", "", "", "",
                                   " · ".join(counted(n, {"warn": "warning"}.get(s, s), "info" if s == "info" else None) for s, n in sorted(counts.items(), key=lambda kv: SEVERITY_RANK[kv[0]]))])
            top.setForeground(0, QBrush(severity_color(worst)))
            # rows are made when the group is opened, a page at a time: thousands of byte-split
            # infos on CJK text would otherwise cost seconds of item creation per lint
            top.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            self._groups[check] = items
            top.setData(0, _GROUP, check)
            self.tree.addTopLevelItem(top)
            if worst != "info":
                top.setExpanded(True)
        for c in range(4):
            self.tree.resizeColumnToContents(c)

    def _on_expanded(self, top: QTreeWidgetItem) -> None:
        if top.parent() is None and top.childCount() == 0:
            self._add_rows(top)

    def _add_rows(self, top: QTreeWidgetItem) -> None:
        """The next `ROWS_PER_PAGE` findings of a group, then a "more" row while some are left."""
        items = self._groups.get(top.data(0, _GROUP), [])
        view = self._view
        if view is None:
            return
        last = top.child(top.childCount() - 1) if top.childCount() else None
        if last is not None and last.data(0, _MORE):
            top.removeChild(last)
        start = top.childCount()
        for f in items[start : start + ROWS_PER_PAGE]:
            top.addChild(self._row(view, f))
        left = len(items) - top.childCount()
        if left > 0:
            more = QTreeWidgetItem([f"… {left:,} more", "", "", "", "select to show the next page (or export the report for all)"])
            more.setData(0, _MORE, True)
            more.setForeground(0, QBrush(QColor("#888888")))
            top.addChild(more)

    def _row(self, view: LintView, f: Finding) -> QTreeWidgetItem:
        child = QTreeWidgetItem([
            f.severity,
            " ".join(str(view.to_inspect[i]) if view.to_inspect[i] >= 0 else "—" for i in f.tokens),
            _span(f.span),
            repr(f.original),
            f.reason,
        ])
        child.setForeground(0, QBrush(severity_color(f.severity)))
        child.setToolTip(4, f.reason)  # the cells elide; their tooltips hold the whole text
        child.setToolTip(3, repr(f.original))
        child.setToolTip(1, "token numbers as in the Tokens pane: " + child.text(1))
        child.setToolTip(2, "token spans, HF-compatible: " + ", ".join(map(_span, f.token_spans))
                         + "\nexact: " + ", ".join(map(_span, f.token_exact)))
        child.setData(0, _FINDING, f)
        return child

    def selected_finding(self) -> Finding | None:
        item = self.tree.currentItem()
        return item.data(0, _FINDING) if item is not None else None

    def _on_current(self, item: QTreeWidgetItem | None, _prev: object) -> None:
        if item is not None and item.data(0, _MORE) and item.parent() is not None:
            top, view = item.parent(), self._view
            # not while Qt changes the current item; and not into a tree a newer lint cleared
            QTimer.singleShot(0, lambda: self._add_rows(top) if self._view is view else None)
            return
        f = item.data(0, _FINDING) if item is not None else None
        if isinstance(f, Finding):
            self.lvm.select_finding(f)

    # ------------------------------------------------------------------ stage trace
    def _on_selection(self, index: int) -> None:
        self.stages.clear()
        for r in self.lvm.stage_rows(index):
            item = QTreeWidgetItem([r.stage, _span(r.hf), _span(r.exact), repr(r.text)])
            item.setToolTip(3, repr(r.text) + (f"\n{r.note}" if r.note else ""))
            if r.note:
                item.setToolTip(0, r.note)
            if r.moved:
                for c in (1, 2):
                    item.setForeground(c, QBrush(severity_color("error")))
            self.stages.addTopLevelItem(item)
            if r.note:
                note = QTreeWidgetItem(["", "", "", r.note])
                note.setForeground(3, QBrush(QColor("#888888")))
                note.setToolTip(3, r.note)
                self.stages.addTopLevelItem(note)
                # the note spans the row and wraps (a cell would cut it)
                self.stages.setFirstColumnSpanned(self.stages.indexOfTopLevelItem(note), QModelIndex(), True)
                note.setText(0, r.note)
                note.setText(3, "")
                note.setForeground(0, QBrush(QColor("#888888")))
        for c in range(3):
            self.stages.resizeColumnToContents(c)

    # ------------------------------------------------------------------ corpus and export
    def _pick_corpus(self) -> None:
        path = self._open_dialog("Lint a text file", "Text files (*.txt *.md *.jsonl *.csv);;All files (*)")
        if path:
            self.start_corpus(path)

    def start_corpus(self, path: str) -> None:
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.corpus_label.setText(f"Linting {path} …")
        self.corpus_label.show()
        self.lvm.lint_corpus(path)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.progress.setToolTip(message)

    def _on_corpus(self, result) -> None:  # noqa: ANN001 - CorpusLint
        self.progress.hide()
        self.cancel_button.hide()
        data = result.to_json()
        counts = ", ".join(f"{c} {n}" for c, n in data["counts"].items()) or "no findings"
        state = " (cancelled)" if result.cancelled else ""
        self.corpus_label.setText(f"Corpus: {counted(result.lines, 'line')} linted{state} · {counts}")

    def _export(self) -> None:
        path = self._save_dialog("Export lint report", "JSON (*.json)")
        if path:
            try:
                self.lvm.export_report(path)
            except (OSError, ValueError) as exc:
                emit(self.lvm.error_raised, f"Could not export: {exc}")

    def _export_test(self) -> None:
        f = self.selected_finding()
        if f is None:
            emit(self.lvm.error_raised, "Select a finding to export as a regression test")
            return
        path = self._save_dialog("Export regression test", "JSON (*.json)")
        if path:
            try:
                self.lvm.export_regression(f, path)
            except (OSError, ValueError) as exc:
                emit(self.lvm.error_raised, f"Could not export: {exc}")


def _span(span: tuple[int, int] | None) -> str:
    return "—" if span is None else f"{span[0]}–{span[1]}"
