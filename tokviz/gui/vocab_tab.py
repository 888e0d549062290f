"""The Vocabulary tab: browse the whole vocabulary and audit it for glitch tokens (no weights).

Top: search, the audit's counts, export, progress and cancel. Left: facets (check any to keep
tokens of those categories; counts in brackets). Middle: the table of every token
(`VocabTableModel`: uniform rows, cells made on demand, sortable by any column). Right: the detail
card and "Open in Inspect". Bottom: histograms. Everything goes through `VocabViewModel`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ._compat import emit
from .display import counted
from .theme import mono_font
from .vocab_viewmodel import FACETS, VocabViewModel
from .widgets.vocab_widgets import VocabCard, VocabCharts

__all__ = ["VocabTab"]

_GROUPS = (
    ("Bytes", ("partial-utf8", "single-byte", "never-valid", "duplicate-byte")),
    ("Reachability", ("unreachable", "stage-N", "stage-P", "stage-A", "stage-M")),
    ("Other", ("lookalike", "fragment-k1", "fragment-k64", "special", "embedding-candidate")),
    ("Corpus", ("never-seen", "rarely-seen")),
)


class VocabTab(QWidget):
    inspect_requested = Signal()  # the user asked to see a token's surface in the Inspect tab

    def __init__(self, inspect_vm: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lanes = getattr(inspect_vm, "_lanes", None)
        self.vm = VocabViewModel(self, inspect=inspect_vm, lanes=lanes)
        top = self._build_top()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.charts = VocabCharts()
        mid = QSplitter(Qt.Orientation.Horizontal)
        mid.addWidget(self._build_facets())
        mid.addWidget(self._build_table())
        mid.addWidget(self._build_card())
        mid.setStretchFactor(1, 3)
        mid.setStretchFactor(2, 1)
        mid.setSizes([170, 900, 340])
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.addWidget(mid)
        vsplit.addWidget(self.charts)
        vsplit.setStretchFactor(0, 3)
        vsplit.setStretchFactor(1, 1)
        vsplit.setSizes([480, 250])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(top)
        lay.addWidget(self.summary)
        lay.addWidget(vsplit, 1)
        self.emb_note = QLabel("")
        self.emb_note.setWordWrap(True)
        self.emb_note.setStyleSheet("color: gray")
        lay.insertWidget(2, self.emb_note)
        self.emb_note.setVisible(False)
        self.corpus_note = QLabel("")
        self.corpus_note.setWordWrap(True)
        self.corpus_note.setStyleSheet("color: gray")
        lay.insertWidget(3, self.corpus_note)
        self.corpus_note.setVisible(False)
        self._wire()
        self._on_audit(None)

    # ------------------------------------------------------------------ building
    def _build_top(self) -> QHBoxLayout:
        """Search, the count shown, export, the audit's progress and cancel, embeddings, re-run."""
        top = QHBoxLayout()
        top.addWidget(QLabel("Search"))
        self.search = QLineEdit()
        self.search.setPlaceholderText("vocab string, surface text, hex bytes or id")
        self.search.setFont(mono_font())
        self.search.setClearButtonEnabled(True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(200)
        self._timer.timeout.connect(lambda: self.vm.set_search(self.search.text()))
        self.search.textChanged.connect(lambda _t: self._timer.start())
        top.addWidget(self.search, 2)
        self.shown = QLabel("")
        self.shown.setStyleSheet("color: gray")
        top.addWidget(self.shown)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the rows shown (after search and facets) as CSV or JSON")
        self.export_button.clicked.connect(self._export)
        top.addWidget(self.export_button)
        self.progress = QProgressBar()  # the percentage in the bar, the phase and counts beside it
        self.progress.setMaximumWidth(140)
        self.progress.setFormat("%p%")
        self.progress.setVisible(False)
        top.addWidget(self.progress)
        self.progress_label = QLabel("")
        self.progress_label.setStyleSheet("color: gray")
        self.progress_label.setVisible(False)
        top.addWidget(self.progress_label)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.vm.cancel)
        top.addWidget(self.cancel_button)
        self.emb_button = QPushButton("Embeddings…")
        self.emb_button.setToolTip("Optional: read the embedding matrix of a local .safetensors file (or its "
                                   ".index.json) for the under-trained-token indicator")
        self.emb_button.clicked.connect(self._pick_embeddings)
        top.addWidget(self.emb_button)
        self.corpus_button = QPushButton("Corpus counts…")
        self.corpus_button.setToolTip("Count every entry over a corpus file (text, .jsonl, .parquet; lines) on the "
                                      "local cores or the Dask scheduler of the settings: never / rarely seen entries")
        self.corpus_button.clicked.connect(self._pick_corpus)
        top.addWidget(self.corpus_button)
        self.rerun_button = QPushButton("Audit")
        self.rerun_button.setToolTip("Run the audit again")
        self.rerun_button.clicked.connect(self.vm.refresh)
        top.addWidget(self.rerun_button)
        return top

    def _build_facets(self) -> QWidget:
        """One check box per audit category, grouped."""
        facets = QWidget()
        fl = QVBoxLayout(facets)
        fl.setContentsMargins(0, 0, 4, 0)
        fl.setSpacing(1)
        self.facet_boxes: dict[str, QCheckBox] = {}
        for title, keys in _GROUPS:
            lab = QLabel(f"<b>{title}</b>")
            lab.setContentsMargins(0, 6, 0, 0)
            fl.addWidget(lab)
            for k in keys:
                box = QCheckBox(FACETS[k])
                box.toggled.connect(lambda on, k=k: self.vm.set_facet(k, on))
                self.facet_boxes[k] = box
                fl.addWidget(box)
        hint = QLabel("checked facets: tokens of any of them")
        hint.setStyleSheet("color: gray")
        hint.setWordWrap(True)
        fl.addWidget(hint)
        fl.addStretch(1)
        return facets

    def _build_table(self) -> QTableView:
        """The table of every token (uniform rows: 200k rows scroll smoothly)."""
        self.table = QTableView()
        self.table.setModel(self.vm.table)
        self.table.setFont(mono_font())
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        vh = self.table.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: 200k rows scroll smoothly
        vh.setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # never "resize to contents" over 200k rows
        hh.setStretchLastSection(True)
        for c, w in enumerate((64, 150, 130, 130, 36, 84, 170, 170, 60, 90)):
            self.table.setColumnWidth(c, w)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self.vm.select_row(cur.row()))
        self.table.doubleClicked.connect(lambda _i: self._open_in_inspect())
        return self.table

    def _build_card(self) -> QWidget:
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(4, 0, 0, 0)
        self.card = VocabCard()
        sl.addWidget(self.card, 1)
        self.inspect_button = QPushButton("Open in Inspect")
        self.inspect_button.setToolTip("Show the token's surface as text in the Inspect tab (double-click a row)")
        self.inspect_button.setEnabled(False)
        self.inspect_button.clicked.connect(self._open_in_inspect)
        sl.addWidget(self.inspect_button)
        return side

    def _wire(self) -> None:
        self.vm.audit_started.connect(self._on_started)
        self.vm.audit_progress.connect(self._on_progress)
        self.vm.audit_changed.connect(self._on_audit)
        self.vm.rows_changed.connect(self._on_rows)
        self.vm.detail_changed.connect(self._on_detail)
        self.vm.busy_changed.connect(self._on_busy)
        self.vm.error_raised.connect(self._on_error)
        self.vm.embeddings_changed.connect(self._on_embeddings)
        self.vm.tensor_needed.connect(self._ask_tensor)
        self.vm.counts_changed.connect(self._on_counts)
        self.vm.counts_progress.connect(self._on_counts_progress)

    # ------------------------------------------------------------------ visibility
    def showEvent(self, event) -> None:  # noqa: ANN001, N802
        super().showEvent(event)
        self.vm.set_active(True)

    def hideEvent(self, event) -> None:  # noqa: ANN001, N802
        super().hideEvent(event)
        self.vm.set_active(False)

    def status_text(self) -> str:
        """One line for the status bar while this tab is shown."""
        audit = self.vm.audit
        if audit is None:
            return "Vocabulary: auditing…" if self.vm.is_busy() else "Vocabulary: no audit yet"
        s = audit.summary()
        return (f"Vocabulary: {audit.name} · {s['entries']:,} entries · showing {len(self.vm.rows):,} · "
                f"{s['unreachable']:,} unreachable · {s['partial_utf8']:,} partial UTF-8")

    def is_busy(self) -> bool:
        return self.vm.is_busy()

    def set_theme(self, theme) -> None:  # noqa: ANN001
        self.charts.apply_palette()

    # ------------------------------------------------------------------ view-model events
    def _on_started(self, name: str) -> None:
        self.summary.setText(f"<span style='color:gray'>auditing {name} …</span>")
        self.progress.setValue(0)

    def _on_progress(self, phase: str, done: int, total: int) -> None:
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)
        self.progress_label.setText(f"{phase} {done:,} / {total:,}")

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.progress_label.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.rerun_button.setEnabled(not busy)

    def _on_error(self, msg: str) -> None:
        self.summary.setText(f"<span style='color:#b91c1c'>{msg}</span>")

    def _on_audit(self, audit: Any) -> None:
        for k, box in self.facet_boxes.items():
            n = self.vm.counts.get(k, 0)
            box.setText(f"{FACETS[k]} ({n:,})" if audit is not None else FACETS[k])
            box.setEnabled(audit is not None and (k not in ("never-seen", "rarely-seen") or self.vm.corpus_counts is not None))
        if audit is None:
            if not self.vm.is_busy():
                self.summary.setText("<span style='color:gray'>No audit yet: the audit runs when this tab is shown "
                                     "and a tokenizer is loaded.</span>")
            self.charts.set_data([], [])
            return
        s = audit.summary()
        sb = s["single_byte"]
        st = s["unreachable_by_stage"]
        look = s["special_lookalike"]
        self.summary.setText(
            f"<b>{audit.name}</b> ({audit.family}) · {s['entries']:,} entries · "
            f"single byte {sum(sb.values()):,} (ascii {sb['ascii']}, lead {sb['utf8_lead']}, "
            f"continuation {sb['utf8_continuation']}, never valid {sb['never_valid']}) · "
            f"partial UTF-8 {s['partial_utf8']:,} · duplicate bytes {s['duplicate_byte']:,} · "
            f"<b>unreachable {s['unreachable']:,}</b> (N {st['N']}, P {st['P']}, A {st['A']}, M {st['M']}) · "
            f"lookalikes {look['added']} added + {look['ordinary']} ordinary · "
            f"fragments F₁ {s['fragments']['k1']:,}, F₆₄ {s['fragments']['k64']:,}"
        )
        self.charts.set_data(*self.vm.histograms())

    def _on_rows(self) -> None:
        total = len(self.vm.audit.tokens) if self.vm.audit is not None else 0
        self.shown.setText(f"{len(self.vm.rows):,} of {counted(total, 'token')}")
        if self.vm.rows:
            self.table.selectionModel().setCurrentIndex(
                self.vm.table.index(0, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )

    def _on_detail(self, d: Any) -> None:
        self.card.show_detail(d)
        self.inspect_button.setEnabled(d is not None and self.vm.surface_for_inspect(d.token.id) is not None)

    # ------------------------------------------------------------------ actions
    def selected_id(self) -> int | None:
        d = self.card.detail
        return d.token.id if d is not None else None

    def _open_in_inspect(self) -> None:
        i = self.selected_id()
        if i is not None and self.vm.open_in_inspect(i):
            emit(self.inspect_requested)

    def _pick_embeddings(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Embedding weights", "",
                                              "safetensors (*.safetensors *.index.json);;All files (*)")
        if path:
            self.vm.load_embeddings(path)

    def _ask_tensor(self, path: str, tensors: list) -> None:
        from PySide6.QtWidgets import QInputDialog

        names = [f"{n}  {list(shape)}" for n, shape in tensors]
        if not names:
            self._on_error(f"embeddings: {path} holds no tensors")
            return
        item, ok = QInputDialog.getItem(self, "Which tensor is the embedding?",
                                        "No known embedding tensor name; pick the input embedding:", names, 0, False)
        if ok and item:
            self.vm.load_embeddings(path, tensor=tensors[names.index(item)][0])

    def _pick_corpus(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Corpus to count", "",
                                              "Corpus (*.txt *.jsonl *.ndjson *.parquet *.gz *.zst);;All files (*)")
        if path:
            self.vm.load_corpus_counts(path)

    def _on_counts_progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(max(total // 1000, 1))
        self.progress.setValue(done // 1000)
        self.progress.setFormat("corpus %v / %m KB")

    def _on_counts(self, counts: Any) -> None:
        for k in ("never-seen", "rarely-seen"):
            n = self.vm.counts.get(k, 0)
            self.facet_boxes[k].setText(f"{FACETS[k]} ({n:,})" if counts is not None else FACETS[k])
            self.facet_boxes[k].setEnabled(counts is not None)
        if counts is None:
            self.corpus_note.setVisible(False)
            return
        self.corpus_note.setText(
            f"corpus {counts.path}: {counts.documents:,} documents, {counts.tokens:,} tokens; "
            f"{self.vm.counts.get('never-seen', 0):,} entries never seen, {self.vm.counts.get('rarely-seen', 0):,} "
            f"seen 1 to 2 times ({counts.executor})")
        self.corpus_note.setVisible(True)

    def _on_embeddings(self, r: Any) -> None:
        self.facet_boxes["embedding-candidate"].setText(
            f"{FACETS['embedding-candidate']} ({self.vm.counts.get('embedding-candidate', 0):,})")
        if self.vm.audit is not None:
            self.charts.set_data(*self.vm.histograms())
        if r is None:
            self.emb_note.setVisible(False)
            return
        ref = f"; reference: {r.reference_name} ({len(r.reference_ids)} rows)" if r.indicator == "cosine-distance" else ""
        warn = "".join(f" · <span style='color:#b45309'>{w}</span>" for w in r.warnings)
        self.emb_note.setText(
            f"embeddings: {r.tensor} {list(r.shape)} {r.dtype}, {'tied' if r.tied else 'untied'} → {r.indicator}{ref}"
            f" · {len(r.candidates):,} candidates ≤ {r.threshold:.4g} (2nd percentile of reachable tokens)"
            f" · {len(r.padding_rows):,} padding rows beyond the vocabulary (not ranked){warn}"
            if r.threshold is not None else f"embeddings: {r.tensor}: no reachable tokens to rank{warn}")
        self.emb_note.setTextFormat(Qt.TextFormat.RichText)
        self.emb_note.setVisible(True)

    def _export(self) -> None:
        if self.vm.audit is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export the tokens shown", "vocabulary.csv",
                                              "CSV (*.csv);;JSON (*.json)")
        if path:
            try:
                n = self.vm.export(path)
            except OSError as exc:
                self._on_error(f"export: {exc}")
                return
            self.shown.setText(f"{counted(n, 'row')} written to {path}")
