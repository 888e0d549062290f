"""The Inspect tab's model inputs: the controls (pair, max length, stride, truncation, padding) and
the pane that shows what a model receives.

The pane draws the windows over each sequence's text (`WindowText`: every window's span tinted,
the characters a window shares with the one before hatched, the chosen window underlined), lists
the windows (`windows`: span, overlap, padding and lint per window) and shows the chosen window's
tokens in a table (`WindowModel`: id, ``type_ids``, ``sequence_ids``, ``attention_mask``,
offsets, lint) with the token column in the token's id color, the sequence column in the
sequence's color (`tokviz.gui.theme.sequence_color`) and padding greyed. Everything comes from
the `InputsViewModel`; positions cross to Qt's UTF-16 units through the editor's offset map.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QSpinBox,
    QSplitter,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ...analysis.inputs import PADDINGS, ModelInputs, WindowView, distinct_spans
from ...engine.model_inputs import STRATEGIES
from ..display import color_index, counted, neighbour_variant, show_piece
from ..inputs_viewmodel import InputsViewModel
from ..theme import Theme, mono_font, sequence_color, theme_for
from .exact_edit import ExactLineEdit, ExactTextEdit
from .form import boxed

__all__ = ["InputsControls", "InputsPanel", "WindowModel", "WindowText", "COLUMNS"]

COLUMNS = ("#", "token", "id", "type_ids", "sequence_ids", "attention_mask", "offsets", "lint")
_PADDING_TITLES = {"off": "off", "longest": "longest", "max_length": "max length", "multiple": "multiple of K"}
_Index = QModelIndex | QPersistentModelIndex


def _combo(items: list[tuple[str, str]], tip: str) -> QComboBox:
    box = QComboBox()
    for title, data in items:
        box.addItem(title, data)
    box.setToolTip(tip)
    return box


def _spin(low: int, high: int, tip: str, *, off: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setToolTip(tip)
    if off:
        spin.setSpecialValueText(off)  # the minimum reads "off"
    return spin


class InputsControls(QWidget):
    """The row of model-input controls; each change goes to the view-model at once."""

    def __init__(self, vm: InputsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 0, 0, 0)
        self._build_pair(lay)
        self._build_truncation(lay)
        self._build_padding(lay)
        vm.settings_changed.connect(self.sync)
        self.sync()

    def _build_pair(self, lay: QHBoxLayout) -> None:
        lay.addWidget(QLabel("Pair"))
        self.pair_edit = ExactLineEdit(self.vm.pair)
        self.pair_edit.setFont(mono_font())
        self.pair_edit.setPlaceholderText("second sequence (a question's context) · empty: none")
        self.pair_edit.setToolTip("A second sequence, encoded after the text as HF's encode(text, pair) does (type id 1)")
        self.pair_edit.edited.connect(lambda *_e: self.vm.set_pair(self.pair_edit.text()))
        lay.addWidget(self.pair_edit, 1)

    def _build_truncation(self, lay: QHBoxLayout) -> None:
        lay.addWidget(QLabel("Max length"))
        self.max_spin = _spin(0, 1_000_000, "Truncate to this many tokens, special tokens included (off: as the file sets it)",
                              off="off")
        self.max_spin.valueChanged.connect(lambda v: self.vm.update_settings(max_length=v or None))
        lay.addWidget(self.max_spin)
        lay.addWidget(QLabel("Stride"))
        self.stride_spin = _spin(0, 1_000_000, "Tokens each overflowing window shares with the one before")
        self.stride_spin.valueChanged.connect(lambda v: self.vm.update_settings(stride=v))
        lay.addWidget(self.stride_spin)
        self.strategy_combo = _combo([(s, s) for s in STRATEGIES], "Which sequence truncation cuts (HF's strategies)")
        self.strategy_combo.currentIndexChanged.connect(
            lambda i: self.vm.update_settings(strategy=self.strategy_combo.itemData(i)))
        lay.addWidget(self.strategy_combo)
        self.truncation_side = _combo([("cut right", "right"), ("cut left", "left")], "Cut the end (right) or the start (left)")
        self.truncation_side.currentIndexChanged.connect(
            lambda i: self.vm.update_settings(truncation_side=self.truncation_side.itemData(i)))
        lay.addWidget(self.truncation_side)

    def _build_padding(self, lay: QHBoxLayout) -> None:
        lay.addWidget(QLabel("Padding"))
        self.padding_combo = _combo([(_PADDING_TITLES[p], p) for p in PADDINGS],
                                    "Pad each window: to its own length (longest), to the max length, or up to a multiple of K")
        self.padding_combo.currentIndexChanged.connect(lambda i: self.vm.update_settings(padding=self.padding_combo.itemData(i)))
        lay.addWidget(self.padding_combo)
        self.multiple_spin = _spin(1, 4096, "K of \"multiple of K\"")
        self.multiple_spin.setPrefix("K ")
        self.multiple_spin.valueChanged.connect(lambda v: self.vm.update_settings(multiple=v))
        lay.addWidget(self.multiple_spin)
        self.padding_side = _combo([("pad right", "right"), ("pad left", "left")], "Where the padding goes")
        self.padding_side.currentIndexChanged.connect(
            lambda i: self.vm.update_settings(padding_side=self.padding_side.itemData(i)))
        lay.addWidget(self.padding_side)

    def sync(self) -> None:
        """Show the view-model's settings (restored settings, or a change elsewhere)."""
        s = self.vm.settings
        values = ((self.max_spin, s.max_length or 0), (self.stride_spin, s.stride), (self.multiple_spin, s.multiple))
        for spin, value in values:
            if spin.value() != value:
                spin.blockSignals(True)
                spin.setValue(value)
                spin.blockSignals(False)
        for combo, data in ((self.strategy_combo, s.strategy), (self.truncation_side, s.truncation_side),
                            (self.padding_combo, s.padding), (self.padding_side, s.padding_side)):
            combo.blockSignals(True)
            combo.setCurrentIndex(combo.findData(data))
            combo.blockSignals(False)
        truncating = s.max_length is not None
        for w in (self.stride_spin, self.strategy_combo, self.truncation_side):
            w.setEnabled(truncating)
        self.multiple_spin.setEnabled(s.padding == "multiple")
        self.padding_side.setEnabled(s.padding != "off")
        if self.pair_edit.text() != self.vm.pair:
            self.pair_edit.show_text(self.vm.pair)


