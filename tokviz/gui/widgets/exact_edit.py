"""A plain-text editor that shows the user's text exactly and reports edits exactly.

``QPlainTextEdit`` alone changes text: its document turns CR, CRLF and U+2028/U+2029 into block
separators, ``toPlainText`` turns NBSP into a space, a pasted BOM can vanish. `ExactTextEdit`
therefore never lets the document be the source of the text. It keeps a mirror of the text it
was given (the owner's view-model holds the truth), shows the display text of
`tokviz.gui.display.editor_text` (stand-ins for the characters Qt would change, parallel code
point for code point), paints a boxed mark over every stand-in (CR, CRLF as one mark, NBSP, ZWJ,
BOM, controls by code point ...) and a return arrow at each LF, and reports every edit as
``edited(start, end, text)`` in code points of the text:

- typed keys, Enter, pastes, drops and input-method commits are inserted as the exact characters
  the user gave; Backspace / Delete (and their word variants) are applied to the mirror directly;
- anything else Qt does to the document (cut, a drag-move's source) is read back by diffing the
  document against the display text and mapping stand-ins back (`source_text`);
- copy / drag out give the exact characters of the selection; undo / redo replay the exact edits
  (typed characters are one undo step until the caret moves or something else is done).

Line ends are LF and CRLF; a CRLF is one line end for the caret and the selection under every key
and mouse action: the caret never rests between its CR and its LF (End, a click past the line end
and Up/Down stop before the CR; Right and Ctrl+Right from there go past the LF), Backspace after it
and Delete before it remove both characters, and Enter inserts the text's own line end
(`line_end_of`). A lone CR is an ordinary character shown as a mark inside its line; U+2028 /
U+2029 likewise. Everything else (grapheme steps, word moves, Up/Down by x position) is Qt's.
`ExactLineEdit` is the one-line variant, showing LF as a mark as well.

Qt positions cross into code points only through `OffsetMap`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import regex
from PySide6.QtCore import QByteArray, QMimeData, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QInputMethodEvent,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPen,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QWidget

from ...engine.text import OffsetMap
from .._compat import emit
from ..display import editor_text, hidden_pattern, line_editor_text, mark_name, source_text, stand_in

__all__ = ["ExactLineEdit", "ExactTextEdit", "line_end_of", "mime_text", "text_mime"]

_CR_STAND_IN_NAME = "CR"
_GRAPHEME = regex.compile(r"\X")
#: how far around the caret grapheme clusters are looked at (a cluster is never this long in a
#: real text; a longer one is cut there, and only a caret step inside it is affected)
_WINDOW = 256
_Op = QTextCursor.MoveOperation
_SK = QKeySequence.StandardKey
#: caret steps that go past a CRLF's LF when taken from before its CR
_STEPS_FORWARD = (_Op.NextCharacter, _Op.NextWord)
#: deleting keys -> the caret moves whose span they delete when nothing is selected (two moves:
#: the span between them, the selection ignored)
_DELETE_KEYS = (
    (_SK.DeleteStartOfWord, (_Op.PreviousWord,)),
    (_SK.DeleteEndOfWord, (_Op.NextWord,)),
    (_SK.DeleteEndOfLine, (_Op.EndOfLine,)),
    (_SK.DeleteCompleteLine, (_Op.StartOfBlock, _Op.EndOfBlock)),
    (_SK.Delete, (_Op.NextCharacter,)),  # one grapheme cluster forward (as Qt)
)
#: arrow keys, as (forward in a left-to-right line, extends the selection)
_ARROWS = (
    (_SK.MoveToNextChar, True, False),
    (_SK.MoveToPreviousChar, False, False),
    (_SK.SelectNextChar, True, True),
    (_SK.SelectPreviousChar, False, True),
)
#: keys that take the caret to the end of its line: there it stops before a CRLF's CR
_TO_LINE_END = (
    QKeySequence.StandardKey.MoveToEndOfLine,
    QKeySequence.StandardKey.SelectEndOfLine,
    QKeySequence.StandardKey.MoveToEndOfBlock,
    QKeySequence.StandardKey.SelectEndOfBlock,
)


@dataclass(frozen=True, slots=True)
class _Edit:
    """One exact edit, for undo: ``old`` at ``start`` was replaced by ``new``."""

    start: int
    old: str
    new: str
    typed: bool = False


_PLAIN = ("text/plain;charset=utf-8", "text/plain")


def mime_text(md: QMimeData) -> str | None:
    """The plain text of mime data, exactly: decoded from its UTF-8 bytes, because
    ``QMimeData.text()`` drops a leading BOM (Qt's decoder takes it for a byte-order mark)."""
    for fmt in _PLAIN:
        if md.hasFormat(fmt):
            try:
                return bytes(md.data(fmt).data()).decode("utf-8")
            except UnicodeDecodeError:
                break
    return md.text() if md.hasText() else None


def text_mime(text: str) -> QMimeData:
    """Mime data holding ``text`` exactly (as UTF-8 bytes; ``setText`` would drop a leading BOM)."""
    md = QMimeData()
    md.setData("text/plain", QByteArray(text.encode("utf-8")))
    return md


def line_end_of(text: str) -> str:
    """The line end Enter inserts in ``text``: the one it uses most (LF or CRLF; a lone CR is no
    line end in these editors, it shows as a mark inside its line), on a tie the one it uses
    first, and LF in a text without line ends.

    >>> line_end_of("a\\r\\nb\\r\\nc\\n"), line_end_of("a\\nb\\r\\n"), line_end_of("a\\rb")
    ('\\r\\n', '\\n', '\\n')
    """
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf != lf:
        return "\r\n" if crlf > lf else "\n"
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _mark_font(base: QFont) -> QFont:
    f = QFont(base)
    f.setPointSizeF(max(base.pointSizeF() * 0.7, 6.0))
    f.setBold(True)
    return f


class _StandInFormats(QSyntaxHighlighter):
    """Makes every stand-in invisible and as wide as the mark painted over it."""

    def __init__(self, edit: ExactTextEdit) -> None:
        super().__init__(edit.document())
        self._edit = edit
        self._formats: dict[str, QTextCharFormat] = {}

    def reset(self) -> None:
        self._formats.clear()

    def _format(self, ch: str, name: str) -> QTextCharFormat:
        key = f"{ch}\0{name}"
        fmt = self._formats.get(key)
        if fmt is None:
            edit = self._edit
            natural = QFontMetricsF(edit.font()).horizontalAdvance(ch)
            wanted = QFontMetricsF(_mark_font(edit.font())).horizontalAdvance(name) + 6
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(0, 0, 0, 0))
            fmt.setFontLetterSpacingType(QFont.SpacingType.AbsoluteSpacing)
            fmt.setFontLetterSpacing(max(wanted - natural, 0.0))
            self._formats[key] = fmt
        return fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        if text.isprintable():  # (every stand-in is a private-use character: not printable)
            return
        block = self.currentBlock()
        for a, b, name, shown in self._edit.block_marks(block):
            self.setFormat(a, b - a, self._format(shown, name))


