"""The main window: tokenizer picker, view toggles, the Inspect tab, menus, settings, drag-and-drop.

Everything the window does goes through the `InspectViewModel`; the window wires widgets to it,
keeps window state / last tokenizer / text in QSettings, and shows errors in the error bar.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QRectF, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QImage,
    QKeySequence,
    QPainter,
)
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .catalog import DEFAULT_BUNDLE, Entry, info_label, listing, load_error, path_label, sample_text
from .display import ViewMode, counted
from .theme import apply_palette, system_is_dark, theme_for
from .viewmodel import InspectViewModel
from .widgets.card import ErrorBar, StatsBar, TokenCard
from .widgets.form import ElidedLabel, boxed, header_html
from .widgets.text_panes import NormalizedPane, RawPane
from .widgets.token_panes import ChunkPane, TokenPane

__all__ = ["MainWindow", "InspectTab"]

_TEXT_SUFFIXES = {".txt", ".md", ".rst", ".py", ".js", ".ts", ".c", ".h", ".cpp", ".rs", ".go", ".java", ".html", ".csv", ".log"}
_MAX_SAVED_TEXT = 1_000_000
_RECENT_MAX = 8
_MEMORY = "memory:"  # picker data of a tokenizer that has no file (trained, opened from the Train tab)
_FAILED = "  [failed]"  # after a picker entry whose file did not load


class InspectTab(QWidget):
    """Four linked panes (raw, normalized, chunks, tokens) and the token card."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.raw = RawPane(vm)
        self.normalized = NormalizedPane(vm)
        self.chunks = ChunkPane(vm)
        self.tokens = TokenPane(vm)
        self.card = TokenCard(vm)
        self.panes = QSplitter(Qt.Orientation.Vertical)
        self.panes.setChildrenCollapsible(False)
        self.raw_box = boxed("1 · Raw text", "editable · hover a character, select a range", self.raw, wrap=False)
        self.norm_box = boxed("2 · Normalized", "changed characters tinted · hover for their source", self.normalized, wrap=False)
        self.chunk_box = boxed("3 · Pre-token chunks", "the model never merges across a box", self.chunks, wrap=False)
        self.token_box = boxed("4 · Tokens", "one color per token id · click for details", self.tokens, wrap=False)
        for box in (self.raw_box, self.norm_box, self.chunk_box, self.token_box):
            self.panes.addWidget(box)
        self.panes.setSizes([220, 110, 160, 260])
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.panes)
        card_box = boxed("Token", "", self.card, wrap=False)
        self.split.addWidget(card_box)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 1)
        self.split.setSizes([820, 300])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        self.options_row = QHBoxLayout()
        self.options_row.setContentsMargins(2, 0, 0, 0)
        lay.addLayout(self.options_row)
        lay.addWidget(self.split)
        vm.encoding_changed.connect(self._on_update)

    def _on_update(self, u) -> None:  # noqa: ANN001
        norm = u.normalized
        if norm is None or norm.is_identity:
            hint = "identical to the raw text (this tokenizer does not normalize, or nothing changed)"
        else:
            hint = "changed characters tinted · hover for their source"
        self.norm_box.header.setText(header_html("2 · Normalized", hint))
        n = len(u.encoding.stages.pre_tokens) if u.encoding.stages is not None else 0
        self.chunk_box.header.setText(header_html("3 · Pre-token chunks", f"{counted(n, 'chunk')} · the model never merges across a box"))

    def set_theme(self, theme) -> None:  # noqa: ANN001
        for w in (self.raw, self.normalized, self.chunks, self.tokens):
            w.set_theme(theme)