class WindowText(ExactTextEdit):
    """One sequence's text (read-only) with the windows drawn over it."""

    def __init__(self, sequence: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sequence = sequence
        self.setReadOnly(True)
        self.setFont(mono_font())
        self.theme: Theme = theme_for(False)
        self.spans: list[tuple[int, int]] = []  # the distinct window spans drawn, in order
        self.overlaps: list[tuple[int, int]] = []  # characters two consecutive spans share
        self.chosen: tuple[int, int] | None = None  # the chosen window's span
        self.token: tuple[int, int] | None = None  # the span of the token chosen in the table

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme

    def show_windows(self, inputs: ModelInputs, chosen: int) -> None:
        self.show_text(inputs.texts[self.sequence])
        self.spans = distinct_spans(inputs.windows, self.sequence)
        self.overlaps = [(max(a[0], b[0]), min(a[1], b[1])) for a, b in zip(self.spans, self.spans[1:])
                         if min(a[1], b[1]) > max(a[0], b[0])]
        part = inputs.windows[chosen].part(self.sequence) if chosen < len(inputs.windows) else None
        self.chosen = part.span if part is not None and part.count else None
        self.token = None
        self._decorate()

    def show_token(self, span: tuple[int, int] | None) -> None:
        self.token = span
        self._decorate()

    def _fmt(self, color: QColor, style: Qt.BrushStyle = Qt.BrushStyle.SolidPattern) -> QTextCharFormat:
        fmt = QTextCharFormat()
        fmt.setBackground(QBrush(color, style))
        return fmt

    def _decorate(self) -> None:
        base = sequence_color(self.theme, self.sequence)
        tints = (base, base.lighter(140) if self.theme.dark else base.darker(125))
        sels = [self._sel(*s, self._fmt(tints[k & 1])) for k, s in enumerate(self.spans)]
        hatch = self.theme.text if not self.theme.dark else self.theme.muted
        sels += [self._sel(*o, self._fmt(hatch, Qt.BrushStyle.BDiagPattern)) for o in self.overlaps]
        if self.chosen is not None:
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            fmt.setUnderlineColor(self.theme.selection)
            fmt.setFontUnderline(True)
            sels.append(self._sel(*self.chosen, fmt))
        if self.token is not None:
            sels.append(self._sel(*self.token, self._fmt(self.theme.hover)))
        self.setExtraSelections(sels)

    def _sel(self, start: int, end: int, fmt: QTextCharFormat) -> QTextEdit.ExtraSelection:
        a, b = self.offset_map().span_to_utf16(start, end)
        s = QTextEdit.ExtraSelection()
        cur = self.textCursor()
        cur.setPosition(a)
        cur.setPosition(b, cur.MoveMode.KeepAnchor)
        s.cursor = cur
        s.format = fmt
        return s


class WindowModel(QAbstractTableModel):
    """The tokens of one window as table rows (`COLUMNS`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window: WindowView | None = None
        self.theme: Theme = theme_for(False)
        self._lint: dict[int, list[str]] = {}

    def set_window(self, window: WindowView | None) -> None:
        self.beginResetModel()
        self.window = window
        self._lint = {}
        for wf in window.findings if window is not None else ():
            for i in wf.tokens:
                self._lint.setdefault(i, []).append(wf.finding.check + (" cut by the window edge" if wf.cut else ""))
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt override
        return 0 if parent.isValid() or self.window is None else len(self.window.encoding)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def cell(self, row: int, column: int) -> str:
        """The text of one cell (what the table shows)."""
        assert self.window is not None
        enc = self.window.encoding
        seq = enc.sequence_ids[row]
        s, e = enc.offsets[row]
        values = (str(row), show_piece(enc.tokens[row]), str(enc.ids[row]), str(enc.type_ids[row]),
                  "—" if seq is None else str(seq), str(enc.attention_mask[row]), f"{s}–{e}",
                  ", ".join(self._lint.get(row, ())))
        return values[column]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.window is None:
            return None
        row, col = index.row(), index.column()
        enc = self.window.encoding
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(row, col)
        padding = enc.attention_mask[row] == 0
        if role == Qt.ItemDataRole.ForegroundRole:
            return self.theme.muted if padding else None
        if role == Qt.ItemDataRole.BackgroundRole:
            if padding:
                return self.theme.chunk_bg[1]
            if col == 1:
                return self.theme.token_color(color_index(enc.ids[row]), neighbour_variant(enc.ids, row))
            if col in (3, 4):
                return sequence_color(self.theme, enc.sequence_ids[row])
            if col == 7 and row in self._lint:
                return self.theme.error_bg
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(row)
        return None

    def _tip(self, row: int) -> str:
        assert self.window is not None
        enc = self.window.encoding
        if enc.attention_mask[row] == 0:
            return "padding: attention mask 0, the model ignores it"
        seq = enc.sequence_ids[row]
        if seq is None:
            return "added by the post-processor (sequence id None)"
        reasons = [wf.finding.reason for wf in self.window.findings if row in wf.tokens]
        return "\n".join([f"sequence {seq}, chars {enc.offsets[row][0]}–{enc.offsets[row][1]} of its text", *reasons])


def window_summary(w: WindowView) -> str:
    """The list's line for a window: tokens, each sequence's span and overlap, padding, lint."""
    head = [f"W{w.index + 1} · {counted(len(w.encoding), 'token')}"]
    if w.pads:
        head.append(f"{counted(w.pads, 'pad')} (mask 0)")
    cut = sum(1 for f in w.findings if f.cut)
    if w.findings:
        head.append(f"lint {len(w.findings)}" + (f", {cut} cut by the edge" if cut else ""))
    lines = [" · ".join(head)]
    for p in w.parts:
        name = "text" if p.sequence == 0 else "pair"
        line = f"  {name} chars {p.span[0]}–{p.span[1]}"
        if p.overlap is not None:
            line += f" · overlap {p.overlap[0]}–{p.overlap[1]} ({counted(p.shared_tokens, 'token')})"
        lines.append(line)
    return "\n".join(lines)


class InputsPanel(QWidget):
    """The model-input pane: windows over the texts, the window list, the chosen window's tokens."""

    def __init__(self, vm: InputsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.theme: Theme = theme_for(False)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.texts = [WindowText(0), WindowText(1)]
        self.windows = QListWidget()
        self.windows.currentRowChanged.connect(lambda r: r >= 0 and self.vm.select_window(r))
        self.model = WindowModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)  # lint: the tooltip has it all
        self.table.setFont(mono_font())
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self.vm.select_token(cur.row()))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.message)
        lay.addWidget(self._build_body(), 1)
        vm.inputs_changed.connect(self._on_inputs)
        vm.window_selected.connect(self._on_window)
        vm.token_selected.connect(self._on_token)

    def _build_body(self) -> QSplitter:
        texts = QSplitter(Qt.Orientation.Horizontal)
        self.text_boxes = [boxed(title, hint, t, wrap=False) for title, hint, t in (
            ("Text", "windows tinted · overlap hatched · chosen window underlined", self.texts[0]),
            ("Pair", "", self.texts[1]))]
        for box in self.text_boxes:
            texts.addWidget(box)
        rows = QSplitter(Qt.Orientation.Horizontal)
        rows.addWidget(boxed("Windows", "the encoding, then its overflowing", self.windows, wrap=False))
        rows.addWidget(boxed("Tokens of the window", "pads greyed · sequence colored", self.table, wrap=False))
        rows.setSizes([320, 640])
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(texts)
        body.addWidget(rows)
        body.setSizes([120, 200])
        return body

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.model.theme = theme
        for t in self.texts:
            t.set_theme(theme)
        self._on_inputs(self.vm.inputs)

    def _on_inputs(self, inputs: ModelInputs | None) -> None:
        self.message.setText(self._message(inputs))
        color = self.theme.literal.name() if self.vm.error else self.theme.muted.name()
        self.message.setStyleSheet(f"color: {color}")
        self.windows.blockSignals(True)
        self.windows.clear()
        if inputs is not None:
            self.windows.addItems([window_summary(w) for w in inputs.windows])
        self.windows.blockSignals(False)
        self.text_boxes[1].setVisible(inputs is not None and len(inputs.texts) > 1)
        self._on_window(self.vm.selected)

    def _message(self, inputs: ModelInputs | None) -> str:
        if self.vm.error:
            return self.vm.error
        if inputs is None:
            return "computing…" if self.vm.active else ""
        n = len(inputs.windows)
        line = f"{counted(n, 'row')}: the encoding" + (f" and {counted(n - 1, 'overflowing window')}" if n > 1 else "")
        unlinted = [name for name, ok in zip(("text", "pair"), inputs.linted) if not ok]
        if unlinted:
            line += f" · lint skipped for the {' and '.join(unlinted)} (too long)"
        return line

    def _on_token(self, chosen: tuple[int, tuple[int, int]] | None) -> None:
        for t in self.texts:
            t.show_token(chosen[1] if chosen is not None and chosen[0] == t.sequence else None)

    def _on_window(self, index: int) -> None:
        inputs = self.vm.inputs
        if inputs is None or not inputs.windows:
            self.model.set_window(None)
            return
        index = min(index, len(inputs.windows) - 1)
        if self.windows.currentRow() != index:
            self.windows.blockSignals(True)
            self.windows.setCurrentRow(index)
            self.windows.blockSignals(False)
        self.model.set_window(inputs.windows[index])
        for t in self.texts[: len(inputs.texts)]:
            t.show_windows(inputs, index)