class ExactTextEdit(QPlainTextEdit):
    """See the module docstring. ``edited(start, end, text)``: code points ``[start, end)`` became ``text``."""

    #: the last mime data an exact editor made for a copy or drag (at most one)
    copied: ClassVar[list[QMimeData]] = []

    # object, not str: PySide drops a leading U+FEFF of every str it hands to Qt (signals included)
    edited = Signal(int, int, object)
    files_dropped = Signal(list)  # [Path]: local files dropped on the editor (the owner opens them)
    error_raised = Signal(str)  # a dropped file could not be read (inserts_dropped_files)

    #: True: a dropped file's text is inserted at the drop, read byte-exact by `tokviz.io.textfile`
    #: (as File > Open reads); False: ``files_dropped`` tells the owner
    inserts_dropped_files = False

    _one_line = False  # ExactLineEdit: LF is a stand-in too, the document is one block

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = ""  # the text shown (a mirror of the owner's truth)
        self._display = ""  # editor_text(self._source): what the document holds
        self._map: OffsetMap | None = None
        self._guard = 0
        self._undo: list[_Edit] = []
        self._redo: list[_Edit] = []
        self._typing = False  # the last edit was typed and the caret has not moved since
        self._edits = 0  # edits made so far (a key that edited places the caret itself)
        self.mark_color = QColor("#8a6d00")
        self.mark_bg = QColor(255, 200, 0, 60)
        self.setUndoRedoEnabled(False)
        self._hidden = hidden_pattern(one_line=self._one_line)
        self._formats = _StandInFormats(self)
        self.document().contentsChanged.connect(self._on_document_changed)

    def _display_of(self, text: str) -> str:
        return line_editor_text(text) if self._one_line else editor_text(text)

    # ------------------------------------------------------------------ text in and out
    def exact_text(self) -> str:
        """The text this editor shows, exactly (not the document's text, which holds stand-ins)."""
        return self._source

    def toPlainText(self) -> str:  # noqa: N802 - for Python callers; Qt itself never calls it
        """The exact text (what ``QPlainTextEdit.toPlainText`` would convert), same as `exact_text`."""
        return self._source

    def offset_map(self) -> OffsetMap:
        """Code points <-> UTF-16 (Qt positions) of the text shown."""
        if self._map is None or self._map.text is not self._source:
            self._map = OffsetMap(self._source)
        return self._map

    def show_text(self, text: str) -> None:
        """Show ``text`` (from the owner; no ``edited`` signal). Clears undo."""
        if text == self._source and self.document().characterCount() - 1 == self.offset_map().to_utf16(len(text)):
            return
        self._source = text
        self._display = self._display_of(text)
        self._undo.clear()
        self._redo.clear()
        self._typing = False
        self._guard += 1
        try:
            self.setPlainText(self._display)
        finally:
            self._guard -= 1

    def replace_shown(self, start: int, end: int, text: str) -> None:
        """Replace code points ``[start, end)`` of the shown text (from the owner; no signal)."""
        self._replace(start, end, text, move_cursor=False)

    def line_end(self) -> str:
        """What Enter inserts here: the text's own line end (`line_end_of`)."""
        return line_end_of(self._source)

    def set_mark_colors(self, fg: QColor, bg: QColor) -> None:
        self.mark_color, self.mark_bg = QColor(fg), QColor(bg)
        self.viewport().update()

    def setFont(self, font: QFont) -> None:  # noqa: N802 - Qt override: marks are sized from the font
        super().setFont(font)
        self._formats.reset()
        self._formats.rehighlight()

    def block_marks(self, block) -> list[tuple[int, int, str, str]]:  # noqa: ANN001 - a QTextBlock
        """The marks of one block: (start, end) in Qt units relative to the block, name, stand-in.

        Read from the text itself (not the display), so a user's own private-use character that
        happens to equal a stand-in gets no mark; a CR right before the block's LF is "CRLF".
        """
        om = self.offset_map()
        u0 = block.position()
        u1 = u0 + block.length() - 1  # the block's text, without its separator
        if u1 > om.to_utf16(len(self._source)):
            return []  # the document is ahead of the mirror (mid-change); redrawn after it
        c0, c1 = om.from_utf16(u0), om.from_utf16(u1)
        out: list[tuple[int, int, str, str]] = []
        for m in self._hidden.finditer(self._source, c0, c1):
            i = m.start()
            ch = m.group()
            name = "LF" if ch == "\n" else mark_name(ch) or "?"
            if name == _CR_STAND_IN_NAME and i == c1 - 1 and self._source.startswith("\n", c1):
                name = "CRLF"
            a, b = om.span_to_utf16(i, i + 1)
            out.append((a - u0, b - u0, name, stand_in(ch, one_line=self._one_line)))
        return out

    # ------------------------------------------------------------------ CRLF is one line end
    def _in_crlf(self, u: int) -> bool:
        """Whether Qt position ``u`` lies between the CR and the LF of a CRLF."""
        if u <= 0:
            return False
        c = self.offset_map().from_utf16(u)
        return self._source.startswith("\r\n", c - 1)

    def _snap(self, *, forward_from: int | None = None) -> None:
        """Move a caret (or selection end) that rests inside a CRLF out of it: past the LF when it
        stepped there from before the CR (``forward_from``, Qt positions), else before the CR."""
        cur = self.textCursor()
        pos, anchor = cur.position(), cur.anchor()
        if not (self._in_crlf(pos) or self._in_crlf(anchor)):
            return
        collapsed = pos == anchor
        if self._in_crlf(pos):
            pos += 1 if forward_from == pos - 1 else -1
        if collapsed:
            anchor = pos
        elif self._in_crlf(anchor):
            anchor -= 1
        cur.setPosition(anchor)
        cur.setPosition(pos, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cur)

    def _block_start(self, p: int) -> int:
        """The code point where the block holding code point ``p`` starts (at most a window back)."""
        return max(self._display.rfind("\n", 0, p) + 1, p - _WINDOW)

    def _grapheme_step(self, u: int, forward: bool) -> int:
        """The next (previous) grapheme-cluster boundary after (before) Qt position ``u``.

        Clusters are Unicode's extended grapheme clusters of the display text (so every marked
        character is one), from the ``regex`` module: Qt's own cursor steps split a flag that
        follows an emoji.
        """
        om = self.offset_map()
        p, d = om.from_utf16(u), self._display
        if forward:
            if p >= len(d) or d[p] == "\n":
                return om.to_utf16(min(p + 1, len(d)))
            m = next((m for m in _GRAPHEME.finditer(d, self._block_start(p), min(len(d), p + _WINDOW)) if m.end() > p), None)
            return om.to_utf16(m.end() if m else p + 1)
        if p == 0 or d[p - 1] == "\n":
            return om.to_utf16(max(p - 1, 0))
        last = p - 1
        for m in _GRAPHEME.finditer(d, self._block_start(p), p):
            last = m.start()
        return om.to_utf16(last)

    def _at_boundary(self, u: int, *, forward: bool) -> int:
        """Qt position ``u``, or the nearest cluster boundary after (before) it if it is inside one."""
        om = self.offset_map()
        p, d = om.from_utf16(u), self._display
        start = self._block_start(p)
        if p <= start or p >= len(d) or d[p] == "\n":
            return u
        for m in _GRAPHEME.finditer(d, start, min(len(d), p + _WINDOW)):
            if m.end() == p:
                return u
            if m.end() > p:
                return om.to_utf16(m.end() if forward else m.start())
        return u

    def _step_end(self, cur: QTextCursor, op: QTextCursor.MoveOperation) -> int:
        """Where ``op`` takes the caret of ``cur`` (a copy moves), on a cluster boundary and out of
        a CRLF; in code points."""
        start = cur.position()
        if op == _Op.NextCharacter:
            u = self._grapheme_step(start, True)
        else:
            c = QTextCursor(cur)
            c.clearSelection()
            c.movePosition(op)
            u = self._at_boundary(c.position(), forward=c.position() > start)
        if self._in_crlf(u):
            u += 1 if u - 1 == start and op in _STEPS_FORWARD else -1
        return self.offset_map().from_utf16(u)

    def _move_caret(self, u: int, *, keep_anchor: bool) -> None:
        cur = self.textCursor()
        if u != cur.position():
            self._typing = False
        cur.setPosition(u, QTextCursor.MoveMode.KeepAnchor if keep_anchor else QTextCursor.MoveMode.MoveAnchor)
        self.setTextCursor(cur)
        self.ensureCursorVisible()

    def _arrow(self, forward: bool, extend: bool) -> None:
        """Left / Right (with Shift): one grapheme cluster, a CRLF at once; without Shift a
        selection collapses to its side. In a right-to-left line the keys go the other way."""
        cur = self.textCursor()
        if cur.block().textDirection() == Qt.LayoutDirection.RightToLeft:
            forward = not forward
        if cur.hasSelection() and not extend:
            self._move_caret(cur.selectionEnd() if forward else cur.selectionStart(), keep_anchor=False)
            return
        u = self._grapheme_step(cur.position(), forward)
        if self._in_crlf(u):
            u += 1 if forward else -1
        self._move_caret(u, keep_anchor=extend)

    def _settle(self, before: int, *, step: bool = False) -> None:
        """After Qt moved the caret (word moves, Up/Down, Home/End, the mouse): onto a cluster
        boundary in the direction it moved, and out of a CRLF (past its LF only for a ``step``
        forward from before its CR)."""
        cur = self.textCursor()
        u = cur.position()
        if u != before:
            self._typing = False
        b = self._at_boundary(u, forward=u > before)
        if b != u:
            self._move_caret(b, keep_anchor=cur.hasSelection())
        self._snap(forward_from=before if step else None)

    # ------------------------------------------------------------------ applying edits
    def _replace(self, start: int, end: int, text: str, *, move_cursor: bool) -> None:
        om = self.offset_map()
        a, b = om.span_to_utf16(start, end)
        cur = QTextCursor(self.document())
        cur.setPosition(a)
        cur.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
        shown = self._display_of(text)
        # the mirror first: the marks of the changed blocks are computed from it during the insert
        self._source = self._source[:start] + text + self._source[end:]
        self._display = self._display[:start] + shown + self._display[end:]
        self._guard += 1
        try:
            if shown:
                cur.insertText(shown)
            else:
                cur.removeSelectedText()
        finally:
            self._guard -= 1
        if move_cursor:
            # the caret goes after what was inserted (after the cluster it joined: typing a base
            # before a combining mark), or where text was removed (before the cluster that made,
            # and before a CRLF that made)
            u = self._at_boundary(cur.position(), forward=bool(text))
            cur.setPosition(u)
            self.setTextCursor(cur)
            self._snap(forward_from=u - 1 if text else None)

    def _user_edit(self, start: int, end: int, text: str, *, typed: bool = False, record: bool = True) -> None:
        old = self._source[start:end]
        if not old and not text:
            return
        self._replace(start, end, text, move_cursor=True)
        if record:
            self._record(_Edit(start, old, text, typed))
        self._typing = typed and record
        self._edits += 1
        emit(self.edited, start, end, text)

    def _record(self, e: _Edit) -> None:
        self._redo.clear()
        prev = self._undo[-1] if self._undo else None
        if self._typing and prev is not None and e.typed and prev.typed and not e.old and prev.start + len(prev.new) == e.start:
            self._undo[-1] = _Edit(prev.start, prev.old, prev.new + e.new, True)  # one undo step per typed run
        else:
            self._undo.append(e)
        del self._undo[:-500]

    def insert_exact(self, text: str, *, typed: bool = False) -> None:
        """Replace the selection (or insert at the cursor) with exactly ``text``."""
        cur = self.textCursor()
        om = self.offset_map()
        a = om.from_utf16(cur.selectionStart())
        b = om.from_utf16(cur.selectionEnd())
        self._user_edit(a, b, text, typed=typed)

    def undo(self) -> None:  # Qt's undo would replay the document's (converted) text
        if self._undo:
            e = self._undo.pop()
            self._user_edit(e.start, e.start + len(e.new), e.old, record=False)
            self._redo.append(e)

    def redo(self) -> None:
        if self._redo:
            e = self._redo.pop()
            self._user_edit(e.start, e.start + len(e.old), e.new, record=False)
            self._undo.append(e)

    def _on_document_changed(self) -> None:
        """A change Qt made itself (cut, a drag-move's source): read it back exactly."""
        if self._guard:
            return
        from ...engine.incremental import diff_edit

        now = self.document().toPlainText()  # the display text holds nothing toPlainText converts
        if now == self._display:
            return
        d = diff_edit(self._display, now)
        old = self._source[d.start : d.old_end]
        new = source_text(now[d.start : d.new_end])
        self._source = self._source[: d.start] + new + self._source[d.old_end :]
        self._display = now
        block = self.document().findBlock(self.offset_map().to_utf16(d.start))
        for b in (block.previous(), block):  # their marks were computed before the mirror changed
            if b.isValid():
                self._guard += 1
                try:
                    self._formats.rehighlightBlock(b)
                finally:
                    self._guard -= 1
        self._record(_Edit(d.start, old, new))
        self._typing = False
        self._edits += 1
        self._snap()
        emit(self.edited, d.start, d.old_end, new)

    # ------------------------------------------------------------------ Qt input paths
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if self.isReadOnly():
            super().keyPressEvent(event)
            return
        if event.matches(QKeySequence.StandardKey.Undo):
            self.undo()
            return
        if event.matches(QKeySequence.StandardKey.Redo):
            self.redo()
            return
        if self._delete_key(event):
            return
        mods = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods:
            self._enter(event)
            return
        if event.key() == Qt.Key.Key_Tab and not mods and not self.tabChangesFocus():
            self.insert_exact("\t", typed=True)
            return
        text = event.text()
        shortcut = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.MetaModifier))
        if text and not shortcut and all(c >= " " and c != "\x7f" for c in text):
            self.insert_exact(text, typed=True)
            self.ensureCursorVisible()
            return
        arrow = next(((f, x) for k, f, x in _ARROWS if event.matches(k)), None)
        if arrow is not None:
            self._arrow(*arrow)
            return
        before, edits = self.textCursor().position(), self._edits
        super().keyPressEvent(event)  # other navigation, copy / cut / paste / select all
        if self._edits == edits:  # (an edit placed the caret itself)
            self._settle(before, step=not any(event.matches(k) for k in _TO_LINE_END))

    def _enter(self, event: QKeyEvent) -> None:
        """Enter (and Shift+Enter, which Qt would make a U+2028) inserts the text's own line end."""
        self.insert_exact(self.line_end(), typed=True)

    def _delete_key(self, event: QKeyEvent) -> bool:
        """Backspace / Delete and their word and line variants, applied to the mirror (a CRLF goes
        whole; deleting to the line end keeps the line end)."""
        mods = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
        ops = next((o for k, o in _DELETE_KEYS if event.matches(k)), None)
        if ops is None and event.key() == Qt.Key.Key_Backspace and not mods:
            ops = ()  # one code point back (as Qt does), a CRLF whole
        if ops is None:
            return False
        cur = self.textCursor()
        om = self.offset_map()
        a, b = om.from_utf16(cur.selectionStart()), om.from_utf16(cur.selectionEnd())
        if a == b and not ops:
            a = max(a - (2 if a >= 2 and self._source.startswith("\r\n", a - 2) else 1), 0)
        elif a == b or len(ops) == 2:
            ends = [self._step_end(cur, op) for op in ops] + ([] if len(ops) == 2 else [a])
            a, b = min(ends), max(ends)
        self._user_edit(a, b, "")
        return True

    def mousePressEvent(self, event) -> None:  # noqa: ANN001, N802
        before = self.textCursor().position()
        super().mousePressEvent(event)
        self._typing = False
        self._settle(before)

    def mouseMoveEvent(self, event) -> None:  # noqa: ANN001, N802
        before = self.textCursor().position()
        super().mouseMoveEvent(event)
        self._settle(before)

    def mouseReleaseEvent(self, event) -> None:  # noqa: ANN001, N802
        before = self.textCursor().position()
        super().mouseReleaseEvent(event)
        self._settle(before)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: ANN001, N802
        super().mouseDoubleClickEvent(event)
        self._typing = False
        self._snap()  # a word next to a CRLF is selected without the CR

    def inputMethodEvent(self, event: QInputMethodEvent) -> None:  # noqa: N802
        commit = event.commitString()
        if commit and not self.isReadOnly():
            self.insert_exact(commit, typed=True)
            rest = QInputMethodEvent(event.preeditString(), event.attributes())
            super().inputMethodEvent(rest)
            return
        super().inputMethodEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802
        return source.hasUrls() or source.hasText()

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        files = [Path(u.toLocalFile()) for u in source.urls() if u.isLocalFile()] if source.hasUrls() else []
        if files and self.inserts_dropped_files:
            self.insert_files(files)
            return
        if files:
            emit(self.files_dropped, files)
            return
        text = mime_text(source)
        if text is not None:
            self.insert_exact(text)

    def insert_files(self, paths: list[Path]) -> None:
        """Insert the text of ``paths`` (one after the other) exactly as the files hold it; an
        unreadable file inserts nothing and says why (``error_raised``)."""
        from ...io.textfile import read_text_file

        parts = []
        for p in paths:
            try:
                parts.append(read_text_file(p).text)
            except (OSError, ValueError) as exc:  # TokvizFormatError names the file and the byte offset
                emit(self.error_raised, f"Could not insert the dropped file: {exc}")
                return
        self.insert_exact("".join(parts))

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802
        cur = self.textCursor()
        om = self.offset_map()
        md = text_mime(self._source[om.from_utf16(cur.selectionStart()) : om.from_utf16(cur.selectionEnd())])
        ExactTextEdit.copied.append(md)  # see tokviz.gui.app.hand_clipboard_to_qt
        del ExactTextEdit.copied[:-1]
        return md

    # ------------------------------------------------------------------ painting the marks
    def paintEvent(self, event) -> None:  # noqa: ANN001, N802
        super().paintEvent(event)
        if not self._display or (self._display.isascii() and "\n" not in self._display and "\t" not in self._display):
            return
        p = QPainter(self.viewport())
        try:
            self._paint_marks(p, event.rect().bottom())
        finally:
            p.end()

    def _paint_marks(self, p: QPainter, bottom: float) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = _mark_font(self.font())
        fm = QFontMetricsF(font)
        p.setFont(font)
        offset = self.contentOffset()
        block = self.firstVisibleBlock()
        while block.isValid():
            geo = self.blockBoundingGeometry(block).translated(offset)
            if geo.top() > bottom:
                break
            layout = block.layout()
            text = block.text()
            has_next = block.next().isValid()
            ends_crlf = False
            for a, b, name, _shown in self.block_marks(block) if not (text.isascii() and "\t" not in text) else ():
                ends_crlf = ends_crlf or name == "CRLF"
                line = layout.lineForTextPosition(a)
                if not line.isValid():
                    continue
                x0, _ = line.cursorToX(a)
                x1, _ = line.cursorToX(b)
                top = geo.top() + line.y()
                rect = QRectF(min(x0, x1) + offset.x() + 1, top + 1.5, abs(x1 - x0) - 2, line.height() - 3)
                self._paint_box(p, rect, name, fm)
            if has_next and not ends_crlf and layout.lineCount():
                line = layout.lineAt(layout.lineCount() - 1)
                x, _ = line.cursorToX(block.length() - 1)  # the block end, in Qt units
                self._paint_return(p, QPointF(x + offset.x() + 2, geo.top() + line.y()), line.height())
            block = block.next()

    def _paint_box(self, p: QPainter, rect: QRectF, name: str, fm: QFontMetricsF) -> None:
        if name == "TAB":
            pen = QPen(self.mark_color, 1.2)
            p.setPen(pen)
            y = rect.center().y()
            p.drawLine(QPointF(rect.left() + 2, y), QPointF(rect.right() - 2, y))
            p.drawLine(QPointF(rect.right() - 5, y - 3), QPointF(rect.right() - 2, y))
            p.drawLine(QPointF(rect.right() - 5, y + 3), QPointF(rect.right() - 2, y))
            return
        p.setPen(QPen(self.mark_color, 0.8))
        p.setBrush(self.mark_bg)
        p.drawRoundedRect(rect, 2.5, 2.5)
        p.setPen(self.mark_color)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, name)

    def _paint_return(self, p: QPainter, at: QPointF, height: float) -> None:
        """A small return arrow drawn as a path (LF; a CRLF's LF is part of its CRLF box)."""
        color = QColor(self.mark_color)
        color.setAlpha(120)
        p.setPen(QPen(color, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        w = max(height * 0.45, 5.0)
        top, mid = at.y() + height * 0.3, at.y() + height * 0.62
        path = QPainterPath(QPointF(at.x() + w, top))
        path.lineTo(at.x() + w, mid)
        path.lineTo(at.x(), mid)
        path.moveTo(at.x() + 3, mid - 3)
        path.lineTo(at.x(), mid)
        path.lineTo(at.x() + 3, mid + 3)
        p.drawPath(path)


class ExactLineEdit(ExactTextEdit):
    """A one-line exact editor (for a probe or a short text): one row high, no wrapping, LF shown
    as a mark like CR; Enter emits ``return_pressed`` instead of inserting a line end (a pasted
    text keeps its line ends exactly). Tab moves the focus."""

    return_pressed = Signal()
    _one_line = True

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fit_height()
        if text:
            self.show_text(text)

    def text(self) -> str:
        """The exact text (as ``QLineEdit.text``)."""
        return self._source

    def setFont(self, font: QFont) -> None:  # noqa: N802 - Qt override: the height follows the font
        super().setFont(font)
        self._fit_height()

    def _fit_height(self) -> None:
        margins = self.contentsMargins()
        line = QFontMetricsF(self.font()).lineSpacing()
        doc = self.document().documentMargin()
        self.setFixedHeight(int(line + 2 * doc + margins.top() + margins.bottom() + 2))

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.height())

    def _enter(self, event: QKeyEvent) -> None:
        emit(self.return_pressed)
        event.ignore()
