"""The Lattice tab: the Unigram lattice of a text, its best paths, marginals and samples.

Top: the text (typed here, or the word around the token selected in the Inspect tab), the
chunk when the pre-tokenizer made several, and the n-best size. Middle: the lattice drawing
(`tokviz.gui.widgets.lattice_view`). Bottom: the n-best list (selecting one highlights its path)
and sampling: with alpha over all segmentations for Unigram tokenizers, with BPE-dropout p for
BPE tokenizers, shown as a histogram of segmentations. Export the lattice or the histogram as
PNG/SVG. Everything goes through `LatticeViewModel`.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .display import counted
from .lattice_viewmodel import LatticeViewModel
from .theme import mono_font
from .widgets.charts import Histogram
from .widgets.exact_edit import ExactLineEdit
from .widgets.form import header
from .widgets.lattice_view import LatticeView
from .widgets.pair_table import show_piece

__all__ = ["LatticeTab"]


class LatticeTab(QWidget):
    def __init__(self, inspect_vm: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lanes = getattr(inspect_vm, "_lanes", None)  # share the Inspect lanes: one "busy" for the app
        self.vm = LatticeViewModel(self, inspect=inspect_vm, lanes=lanes)
        self._seen_tokenizer = False

        top = self._build_top()
        self.mode_label = QLabel("")
        self.mode_label.setStyleSheet("color: gray")
        self.mode_label.setWordWrap(True)
        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.lattice = LatticeView()

        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self._build_nbest())
        bottom.addWidget(self._build_sampling())
        bottom.setSizes([560, 640])
        bottom.setChildrenCollapsible(False)
        lat_box = QWidget()
        lbl = QVBoxLayout(lat_box)
        lbl.setContentsMargins(0, 0, 0, 0)
        lbl.setSpacing(2)
        lbl.addWidget(self.lattice, 1)
        self.lattice_box = lat_box
        vs = QSplitter(Qt.Orientation.Vertical)
        vs.addWidget(lat_box)
        vs.addWidget(bottom)
        vs.setSizes([430, 300])
        vs.setChildrenCollapsible(False)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(top)
        lay.addWidget(self.mode_label)
        lay.addWidget(self.summary)
        lay.addWidget(vs, 1)
        self._wire(inspect_vm)
        self._on_mode(self.vm.mode, self.vm.describe_mode())
        self.vm.set_active(False)  # until shown: work follows the eye

    # ------------------------------------------------------------------ building
    def _build_top(self) -> QHBoxLayout:
        """The text, From Inspect, the chunk choice, the n-best size and the lattice export."""
        top = QHBoxLayout()
        top.addWidget(QLabel("Text"))
        self.text_edit = ExactLineEdit(self.vm.text)  # the text exactly, invisible characters marked
        self.text_edit.setFont(mono_font())
        self.text_edit.setToolTip("The text whose lattice is drawn (up to 400 characters)")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self._text_edited)
        self.text_edit.inserts_dropped_files = True
        self.text_edit.edited.connect(lambda *_e: self._timer.start())
        top.addWidget(self.text_edit, 1)
        self.from_inspect = QPushButton("From Inspect")
        self.from_inspect.setToolTip("Use the word around the token selected in the Inspect tab")
        self.from_inspect.clicked.connect(self._take_inspect)
        top.addWidget(self.from_inspect)
        self.chunk_label = QLabel("Chunk")
        self.chunk_combo = QComboBox()
        self.chunk_combo.setMinimumContentsLength(16)
        self.chunk_combo.setToolTip("The pre-tokenizer split the text; the model sees each chunk separately")
        self.chunk_combo.activated.connect(self.vm.set_chunk)
        top.addWidget(self.chunk_label)
        top.addWidget(self.chunk_combo)
        top.addWidget(QLabel("n-best"))
        self.nbest = QSpinBox()
        self.nbest.setRange(0, 100)
        self.nbest.setValue(self.vm.nbest_size)
        self.nbest.valueChanged.connect(self.vm.set_nbest)
        top.addWidget(self.nbest)
        self.export_lattice_button = QPushButton("Export lattice…")
        self.export_lattice_button.clicked.connect(lambda: self._export(self.lattice.export, "lattice"))
        top.addWidget(self.export_lattice_button)
        return top

    def _build_nbest(self) -> QWidget:
        """The n-best table under its header (selecting a row highlights its path)."""
        self.nbest_table = QTableWidget(0, 4)
        self.nbest_table.setHorizontalHeaderLabels(["#", "log-prob", "p / Z", "segmentation"])
        self.nbest_table.verticalHeader().setVisible(False)
        self.nbest_table.verticalHeader().setDefaultSectionSize(22)
        self.nbest_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.nbest_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.nbest_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.nbest_table.setWordWrap(False)
        h = self.nbest_table.horizontalHeader()
        for c in range(3):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        h.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.nbest_table.itemSelectionChanged.connect(self._on_nbest_selected)
        nb = QWidget()
        nl = QVBoxLayout(nb)
        nl.setContentsMargins(0, 0, 0, 0)
        nl.setSpacing(2)
        self.nbest_header = header("n-best segmentations", "select one to highlight its path (arrow keys)")
        nl.addWidget(self.nbest_header)
        nl.addWidget(self.nbest_table, 1)
        self.nbest_box = nb
        return nb

    def _build_sampling(self) -> QWidget:
        """Sampling: its parameters row and the histogram of drawn segmentations."""
        samp = QWidget()
        sl = QVBoxLayout(samp)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.setSpacing(2)
        self.sample_header = header("Sampling", "")
        sl.addWidget(self.sample_header)
        sl.addLayout(self._build_sampling_row())
        self.histogram = Histogram()
        self.histogram.setToolTip("Click a row to see its path in the lattice")
        self.histogram.row_activated.connect(self._on_sample_row)
        scroll = QScrollArea()
        scroll.setWidget(self.histogram)
        scroll.setWidgetResizable(True)
        sl.addWidget(scroll, 1)
        return samp

    def _build_sampling_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.param_label = QLabel("α")
        row.addWidget(self.param_label)
        self.alpha = QDoubleSpinBox()
        self.alpha.setRange(0.0, 10.0)
        self.alpha.setDecimals(2)
        self.alpha.setSingleStep(0.1)
        self.alpha.setValue(self.vm.alpha)
        self.alpha.setToolTip("Unigram: inverse temperature; 0 = uniform over paths, large = close to Viterbi")
        row.addWidget(self.alpha)
        self.dropout = QDoubleSpinBox()
        self.dropout.setRange(0.0, 1.0)
        self.dropout.setDecimals(2)
        self.dropout.setSingleStep(0.05)
        self.dropout.setValue(self.vm.dropout)
        self.dropout.setToolTip("BPE-dropout: each merge is skipped with this probability")
        row.addWidget(self.dropout)
        row.addWidget(QLabel("samples"))
        self.count = QSpinBox()
        self.count.setRange(1, 100_000)
        self.count.setGroupSeparatorShown(True)
        self.count.setValue(self.vm.samples)
        row.addWidget(self.count)
        row.addWidget(QLabel("seed"))
        self.seed = QSpinBox()
        self.seed.setRange(0, 1_000_000)
        row.addWidget(self.seed)
        self.sample_button = QPushButton("Sample")
        self.sample_button.setToolTip("Draw the samples (Ctrl+R)")
        self.sample_button.setShortcut("Ctrl+R")
        self.sample_button.clicked.connect(self.sample)
        row.addWidget(self.sample_button)
        self.export_hist_button = QPushButton("Export…")
        self.export_hist_button.setToolTip("Save the histogram as PNG or SVG")
        self.export_hist_button.clicked.connect(lambda: self._export(self.histogram.export, "samples"))
        row.addWidget(self.export_hist_button)
        row.addStretch(1)
        return row

    def _wire(self, inspect_vm: Any) -> None:
        for w in (self.alpha, self.dropout, self.count, self.seed):
            w.valueChanged.connect(self._push_sampling)
        self.vm.mode_changed.connect(self._on_mode)
        self.vm.lattice_changed.connect(self._on_lattice)
        self.vm.samples_changed.connect(self._on_samples)
        if inspect_vm is not None:
            self.vm.error_raised.connect(inspect_vm.error_raised)
            self.text_edit.error_raised.connect(inspect_vm.error_raised)

    # ------------------------------------------------------------------ public
    def status_text(self) -> str:
        """One line for the status bar while this tab is shown."""
        res = self.vm.result
        if res is None:
            return f"Lattice: {self.vm.describe_mode()}"
        if res.picture is not None:
            what = f"{counted(len(res.picture.nodes), 'candidate piece')}, {counted(len(res.nbest), 'best path')}"
        else:
            what = f"{counted(len(res.encoded_ids), 'token')} (BPE: dropout sampling)"
        return f"Lattice: {counted(len(res.text), 'char')} · {what}"

    def is_busy(self) -> bool:
        return self.vm.is_busy()

    def showEvent(self, event) -> None:  # noqa: ANN001, N802
        super().showEvent(event)
        if self.vm.result is None and self.vm.tokenizer is not None:
            self.vm.refresh()
        self.vm.set_active(True)

    def hideEvent(self, event) -> None:  # noqa: ANN001, N802
        super().hideEvent(event)
        self.vm.set_active(False)

    def _text_edited(self) -> None:
        self.vm.edit_text(self.text_edit.text())

    def _push_sampling(self) -> None:
        self.vm.set_sampling(alpha=self.alpha.value(), dropout=self.dropout.value(), samples=self.count.value(),
                             seed=self.seed.value())

    def sample(self) -> None:
        self._push_sampling()
        self.vm.sample()

    def _take_inspect(self) -> None:
        if self.vm.use_inspect_selection():
            self.text_edit.show_text(self.vm.text)

    # ------------------------------------------------------------------ updates
    def _on_mode(self, mode: str, description: str) -> None:
        self.mode_label.setText(description)
        uni = mode == "unigram"
        self.alpha.setVisible(uni)
        self.dropout.setVisible(mode == "bpe")
        self.param_label.setText("α" if uni else "dropout p")
        self.sample_button.setEnabled(mode != "none")
        self.nbest_table.setEnabled(uni)
        self.export_lattice_button.setEnabled(uni)
        # BPE has no lattice and no n-best: give the histogram the room
        self.lattice_box.setVisible(mode != "bpe")
        self.nbest_box.setVisible(mode != "bpe")
        self.nbest.setEnabled(uni)
        if uni:
            self.sample_header.setText("<b>Sampling</b>&nbsp;&nbsp;<span style='color:gray'>subword regularization: "
                                       "draw paths with p ∝ exp(α · score), count the segmentations</span>")
        elif mode == "bpe":
            self.sample_header.setText("<b>BPE-dropout sampling</b>&nbsp;&nbsp;<span style='color:gray'>encode N times, "
                                       "skipping each merge with probability p, count the segmentations</span>")
        self.histogram.set_rows([])

    def _on_lattice(self, res) -> None:  # noqa: ANN001
        if res is not None and res.text != self.text_edit.text() and not self.text_edit.hasFocus():
            self.text_edit.show_text(res.text)
        if res is None:
            self.lattice.canvas.set_picture(None)
            self.nbest_table.setRowCount(0)
            self.summary.setText("")
            return
        self.chunk_combo.blockSignals(True)
        self.chunk_combo.clear()
        for i, c in enumerate(res.chunks):
            self.chunk_combo.addItem(f"{i + 1}: {show_piece(c)[:30]}")
        if res.chunk_index >= 0:
            self.chunk_combo.setCurrentIndex(res.chunk_index)
        self.chunk_combo.blockSignals(False)
        many = len(res.chunks) > 1 and res.mode == "unigram"
        self.chunk_combo.setVisible(many)
        self.chunk_label.setVisible(many)
        cut = " (first 400 characters)" if res.truncated else ""
        if res.mode == "bpe":
            self.lattice.canvas.placeholder = (
                "BPE has no lattice: it merges deterministically by rank. Sampling below uses BPE-dropout "
                "to show the segmentations it could produce.")
            self.lattice.canvas.set_picture(None)
            self.nbest_table.setRowCount(0)
            self.summary.setText(
                f"Deterministic encoding{cut}: <code>{_h(' | '.join(show_piece(p) for p in res.encoded_pieces))}</code>"
                f" · {counted(len(res.encoded_ids), 'token')}")
            return
        vit = res.viterbi
        unk = self.vm.unk_id
        if tuple(vit.ids) == tuple(res.encoded_ids):
            check = "equals the pipeline's encoding ✓"
        elif _collapse(vit.ids, unk) == tuple(res.encoded_ids):
            check = "equals the encoding after merging each run of unknown pieces into one ✓"
        else:
            check = "differs from the encoding (byte fallback or post-processing)"
        pv = math.exp(vit.score - res.log_z) if res.log_z > -1e300 else 0.0
        self.summary.setText(
            f"<b>{len(res.picture.nodes):,}</b> candidate piece{'' if len(res.picture.nodes) == 1 else 's'} over {counted(len(res.picture.text), 'character')}{cut} · "
            f"Viterbi <code>{_h(' | '.join(show_piece(p) for p in vit.pieces))}</code> score {vit.score:.3f} "
            f"(p = {pv:.3f} of all paths) · {check} · {res.seconds * 1000:.0f} ms")
        self.lattice.canvas.set_picture(res.picture)
        self.nbest_table.blockSignals(True)
        self.nbest_table.setRowCount(len(res.nbest))
        for r, seg in enumerate(res.nbest):
            share = math.exp(seg.score - res.log_z)
            cells = [str(r + 1), f"{seg.score:.4f}", f"{share:.4f}", " | ".join(show_piece(p) for p in seg.pieces)]
            for c, text in enumerate(cells):
                it = QTableWidgetItem(text)
                if c == 3:
                    it.setFont(mono_font())
                    it.setToolTip(text)
                else:
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.nbest_table.setItem(r, c, it)
        self.nbest_table.blockSignals(False)
        self.nbest_header.setText(
            f"<b>n-best segmentations</b>&nbsp;&nbsp;<span style='color:gray'>{len(res.nbest)} best of all paths · "
            f"p / Z = share of all paths · select one to see its path</span>")

    def _on_nbest_selected(self) -> None:
        res = self.vm.result
        rows = self.nbest_table.selectionModel().selectedRows()
        if res is None or not rows:
            self.lattice.canvas.set_selected(())
            return
        r = rows[0].row()
        if 0 <= r < len(res.nbest):
            self.lattice.canvas.set_selected(res.nbest[r].nodes)

    def select_nbest(self, r: int) -> None:
        self.nbest_table.selectRow(r)

    def _on_sample_row(self, i: int) -> None:
        out = self.vm.sample_result
        if out is not None and i < len(out.paths) and out.paths[i]:
            self.nbest_table.clearSelection()
            self.lattice.canvas.set_selected(out.paths[i])

    def _on_samples(self, out) -> None:  # noqa: ANN001
        what = "Viterbi" if out.mode == "unigram" else "deterministic"
        param = f"α = {out.param:g}" if out.mode == "unigram" else f"p = {out.param:g}"
        self.histogram.set_rows(list(out.rows), title=(
            f"{counted(out.total, 'sample')} · {param} · {out.distinct:,} distinct · gold: the {what} one · "
            f"{out.seconds * 1000:.0f} ms"))
        self.histogram.setToolTip(out.description + ("\nClick a row to see its path in the lattice" if out.paths else ""))

    def _export(self, fn, stem: str) -> None:  # noqa: ANN001
        path, _ = QFileDialog.getSaveFileName(self, f"Export {stem}", f"{stem}.png", "PNG image (*.png);;SVG image (*.svg)")
        if path:
            try:
                fn(path)
            except OSError as exc:
                self.vm.report_error(f"Export failed: {exc}")

    def set_theme(self, theme) -> None:  # noqa: ANN001
        self.lattice.canvas.update()
        self.histogram.update()


def _collapse(ids, unk) -> tuple[int, ...]:  # noqa: ANN001
    """SentencePiece's post-Viterbi step: a run of unknown pieces becomes one."""
    out: list[int] = []
    for i in ids:
        if not (i == unk and out and out[-1] == unk):
            out.append(i)
    return tuple(out)


def _h(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
