"""The Train tab: train BPE / WordPiece / Unigram on a corpus and step through what happened.

Left: the corpus (paste, open files, the toy corpus), the algorithm and its options, Train /
Cancel with a progress bar, and export (tokenizer.json, open in the Inspect tab). Right, in two
sub-tabs:

* **Training run**: the merge slider (0..N, step buttons, arrow keys, play/pause); at step k the
  merge that produced it, the pair-count table that decided it (ties and the tie-break rule
  marked), the most frequent corpus words segmented after k merges, a probe text tokenized with
  the first k merges, and the vocab size / corpus tokens chart. Unigram runs show the EM chart
  (log-likelihood, vocab size per iteration) and the pruning rounds with the removed pieces.
* **Rank cutoff**: the Inspect tab's tokenizer (a real BPE bundle) cut at its first k merges,
  tokenizing the Inspect text.

Everything goes through `TrainViewModel`; nothing here calls a trainer or the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .display import counted
from .theme import mono_font
from .train_viewmodel import ALGORITHMS, TrainConfig, TrainViewModel
from .widgets.charts import SeriesChart
from .widgets.exact_edit import ExactLineEdit, ExactTextEdit
from .widgets.form import boxed, header
from .widgets.merge_slider import MergeSlider
from .widgets.pair_table import PairTable, PruneTable, show_piece
from .widgets.segments import ProbeView, WordsView

__all__ = ["TrainTab"]


class TrainTab(QWidget):
    def __init__(self, inspect_vm: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lanes = getattr(inspect_vm, "_lanes", None)  # share the Inspect lanes: one "busy" for the app
        self.vm = TrainViewModel(self, inspect=inspect_vm, lanes=lanes)
        self._auto_started = False
        self._land_on_first = False
        self.pairs_step = 0  # the pair table shows counts after this many merges

        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 4, 0)
        ll.addWidget(self._build_corpus(), 1)
        ll.addWidget(self._build_options())
        ll.addWidget(self._build_export())
        left.setMinimumWidth(300)
        left.setMaximumWidth(420)

        self.right = QTabWidget()
        self.right.setDocumentMode(True)
        self.right.addTab(self._build_run(), "Training run")
        self.right.addTab(self._build_cutoff(), "Rank cutoff (Inspect tokenizer)")
        self.right.currentChanged.connect(self._on_right_tab)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.right)
        split.setStretchFactor(1, 1)
        split.setSizes([340, 940])
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(split)

        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start_training)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.vm.cancel)
        self._wire(inspect_vm)
        self._on_algo()
        self._live_merges = 0

    # ------------------------------------------------------------------ building
    def _build_corpus(self) -> QGroupBox:
        """The corpus box: toy corpus and Open buttons, the exact corpus editor, its size."""
        corpus_box = QGroupBox("Corpus")
        cl = QVBoxLayout(corpus_box)
        row = QHBoxLayout()
        self.toy_button = QPushButton("Toy corpus")
        self.toy_button.setToolTip("The shipped toy corpus: small hand-checkable examples (abab/abac, low/lower/newest, hug/pug …)")
        self.toy_button.clicked.connect(self.vm.load_toy_corpus)
        self.open_button = QPushButton("Open files…")
        self.open_button.setToolTip("Train on UTF-8 text files (e.g. botchan.txt, wagahaiwa_nekodearu.txt)")
        self.open_button.clicked.connect(self.open_corpus_dialog)
        row.addWidget(self.toy_button)
        row.addWidget(self.open_button)
        cl.addLayout(row)
        self.corpus_edit = ExactTextEdit()  # keeps CR, NBSP, BOM ... exactly (QPlainTextEdit would not)
        self.corpus_edit.setFont(mono_font())
        self.corpus_edit.setPlaceholderText("Paste a corpus here (one text per line), or open files")
        self.corpus_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.corpus_edit.edited.connect(self._on_corpus_edited)
        self.corpus_edit.files_dropped.connect(self.vm.load_corpus_files)  # read exactly, as Open files… does
        cl.addWidget(self.corpus_edit, 1)
        self.corpus_info = QLabel("empty")
        self.corpus_info.setStyleSheet("color: gray")
        cl.addWidget(self.corpus_info)
        return corpus_box

    def _build_options(self) -> QGroupBox:
        """The training options form, Train / Cancel, the progress bar and the status line."""
        opts = QGroupBox("Training")
        form = QFormLayout(opts)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.algo = QComboBox()
        for key, (title, tip) in ALGORITHMS.items():
            self.algo.addItem(title, key)
            self.algo.setItemData(self.algo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.algo.currentIndexChanged.connect(self._on_algo)
        form.addRow("Algorithm", self.algo)
        self.vocab = QSpinBox()
        self.vocab.setRange(1, 1_000_000)
        self.vocab.setValue(300)
        self.vocab.setGroupSeparatorShown(True)
        self.vocab.setToolTip("Target vocabulary size (alphabet + special tokens + merges)")
        form.addRow("Vocab size", self.vocab)
        self.min_freq = QSpinBox()
        self.min_freq.setRange(0, 1_000_000)
        self.min_freq.setToolTip("Stop merging when the best pair occurs fewer times than this")
        form.addRow("Min frequency", self.min_freq)
        self.specials = QLineEdit()
        self.specials.setPlaceholderText("e.g. <unk> <s> </s>")
        self.specials.setToolTip("Special tokens, separated by spaces; they get the first ids")
        form.addRow("Special tokens", self.specials)
        self.suffix = QLineEdit()
        self.suffix.setPlaceholderText("none, or </w>")
        self.suffix.setToolTip("End-of-word suffix for character BPE (original BPE paper style)")
        self.suffix_label = QLabel("Word suffix")
        form.addRow(self.suffix_label, self.suffix)
        self.em_iters = QSpinBox()
        self.em_iters.setRange(1, 20)
        self.em_iters.setValue(2)
        self.em_label = QLabel("EM iterations")
        form.addRow(self.em_label, self.em_iters)
        form.addRow(self._build_run_buttons())
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        form.addRow(self.progress)
        self.status = QLabel("Not trained yet.")
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: gray")
        form.addRow(self.status)
        return opts

    def _build_run_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        self.train_button = QPushButton("Train")
        self.train_button.setDefault(True)
        self.train_button.setToolTip("Train in the background (Ctrl+Return)")
        self.train_button.clicked.connect(self.start_training)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop training; the previous result stays (Esc)")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.vm.cancel)
        buttons.addWidget(self.train_button)
        buttons.addWidget(self.cancel_button)
        return buttons

    def _build_export(self) -> QGroupBox:
        export = QGroupBox("Trained tokenizer")
        el = QHBoxLayout(export)
        self.save_button = QPushButton("Save tokenizer.json…")
        self.save_button.clicked.connect(self.save_dialog)
        self.inspect_button = QPushButton("Open in Inspect")
        self.inspect_button.setToolTip("Load the trained tokenizer (cut at the slider's step) into the Inspect tab")
        self.inspect_button.clicked.connect(self.open_in_inspect)
        el.addWidget(self.save_button)
        el.addWidget(self.inspect_button)
        for b in (self.save_button, self.inspect_button):
            b.setEnabled(False)
        return export

    def _build_run(self) -> QWidget:
        """The "Training run" sub-tab: slider, headline, tables, probe and chart."""
        self.slider = MergeSlider()
        self.slider.value_changed.connect(self.vm.set_step)
        self.headline = QLabel("Train on a corpus, then step through the merges.")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        self.headline.setMinimumHeight(40)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.addWidget(self._build_tables())
        vsplit.addWidget(self._build_probe())
        vsplit.addWidget(self._build_chart())
        vsplit.setSizes([380, 120, 220])
        vsplit.setChildrenCollapsible(False)
        run = QWidget()
        rl = QVBoxLayout(run)
        rl.setContentsMargins(4, 4, 4, 0)
        rl.addWidget(self.slider)
        rl.addWidget(self.headline)
        rl.addWidget(vsplit, 1)
        return run

    def _build_tables(self) -> QSplitter:
        """The pair-count (or pruning) table beside the segmented corpus words."""
        self.pairs = PairTable()
        self.pairs.activated.connect(lambda index: self.jump_to_pair(index.row()))  # double-click or Enter
        self.prunes = PruneTable()
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.pairs)
        self.table_stack.addWidget(self.prunes)
        self.table_box = boxed("Pair counts", "", self.table_stack)
        self.words = WordsView()
        self.words_box = boxed("Corpus words", "", self.words)
        mid = QSplitter(Qt.Orientation.Horizontal)
        mid.addWidget(self.table_box)
        mid.addWidget(self.words_box)
        mid.setSizes([520, 420])
        mid.setChildrenCollapsible(False)
        return mid

    def _build_probe(self) -> QWidget:
        self.probe_edit = ExactLineEdit(self.vm.probe_text)  # the probe exactly, marks included
        self.probe_edit.setFont(mono_font())
        self.probe_edit.setToolTip("Any text: tokenized with the first k merges of the trained tokenizer")
        self._probe_timer = QTimer(self)
        self._probe_timer.setSingleShot(True)
        self._probe_timer.setInterval(120)
        self._probe_timer.timeout.connect(lambda: self.vm.set_probe(self.probe_edit.text()))
        self.probe_edit.inserts_dropped_files = True
        self.probe_edit.edited.connect(lambda *_e: self._probe_timer.start())
        self.probe_view = ProbeView()
        self.probe_view.setMaximumHeight(70)
        self.probe_info = QLabel("")
        self.probe_info.setStyleSheet("color: gray")
        probe = QWidget()
        pl = QVBoxLayout(probe)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(2)
        prow = QHBoxLayout()
        prow.addWidget(header("Probe", ""))
        prow.addWidget(self.probe_edit, 1)
        pl.addLayout(prow)
        pl.addWidget(self.probe_view)
        pl.addWidget(self.probe_info)
        return probe

    def _build_chart(self) -> QWidget:
        self.chart = SeriesChart()
        self.export_chart_button = QPushButton("Export chart…")
        self.export_chart_button.setToolTip("Save the chart as PNG or SVG")
        self.export_chart_button.clicked.connect(self.export_chart_dialog)
        self.chart_header = header("Chart", "")
        self.chart_box = QWidget()
        chl = QVBoxLayout(self.chart_box)
        chl.setContentsMargins(0, 0, 0, 0)
        chl.setSpacing(2)
        head = QHBoxLayout()
        head.addWidget(self.chart_header, 1)
        head.addWidget(self.export_chart_button)
        chl.addLayout(head)
        chl.addWidget(self.chart, 1)
        return self.chart_box

    def _build_cutoff(self) -> QWidget:
        """The "Rank cutoff" sub-tab: the Inspect tokenizer cut at its first k merges."""
        cut = QWidget()
        cl2 = QVBoxLayout(cut)
        cl2.setContentsMargins(4, 4, 4, 0)
        self.cut_info = QLabel("Load a BPE tokenizer (gpt2, cl100k, o200k, Qwen3, Mistral …) in the Inspect tab.")
        self.cut_info.setWordWrap(True)
        cl2.addWidget(self.cut_info)
        self.cut_slider = MergeSlider()
        self.cut_slider.value_changed.connect(self._on_cut_slider)
        cl2.addWidget(self.cut_slider)
        self.cut_headline = QLabel("")
        self.cut_headline.setTextFormat(Qt.TextFormat.RichText)
        cl2.addWidget(self.cut_headline)
        self.cut_view = ProbeView()
        self.cut_view.placeholder = "The Inspect text, tokenized with only the first k merges, appears here."
        cl2.addWidget(self.cut_view, 1)
        return cut

    def _wire(self, inspect_vm: Any) -> None:
        """Connect the view-model's signals to this tab (and to the Inspect view-model)."""
        vm = self.vm
        vm.corpus_changed.connect(self._set_corpus_text)
        vm.training_started.connect(self._on_started)
        vm.progress.connect(self._on_progress)
        vm.events_arrived.connect(self._on_events)
        vm.training_finished.connect(self._on_finished)
        vm.training_cancelled.connect(self._on_cancelled)
        vm.busy_changed.connect(self._on_busy)
        vm.step_changed.connect(self._on_step)
        vm.probe_changed.connect(self._on_probe)
        vm.cutoff_available.connect(self._on_cutoff_available)
        vm.cutoff_changed.connect(self._on_cutoff)
        if inspect_vm is not None:
            vm.error_raised.connect(inspect_vm.error_raised)
            self.probe_edit.error_raised.connect(inspect_vm.error_raised)
            # the cut view follows edits of the Inspect text (debounced, only while it is shown)
            self._cut_timer = QTimer(self)
            self._cut_timer.setSingleShot(True)
            self._cut_timer.setInterval(300)
            self._cut_timer.timeout.connect(self._refresh_cut)
            inspect_vm.encoding_changed.connect(lambda _u: self._cut_timer.start())

    # ------------------------------------------------------------------ public helpers
    def status_text(self) -> str:
        """One line for the status bar while this tab is shown."""
        run = self.vm.run
        if run is None or not run.is_merge_based:
            return f"Train: {self.status.text()}"
        return f"Train: {self.status.text()} · showing step {self.slider.value():,}"

    def is_busy(self) -> bool:
        """Training or a step query still running (the screenshot waits for this)."""
        return self.vm.is_training() or self.vm.step_busy() or self.vm._lanes.is_busy("cutoff")

    def showEvent(self, event) -> None:  # noqa: ANN001, N802
        super().showEvent(event)
        if not self._auto_started and not self.vm.corpus and self.vm.run is None:
            # First visit: show something real right away (the toy corpus trains in milliseconds).
            self._auto_started = True
            self.vm.load_toy_corpus()
            # character BPE reads best on the toy corpus (its low/lower/newest examples)
            self.algo.setCurrentIndex(self.algo.findData("bpe-char"))
            self.vocab.setValue(100)
            self._land_on_first = True  # show merge 1 and the counts that chose it
            self.start_training()

    def config(self) -> TrainConfig:
        return TrainConfig(
            algorithm=self.algo.currentData(),
            vocab_size=self.vocab.value(),
            min_frequency=self.min_freq.value(),
            special_tokens=tuple(self.specials.text().split()),
            end_of_word_suffix=self.suffix.text().strip(),
            em_iterations=self.em_iters.value(),
        )

    def start_training(self) -> None:
        self.vm.train(self.config())  # the view-model holds the corpus (the editor reports every edit)

    # ------------------------------------------------------------------ corpus
    def _set_corpus_text(self, text: str) -> None:
        self.corpus_edit.show_text(text)
        self._update_corpus_info()

    def _on_corpus_edited(self, start: int, end: int, text: str) -> None:  # noqa: ARG002 - the editor applied it
        self.vm.set_corpus(self.corpus_edit.exact_text(), name=self.vm.corpus_name)
        self._update_corpus_info()

    def _update_corpus_info(self) -> None:
        text = self.vm.corpus
        lines = text.count("\n") + 1 if text else 0
        name = f"{self.vm.corpus_name} · " if self.vm.corpus_name else ""
        self.corpus_info.setText(f"{name}{counted(len(text), 'char')} · {counted(len(text.encode('utf-8')), 'byte')} · {counted(lines, 'line')}")

    def open_corpus_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open corpus files", "", "Text files (*.txt *.md *.py);;All files (*)")
        if paths:
            self.vm.load_corpus_files(paths)

    def _on_algo(self) -> None:
        key = self.algo.currentData()
        char = key == "bpe-char"
        uni = key == "unigram"
        self.suffix.setVisible(char)
        self.suffix_label.setVisible(char)
        self.em_iters.setVisible(uni)
        self.em_label.setVisible(uni)
        if uni and self.vocab.value() < 60:
            self.vocab.setValue(60)

    # ------------------------------------------------------------------ training
    def _on_started(self, cfg: TrainConfig) -> None:
        self._live_merges = 0
        self.progress.setValue(0)
        self.status.setText(f"Training {ALGORITHMS[cfg.algorithm][0]} to {cfg.vocab_size:,} …")

    def _on_busy(self, busy: bool) -> None:
        self.train_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        if not busy:
            self.progress.setValue(self.progress.maximum() if self.vm.run is not None else 0)

    def _on_progress(self, stage: str, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(f"{stage}: {message}")

    def _on_events(self, events: list) -> None:
        self._live_merges += sum(1 for e in events if hasattr(e, "new_token"))
        if self._live_merges:
            self.status.setText(f"merges: {self._live_merges:,} so far …")

    def _on_cancelled(self, stage: str) -> None:
        kept = " The previous result stays." if self.vm.run is not None else ""
        self.status.setText(f"Cancelled during {stage}.{kept}")
        self.progress.setValue(0)

    def _on_finished(self, run) -> None:  # noqa: ANN001
        res = run.result
        algo = ALGORITHMS[run.config.algorithm][0]
        if run.is_merge_based:
            self.status.setText(
                f"{algo}: {counted(res.num_merges, 'merge')}, vocab {len(res.vocab):,}, {len(res.words):,} distinct words "
                f"in {run.seconds * 1000:,.0f} ms"
            )
            self.slider.set_maximum(res.num_merges)
            self.slider.slider.blockSignals(True)
            self.slider.set_value(res.num_merges)
            self.slider.spin.setValue(res.num_merges)
            self.slider.slider.blockSignals(False)
            self.slider.setVisible(True)
            self.table_stack.setCurrentWidget(self.pairs)
            if self._land_on_first and res.num_merges:
                self._land_on_first = False
                self.slider.set_value(1)
            series = res.chart_series()
            self.chart.set_series(
                series["k"],
                [[("vocab size", series["vocab_size"]), ("merges", series["merges"])],
                 [("corpus tokens", series["corpus_tokens"])]],
                x_label="k (merges applied)", y_labels=["entries", "tokens"],
            )
            self.chart_header.setText("<b>Chart</b>&nbsp;&nbsp;<span style='color:gray'>vocab size, merge count and "
                                      "corpus tokens after k merges · dashed line: the slider</span>")
        else:
            self.status.setText(
                f"{algo}: vocab {len(res.vocab):,}, {len(run.em)} EM iterations, {len(run.prunes)} pruning rounds "
                f"in {run.seconds:,.2f} s"
            )
            self.slider.setVisible(False)
            self.table_stack.setCurrentWidget(self.prunes)
            self.prunes.set_rounds(run.prunes)
            self.table_box.header.setText("<b>Pruning rounds</b>&nbsp;&nbsp;<span style='color:gray'>pieces removed "
                                          "(likelihood loss of removing each, smallest first) · hover for all</span>")
            xs = list(range(len(run.em)))
            self.chart.set_series(
                xs, [[("log-likelihood", [e.log_likelihood for e in run.em])],
                     [("vocab size", [e.vocab_size for e in run.em])]],
                x_label="EM iteration (all rounds)", y_labels=["log-likelihood", "pieces"],
            )
            self.chart_header.setText("<b>Chart</b>&nbsp;&nbsp;<span style='color:gray'>corpus log-likelihood and "
                                      "vocab size per EM iteration</span>")
            self.chart.set_cursor(None)
        for b in (self.save_button, self.inspect_button):
            b.setEnabled(True)

    # ------------------------------------------------------------------ a step
    def _on_step(self, view) -> None:  # noqa: ANN001
        run = self.vm.run
        if run is None:
            return
        res = run.result
        prefix = self.vm.subword_prefix
        if run.is_merge_based:
            wp = run.config.algorithm == "wordpiece"
            if view.merge is not None:
                m = view.merge
                score = f" · score <b>{m.score:.4g}</b>" if m.score is not None else ""
                dup = " · <i>duplicate: the token already existed (HF quirk), vocab does not grow</i>" if m.duplicate else ""
                self.headline.setText(
                    f"Merge <b>{view.k:,}</b> of {view.n:,}: "
                    f"<code>{_h(show_piece(m.left))}</code> + <code>{_h(show_piece(m.right))}</code> → "
                    f"<code><b>{_h(show_piece(m.new_token))}</b></code> (id {m.new_id}) · "
                    f"count <b>{m.count:,}</b>{score}{dup}<br><span style='color:gray'>vocab {view.vocab_size:,} entries · "
                    f"corpus {view.corpus_tokens:,} tokens</span>"
                )
                hint = f"just before merge {view.k:,} · ties: smaller id wins (hover for the rule)"
            else:
                self.headline.setText(
                    f"Step 0: no merges yet, words are split into their {'characters' if not wp else 'characters (## inside words)'}"
                    f"<br><span style='color:gray'>vocab {view.vocab_size:,} entries · corpus {view.corpus_tokens:,} tokens</span>"
                )
                hint = "at the start · the top row becomes merge 1 · ties: smaller id wins (hover)"
            rule = ("highest score f(xy)/(f(x)·f(y)), then higher count, then smaller left id, then smaller right id"
                    if wp else "highest count, then smaller left id, then smaller right id")
            self.table_box.header.setText(
                f"<b>Pair {'scores' if wp else 'counts'}</b>&nbsp;&nbsp;<span style='color:gray'>{hint}</span>")
            self.table_box.header.setToolTip(f"The trainer picks the {rule}. Ids: alphabet by code point, "
                                             "then merged tokens in creation order.")
            self.pairs.setToolTip("")
            self.pairs.set_rows(view.pair_rows, prefix=prefix, show_score=wp, chosen_is_next=view.merge is None)
            self.pairs_step = view.table_step
            self.chart.set_cursor(view.k)
        else:
            self.headline.setText(
                f"Unigram: <b>{len(res.vocab):,}</b> pieces after {len(run.em)} EM iterations and "
                f"{len(run.prunes)} pruning rounds<br><span style='color:gray'>words below are the Viterbi "
                f"segmentations under the final model</span>")
        self.words.set_words(view.words)
        touched = sum(1 for w in view.words if w.touched)
        if run.is_merge_based:
            tail = f" · ▸ {touched} contain the new token" if view.merge is not None else ""
            what = f"after {view.k:,} merge{'' if view.k == 1 else 's'}{tail}"
        else:
            what = "Viterbi segmentation under the final model"
        self.words_box.header.setText(
            f"<b>Corpus words</b>&nbsp;&nbsp;<span style='color:gray'>{len(view.words):,} most frequent of "
            f"{view.distinct_words:,} · {what}</span>")

    def _on_probe(self, res) -> None:  # noqa: ANN001
        enc = res.encoding
        if enc is None:
            self.probe_view.set_encoding(None)
            self.probe_info.setText(res.error or "")
            return
        self.probe_view.set_encoding(enc, unk_id=self._probe_unk_id())
        n = len(enc.ids)
        chars = len(enc.text)
        covered = sum(e - s for s, e in enc.offsets)
        dropped = sum(1 for ch in enc.text if not ch.isspace()) - covered
        note = f" · {dropped} chars outside the alphabet dropped (no unk token)" if dropped > 0 else ""
        self.probe_info.setText(f"{counted(n, 'token')} · {chars / n if n else 0:.2f} chars/token{note} · "
                                f"{res.seconds * 1000:.0f} ms")

    def _probe_unk_id(self) -> int | None:
        """The id of the trained model's unknown token (styled apart in the probe), if it has one."""
        result = getattr(self.vm.run, "result", None)
        if result is None:
            return None
        if getattr(self, "_unk_of", (None, None))[0] is not result:
            uid = None
            try:
                model = result.model_json()
            except Exception:  # noqa: BLE001 - decoration only
                model = {}
            if isinstance(model.get("unk_id"), int):
                uid = model["unk_id"]
            elif model.get("unk_token") and isinstance(getattr(result, "token_to_id", None), dict):
                uid = result.token_to_id.get(model["unk_token"])
            self._unk_of = (result, uid)
        return self._unk_of[1]

    def jump_to_pair(self, row: int) -> None:
        """Move the slider to the step that merges the pair in table row ``row`` (if ever)."""
        if not 0 <= row < len(self.pairs.rows):
            return
        r = self.pairs.rows[row]
        k = self.vm.merge_step_of(r.left_id, r.right_id, after=self.pairs_step)
        if k is None:
            self.status.setText(f"{show_piece(r.left)} + {show_piece(r.right)} is never merged in this run")
            return
        self.slider.set_value(k)

    # ------------------------------------------------------------------ rank cutoff
    def _on_right_tab(self, index: int) -> None:
        if index == 1:
            self.vm.prepare_cutoff()

    def _refresh_cut(self) -> None:
        if self.isVisible() and self.right.currentIndex() == 1 and self.vm.cutoff_k >= 0:
            self.vm.set_cutoff(self.vm.cutoff_k)

    def _on_cut_slider(self, k: int) -> None:
        self.cut_headline.setText(f"First <b>{k:,}</b> merges · <span style='color:gray'>building the cut "
                                  f"vocabulary and tokenizing the Inspect text…</span><br>&nbsp;")
        self.vm.set_cutoff(k)

    def _on_cutoff_available(self, n: int, description: str) -> None:
        self.cut_info.setText(description)
        self.cut_slider.set_maximum(n)
        if n:
            k = self.vm.cutoff_k if 0 <= self.vm.cutoff_k <= n else min(n, 1000)
            if self.cut_slider.value() != k:
                self.cut_slider.set_value(k)  # -> _on_cut_slider
            else:
                self._on_cut_slider(k)
        else:
            self.cut_view.set_encoding(None)
            self.cut_headline.setText("")

    def _on_cutoff(self, view) -> None:  # noqa: ANN001
        n = len(view.encoding.ids)
        self.cut_headline.setText(
            f"First <b>{view.k:,}</b> of {view.n:,} merges · last added: <code>{_h(view.label)}</code><br>"
            f"<span style='color:gray'>{n:,} tokens with the cut vocabulary vs {view.full_tokens:,} with all merges "
            f"({n / view.full_tokens if view.full_tokens else 0:.2f}×) · {view.seconds * 1000:.0f} ms</span>")
        self.cut_view.set_encoding(view.encoding)

    # ------------------------------------------------------------------ export
    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save trained tokenizer", "tokenizer.json", "tokenizer.json (*.json)")
        if path:
            out = self.vm.save_tokenizer(Path(path))
            if out is not None:
                self.status.setText(f"Saved {out}")

    def open_in_inspect(self) -> None:
        run = self.vm.run
        k = self.slider.value() if run is not None and run.is_merge_based else None
        if self.vm.open_in_inspect(num_merges=k):
            self._show_tab("Inspect")

    def _show_tab(self, name: str) -> None:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QTabWidget):
            w = w.parentWidget()
        if isinstance(w, QTabWidget):
            for i in range(w.count()):
                if w.tabText(i) == name:
                    w.setCurrentIndex(i)

    def export_chart_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", "training.png", "PNG image (*.png);;SVG image (*.svg)")
        if path:
            try:
                self.chart.export(path)
            except OSError as exc:
                self.vm.report_error(f"Export failed: {exc}")

    def set_theme(self, theme) -> None:  # noqa: ANN001
        for w in (self.words, self.probe_view, self.cut_view):
            w.set_theme(theme)
        self.chart.apply_palette(theme.dark, base=theme.base, text=theme.text)


def _h(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
