"""Every place a user types, pastes or drops text that gets tokenized is the exact editor: the
Compare text (which follows the Inspect text unless pinned), Chat messages and tools, the Train
corpus and probe, the Lattice text and the rank-file dialog's test text. Driven by real events.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication, QTextCursor

from tokviz.gui.widgets.exact_edit import ExactLineEdit, ExactTextEdit, text_mime

TRICKY = "\ufeffline one\r\nline\u00a0two\u2028x\r\n"  # BOM, CRLF, NBSP, LS: what Qt would rewrite
CTRL = Qt.KeyboardModifier.ControlModifier


def _paste(qtbot, edit: ExactTextEdit, text: str) -> None:  # noqa: ANN001
    """Select all in ``edit`` and paste ``text`` with Ctrl+V (the clipboard holds UTF-8 bytes)."""
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, CTRL)
    QGuiApplication.clipboard().setMimeData(text_mime(text))
    qtbot.keyClick(edit, Qt.Key.Key_V, CTRL)
    assert edit.exact_text() == text


def _drop_files(edit: ExactTextEdit, *paths: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    ev = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    edit.dropEvent(ev)


class TestOneEditor:
    def test_no_plain_qt_editor_edits_tokenized_text(self) -> None:
        """No QPlainTextEdit / QTextEdit is made and no toPlainText() read outside the exact editor."""
        root = Path(__import__("tokviz.gui", fromlist=["x"]).__file__).parent
        bad = []
        for f in sorted(root.rglob("*.py")):
            if f.name == "exact_edit.py":
                continue
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"QPlainTextEdit\(|QTextEdit\(|toPlainText\(\)", line):
                    bad.append(f"{f.relative_to(root)}:{n}: {line.strip()}")
        assert bad == []

    def test_every_text_input_is_an_exact_editor_with_the_same_marks(self, qtbot, window) -> None:  # noqa: ANN001
        editors = {
            "inspect": window.inspect.raw,
            "compare": window.compare_tab.text_edit,
            "chat content": window.chat_tab.content,
            "chat tools": window.chat_tab.tools,
            "train corpus": window.train_tab.corpus_edit,
            "train probe": window.train_tab.probe_edit,
            "lattice": window.lattice_tab.text_edit,
        }
        for name, edit in editors.items():
            assert isinstance(edit, ExactTextEdit), name
            edit.show_text("a\u00a0b\ufeffc\u200dd\r\ne")
            marks = [m[2] for m in edit.block_marks(edit.document().firstBlock())]
            want = ["NBSP", "BOM", "ZWJ", "CR" if isinstance(edit, ExactLineEdit) else "CRLF"]
            assert marks[:4] == want, name
        assert isinstance(window.train_tab.probe_edit, ExactLineEdit)
        assert isinstance(window.lattice_tab.text_edit, ExactLineEdit)


class TestCompareText:
    def _open(self, qtbot, window):  # noqa: ANN001, ANN202
        window.tabs.setCurrentWidget(window.compare_tab)
        return window.compare_tab

    def test_typing_keeps_every_character(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text(TRICKY, from_editor=False)
        tab = self._open(qtbot, window)
        qtbot.waitUntil(lambda: tab.vm.text == TRICKY, timeout=5000)
        edit = tab.text_edit
        assert edit.exact_text() == TRICKY
        edit.setFocus()
        edit.moveCursor(QTextCursor.MoveOperation.End)
        qtbot.keyClicks(edit, "Z")
        qtbot.waitUntil(lambda: tab.vm.text == TRICKY + "Z", timeout=5000)  # 4 CRs, NBSP, LS, BOM kept
        assert tab.pin_box.isChecked()  # typing here pinned the text

    def test_follows_inspect_edits_unless_pinned(self, qtbot, window) -> None:  # noqa: ANN001
        tab = self._open(qtbot, window)
        raw = window.inspect.raw
        window.tabs.setCurrentWidget(window.inspect)
        raw.setFocus()
        raw.moveCursor(QTextCursor.MoveOperation.End)
        qtbot.keyClicks(raw, "typed in Inspect")
        want = window.vm.text
        assert want.endswith("typed in Inspect")
        window.tabs.setCurrentWidget(tab)
        qtbot.waitUntil(lambda: tab.vm.text == want and tab.text_edit.exact_text() == want, timeout=5000)
        qtbot.mouseClick(tab.pin_box, Qt.MouseButton.LeftButton)
        assert tab.pin_box.isChecked()
        window.tabs.setCurrentWidget(window.inspect)
        qtbot.keyClicks(raw, " more")
        window.tabs.setCurrentWidget(tab)
        qtbot.wait(400)
        assert tab.vm.text == want  # pinned: stays
        qtbot.mouseClick(tab.pin_box, Qt.MouseButton.LeftButton)  # unpinned: takes the Inspect text
        qtbot.waitUntil(lambda: tab.vm.text == want + " more", timeout=5000)

    def test_a_dropped_file_is_inserted_byte_exact(self, qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
        tab = self._open(qtbot, window)
        f = tmp_path / "crlf.txt"
        f.write_bytes(TRICKY.encode("utf-8"))
        tab.text_edit.show_text("")
        _drop_files(tab.text_edit, f)
        qtbot.waitUntil(lambda: tab.vm.text == TRICKY, timeout=5000)

    def test_an_unreadable_dropped_file_says_so_once(self, qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
        tab = self._open(qtbot, window)
        f = tmp_path / "bad.txt"
        f.write_bytes(b"ok \xff\xfe")
        before = tab.text_edit.exact_text()
        _drop_files(tab.text_edit, f)
        assert tab.text_edit.exact_text() == before
        msg = window.error_bar.message
        assert msg.count("bad.txt") == 1 and "UTF-8" in msg and "errors" not in msg


class TestChatEditors:
    def test_message_content_is_exact(self, qtbot, window) -> None:  # noqa: ANN001
        tab = window.chat_tab
        window.tabs.setCurrentWidget(tab)
        tab.list.setCurrentRow(0)
        _paste(qtbot, tab.content, TRICKY)
        qtbot.keyClick(tab.content, Qt.Key.Key_End, CTRL)
        qtbot.keyClicks(tab.content, "!")
        qtbot.waitUntil(lambda: tab.vm.messages[0]["content"] == TRICKY + "!", timeout=5000)

    def test_tools_json_is_read_exactly(self, qtbot, window) -> None:  # noqa: ANN001
        tab = window.chat_tab
        window.tabs.setCurrentWidget(tab)
        seen = []
        orig = tab.vm.set_tools_json
        tab.vm.set_tools_json = lambda text: (seen.append(text), orig(text))  # type: ignore[method-assign]
        tools = '[{"type": "function", "function": {"name": "f\u00a0g"}}]'
        _paste(qtbot, tab.tools, tools)
        assert seen[-1] == tools


class TestTrainEditors:
    def test_probe_is_exact_and_one_line(self, qtbot, window) -> None:  # noqa: ANN001
        tab = window.train_tab
        window.tabs.setCurrentWidget(tab)
        _paste(qtbot, tab.probe_edit, "a\r\nb\u00a0c")
        qtbot.waitUntil(lambda: tab.vm.probe_text == "a\r\nb\u00a0c", timeout=5000)
        assert tab.probe_edit.document().blockCount() == 1
        qtbot.keyClick(tab.probe_edit, Qt.Key.Key_Return)  # Enter submits; the text stays
        assert tab.probe_edit.exact_text() == "a\r\nb\u00a0c"

    def test_files_dropped_on_the_corpus_are_read_exactly(self, qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
        tab = window.train_tab
        f = tmp_path / "corpus.txt"
        f.write_bytes("low lower\r\nnewest\u00a0widest\n".encode())
        _drop_files(tab.corpus_edit, f)
        qtbot.waitUntil(lambda: tab.vm.corpus == "low lower\r\nnewest\u00a0widest\n", timeout=5000)
        assert tab.corpus_edit.exact_text() == tab.vm.corpus


class TestLatticeEditor:
    def test_lattice_text_is_exact(self, qtbot, window) -> None:  # noqa: ANN001
        tab = window.lattice_tab
        window.tabs.setCurrentWidget(tab)
        _paste(qtbot, tab.text_edit, "ab\u00a0c\r\nd")
        qtbot.waitUntil(lambda: tab.vm.text == "ab\u00a0c\r\nd", timeout=5000)
        qtbot.keyClick(tab.text_edit, Qt.Key.Key_Home)
        qtbot.keyClick(tab.text_edit, Qt.Key.Key_Delete)
        qtbot.waitUntil(lambda: tab.vm.text == "b\u00a0c\r\nd", timeout=5000)