class MainWindow(QMainWindow):
    def __init__(self, *, settings: QSettings | None = None, vm: InspectViewModel | None = None) -> None:
        super().__init__()
        self.setWindowTitle("tokviz")
        self.setAcceptDrops(True)
        self.settings = settings
        self.vm = vm or InspectViewModel(self)
        self._theme_choice = "system"
        self._entries: list[Entry] = []
        self._active_info = ""
        self._failed: dict[str, str] = {}  # picker data -> why that file did not load
        self._transient: str | None = None  # a picker entry added only for the load under way

        top = self._build_top_bar()
        self.error_bar = ErrorBar()
        self.inspect = InspectTab(self.vm)
        self._build_inspect_options(self.inspect.options_row)
        self._build_tabs()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(2)
        cl.addWidget(top)
        eb = QWidget()
        el = QHBoxLayout(eb)
        el.setContentsMargins(8, 0, 8, 0)
        el.addWidget(self.error_bar)
        cl.addWidget(eb)
        cl.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self._build_status_bar()
        self._build_lint()
        self._build_inputs()
        self.replace_button = QPushButton("Decode with U+FFFD")
        self.replace_button.setToolTip("Open the file anyway, each invalid UTF-8 sequence replaced by U+FFFD (said in the status bar)")
        self.replace_button.hide()
        self.replace_button.clicked.connect(self._open_replacing)
        el.addWidget(self.replace_button)
        self._undecodable: Path | None = None
        self._wire()
        self._build_menus()
        self._populate_picker()
        self.apply_theme("system")

    # ------------------------------------------------------------------ building
    def _build_top_bar(self) -> QWidget:
        """The tokenizer picker, Open… and the active tokenizer's one-line description."""
        top = QWidget()
        tl = QHBoxLayout(top)
        tl.setContentsMargins(8, 6, 8, 2)
        tl.addWidget(QLabel("Tokenizer"))
        self.picker = QComboBox()
        self.picker.setMinimumContentsLength(34)  # "org/model (tokenizer.json)  [file]" fits
        self.picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.picker.setToolTip("Embedded tokenizers, tokenizers found in your local caches, and recent files")
        self.picker.activated.connect(self._on_pick)
        tl.addWidget(self.picker)
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("Open a tokenizer file (Ctrl+O); you can also drop one on the window")
        self.open_button.clicked.connect(self.open_tokenizer_dialog)
        tl.addWidget(self.open_button)
        self.tok_info = ElidedLabel()  # elides with a tooltip in a narrow window
        self.tok_info.setStyleSheet("color: gray")
        tl.addWidget(self.tok_info, 1)
        return top

    def _build_inspect_options(self, ol: QHBoxLayout) -> None:
        """The Inspect tab's option row: the view toggle and the special-token options."""
        ol.addWidget(QLabel("View"))
        self.mode_group = QButtonGroup(self)
        self.mode_group.setExclusive(True)
        self.mode_buttons: dict[ViewMode, QToolButton] = {}
        seg = QFrame()
        self.mode_segment = seg
        sl = QHBoxLayout(seg)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.setSpacing(0)
        for k, mode in enumerate(ViewMode):
            b = QToolButton()
            b.setText(mode.title)
            b.setCheckable(True)
            b.setToolTip(f"Show tokens as {mode.title.lower()} (Ctrl+{k + 1})")
            b.clicked.connect(lambda _c=False, m=mode: self.vm.set_view_mode(m))
            self.mode_group.addButton(b)
            self.mode_buttons[mode] = b
            sl.addWidget(b)
        self.mode_buttons[self.vm.view_mode].setChecked(True)
        ol.addWidget(seg)
        ol.addWidget(QLabel("Spans"))
        self.span_combo = QComboBox()
        self.span_combo.addItem("HF offsets", "hf")
        self.span_combo.addItem("Exact spans", "exact")
        self.span_combo.setToolTip(
            "Which span every pane highlights for a token: HF's offsets (what tokenizers' offsets_mapping "
            "returns), or the exact span (the original characters the token really came from; a prepended "
            "▁ covers none). The tokens themselves are drawn the same either way; the offset lint follows."
        )
        self.span_combo.activated.connect(lambda i: self.lint_vm.set_exact(self.span_combo.itemData(i) == "exact"))
        self.vm.span_mode_changed.connect(lambda m: self.span_combo.setCurrentIndex(self.span_combo.findData(m)))
        ol.addWidget(self.span_combo)
        self.special_box = QCheckBox("Add special tokens")
        self.special_box.setChecked(True)
        self.special_box.setToolTip("Let the post-processor add BOS/EOS/CLS/SEP tokens")
        self.special_box.toggled.connect(self.vm.set_add_special_tokens)
        ol.addWidget(self.special_box)
        self.special_hint = QLabel()  # why the box is off, for tokenizers that add no special tokens
        self.special_hint.setStyleSheet("color: gray")
        self.special_hint.hide()
        ol.addWidget(self.special_hint)
        self.literal_box = QCheckBox("Honour special literals")
        self.literal_box.setToolTip(
            "tiktoken-style tokenizers: treat special-token literals typed in the text (e.g. <|endoftext|>) "
            "as special tokens (allowed_special=\"all\"); off = ordinary text, as tiktoken's encode(disallowed_special=())"
        )
        self.literal_box.toggled.connect(self.vm.set_honour_special_literals)
        ol.addWidget(self.literal_box)
        ol.addStretch(1)

    def _build_tabs(self) -> None:
        """The tabs (Inspect, Compare, Vocabulary, Chat, Train, Lattice) and Inspect's side column."""
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.inspect, "Inspect")
        from .lattice_tab import LatticeTab
        from .train_tab import TrainTab

        self.train_tab = TrainTab(self.vm)
        self.lattice_tab = LatticeTab(self.vm)
        self.tabs.addTab(self.train_tab, "Train")
        self.tabs.addTab(self.lattice_tab, "Lattice")
        from .chat_tab import ChatTab

        self.chat_tab = ChatTab(self.vm)
        self.tabs.addTab(self.chat_tab, "Chat")
        from .caret_viewmodel import CaretViewModel
        from .widgets.caret_panel import CaretPanel

        # the caret panel shares the Inspect side column with the token card, as a second tab
        self.caret_panel = CaretPanel(CaretViewModel(self, inspect=self.vm))
        raw = self.inspect.raw
        raw.cursorPositionChanged.connect(lambda: self.caret_panel.vm.set_caret_utf16(raw.textCursor().position()))
        self.side_tabs = QTabWidget()
        self.side_tabs.addTab(self.inspect.split.replaceWidget(1, self.side_tabs), "Token")
        self.side_tabs.addTab(self.caret_panel, "At the caret")
        from .vocab_tab import VocabTab

        self.vocab_tab = VocabTab(self.vm)
        self.tabs.addTab(self.vocab_tab, "Vocabulary")
        self.vocab_tab.inspect_requested.connect(lambda: self.tabs.setCurrentWidget(self.inspect))
        from .compare_tab import CompareTab

        self.compare_tab = CompareTab(self.vm)
        self.tabs.addTab(self.compare_tab, "Compare")
        # the debugging tabs first, after Inspect: Compare, Vocabulary, Chat; then Train, Lattice
        for k, w in enumerate((self.compare_tab, self.vocab_tab, self.chat_tab), start=1):
            self.tabs.tabBar().moveTab(self.tabs.indexOf(w), k)

    def _build_status_bar(self) -> None:
        """The status bar: the numbers, a message of their own, a busy indicator and Cancel.

        Transient messages (what a file reader kept, menu tips) go to `status_message`, beside
        the numbers: Qt's own temporary message would cover the token count while it shows.
        """
        self.stats = StatsBar(self.vm)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(120)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop waiting for the running work; the last result stays")
        self.cancel_button.clicked.connect(self.vm.cancel)
        self.tab_status = ElidedLabel()  # the status of the tab shown, when it is not Inspect
        self.tab_status.hide()
        self.status_message = ElidedLabel()
        self.status_message.setObjectName("StatusMessage")
        self.status_message.setEnabled(False)  # drawn dimmed: a note, not the numbers
        self.status_message.hide()
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(lambda: self.show_message(""))
        sb = self.statusBar()
        sb.addWidget(self.stats, 3)
        sb.addWidget(self.tab_status, 3)
        sb.addWidget(self.status_message, 2)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)
        self._set_busy(False)
        # show the progress only when work takes a noticeable time (no flicker while typing)
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(250)
        self._busy_timer.timeout.connect(lambda: self._set_busy(self.vm.is_busy()))
        self._status_timer = QTimer(self)  # the other tabs' status lines are read while they are shown
        self._status_timer.setInterval(400)
        self._status_timer.timeout.connect(self._show_tab_status)
        self.tabs.currentChanged.connect(lambda _i: self._show_tab_status())

    def show_message(self, text: str, *, seconds: float = 0) -> None:
        """Show a transient note beside the numbers (never over them); ``seconds`` > 0 clears it then."""
        self._message_timer.stop()
        self.status_message.setText(text)
        self.status_message.setVisible(bool(text))
        if text and seconds > 0:
            self._message_timer.start(int(seconds * 1000))

    def message_text(self) -> str:
        return self.status_message.text()

    def event(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.StatusTip:  # menu and tool tips: into the message label too
            self.show_message(event.tip())
            return True
        return super().event(event)

    def _show_tab_status(self) -> None:
        """The status bar describes the tab shown: Inspect's numbers there, each tab's own line elsewhere."""
        tab = self.tabs.currentWidget()
        inspect = tab is self.inspect or not hasattr(tab, "status_text")
        self.stats.setVisible(inspect)
        self.tab_status.setVisible(not inspect)
        if inspect:
            self._status_timer.stop()
            return
        self.tab_status.setText(tab.status_text())
        if not self._status_timer.isActive():
            self._status_timer.start()

    def _build_lint(self) -> None:
        """The offset lint panel, as the fifth Inspect pane."""
        from .lint_viewmodel import LintViewModel
        from .widgets.lint_panel import LintPanel

        self.lint_vm = LintViewModel(self.vm, self)
        self.lint_panel = LintPanel(self.lint_vm)
        self.inspect.panes.addWidget(boxed("5 · Offset lint", "findings by check · select one to see its tokens", self.lint_panel, wrap=False))
        self.inspect.panes.setSizes([150, 90, 110, 170, 260])
        self.inspect.card.lint_requested.connect(self._show_lint_for)

    def _build_inputs(self) -> None:
        """The model-input controls (a row under the options) and pane 6, shown while they
        produce model inputs (a pair, a max length or padding): with the defaults the tab is as before."""
        from .inputs_viewmodel import InputsViewModel
        from .widgets.inputs_panel import InputsControls, InputsPanel

        self.inputs_vm = InputsViewModel(self.vm, self)
        self.inputs_controls = InputsControls(self.inputs_vm)
        self.inspect.layout().insertWidget(1, self.inputs_controls)
        self.inputs_panel = InputsPanel(self.inputs_vm)
        self.inputs_box = boxed("6 · Model inputs", "what the model receives: windows, type ids, padding, attention mask",
                                self.inputs_panel, wrap=False)
        self.inspect.panes.addWidget(self.inputs_box)
        self.inputs_box.hide()
        self.inputs_vm.inputs_changed.connect(lambda _i: self._show_inputs_box(self.inputs_vm.active))

    def _show_inputs_box(self, on: bool) -> None:
        """Pane 6 appears (with room: about half the panes' height) while model inputs are on."""
        if on == self.inputs_box.isVisible():
            return
        self.inputs_box.setVisible(on)
        if on:
            sizes = self.inspect.panes.sizes()
            total = sum(sizes)
            sizes = [s // 2 for s in sizes[:-1]] + [total // 2]
            self.inspect.panes.setSizes(sizes)

    def _restore_inputs(self, s: QSettings) -> None:
        """The pair and the model-input settings, as `_save_inputs` stored them (bad values: the defaults)."""
        from ..analysis.inputs import InputSettings

        pair = s.value("inputs/pair")
        if isinstance(pair, QByteArray):
            try:
                self.inputs_vm.set_pair(bytes(pair.data()).decode("utf-8"))
            except UnicodeDecodeError:
                pass
        raw = s.value("inputs/settings")
        try:
            fields = json.loads(str(raw)) if raw else {}
            settings = InputSettings(**fields) if isinstance(fields, dict) else InputSettings()
        except (TypeError, ValueError):
            settings = InputSettings()
        self.inputs_vm.set_settings(settings)

    def _save_inputs(self, s: QSettings) -> None:
        s.setValue("inputs/pair", QByteArray(self.inputs_vm.pair.encode("utf-8")))
        s.setValue("inputs/settings", json.dumps(asdict(self.inputs_vm.settings)))

    def _show_lint_for(self, index: int) -> None:
        """The card's "Why?" link: open the lint pane (if collapsed) at the token's finding."""
        sizes = self.inspect.panes.sizes()
        if sizes[-1] < 120:
            sizes[-1] = 260
            self.inspect.panes.setSizes(sizes)
        if not self.lint_panel.show_token(index):
            self.lint_panel.tree.setFocus()

    def _wire(self) -> None:
        """Connect the Inspect view-model's signals to the window."""
        self.vm.error_raised.connect(self.error_bar.show_error)
        self.lint_vm.error_raised.connect(self.error_bar.show_error)
        self.vm.busy_changed.connect(self._on_busy)
        self.vm.tokenizer_changed.connect(self._on_tokenizer)
        self.vm.pattern_needed.connect(self._on_pattern_needed)
        self.vm.tokenizer_loading.connect(lambda name: self.tok_info.setText(f"loading {name}…"))
        self.vm.tokenizer_load_failed.connect(self._on_load_failed)
        self.inspect.raw.files_dropped.connect(self.open_dropped)
        self.error_bar.dismissed.connect(self.replace_button.hide)
        self.vm.view_mode_changed.connect(self._on_mode)
        self.vm.options_changed.connect(self._sync_options)

    # ------------------------------------------------------------------ menus
    def _act(self, menu, text: str, slot, shortcut=None, *, tip: str = "") -> QAction:  # noqa: ANN001
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._act(f, "&Open tokenizer…", self.open_tokenizer_dialog, QKeySequence.StandardKey.Open)
        self._act(f, "Open tokenizer &folder…", self.open_folder_dialog, "Ctrl+Alt+O")
        self._act(f, "Rank-file &pattern…", self.edit_rank_pattern, tip="Pattern and special tokens of the open rank file")
        self._act(f, "Open &text file…", self.open_text_dialog, "Ctrl+Shift+O")
        self.recent_menu = f.addMenu("&Recent tokenizers")
        f.addSeparator()
        self._act(f, "Export tokens as &PNG…", lambda: self.export_dialog("png"), "Ctrl+Shift+P")
        self._act(f, "Export tokens as &SVG…", lambda: self.export_dialog("svg"), "Ctrl+Shift+G")
        self._act(f, "Export encoding as &JSON…", lambda: self.export_dialog("json"), "Ctrl+Shift+J")
        f.addSeparator()
        self._act(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        e = mb.addMenu("&Edit")
        self._act(e, "&Sample text", lambda: self.vm.set_text(sample_text(), from_editor=False), "Ctrl+Shift+N")
        self._act(e, "&Clear text", lambda: self.vm.set_text("", from_editor=False))
        self._act(e, "Focus &raw text", lambda: self.inspect.raw.setFocus(), "Alt+1")
        self._act(e, "Focus &tokens", lambda: self.inspect.tokens.setFocus(), "Alt+4")
        e.addSeparator()
        self._act(e, "Dask scheduler for corpus jobs…", self._ask_corpus_scheduler)
        v = mb.addMenu("&View")
        self.mode_actions: dict[ViewMode, QAction] = {}
        group = QActionGroup(self)
        for k, mode in enumerate(ViewMode):
            a = self._act(v, f"Tokens as {mode.title.lower()}", lambda _c=False, m=mode: self.vm.set_view_mode(m), f"Ctrl+{k + 1}")
            a.setCheckable(True)
            a.setChecked(mode is self.vm.view_mode)
            group.addAction(a)
            self.mode_actions[mode] = a
        v.addSeparator()
        self.special_action = self._act(v, "Add special tokens", lambda c: self.vm.set_add_special_tokens(c), "Ctrl+Shift+S")
        self.special_action.setCheckable(True)
        self.special_action.setChecked(True)
        v.addSeparator()
        self._act(v, "Zoom in", lambda: self.zoom(1), QKeySequence.StandardKey.ZoomIn)
        self._act(v, "Zoom out", lambda: self.zoom(-1), QKeySequence.StandardKey.ZoomOut)
        tm = v.addMenu("Theme")
        tgroup = QActionGroup(self)
        self.theme_actions = {}
        for key, title in (("system", "Follow system"), ("light", "Light"), ("dark", "Dark")):
            a = self._act(tm, title, lambda _c=False, k=key: self.apply_theme(k))
            a.setCheckable(True)
            tgroup.addAction(a)
            self.theme_actions[key] = a
        h = mb.addMenu("&Help")
        self._act(h, "&About tokviz", self._about)

    def _about(self) -> None:
        from .. import __version__
        from ..engine import backend

        QMessageBox.about(
            self,
            "About tokviz",
            f"<b>tokviz {__version__}</b><br>A tokenizer visualizer and debugger with an exact pure-Python engine.<br>"
            f"Engine kernels: {backend()} (the optional native core, or pure Python).<br>"
            "Embedded tokenizers are redistributed under their own licenses (see resources/NOTICE).",
        )

    # ------------------------------------------------------------------ picker
    def _populate_picker(self) -> None:
        self._entries = listing()  # one discovery, shared with Compare's catalog
        for p in self._recent():
            if not any(e.path == p for e in self._entries):
                self._entries.append(Entry(path_label(p), p, "Recent"))
        self.picker.clear()
        group = None
        for e in self._entries:
            if e.group != group:
                if group is not None:
                    self.picker.insertSeparator(self.picker.count())
                group = e.group
            self.picker.addItem(e.name if e.group == "Embedded" else f"{e.name}  [{e.group.lower()}]", str(e.path))
            self.picker.setItemData(self.picker.count() - 1, str(e.path), Qt.ItemDataRole.ToolTipRole)
        self._rebuild_recent_menu()

    def _select_in_picker(self, path: Path | str) -> None:
        data = str(path)
        i = self.picker.findData(data)
        if i < 0:
            label = data[len(_MEMORY):] + "  [in memory]" if data.startswith(_MEMORY) else f"{path_label(Path(path))}  [file]"
            self.picker.addItem(label, data)
            i = self.picker.count() - 1
            self.picker.setItemData(i, data, Qt.ItemDataRole.ToolTipRole)
        self.picker.setCurrentIndex(i)

    def _show_active_in_picker(self) -> None:
        """Point the picker at the tokenizer that is active (after a failed or cancelled load)."""
        if self.vm.tokenizer is None:
            self.picker.setCurrentIndex(-1)
            self.tok_info.setText("no tokenizer loaded")
            return
        path = self.vm.tokenizer_path
        self._select_in_picker(path if path is not None else _MEMORY + self.vm.tokenizer_name)
        self.tok_info.setText(self._active_info)

    def _on_load_failed(self, payload) -> None:  # noqa: ANN001
        """A failed file leaves no entry that looks loadable: one added just for this load goes,
        a listed one (embedded, cache, recent) is marked failed and keeps its error."""
        path, msg = payload
        data = str(path)
        i = self.picker.findData(data)
        if i >= 0 and data == self._transient:
            self.picker.removeItem(i)
        elif i >= 0:
            self._failed[data] = load_error(path, msg)
            text = self.picker.itemText(i)
            if not text.endswith(_FAILED):
                self.picker.setItemText(i, text + _FAILED)
            self.picker.setItemData(i, self._failed[data], Qt.ItemDataRole.ToolTipRole)
        self._transient = None
        self._forget_recent(Path(path))
        self._show_active_in_picker()

    def _on_pick(self, index: int) -> None:
        data = self.picker.itemData(index)
        if data in self._failed:  # no silent re-parse: say why it failed (Open… tries again)
            self.error_bar.show_error(f"{self._failed[data]} (choose it with Open… to try again)")
            self._show_active_in_picker()
        elif data and not str(data).startswith(_MEMORY):
            self._transient = None
            self.vm.load_tokenizer(Path(data), name=self.picker.itemText(index))
        elif data:
            self._show_active_in_picker()  # an in-memory tokenizer can only be the active one

    def load_default(self) -> None:
        for e in self._entries:
            if e.path.as_posix().endswith(DEFAULT_BUNDLE):
                self.load_tokenizer(e.path, name=e.name)
                return
        if self._entries:
            self.load_tokenizer(self._entries[0].path, name=self._entries[0].name)

    def load_tokenizer(self, path: Path, *, name: str | None = None) -> None:
        """Load ``path`` (an explicit choice: a file that failed before is tried again)."""
        data = str(Path(path))
        self._transient = data if self.picker.findData(data) < 0 else None
        self._unmark_failed(data)
        self._select_in_picker(Path(path))
        self.vm.load_tokenizer(path, name=name or path_label(Path(path)))

    def _unmark_failed(self, data: str) -> None:
        if self._failed.pop(data, None) is not None:
            i = self.picker.findData(data)
            if i >= 0:
                self.picker.setItemText(i, self.picker.itemText(i).removesuffix(_FAILED))
                self.picker.setItemData(i, data, Qt.ItemDataRole.ToolTipRole)

    def _on_tokenizer(self, payload) -> None:  # noqa: ANN001
        name, path, info = payload
        if not info and self.vm.tokenizer is not None:
            try:
                info = dict(self.vm.tokenizer.info())
            except Exception:  # noqa: BLE001 - info is decoration
                info = {}
        self._active_info = info_label(info)
        self.tok_info.setText(self._active_info)
        self.setWindowTitle(f"{name} — tokviz")  # ends with the display name: Qt appends nothing
        tiktoken_like = self.vm.is_tiktoken_like
        self.literal_box.setEnabled(tiktoken_like)
        self._sync_special_box(path)
        if path is None:
            self._select_in_picker(_MEMORY + name)
            return
        self._select_in_picker(Path(path))
        self.picker.setItemData(self.picker.currentIndex(), f"{path}\n{self._active_info}", Qt.ItemDataRole.ToolTipRole)
        if not any(e.path == Path(path) for e in self._entries if e.group == "Embedded"):
            self._add_recent(Path(path))

    def _sync_special_box(self, path: Path | str | None) -> None:
        """"Add special tokens" only where it changes something; elsewhere disabled, saying why."""
        adds = self.vm.adds_special_tokens
        tip = "Let the post-processor add BOS/EOS/CLS/SEP tokens"
        hint = ""
        if not adds:
            name = Path(path).name.removesuffix(".gz") if path is not None else ""
            if name.endswith(".model"):
                hint = "no BOS/EOS: a SentencePiece .model encodes as sp.encode() does"
                tip = ("This SentencePiece .model is encoded as sentencepiece's encode() does, without BOS/EOS "
                       "(its add_bos/add_eos options are not applied); tokenizer.json files of the same model "
                       "add them through their post-processor")
            elif self.vm.is_tiktoken_like:
                hint = "tiktoken adds no special tokens"
                tip = "tiktoken encodings add no BOS/EOS: special tokens appear only where the text has them"
            else:
                hint = "this tokenizer adds no special tokens"
                tip = "This tokenizer has no post-processor that adds special tokens"
        self.special_box.setEnabled(adds)
        self.special_action.setEnabled(adds)
        self.special_box.setToolTip(tip)
        self.special_hint.setText(hint)
        self.special_hint.setToolTip(tip)
        self.special_hint.setVisible(bool(hint))

    # ------------------------------------------------------------------ recent files / settings
    def _recent(self) -> list[Path]:
        if self.settings is None:
            return []
        vals = self.settings.value("recent", []) or []
        if isinstance(vals, str):
            vals = [vals]
        return [Path(v) for v in vals if v]

    def _add_recent(self, path: Path) -> None:
        if self.settings is None:
            return
        rec = [p for p in self._recent() if p != path]
        rec.insert(0, path)
        self.settings.setValue("recent", [str(p) for p in rec[:_RECENT_MAX]])
        self._rebuild_recent_menu()

    def _forget_recent(self, path: Path) -> None:
        """A file that failed to load is no recent tokenizer (the menu would offer it again)."""
        if self.settings is not None and path in self._recent():
            self.settings.setValue("recent", [str(p) for p in self._recent() if p != path])
            self._rebuild_recent_menu()

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        rec = self._recent()
        for p in rec:
            a = self.recent_menu.addAction(str(p))
            a.triggered.connect(lambda _c=False, q=p: self.load_tokenizer(q))
        self.recent_menu.setEnabled(bool(rec))

    def set_corpus_scheduler(self, address: str, *, save: bool = True) -> None:
        """The Dask scheduler address the corpus jobs of the Compare and Vocabulary tabs run on
        ("" : the local processes, or $TOKVIZ_DASK_SCHEDULER); kept in the settings."""
        address = address.strip()
        self.compare_tab.vm.scheduler = self.vocab_tab.vm.scheduler = address or None
        if save and self.settings is not None:
            self.settings.setValue("corpus/scheduler", address)

    def _ask_corpus_scheduler(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        current = self.compare_tab.vm.scheduler or ""
        text, ok = QInputDialog.getText(self, "Corpus jobs", "Dask scheduler address (tcp://host:8786 or local:N; "
                                        "empty: the local processes):", text=current)
        if ok:
            self.set_corpus_scheduler(text)

    def restore_settings(self) -> bool:
        """Restore geometry, options, last tokenizer and text; True when a tokenizer was restored."""
        s = self.settings
        if s is None:
            return False
        budget = s.value("tokenizers/budget_mb")  # memory for loaded tokenizers (tokviz.io.registry)
        if budget is not None:
            try:
                from ..io.registry import shared_registry

                shared_registry().set_budget(mb=float(budget))
            except (TypeError, ValueError):
                self.error_bar.show_error(f"settings: tokenizers/budget_mb = {budget!r} is not a number of MB; kept the default")
        geo = s.value("geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        st = s.value("windowState")
        if isinstance(st, QByteArray):
            self.restoreState(st)
        for key, splitter in (("panes", self.inspect.panes), ("split", self.inspect.split)):
            v = s.value(key)
            if isinstance(v, QByteArray):
                splitter.restoreState(v)
        self.set_corpus_scheduler(str(s.value("corpus/scheduler", "") or ""), save=False)
        mode = s.value("viewMode")
        if mode in {m.value for m in ViewMode}:
            self.vm.set_view_mode(mode)
        self.special_box.setChecked(str(s.value("addSpecial", "true")).lower() == "true")
        self._restore_inputs(s)
        theme = s.value("theme", "system")
        self.apply_theme(theme if theme in ("system", "light", "dark") else "system")
        text = s.value("text")
        if isinstance(text, QByteArray):  # saved as UTF-8 bytes, exactly (see save_settings)
            try:
                text = bytes(text.data()).decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if isinstance(text, str):
            self.vm.set_text(text, from_editor=False)
        last = s.value("tokenizer")
        if isinstance(last, str) and last and Path(last).is_file():
            self.load_tokenizer(Path(last))
            return True
        return False

    def save_settings(self) -> None:
        s = self.settings
        if s is None:
            return
        s.setValue("geometry", self.saveGeometry())
        s.setValue("windowState", self.saveState())
        s.setValue("panes", self.inspect.panes.saveState())
        s.setValue("split", self.inspect.split.saveState())
        s.setValue("viewMode", self.vm.view_mode.value)
        s.setValue("addSpecial", "true" if self.vm.add_special_tokens else "false")
        s.setValue("theme", self._theme_choice)
        self._save_inputs(s)
        if len(self.vm.text) <= _MAX_SAVED_TEXT:
            # bytes, not a str: PySide drops a leading U+FEFF of a str handed to Qt
            s.setValue("text", QByteArray(self.vm.text.encode("utf-8")))
        if self.vm.tokenizer_path is not None:
            s.setValue("tokenizer", str(self.vm.tokenizer_path))
        s.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.save_settings()
        self.vm.cancel()
        super().closeEvent(event)

    # ------------------------------------------------------------------ options
    def _on_mode(self, mode: ViewMode) -> None:
        self.mode_buttons[mode].setChecked(True)
        self.mode_actions[mode].setChecked(True)

    def _sync_options(self) -> None:
        self.special_box.blockSignals(True)
        self.special_box.setChecked(self.vm.add_special_tokens)
        self.special_box.blockSignals(False)
        self.special_action.setChecked(self.vm.add_special_tokens)
        self.literal_box.blockSignals(True)
        self.literal_box.setChecked(self.vm.honour_special_literals)
        self.literal_box.blockSignals(False)

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def zoom(self, step: int) -> None:
        panel = self.inputs_panel
        for w in (self.inspect.raw, self.inspect.normalized, self.inspect.chunks, self.inspect.tokens, *panel.texts, panel.table):
            f = w.font()
            f.setPointSizeF(max(6.0, min(f.pointSizeF() + step, 40.0)))
            w.setFont(f)

    def apply_theme(self, choice: str) -> None:
        self._theme_choice = choice
        dark = system_is_dark() if choice == "system" else choice == "dark"
        if choice != "system":
            apply_palette(dark)
        theme = theme_for(dark)
        self.theme = theme
        self.inspect.set_theme(theme)
        self.train_tab.set_theme(theme)
        self.lattice_tab.set_theme(theme)
        self.chat_tab.set_theme(theme)
        self.caret_panel.set_theme(theme)
        self.vocab_tab.set_theme(theme)
        self.compare_tab.set_theme(theme)
        self.inputs_panel.set_theme(theme)
        self.error_bar.set_colors(theme.error_bg.name(), theme.text.name())
        sel = theme.selection.name()
        self.mode_segment.setStyleSheet(
            f"QToolButton {{ padding: 2px 9px; }}"
            f"QToolButton:checked {{ background: {sel}; color: white; border: 1px solid {sel}; border-radius: 3px; }}"
        )
        if choice in self.theme_actions:
            self.theme_actions[choice].setChecked(True)

    # ------------------------------------------------------------------ files
    def open_tokenizer_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open tokenizer",
            "",
            "Tokenizer files (*.json *.tiktoken *.model *.gguf *.txt *.gz *.bpe *.js *.cjs);;All files (*)",
        )
        if path:
            self.load_tokenizer(Path(path), name=Path(path).name)

    def open_folder_dialog(self) -> None:
        """A folder holding tokenizer.json, tokenizer.model, vocab.json + merges.txt or a .gguf."""
        path = QFileDialog.getExistingDirectory(self, "Open tokenizer folder")
        if path:
            self.load_tokenizer(Path(path), name=Path(path).name)

    def _on_pattern_needed(self, payload, *, ask: bool = False) -> None:  # noqa: ANN001
        from .pattern_dialog import ask_rank_pattern

        path, name = payload
        choice = ask_rank_pattern(self, Path(path), self.settings, ask=ask)
        if choice is not None:
            self.vm.load_tokenizer(path, name=name, pattern=choice.pattern, special_tokens=dict(choice.special_tokens))

    def edit_rank_pattern(self) -> None:
        extra = getattr(getattr(self.vm.tokenizer, "config", None), "extra", None) or {}
        if self.vm.tokenizer_path is None or extra.get("format") != "tiktoken" or "published_as" in extra:
            self.error_bar.show_error("The open tokenizer is not a rank file that needs a pattern.")
            return
        self._on_pattern_needed((self.vm.tokenizer_path, self.vm.tokenizer_name), ask=True)

    def open_text_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open text", "", "Text files (*.txt *.md *.py *.json);;All files (*)")
        if path:
            self.open_text(Path(path))

    def open_text(self, path: Path, *, replace_invalid: bool = False) -> bool:
        """Open a text file into the Inspect text, byte-exact (`tokviz.io.textfile`).

        Invalid UTF-8 shows the error (file and byte offset) with a "Decode with U+FFFD" button;
        the status bar says what the reader kept (BOM, CRLF, lone CR) or replaced.
        """
        from ..io.textfile import read_text_file

        try:
            tf = read_text_file(path, errors="replace" if replace_invalid else "strict")
        except ValueError as exc:  # TokvizFormatError names the file and the byte offset
            self.error_bar.show_error(f"Could not open the text: {exc}")
            self._undecodable = Path(path) if "UTF-8" in str(exc) else None
            self.replace_button.setVisible(self._undecodable is not None)
            return False
        self.replace_button.hide()
        self.vm.set_text(tf.text, from_editor=False)
        self.show_message(text_file_summary(tf), seconds=15)
        return True

    def _open_replacing(self) -> None:
        if self._undecodable is not None and self.open_text(self._undecodable, replace_invalid=True):
            self.error_bar.dismiss()

    def open_dropped(self, paths: list[Path]) -> None:
        """Files dropped on the window or the text pane: a text file opens as text, else as a tokenizer."""
        for p in paths:
            p = Path(p)
            if p.suffix.lower() in _TEXT_SUFFIXES and p.name != "vocab.txt":
                self.open_text(p)
            else:
                self.load_tokenizer(p)
            return

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        files = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            self.open_dropped(files)
            event.acceptProposedAction()

    # ------------------------------------------------------------------ export
    def export_dialog(self, kind: str) -> None:
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "json": "JSON (*.json)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"tokens.{kind}", filters[kind])
        if not path:
            return
        try:
            if kind == "png":
                self.export_png(Path(path))
            elif kind == "svg":
                self.export_svg(Path(path))
            else:
                self.vm.export_json(Path(path))
        except (OSError, ValueError) as exc:
            self.error_bar.show_error(f"Export failed: {exc}")

    def _export_size(self, max_rows: int = 4000) -> tuple[int, int]:
        view = self.inspect.tokens
        width = max(view.viewport().width(), 200)
        height = int(min(view.content_height(), max_rows * view._row_h + 8))
        return width, max(height, 40)

    def _paint_tokens(self, painter: QPainter, width: int, height: int) -> None:
        view = self.inspect.tokens
        painter.fillRect(QRectF(0, 0, width, height), view.theme.base)
        view.paint_rows(painter, 0, height, 0)

    def export_png(self, path: Path) -> None:
        if self.vm.encoding is None:
            raise ValueError("nothing to export yet: no encoding")
        w, h = self._export_size()
        dpr = 2.0
        img = QImage(int(w * dpr), int(h * dpr), QImage.Format.Format_ARGB32)
        img.setDevicePixelRatio(dpr)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self._paint_tokens(p, w, h)
        p.end()
        if not img.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")

    def export_svg(self, path: Path) -> None:
        from PySide6.QtSvg import QSvgGenerator

        if self.vm.encoding is None:
            raise ValueError("nothing to export yet: no encoding")
        w, h = self._export_size()
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(QSize(w, h))
        gen.setViewBox(QRectF(0, 0, w, h))
        gen.setTitle("tokviz tokens")
        gen.setDescription(f"{self.vm.tokenizer_name}: {counted(len(self.vm.encoding.ids), 'token')}")
        p = QPainter(gen)
        self._paint_tokens(p, w, h)
        p.end()


def text_file_summary(tf) -> str:  # noqa: ANN001 - a tokviz.io.textfile.TextFile
    """The status-bar line for an opened text file: what was kept exactly, what was replaced."""
    parts = [f"{Path(tf.path).name}: {counted(len(tf.text), 'character')}, {counted(tf.size_bytes, 'byte')}, read exactly"]
    if tf.bom:
        parts.append("BOM kept as U+FEFF")
    if tf.crlf:
        parts.append(f"{tf.crlf:,} CRLF line ends kept")
    if tf.lone_cr:
        parts.append(f"{tf.lone_cr:,} lone CR kept")
    if tf.replaced:
        parts.append(f"{tf.replaced:,} invalid UTF-8 sequences replaced by U+FFFD")
    return " · ".join(parts)


def default_settings() -> QSettings:
    return QSettings("tokviz", "tokviz")


