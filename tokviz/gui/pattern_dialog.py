"""The dialog that asks for the pre-tokenizer pattern and special tokens of a rank file.

Shown when a tiktoken rank file matches none of the published encodings (Qwen's
``qwen.tiktoken``, a fine-tune's own ranks ...): a preset list (GPT-2/r50k, cl100k, o200k,
Llama 3, Llama 4, Qwen, Whisper) or a custom regex, and a table of special tokens (text, id).
The choice is validated by `pattern_choice.check_choice` and kept per file in the settings;
`ask_rank_pattern` is what the main window calls.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..io.tiktoken_ranks import ENDOFTEXT, pattern_preset, preset_special_tokens
from .display import visible_runs
from .pattern_choice import (
    CUSTOM,
    PRESET_ITEMS,
    RankFileFacts,
    RankPatternChoice,
    SettingsLike,
    check_choice,
    rank_file_facts,
    remember_choice,
    remembered_choice,
    split_preview,
)
from .widgets.exact_edit import ExactTextEdit

__all__ = ["PatternDialog", "ask_rank_pattern", "chunks_html"]

#: the test text the dialog starts with: contractions, numbers, spaces, punctuation, CJK, emoji
_TEST_TEXT = "Don't split 12345 numbers,  or   spaces!\r\n中文 and 🙂"


def chunks_html(text: str, spans: list[tuple[int, int]]) -> str:
    """Rich text of the chunks of ``text``: alternating tints, invisible characters as marks, the
    text between chunks (dropped, as tiktoken drops it) struck through in red.

    >>> chunks_html("a b", [(0, 1)])[:40]
    "<span style='background:#dbeafe'>a</span"
    """
    out: list[str] = []
    at = 0
    for k, (a, b) in enumerate(spans):
        if a > at:
            out.append(f"<s style='color:#b3261e'>{_shown(text[at:a])}</s>")
        out.append(f"<span style='background:{_TINTS[k % 2]}'>{_shown(text[a:b])}</span>")
        at = b
    if at < len(text):
        out.append(f"<s style='color:#b3261e'>{_shown(text[at:])}</s>")
    n = len(spans)
    dropped = len(text) - sum(b - a for a, b in spans)
    note = f"{n:,} chunk{'s' if n != 1 else ''}" + (
        f" · {dropped:,} character{'s' if dropped != 1 else ''} between matches, dropped" if dropped else "")
    return "".join(out) + f"<br><span style='color:gray'>{note}</span>"


_TINTS = ("#dbeafe", "#fde68a")


def _shown(piece: str) -> str:
    return html.escape("".join(t for t, _ in visible_runs(piece)))


class PatternDialog(QDialog):
    """Pattern preset or custom regex, plus a special-token table, for one rank file."""

    def __init__(
        self,
        path: Path,
        *,
        facts: RankFileFacts | None = None,
        initial: RankPatternChoice | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rank file needs a pattern")
        self.path = Path(path)
        self.facts = facts
        self.choice: RankPatternChoice | None = None
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        about = QLabel(
            f"<b>{self.path.name}</b> is a tiktoken rank file that is not a published encoding, so it does "
            "not say how to split text before BPE. Pick the pattern its model was trained with, and its "
            "special tokens. The choice is remembered for this file."
            + (f"<br>{facts.entries:,} ranks (0 – {facts.max_rank:,}); special ids start after "
               f"{facts.max_rank:,}." if facts is not None else "")
        )
        about.setWordWrap(True)
        about.setTextFormat(Qt.TextFormat.RichText)

        form = QFormLayout()
        form.addRow("&Preset", self._build_pattern(mono))
        form.addRow("Pa&ttern", self.pattern_edit)
        form.addRow("Te&st text", self._build_test(mono))
        form.addRow("", self.preview)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b3261e")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Open")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(about)
        lay.addLayout(form)
        lay.addWidget(QLabel("Special tokens (matched in text only where the tokenizer allows them)"))
        lay.addWidget(self._build_table(mono), 1)
        lay.addLayout(self._build_table_buttons())
        lay.addWidget(self.problem)
        lay.addWidget(self.buttons)
        self.resize(680, 560)

        self._auto_rows: list[tuple[str, str]] = []  # the rows a preset filled in
        self.preset_box.currentIndexChanged.connect(self._on_preset)
        self.pattern_edit.edited.connect(lambda *_e: self._on_pattern_edited())
        self.table.itemChanged.connect(lambda _item: self._validate())
        self._set_initial(initial)

    # ------------------------------------------------------------------ building
    def _build_pattern(self, mono: QFont) -> QComboBox:
        """The preset choice and the pattern editor (exact: a pattern may hold NBSP or CR)."""
        self.preset_box = QComboBox()
        for name, title in PRESET_ITEMS:
            self.preset_box.addItem(title, name)
        self.pattern_edit = ExactTextEdit()
        self.pattern_edit.setFont(mono)
        self.pattern_edit.setPlaceholderText(r"a regex, e.g. 's|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+")
        self.pattern_edit.setFixedHeight(self.pattern_edit.fontMetrics().lineSpacing() * 4 + 12)
        self.pattern_edit.setAccessibleName("Pre-tokenizer pattern")
        return self.preset_box

    def _build_test(self, mono: QFont) -> ExactTextEdit:
        """A text to try the pattern on, and the chunks it makes (what the model will see)."""
        self.test_edit = ExactTextEdit()
        self.test_edit.setFont(mono)
        self.test_edit.setFixedHeight(self.test_edit.fontMetrics().lineSpacing() * 2 + 12)
        self.test_edit.setAccessibleName("Test text")
        self.test_edit.setToolTip("Any text: the pattern's chunks are shown below (the model never merges across them)")
        self.test_edit.inserts_dropped_files = True
        self.test_edit.show_text(_TEST_TEXT)
        self.test_edit.edited.connect(lambda *_e: self._show_preview())
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        self.preview.setFont(mono)
        self.preview.setAccessibleName("Chunks of the test text")
        return self.test_edit

    def _build_table(self, mono: QFont) -> QTableWidget:
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["special token", "id"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setFont(mono)
        self.table.setAccessibleName("Special tokens")
        return self.table

    def _build_table_buttons(self) -> QHBoxLayout:
        add = QPushButton("&Add token")
        add_eot = QPushButton(f"Add {ENDOFTEXT}")
        remove = QPushButton("&Remove")
        add.clicked.connect(lambda: self._add_row("", self._next_id()))
        add_eot.clicked.connect(lambda: self._add_row(ENDOFTEXT, self._next_id()))
        remove.clicked.connect(self._remove_rows)
        buttons_row = QHBoxLayout()
        for b in (add, add_eot, remove):
            buttons_row.addWidget(b)
        buttons_row.addStretch(1)
        return buttons_row

    def _show_preview(self) -> None:
        text = self.test_edit.exact_text()
        spans = split_preview(self.pattern_edit.exact_text(), text) if self.pattern_edit.exact_text().strip() else None
        if spans is None:
            self.preview.setText("<span style='color:gray'>no chunks: the pattern is empty or does not compile</span>")
            return
        self.preview.setText(chunks_html(text, spans))

    # ------------------------------------------------------------------ state
    def _set_initial(self, initial: RankPatternChoice | None) -> None:
        if initial is None:
            # what the file's content says it is (Qwen's 151,643 ranks ...), else cl100k
            guess = self.facts.guess if self.facts is not None else None
            i = self.preset_box.findData(guess.pattern_preset) if guess is not None else -1
            self.preset_box.setCurrentIndex(i if i >= 0 else self.preset_box.findData("cl100k"))
            self._on_preset()
            return
        i = self.preset_box.findData(initial.preset)
        self.preset_box.blockSignals(True)
        self.preset_box.setCurrentIndex(i if i >= 0 else self.preset_box.findData(CUSTOM))
        self.preset_box.blockSignals(False)
        self.pattern_edit.show_text(initial.pattern)
        for literal, id_ in sorted(initial.special_tokens.items(), key=lambda kv: kv[1]):
            self._add_row(literal, id_)
        self._validate()

    def _on_preset(self) -> None:
        name = self.preset_box.currentData()
        preset = pattern_preset(name) if name != CUSTOM else None
        if preset is not None:
            self.pattern_edit.show_text(preset.pattern)
            self._fill_preset_specials(preset.name)
        self._validate()

    def _fill_preset_specials(self, name: str) -> None:
        """A family preset (Qwen, Llama 3/4, Whisper) brings its special tokens after the file's
        ranks; they replace the table when it is empty or holds an earlier preset's."""
        if self.facts is None or self._rows() and self._rows() != self._auto_rows:
            return
        specials = preset_special_tokens(name, self.facts.next_free_id)
        if not specials and not self._auto_rows:
            return
        self.table.setRowCount(0)
        for literal, id_ in sorted(specials.items(), key=lambda kv: kv[1]):
            self._add_row(literal, id_, validate=False)  # validated once, by _on_preset
        self._auto_rows = self._rows()

    def _on_pattern_edited(self) -> None:
        # editing the text of a preset makes it a custom pattern (and picking it back restores it)
        text = self.pattern_edit.exact_text()
        name = self.preset_box.currentData()
        preset = pattern_preset(name) if name != CUSTOM else None
        if preset is not None and text != preset.pattern:
            self.preset_box.blockSignals(True)
            self.preset_box.setCurrentIndex(self.preset_box.findData(CUSTOM))
            self.preset_box.blockSignals(False)
        self._validate()

    def _next_id(self) -> int:
        used = [int(t) for _, t in self._rows() if t.strip().lstrip("-").isdigit()]
        base = self.facts.next_free_id if self.facts is not None else 0
        return max([base - 1, *used]) + 1

    def _add_row(self, literal: str, id_: int, *, validate: bool = True) -> None:
        r = self.table.rowCount()
        self.table.blockSignals(True)
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(literal))
        item = QTableWidgetItem(str(id_))
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.table.setItem(r, 1, item)
        self.table.blockSignals(False)
        if not literal:
            self.table.editItem(self.table.item(r, 0))
        if validate:
            self._validate()

    def _remove_rows(self) -> None:
        for r in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(r)
        self._validate()

    def _rows(self) -> list[tuple[str, str]]:
        out = []
        for r in range(self.table.rowCount()):
            a, b = self.table.item(r, 0), self.table.item(r, 1)
            out.append((a.text() if a else "", b.text() if b else ""))
        return out

    def _validate(self) -> RankPatternChoice | None:
        choice, problem = check_choice(self.pattern_edit.exact_text(), self._rows(), self.facts)
        self.problem.setText(problem)
        self._show_preview()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(choice is not None)
        return choice

    def accept(self) -> None:
        choice = self._validate()
        if choice is None:
            return
        self.choice = choice
        super().accept()


def ask_rank_pattern(
    parent: QWidget | None,
    path: Path,
    settings: SettingsLike | None,
    *,
    ask: bool = False,
) -> RankPatternChoice | None:
    """The pattern choice for a rank file: the remembered one, else (or with ``ask``) the dialog's.

    None when the user cancels. A choice made in the dialog is remembered for the file.
    """
    remembered = remembered_choice(settings, path)
    if remembered is not None and not ask:
        return remembered
    dialog = PatternDialog(path, facts=rank_file_facts(path), initial=remembered, parent=parent)
    if dialog.exec() != QDialog.DialogCode.Accepted or dialog.choice is None:
        return None
    remember_choice(settings, path, dialog.choice)
    return dialog.choice
