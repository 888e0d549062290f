"""The Compare tab: N tokenizers side by side on one text, and their statistics on a corpus.

Left: the tokenizers (add from the picker's catalog or a file, remove, reorder) and the text.
Centre: one aligned row per tokenizer (`widgets.compare_rows.CompareRows`) with cuts marked by
votes. Below, in tabs: agreement (summary and the boundary-F1 heat map), per-script cost (table
and chart), vocabulary overlap (matrix, Venn or UpSet), the diff of two tokenizers, and corpus
mode (progress, cancel, CSV/JSON export). Everything goes through `CompareViewModel`.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..analysis.compare import Analysis
from .catalog import Entry, listing
from .compare_viewmodel import MAX_ROWS, CompareViewModel, OverlapResult, Row
from .display import counted
from .theme import mono_font, theme_for
from .widgets.charts import export_widget
from .widgets.compare_rows import CompareRows
from .widgets.exact_edit import ExactTextEdit
from .widgets.form import choice, table
from .widgets.overlap_view import SET_COLORS, OverlapView

__all__ = ["CompareTab", "SCRIPT_METRICS"]

#: per-script figures the table and chart can show: (label with unit, ScriptStats property)
SCRIPT_METRICS = (
    ("tokens/char", "tokens_per_char"),
    ("tokens/byte", "tokens_per_byte"),
    ("chars/token", "chars_per_token"),
    ("bytes/token", "bytes_per_token"),
    ("tokens/word (fertility)", "tokens_per_word"),
    ("STRR (share of words kept whole)", "strr"),
    ("tokens (byte-weighted)", "tokens"),
)
_F1_UNITS = (
    ("char cuts, whitespace collapsed", "char_collapsed"),
    ("char cuts, raw", "char_raw"),
    ("byte cuts", "byte"),
)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _item(text: str, *, tip: str = "", align_right: bool = True) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if align_right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        it.setToolTip(tip)
    return it


class CompareTab(QWidget):
    def __init__(self, inspect_vm: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lanes = getattr(inspect_vm, "_lanes", None)  # share the Inspect lanes: one "busy" for the app
        self.vm = CompareViewModel(self, inspect=inspect_vm, lanes=lanes)
        self.theme = theme_for(False)
        self._entries: list[Entry] = []
        self.corpus_report: Any = None

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self._build_left())
        split.addWidget(self._build_centre())
        split.setStretchFactor(1, 1)
        split.setSizes([270, 1000])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(split)
        self._wire(inspect_vm)
        self._populate_catalog()
        self._show_text(self.vm.text)
        self.vm.set_active(False)  # until shown: work follows the eye

    def _build_centre(self) -> QSplitter:
        """The aligned rows above, the detail tabs (agreement, per script, overlap, diff, corpus) below."""
        self.rows_view = CompareRows()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.rows_view)
        self.rows_view.setParent(self.scroll.viewport())
        self.scroll.setWidget(self.rows_view)
        self.details = QTabWidget()
        self.details.setDocumentMode(True)
        self.details.addTab(self._build_agreement(), "Agreement")
        self.details.addTab(self._build_scripts(), "Per script")
        self.details.addTab(self._build_overlap(), "Vocabulary overlap")
        self.details.addTab(self._build_diff(), "Diff of two")
        self.details.addTab(self._build_corpus(), "Corpus")
        centre = QSplitter(Qt.Orientation.Vertical)
        centre.setChildrenCollapsible(False)
        head = QLabel(
            "<b>Tokens, aligned on characters</b>&nbsp;&nbsp;<span style='color:gray'>"
            "cut marks: number = tokenizers cutting there (contested), dotted = all agree · "
            "hover a token to see it in every row · click to open it in Inspect</span>"
        )
        head.setWordWrap(True)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(head)
        tl.addWidget(self.scroll, 1)
        centre.addWidget(top)
        centre.addWidget(self.details)
        centre.setSizes([430, 300])
        return centre

    def _wire(self, inspect_vm: Any) -> None:
        vm = self.vm
        vm.rows_changed.connect(self._on_rows)
        vm.analysis_changed.connect(self._on_analysis)
        vm.overlap_changed.connect(self._on_overlap)
        vm.hover_changed.connect(self.rows_view.set_highlight)
        vm.diff_changed.connect(self._on_diff)
        vm.corpus_progress.connect(self._on_corpus_progress)
        vm.corpus_done.connect(self._on_corpus_done)
        vm.corpus_failed.connect(self._on_corpus_failed)
        vm.inspect_requested.connect(self._show_inspect)
        self.rows_view.hovered.connect(vm.hover)
        self.rows_view.clicked.connect(self._on_click)
        if inspect_vm is not None:
            inspect_vm.text_replaced.connect(self._follow_inspect)
            inspect_vm.encoding_changed.connect(self._follow_inspect)  # edits typed in Inspect
            vm.error_raised.connect(inspect_vm.error_raised)  # one error bar for the window
            self.text_edit.error_raised.connect(inspect_vm.error_raised)

    # ------------------------------------------------------------------ left column
    def _build_left(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(0, 0, 4, 0)
        lay.addWidget(QLabel("<b>Tokenizers</b> <span style='color:gray'>(up to 12)</span>"))
        self.catalog = QComboBox()
        self.catalog.setToolTip("Embedded tokenizers and tokenizers found in your local caches")
        lay.addWidget(self.catalog)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Add the tokenizer chosen above (Ctrl+Shift+A)")
        self.add_button.clicked.connect(self.add_selected)
        self.open_button = QPushButton("Add file…")
        self.open_button.setToolTip("Add a tokenizer file (tokenizer.json, .tiktoken, .model, vocab.txt)")
        self.open_button.clicked.connect(self._add_file_dialog)
        row.addWidget(self.add_button)
        row.addWidget(self.open_button)
        lay.addLayout(row)
        self.list = QListWidget()
        self.list.setToolTip("Rows in this order; Delete removes, Alt+Up/Down moves")
        lay.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.remove_button = QPushButton("Remove")
        self.up_button = QPushButton("▲")
        self.down_button = QPushButton("▼")
        self.up_button.setToolTip("Move up (Alt+Up)")
        self.down_button.setToolTip("Move down (Alt+Down)")
        self.remove_button.clicked.connect(lambda: self.vm.remove(self.list.currentRow()))
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(1))
        for b in (self.remove_button, self.up_button, self.down_button):
            row.addWidget(b)
        lay.addLayout(row)
        QShortcut(QKeySequence(Qt.Key.Key_Delete), self.list, lambda: self.vm.remove(self.list.currentRow()))
        QShortcut(QKeySequence("Alt+Up"), self.list, lambda: self._move(-1))
        QShortcut(QKeySequence("Alt+Down"), self.list, lambda: self._move(1))
        QShortcut(QKeySequence("Ctrl+Shift+A"), self, self.add_selected)
        lay.addLayout(self._build_text())
        self.collapse_box = QCheckBox("Collapse whitespace at cuts")
        self.collapse_box.setChecked(True)
        self.collapse_box.setToolTip(
            "A cut anywhere in a run of spaces counts at the run's start, so 'space "
            "belongs to the next token' and 'space is dropped' (BERT) agree"
        )
        self.collapse_box.toggled.connect(self._on_collapse)
        lay.addWidget(self.collapse_box)
        self.text_stats = QLabel()
        self.text_stats.setStyleSheet("color: gray")
        self.text_stats.setWordWrap(True)
        lay.addWidget(self.text_stats)
        self.whole_button = QPushButton("Analyse the whole text")
        self.whole_button.setToolTip("A long text is compared over its start; this compares all of it, once, in the background")
        self.whole_button.clicked.connect(self.vm.analyse_whole)
        self.whole_button.hide()
        lay.addWidget(self.whole_button)
        return w

    def _build_text(self) -> QVBoxLayout:
        """The text every row tokenizes: an exact editor that follows the Inspect text unless pinned."""
        box = QVBoxLayout()
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Text</b>"), 1)
        self.pin_box = QCheckBox("Pin")
        self.pin_box.setToolTip(
            "Pinned: this text stays when the Inspect text changes (typing here pins it). "
            "Unpinned: it follows the Inspect text"
        )
        self.pin_box.toggled.connect(self._on_pin)
        row.addWidget(self.pin_box)
        box.addLayout(row)
        self.text_edit = ExactTextEdit()  # keeps CR, CRLF, NBSP, U+2028, a BOM ... (QPlainTextEdit would not)
        self.text_edit.setFont(mono_font())
        self.text_edit.setMaximumHeight(130)
        self.text_edit.inserts_dropped_files = True
        self.text_edit.edited.connect(self._on_text_edited)
        box.addWidget(self.text_edit)
        self.inspect_text_button = QPushButton("Use the Inspect text")
        self.inspect_text_button.setToolTip("Take the Inspect text now and follow it again (unpins)")
        self.inspect_text_button.clicked.connect(self.use_inspect_text)
        box.addWidget(self.inspect_text_button)
        self._text_timer = QTimer(self)
        self._text_timer.setSingleShot(True)
        self._text_timer.setInterval(250)
        self._text_timer.timeout.connect(lambda: self.vm.set_text(self.text_edit.exact_text()))
        self._follow_timer = QTimer(self)  # Inspect edits arrive per key: follow them debounced
        self._follow_timer.setSingleShot(True)
        self._follow_timer.setInterval(300)
        self._follow_timer.timeout.connect(self._follow_now)
        return box

    def _populate_catalog(self) -> None:
        self._entries = listing()  # the window's picker's listing: discovered once
        self.catalog.clear()
        for e in self._entries:
            self.catalog.addItem(f"{e.name}" + ("" if e.group == "Embedded" else f"  [{e.group}]"))

    def add_defaults(self, n: int = 8) -> None:
        """Add the first ``n`` embedded tokenizers, one per bundle (screenshots, first use)."""
        have = {Path(r.path) for r in self.vm.rows if r.path}
        seen = {e.path.parent.name for e in self._entries if e.path in have}  # a bundle already in a row
        for e in self._entries:
            if len(self.vm.rows) >= n:
                break
            folder = e.path.parent.name
            if e.group == "Embedded" and folder not in seen:
                seen.add(folder)
                self.vm.add_tokenizer(e.path, name=_short_name(e.name))

    def add_selected(self) -> None:
        k = self.catalog.currentIndex()
        if 0 <= k < len(self._entries):
            e = self._entries[k]
            self.vm.add_tokenizer(e.path, name=_short_name(e.name))

    def _add_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a tokenizer file", "", "Tokenizer files (*)")
        if path:
            self.vm.add_tokenizer(path)

    def _move(self, delta: int) -> None:
        k = self.list.currentRow()
        self.vm.move(k, delta)
        self.list.setCurrentRow(max(0, min(self.list.count() - 1, k + delta)))

    def _on_text_edited(self, *_edit: object) -> None:
        if not self.pin_box.isChecked():
            self.pin_box.blockSignals(True)
            self.pin_box.setChecked(True)  # typing here pins the text: Inspect no longer overwrites it
            self.pin_box.blockSignals(False)
        self._text_timer.start()

    def use_inspect_text(self) -> None:
        self.pin_box.setChecked(False)
        self._follow_now()

    def _on_pin(self, pinned: bool) -> None:
        if not pinned:
            self._follow_now()

    def _show_text(self, text: str) -> None:
        """Show ``text`` in the exact editor (no edit signal: the view-model has it already)."""
        self.text_edit.show_text(text)

    def _follow_inspect(self, *_args: object) -> None:
        """The Inspect text changed (replaced or edited): follow it unless pinned, once visible."""
        if not self.pin_box.isChecked() and self.isVisible():
            self._follow_timer.start()

    def _follow_now(self) -> None:
        insp = self.vm.inspect
        if insp is None or self.pin_box.isChecked():
            return
        self._text_timer.stop()
        self._follow_timer.stop()
        if insp.text != self.vm.text or insp.text != self.text_edit.exact_text():
            self._show_text(insp.text)
            self.vm.set_text(insp.text)

    def showEvent(self, event) -> None:  # noqa: ANN001, N802
        super().showEvent(event)
        self._follow_now()  # Inspect edits made while another tab was shown
        self.vm.set_active(True)  # rows loaded or the text set while hidden

    def hideEvent(self, event) -> None:  # noqa: ANN001, N802
        super().hideEvent(event)
        self.vm.set_active(False)

    def _on_collapse(self, on: bool) -> None:
        self.rows_view.set_vote_unit("char_collapsed" if on else "char_raw")
        k = 0 if on else 1
        self.f1_unit.setCurrentIndex(k)

    # ------------------------------------------------------------------ rows
    def _on_rows(self, rows: tuple[Row, ...]) -> None:
        cur = self.list.currentRow()
        self.list.clear()
        for k, r in enumerate(rows):
            state = " — loading…" if r.loading else (f" — error: {r.error}" if r.error else "")
            it = QListWidgetItem(f"{k + 1}. {r.name}{state}")
            it.setToolTip(r.path or r.name)
            if r.error:
                it.setForeground(QColor("#dc2626"))
            self.list.addItem(it)
        if rows:
            self.list.setCurrentRow(max(0, min(cur, len(rows) - 1)))
        self._fill_diff_choices(rows)
        self._fill_summary()

    def _on_analysis(self, a: Analysis | None) -> None:
        self.rows_view.set_analysis(a)
        self._fill_summary()
        self._fill_f1()
        self._fill_scripts()
        if a is not None:
            part = f"the first {counted(a.n_chars, 'char')} of {len(self.vm.text):,} compared · " if a.n_chars < len(self.vm.text) else ""
            self.text_stats.setText(
                part + f"{counted(a.n_chars, 'char')} (code points) · {counted(a.n_bytes, 'byte')} (UTF-8) · {counted(a.n_words, 'word')}"
            )
        self.whole_button.setVisible(self.vm.windowed and not self.vm.whole)

    def _on_click(self, side: int, start: int, end: int) -> None:
        ready = [k for k, r in enumerate(self.vm.rows) if r.ready]
        if 0 <= side < len(ready):
            self.vm.open_in_inspect(ready[side], start, end)

    def _show_inspect(self, *_args: Any) -> None:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QTabWidget):
            w = w.parentWidget()
        if isinstance(w, QTabWidget):
            for i in range(w.count()):
                if w.tabText(i).lower() == "inspect":
                    w.setCurrentIndex(i)

    # ------------------------------------------------------------------ agreement
    def _build_agreement(self) -> QWidget:
        w = QWidget()
        lay = QHBoxLayout(w)
        lay.setContentsMargins(2, 2, 2, 2)
        self.summary = table(
            [
                "tokenizer",
                "tokens",
                "chars/token",
                "bytes/token",
                "tokens/word",
                "shared spans",
                "shared spans (trimmed)",
            ]
        )
        self.summary.setToolTip(
            "tokens exclude special tokens; shared spans = share of a tokenizer's "
            "tokens whose char span every other tokenizer also has (%)"
        )
        lay.addWidget(self.summary, 3)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        row, self.f1_unit = choice("Boundary F1", [label for label, _ in _F1_UNITS], self._fill_f1)
        rl.addLayout(row)
        self.f1_table = QTableWidget(0, 0)
        self.f1_table.setToolTip("F1 = 2|A∩B| / (|A|+|B|) over the two cut sets (1 = same boundaries)")
        rl.addWidget(self.f1_table, 1)
        lay.addWidget(right, 2)
        return w

    def _fill_summary(self) -> None:
        a = self.vm.analysis
        rows = self.vm.rows
        self.summary.setRowCount(len(rows))
        ready = [k for k, r in enumerate(rows) if r.ready]
        for k, r in enumerate(rows):
            self.summary.setItem(k, 0, _item(r.name, tip=r.path or "", align_right=False))
            side = ready.index(k) if (k in ready and a is not None and len(a.tokens) == len(ready)) else None
            if r.error or side is None:
                msg = f"error: {r.error}" if r.error else ("loading…" if r.loading else "")
                self.summary.setItem(k, 1, _item(msg, align_right=False))
                for c in range(2, 7):
                    self.summary.setItem(k, c, _item(""))
                continue
            n = a.tokens[side]  # type: ignore[union-attr]
            self.summary.setItem(k, 1, _item(f"{n:,}"))
            self.summary.setItem(k, 2, _item(_fmt(a.n_chars / n if n else None)))  # type: ignore[union-attr]
            self.summary.setItem(k, 3, _item(_fmt(a.n_bytes / n if n else None)))  # type: ignore[union-attr]
            self.summary.setItem(k, 4, _item(_fmt(n / a.n_words if a.n_words else None)))  # type: ignore[union-attr]
            self.summary.setItem(k, 5, _item(f"{100 * a.span_shared[side]:.1f} %"))  # type: ignore[union-attr]
            self.summary.setItem(k, 6, _item(f"{100 * a.span_shared_trimmed[side]:.1f} %"))  # type: ignore[union-attr]

    def _fill_f1(self) -> None:
        a = self.vm.analysis
        t = self.f1_table
        if a is None:
            t.setRowCount(0)
            t.setColumnCount(0)
            return
        unit = _F1_UNITS[max(0, self.f1_unit.currentIndex())][1]
        m = a.f1[unit]
        n = len(m)
        t.setRowCount(n)
        t.setColumnCount(n)
        short = [f"{k + 1}" for k in range(n)]
        t.setHorizontalHeaderLabels(short)
        t.setVerticalHeaderLabels([f"{k + 1} {name}" for k, name in enumerate(a.names)])
        lo = QColor(self.theme.base)
        hi = QColor(self.theme.selection)
        for i in range(n):
            for j in range(n):
                v = m[i][j]
                it = _item(
                    f"{v:.3f}",
                    tip=f"{a.names[i]} vs {a.names[j]}: F1 {v:.4f} ({_F1_UNITS[self.f1_unit.currentIndex()][0]})",
                )
                # low agreement = strong colour, so disagreements stand out
                f = 1.0 - v
                it.setBackground(
                    QColor(
                        int(lo.red() + (hi.red() - lo.red()) * f),
                        int(lo.green() + (hi.green() - lo.green()) * f),
                        int(lo.blue() + (hi.blue() - lo.blue()) * f),
                    )
                )
                if f > 0.55:
                    it.setForeground(QColor("white"))
                t.setItem(i, j, it)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    # ------------------------------------------------------------------ per script
    def _build_scripts(self) -> QWidget:
        w = QWidget()
        lay = QHBoxLayout(w)
        lay.setContentsMargins(2, 2, 2, 2)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        row, self.script_metric = choice("Show", [label for label, _ in SCRIPT_METRICS], self._fill_scripts)
        ll.addLayout(row)
        self.script_table = QTableWidget(0, 0)
        self.script_table.verticalHeader().setVisible(False)
        self.script_table.setToolTip(
            "Unicode Script (UAX #24) per code point; a token's weight is shared among the "
            "scripts of its bytes (Common only if it has no other); n/a = no words or a "
            "script written without spaces"
        )
        ll.addWidget(self.script_table, 1)
        lay.addWidget(left, 3)
        self.script_chart = pg.PlotWidget()
        self.script_chart.setMinimumWidth(280)
        self.script_chart.showGrid(y=True, alpha=0.25)
        lay.addWidget(self.script_chart, 2)
        # the key beside the chart, never over its bars
        self.script_legend = QLabel()
        self.script_legend.setTextFormat(Qt.TextFormat.RichText)
        self.script_legend.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.script_legend.setWordWrap(True)
        self.script_legend.setMaximumWidth(190)
        lay.addWidget(self.script_legend)
        return w

    def _fill_scripts(self) -> None:
        a = self.vm.analysis
        t = self.script_table
        self.script_chart.clear()
        if a is None:
            self.script_legend.setText("")
            t.setRowCount(0)
            t.setColumnCount(0)
            return
        label, attr = SCRIPT_METRICS[max(0, self.script_metric.currentIndex())]
        scripts: list[str] = []
        for per_script in a.scripts:
            for s in per_script:
                if s not in scripts:
                    scripts.append(s)
        first = a.scripts[0] if a.scripts else {}
        cols = ["script", "chars", "bytes", "words"] + [f"{k + 1} {n}" for k, n in enumerate(a.names)]
        t.setColumnCount(len(cols))
        t.setHorizontalHeaderLabels(cols)
        t.setRowCount(len(scripts))
        for r, s in enumerate(scripts):
            st0 = first.get(s)
            t.setItem(r, 0, _item(s, align_right=False))
            t.setItem(r, 1, _item(f"{st0.chars:,}" if st0 else "0"))
            t.setItem(r, 2, _item(f"{st0.bytes:,}" if st0 else "0"))
            t.setItem(r, 3, _item(f"{st0.words:,}" if st0 else "0"))
            for k, by_script in enumerate(a.scripts):
                st = by_script.get(s)
                v = getattr(st, attr) if st is not None else None
                t.setItem(
                    r, 4 + k, _item(_fmt(v, 2 if attr == "tokens" else 3), tip=f"{a.names[k]} · {s}: {label}")
                )
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._chart_scripts(a, scripts, attr, label)

    def _chart_scripts(self, a: Analysis, scripts: list[str], attr: str, label: str) -> None:
        chart = self.script_chart
        n = max(1, len(a.names))
        width = 0.8 / n
        for k, name in enumerate(a.names):
            xs, hs = [], []
            for i, s in enumerate(scripts):
                st = a.scripts[k].get(s)
                v = getattr(st, attr) if st is not None else None
                if v is not None:
                    xs.append(i - 0.4 + width * (k + 0.5))
                    hs.append(v)
            color = SET_COLORS[k % len(SET_COLORS)]
            chart.addItem(
                pg.BarGraphItem(x=xs, height=hs, width=width * 0.95, brush=color, pen=None, name=name)
            )
        chart.getAxis("bottom").setTicks([[(i, s) for i, s in enumerate(scripts)]])
        chart.setLabel("left", label)
        self.script_legend.setText("<br>".join(
            f"<span style='color:{SET_COLORS[k % len(SET_COLORS)]}'>■</span>&nbsp;{html.escape(name)}"
            for k, name in enumerate(a.names)
        ))

    # ------------------------------------------------------------------ overlap
    def _build_overlap(self) -> QWidget:
        w = QWidget()
        lay = QHBoxLayout(w)
        lay.setContentsMargins(2, 2, 2, 2)
        self.overlap_table = QTableWidget(0, 0)
        self.overlap_table.setToolTip(
            "|Σ(A) ∩ Σ(B)|: surfaces (exact bytes, L0) in both vocabularies, specials "
            "excluded; the diagonal is |Σ|; Jaccard in the tooltip"
        )
        lay.addWidget(self.overlap_table, 1)
        self.overlap_view = OverlapView()
        lay.addWidget(self.overlap_view, 1)
        return w

    def _on_overlap(self, res: OverlapResult | None) -> None:
        t = self.overlap_table
        if res is None or not res.names:
            t.setRowCount(0)
            t.setColumnCount(0)
            self.overlap_view.set_data((), (), {})
            return
        n = len(res.names)
        t.setRowCount(n)
        t.setColumnCount(n)
        t.setHorizontalHeaderLabels([str(k + 1) for k in range(n)])
        t.setVerticalHeaderLabels([f"{k + 1} {x}" for k, x in enumerate(res.names)])
        for i in range(n):
            for j in range(n):
                v = res.matrix[i][j]
                union = res.sizes[i] + res.sizes[j] - v
                tip = (
                    f"|Σ| = {v:,} surfaces"
                    if i == j
                    else f"{res.names[i]} ∩ {res.names[j]}: {v:,} surfaces · Jaccard {v / union if union else 1:.4f}"
                )
                t.setItem(i, j, _item(f"{v:,}", tip=tip))
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.overlap_view.set_data(res.names, res.sizes, res.patterns)

    # ------------------------------------------------------------------ diff
    def _build_diff(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        row.addWidget(QLabel("Old"))
        self.diff_old = QComboBox()
        row.addWidget(self.diff_old, 1)
        row.addWidget(QLabel("New"))
        self.diff_new = QComboBox()
        row.addWidget(self.diff_new, 1)
        self.diff_corpus = QLineEdit()
        self.diff_corpus.setPlaceholderText("regression corpus (file or folder; empty = this text)")
        row.addWidget(self.diff_corpus, 2)
        self.diff_button = QPushButton("Diff")
        self.diff_button.setToolTip("Entries, merges, specials and pipeline; re-encode the corpus with both")
        self.diff_button.clicked.connect(self.run_diff)
        row.addWidget(self.diff_button)
        lay.addLayout(row)
        self.diff_text = QTextBrowser()  # a read-only report (no user text is edited here)
        self.diff_text.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        self.diff_text.setFont(mono_font())
        lay.addWidget(self.diff_text, 1)
        return w

    def _fill_diff_choices(self, rows: tuple[Row, ...]) -> None:
        old, new = self.diff_old.currentIndex(), self.diff_new.currentIndex()
        if not 0 <= old < len(rows):
            old = 0
        if not 0 <= new < len(rows) or new == old:
            new = 1 if old == 0 else 0
        for box, cur in ((self.diff_old, old), (self.diff_new, new)):
            box.blockSignals(True)
            box.clear()
            for k, r in enumerate(rows):
                box.addItem(f"{k + 1} {r.name}")
            box.setCurrentIndex(min(cur, len(rows) - 1))
            box.blockSignals(False)

    def run_diff(self) -> None:
        corpus = self.diff_corpus.text().strip() or None
        self.diff_text.setPlainText("computing…")
        self.vm.compute_diff(self.diff_old.currentIndex(), self.diff_new.currentIndex(), corpus=corpus)

    def _on_diff(self, result: Any) -> None:
        d, reg = result
        self.diff_text.setPlainText(d.to_text(reg, corpus=self.diff_corpus.text().strip() or "this text"))

    # ------------------------------------------------------------------ corpus
    def _build_corpus(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.corpus_path = QLineEdit()
        self.corpus_path.setPlaceholderText("corpus file or folder (UTF-8, streamed)")
        row.addWidget(self.corpus_path, 2)
        b = QPushButton("File…")
        b.clicked.connect(self._pick_corpus_file)
        row.addWidget(b)
        b = QPushButton("Folder…")
        b.clicked.connect(self._pick_corpus_folder)
        row.addWidget(b)
        row.addWidget(QLabel("Documents"))
        self.corpus_mode = QComboBox()
        self.corpus_mode.setEditable(True)
        self.corpus_mode.addItems(["lines", "paragraphs", "whole", "jsonl:text"])
        self.corpus_mode.setToolTip(
            "lines: one document per line (newline not encoded) · paragraphs: blank-line "
            "separated · whole: one per file (counts the newline tokens) · jsonl:FIELD"
        )
        row.addWidget(self.corpus_mode)
        self.corpus_run = QPushButton("Run")
        self.corpus_run.clicked.connect(self.run_corpus)
        row.addWidget(self.corpus_run)
        self.corpus_cancel = QPushButton("Cancel")
        self.corpus_cancel.setEnabled(False)
        self.corpus_cancel.clicked.connect(self.vm.cancel_corpus)
        row.addWidget(self.corpus_cancel)
        self.corpus_bar = QProgressBar()
        self.corpus_bar.setRange(0, 1000)
        self.corpus_bar.setFormat("%p %")
        row.addWidget(self.corpus_bar, 1)
        lay.addLayout(row)
        self.corpus_status = QLabel("Statistics of every tokenizer opened from a file, on all cores.")
        self.corpus_status.setStyleSheet("color: gray")
        lay.addWidget(self.corpus_status)
        self.corpus_table = table(
            [
                "tokenizer",
                "tokens",
                "chars/token",
                "bytes/token",
                "tokens/word",
                "premium (× ref)",
                "unk rate",
                "byte-fallback rate",
                "lossless docs",
                "tokens/doc p50",
                "p90",
                "p99",
                "max",
                "distinct ids",
                "vocab used",
            ]
        )
        lay.addWidget(self.corpus_table, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        for label, fn in (
            ("Export CSV…", self._export_csv),
            ("Export JSON…", self._export_json),
            ("Export chart…", self._export_chart),
        ):
            b = QPushButton(label)
            b.clicked.connect(fn)
            row.addWidget(b)
        lay.addLayout(row)
        return w

    def _pick_corpus_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Corpus file", "", "Text files (*)")
        if path:
            self.corpus_path.setText(path)

    def _pick_corpus_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Corpus folder")
        if path:
            self.corpus_path.setText(path)

    def run_corpus(self, *, workers: int | None = None) -> None:
        path = self.corpus_path.text().strip()
        if not path:
            self.corpus_status.setText("Choose a corpus file or folder first.")
            return
        if self.vm.run_corpus(path, mode=self.corpus_mode.currentText().strip() or "lines", workers=workers):
            self.corpus_bar.setValue(0)
            self.corpus_run.setEnabled(False)
            self.corpus_cancel.setEnabled(True)
            self.corpus_status.setText(f"Reading {path} …")

    def _on_corpus_progress(self, done: int, total: int) -> None:
        self.corpus_bar.setValue(int(1000 * done / total) if total else 1000)
        docs = counted(self.vm.corpus_documents, "document")
        self.corpus_status.setText(f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB read, {docs}")

    def _on_corpus_failed(self, msg: str) -> None:
        self.corpus_run.setEnabled(True)
        self.corpus_cancel.setEnabled(False)
        self.corpus_status.setText("Cancelled." if msg == "cancelled" else f"Failed: {msg}")

    def _on_corpus_done(self, report: Any) -> None:
        self.corpus_report = report
        self.corpus_run.setEnabled(True)
        self.corpus_cancel.setEnabled(False)
        self.corpus_bar.setValue(1000)
        j = report.to_json()
        c = j["corpus"]
        self.corpus_status.setText(
            f"{c['documents']:,} documents ({c['mode']}) · {c['chars']:,} chars · {c['bytes']:,} bytes · "
            f"{c['words']:,} words · {c['seconds']:.1f} s on {c['workers']} process(es) · premium vs {c['reference']}"
        )
        rows = j["tokenizers"]
        t = self.corpus_table
        t.setRowCount(len(rows))
        for k, r in enumerate(rows):
            t.setItem(k, 0, _item(r["name"], align_right=False, tip=r["path"]))
            if "error" in r:
                t.setItem(k, 1, _item(f"error: {r['error']}", align_right=False))
                continue
            d = r["tokens_per_document"]
            pct = lambda v: "n/a" if v is None else f"{100 * v:.2f} %"  # noqa: E731
            vals = [
                f"{r['tokens']:,}",
                _fmt(r["chars_per_token"]),
                _fmt(r["bytes_per_token"]),
                _fmt(r["tokens_per_word"]),
                _fmt(r["premium_vs_reference"]),
                pct(r["unk_rate"]),
                pct(r["byte_fallback_rate"]),
                pct(r["lossless_rate"]),
                f"{d['p50']:,}",
                f"{d['p90']:,}",
                f"{d['p99']:,}",
                f"{d['max']:,}",
                f"{r['distinct_ids']:,}",
                pct(r["vocab_utilisation"]),
            ]
            for c_, v in enumerate(vals, start=1):
                t.setItem(k, c_, _item(v))

    def _export_csv(self) -> None:
        if self.corpus_report is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export corpus statistics", "corpus-stats.csv", "CSV (*.csv)"
        )
        if path:
            Path(path).write_bytes(self.corpus_report.to_csv().encode("utf-8"))

    def _export_json(self) -> None:
        if self.corpus_report is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export corpus statistics", "corpus-stats.json", "JSON (*.json)"
        )
        if path:
            Path(path).write_bytes(
                json.dumps(self.corpus_report.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
            )

    def _export_chart(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export chart", "per-script.png", "PNG image (*.png);;SVG image (*.svg)"
        )
        if path:
            export_widget(self.script_chart, path)

    # ------------------------------------------------------------------ app hooks
    def set_theme(self, theme: Any) -> None:
        self.theme = theme
        self.rows_view.set_theme(theme)
        self.overlap_view.set_colors(theme.text, theme.base)
        self.script_chart.setBackground(theme.base)
        self._fill_f1()

    def status_text(self) -> str:
        """One line for the status bar while this tab is shown."""
        a = self.vm.analysis
        if a is None or not a.names:
            return f"Compare: {counted(len(self.vm.rows), 'tokenizer')} · add tokenizers (up to {MAX_ROWS})"
        k = min(range(len(a.tokens)), key=a.tokens.__getitem__)
        pinned = "pinned text" if self.pin_box.isChecked() else "the Inspect text"
        part = f"its first {a.n_chars:,} of {len(self.vm.text):,} chars" if a.n_chars < len(self.vm.text) else counted(a.n_chars, "char")
        return (f"Compare: {counted(len(a.names), 'tokenizer')} on {pinned} ({part}) · "
                f"{min(a.tokens):,}–{max(a.tokens):,} tokens, fewest: {a.names[k]}")

    def is_busy(self) -> bool:
        return self.vm.is_busy()


def _short_name(name: str) -> str:
    """ "cl100k_base — GPT-4 (tiktoken)" -> "cl100k_base"; other names as they are."""
    return name.split(" — ")[0].split(" (")[0]
