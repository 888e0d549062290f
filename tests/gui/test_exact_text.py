"""Exact text in, exact text out: what the user pastes, types, drops or opens is what gets encoded.

Every case drives the real widgets (clipboard paste, typed keys, a dropped file, file open) and
checks two things: the text the encoding was made from equals the source code point for code
point, and the ids equal ``tok.encode(source)`` (and, for the named regressions, tiktoken's).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtCore import QEvent, QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication, QKeyEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QApplication
from support import SHARED, bundle_bytes, bundle_path, require, require_module

from tokviz.engine.text import OffsetMap
from tokviz.gui.display import editor_text, mark_name, source_text
from tokviz.gui.widgets.exact_edit import mime_text, text_mime

# Characters QTextDocument converts, drops or acts on, and their neighbours in trouble.
TRICKY = [
    "\u00a0", "\r", "\r\n", "\n", "\u2028", "\u2029", "\ufeff", "\x00", "\x01", "\x0b", "\x0c", "\x1b", "\x7f",
    "\x85", "\x9f", "\u0301", "\u0308", "\u202e", "\u202d", "\u202c", "\u2066", "\u2069", "\u200b", "\u200c",
    "\u200d", "\u2060", "\u202f", "\u3000", "\t", "\ufffc", "\ufdd0", "\ufdd1", "\ue000", "\U000e0041",
    "\U0001f600", "\U0001f44d\U0001f3fd", "你好", "שלום", "مرحبا", " ", "a", "Z", "1", ".",
]
tricky_text = st.lists(st.sampled_from(TRICKY), min_size=1, max_size=24).map("".join)
# What a keyboard can type (no control characters; Enter gives LF)
TYPEABLE = ["\u00a0", "\u0301", "\u202f", "\u3000", "\U0001f600", "你", "ש", "م", " ", "a", "Z", "7", "é", "\n"]
typed_text = st.lists(st.sampled_from(TYPEABLE), min_size=1, max_size=16).map("".join)
GUI_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

ISSUE_TEXT = "100\u00a0km\r\nline2\u2028x\ufeffy"
wait_encoded = None  # the conftest's ``encoded`` helper, set for each test below


@pytest.fixture(autouse=True)
def _wait_helper(encoded):  # noqa: ANN001, ANN202
    global wait_encoded
    wait_encoded = encoded


def _tiktoken_ref(rel: str):  # noqa: ANN202 - a tiktoken.Encoding built from the same rank file
    tiktoken = require_module("tiktoken")
    import tempfile

    from tiktoken.load import load_tiktoken_bpe

    from tokviz.io.tiktoken_ranks import preset_for

    data = bundle_bytes(rel)
    preset = preset_for(data)
    assert preset is not None
    path = Path(tempfile.mkdtemp()) / "ranks.tiktoken"
    path.write_bytes(data)
    return tiktoken.Encoding(
        preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab,
    )


def _clear(qtbot, window) -> None:  # noqa: ANN001
    window.vm.set_text("", from_editor=False)
    raw = window.inspect.raw
    raw.setFocus()
    assert raw.exact_text() == ""


def _paste(raw, text: str) -> None:  # noqa: ANN001
    # As another application puts text on the clipboard: UTF-8 bytes (a str handed to Qt would
    # lose a leading BOM on the way, before the editor is involved)
    QGuiApplication.clipboard().setMimeData(text_mime(text))
    assert mime_text(QGuiApplication.clipboard().mimeData()) == text  # the clipboard keeps every character
    raw.paste()


def _type(raw, text: str) -> None:  # noqa: ANN001
    """Key presses as a keyboard sends them: one event per character (an emoji is one key event
    whose text is its surrogate pair; QTest.keyClicks would split it), Enter for LF."""
    for ch in text:
        key = Qt.Key.Key_Return if ch == "\n" else Qt.Key.Key_unknown
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(raw, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, "" if ch == "\n" else ch))


def _assert_exact(qtbot, window, source: str) -> None:  # noqa: ANN001
    vm = window.vm
    assert vm.text == source
    assert window.inspect.raw.exact_text() == source
    wait_encoded(qtbot, vm)
    enc = vm.encoding
    assert enc.text == source
    assert enc.ids == vm.tokenizer.encode(source).ids


def _drop(widget, mime: QMimeData) -> None:  # noqa: ANN001
    ev = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    widget.dropEvent(ev)


class TestDisplayText:
    @given(tricky_text)
    def test_display_is_parallel_and_reversible(self, text: str) -> None:
        shown = editor_text(text)
        assert len(shown) == len(text)
        assert OffsetMap(shown).to_utf16(len(shown)) == OffsetMap(text).to_utf16(len(text))
        if "\ue000" not in text:  # a user's own stand-in character reads back only through the mirror
            assert source_text(shown) == text
        # nothing the document converts is left in the display text
        assert not set(shown) & {"\r", "\u2028", "\u2029", "\u00a0", "\ufeff", "\ufdd0", "\ufdd1", "\x00"}

    def test_each_invisible_has_a_distinct_mark(self) -> None:
        names = [mark_name(c) for c in ["\r", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00a0", "\u202f", "\t", "\x1b", "\x9f"]]
        assert names == ["CR", "ZWSP", "ZWNJ", "ZWJ", "WJ", "BOM", "NBSP", "NNBSP", "TAB", "1B", "9F"]

    def test_a_users_private_use_character_gets_no_mark(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text("a\ue000b\x00c\r\nd\re", from_editor=False)
        raw = window.inspect.raw
        doc = raw.document()
        marks = [[m[:3] for m in raw.block_marks(doc.findBlockByNumber(n))] for n in range(doc.blockCount())]
        assert marks == [[(3, 4, "00"), (5, 6, "CRLF")], [(1, 2, "CR")]]

    def test_document_holds_the_display_text(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text(ISSUE_TEXT, from_editor=False)
        raw = window.inspect.raw
        assert raw.document().toPlainText() == editor_text(ISSUE_TEXT)  # the document converted nothing
        assert raw.toPlainText() == ISSUE_TEXT  # Python callers get the exact text
        assert raw.exact_text() == ISSUE_TEXT


class TestPaste:
    @GUI_SETTINGS
    @given(tricky_text)
    def test_paste_is_exact(self, qtbot, window, text: str) -> None:  # noqa: ANN001
        _clear(qtbot, window)
        _paste(window.inspect.raw, text)
        _assert_exact(qtbot, window, text)

    @GUI_SETTINGS
    @given(tricky_text, tricky_text, st.integers(0, 30), st.integers(0, 30))
    def test_paste_over_a_selection(self, qtbot, window, base: str, text: str, a: int, b: int) -> None:  # noqa: ANN001
        _clear(qtbot, window)
        window.vm.set_text(base, from_editor=False)
        raw = window.inspect.raw
        a, b = sorted((min(a, len(base)), min(b, len(base))))
        om = OffsetMap(base)
        cur = raw.textCursor()
        cur.setPosition(om.to_utf16(a))
        cur.setPosition(om.to_utf16(b), QTextCursor.MoveMode.KeepAnchor)
        raw.setTextCursor(cur)
        _paste(raw, text)
        _assert_exact(qtbot, window, base[:a] + text + base[b:])

    def test_copy_gives_the_exact_characters(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text(ISSUE_TEXT, from_editor=False)
        raw = window.inspect.raw
        raw.selectAll()
        raw.copy()
        assert mime_text(QGuiApplication.clipboard().mimeData()) == ISSUE_TEXT
        window.vm.set_text("\ufeffbom first", from_editor=False)
        raw.selectAll()
        raw.copy()
        assert mime_text(QGuiApplication.clipboard().mimeData()) == "\ufeffbom first"

    def test_issue_case_o200k_matches_tiktoken(self, qtbot, window) -> None:  # noqa: ANN001
        import tokviz

        ref = _tiktoken_ref("o200k_base/o200k_base.tiktoken")
        window.vm.set_tokenizer(tokviz.load(bundle_bytes("o200k_base/o200k_base.tiktoken")), name="o200k")
        wait_encoded(qtbot, window.vm)
        _clear(qtbot, window)
        _paste(window.inspect.raw, ISSUE_TEXT)
        _assert_exact(qtbot, window, ISSUE_TEXT)
        expected = ref.encode(ISSUE_TEXT, disallowed_special=())
        assert window.vm.encoding.ids == expected
        assert window.vm.update.stats.tokens == len(expected)


class TestTyping:
    @GUI_SETTINGS
    @given(typed_text)
    def test_typed_keys_are_exact(self, qtbot, window, text: str) -> None:  # noqa: ANN001
        _clear(qtbot, window)
        raw = window.inspect.raw
        _type(raw, text)
        _assert_exact(qtbot, window, text)

    @GUI_SETTINGS
    @given(tricky_text, st.integers(0, 30), typed_text.filter(lambda t: "\n" not in t))
    def test_typing_into_tricky_text_keeps_it(self, qtbot, window, base: str, at: int, typed: str) -> None:  # noqa: ANN001
        """The issue: typing one character into a --text string turned its NBSP into a space."""
        window.vm.set_text(base, from_editor=False)
        raw = window.inspect.raw
        at = min(at, len(base))
        cur = raw.textCursor()
        cur.setPosition(OffsetMap(base).to_utf16(at))
        raw.setTextCursor(cur)
        _type(raw, typed)
        _assert_exact(qtbot, window, base[:at] + typed + base[at:])

    def test_backspace_after_crlf_removes_the_whole_line_end(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text("a\r\nb\u00a0c", from_editor=False)
        raw = window.inspect.raw
        cur = raw.textCursor()
        cur.setPosition(3)  # after the LF (a, CR, LF are one UTF-16 unit each)
        raw.setTextCursor(cur)
        qtbot.keyClick(raw, Qt.Key.Key_Backspace)
        _assert_exact(qtbot, window, "ab\u00a0c")
        qtbot.keyClick(raw, Qt.Key.Key_Delete)
        _assert_exact(qtbot, window, "a\u00a0c")

    def test_undo_and_redo_replay_exact_edits(self, qtbot, window) -> None:  # noqa: ANN001
        window.vm.set_text(ISSUE_TEXT, from_editor=False)
        raw = window.inspect.raw
        raw.moveCursor(QTextCursor.MoveOperation.End)
        _type(raw, "z\u00a0")
        _assert_exact(qtbot, window, ISSUE_TEXT + "z\u00a0")
        raw.undo()
        _assert_exact(qtbot, window, ISSUE_TEXT)
        raw.redo()
        _assert_exact(qtbot, window, ISSUE_TEXT + "z\u00a0")

    def test_input_method_commit_is_exact(self, qtbot, window) -> None:  # noqa: ANN001
        from PySide6.QtGui import QInputMethodEvent

        window.vm.set_text("a\r\nb", from_editor=False)
        raw = window.inspect.raw
        raw.moveCursor(QTextCursor.MoveOperation.End)
        ev = QInputMethodEvent()
        ev.setCommitString("\u00a0日本\u200d")
        QApplication.sendEvent(raw, ev)
        _assert_exact(qtbot, window, "a\r\nb\u00a0日本\u200d")

    def test_shift_enter_is_a_line_feed_not_u2028(self, qtbot, window) -> None:  # noqa: ANN001
        _clear(qtbot, window)
        raw = window.inspect.raw
        qtbot.keyClicks(raw, "a")
        qtbot.keyClick(raw, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(raw, "b")
        _assert_exact(qtbot, window, "a\nb")


class TestFiles:
    @GUI_SETTINGS
    @given(tricky_text)
    def test_dropped_file_is_exact(self, qtbot, window, tmp_path: Path, text: str) -> None:  # noqa: ANN001
        path = tmp_path / "dropped.txt"
        path.write_bytes(text.encode("utf-8"))
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(path))])
        _drop(window.inspect.raw, mime)
        _assert_exact(qtbot, window, text)

    def test_dropped_text_is_inserted_exactly(self, qtbot, window) -> None:  # noqa: ANN001
        _clear(qtbot, window)
        _drop(window.inspect.raw, text_mime("\ufeff" + ISSUE_TEXT))
        _assert_exact(qtbot, window, "\ufeff" + ISSUE_TEXT)

    @GUI_SETTINGS
    @given(tricky_text)
    def test_file_open_is_exact(self, qtbot, window, tmp_path: Path, text: str) -> None:  # noqa: ANN001
        path = tmp_path / "opened.txt"
        path.write_bytes(text.encode("utf-8"))
        assert window.open_text(path)
        _assert_exact(qtbot, window, text)

    def test_bom_and_crlf_are_said_in_the_status_bar(self, qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
        path = tmp_path / "bom.txt"
        path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
        assert window.open_text(path)
        _assert_exact(qtbot, window, "\ufeffa\r\nb\r\n")
        msg = window.message_text()
        assert "BOM kept as U+FEFF" in msg and "2 CRLF line ends kept" in msg

    def test_invalid_utf8_names_the_byte_and_offers_replacement(self, qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
        path = tmp_path / "bad.txt"
        path.write_bytes(b"ok\r\n\xff!")
        before = window.vm.text
        assert not window.open_text(path)
        assert "bad.txt" in window.error_bar.message and "byte 4" in window.error_bar.message
        assert window.vm.text == before  # nothing silently changed
        assert window.replace_button.isVisibleTo(window)
        window.replace_button.click()
        _assert_exact(qtbot, window, "ok\r\n\ufffd!")
        assert "1 invalid UTF-8 sequences replaced by U+FFFD" in window.message_text()

    def test_two_line_crlf_file_matches_tiktoken(self, qtbot, window, tmp_path: Path, cl100k) -> None:  # noqa: ANN001
        """The issue's ``64 319 65``: cl100k's ids for a, CRLF, b (not 64 198 65, the CR dropped)."""
        ref = _tiktoken_ref("cl100k_base/cl100k_base.tiktoken")
        window.vm.set_tokenizer(cl100k, name="cl100k")
        path = tmp_path / "two.txt"
        path.write_bytes(b"a\r\nb")
        expected = ref.encode("a\r\nb")
        assert len(expected) == 3 and ref.decode_single_token_bytes(expected[1]) == b"\r\n"
        assert window.open_text(path)
        _assert_exact(qtbot, window, "a\r\nb")
        assert window.vm.encoding.ids == expected

    def test_one_megabyte_crlf_file_gives_tiktokens_count(self, tmp_path) -> None:  # noqa: ANN001
        """The real window opens the 1.1 MB CRLF file and shows tiktoken's token count. Run in a
        fresh interpreter: after the rest of the suite the test process holds gigabytes of other
        tests' objects, and every cyclic-GC pass over them made this one encode take minutes."""
        import os
        import subprocess
        import sys

        require(SHARED is not None, "shared corpora not found")
        path = SHARED / "corpora" / "wagahaiwa_nekodearu.txt"
        data = path.read_bytes()
        assert len(data) > 1_000_000 and b"\r\n" in data
        ref = _tiktoken_ref("cl100k_base/cl100k_base.tiktoken")
        expected = len(ref.encode(data.decode("utf-8"), disallowed_special=()))
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        out = subprocess.run(
            [sys.executable, "-c", _OPEN_AND_COUNT, str(path), str(tmp_path / "s.ini"), str(bundle_path("cl100k_base/cl100k_base.tiktoken"))],
            capture_output=True, text=True, timeout=400, env=env, check=False,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        same, tokens = out.stdout.split()[-2:]
        assert same == "same-text"
        assert int(tokens) == expected


_OPEN_AND_COUNT = """
import sys, time
from pathlib import Path
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
import tokviz
from tokviz.gui.main_window import MainWindow
w = MainWindow(settings=QSettings(sys.argv[2], QSettings.Format.IniFormat))
w.show()
w.vm.set_tokenizer(tokviz.load(sys.argv[3]), name="cl100k")
assert w.open_text(Path(sys.argv[1]))
end = time.monotonic() + 300
vm = w.vm
while not (vm.update is not None and vm.update.encoding.text == vm.text and not vm.is_busy()):
    app.processEvents()
    time.sleep(0.01)
    if time.monotonic() > end:
        sys.exit("timed out waiting for the encoding")
same = vm.encoding.text == Path(sys.argv[1]).read_bytes().decode("utf-8")
print("same-text" if same else "different-text", vm.update.stats.tokens)
"""


class TestSettings:
    def test_saved_text_comes_back_exactly(self, qtbot, window, settings) -> None:  # noqa: ANN001
        from tokviz.gui.main_window import MainWindow

        window.vm.set_text("\ufeff" + ISSUE_TEXT + "\x00\r", from_editor=False)
        window.save_settings()
        again = MainWindow(settings=settings)
        qtbot.addWidget(again)
        again.restore_settings()
        assert again.vm.text == "\ufeff" + ISSUE_TEXT + "\x00\r"
        assert again.inspect.raw.exact_text() == again.vm.text


class TestHighlight:
    TEXT = "x\r\n😀 target\r\ntwo 👍🏽 e\u0301 \u00a0end\r\n"

    def _encoded(self, qtbot, window):  # noqa: ANN001, ANN202
        vm = window.vm
        vm.set_text(self.TEXT, from_editor=False)
        wait_encoded(qtbot, vm)
        return vm, window.inspect.raw, OffsetMap(self.TEXT), vm.encoding

    def test_selected_token_lights_up_its_own_characters(self, qtbot, window) -> None:  # noqa: ANN001
        vm, raw, om, enc = self._encoded(qtbot, window)
        checked = 0
        for i, (s, e) in enumerate(enc.offsets):
            if e <= s:
                continue
            vm.select_token(i)
            raw.decorate()
            outlined = [x for x in raw.extraSelections() if x.format.hasProperty(QTextFormat.Property.OutlinePen)]
            assert len(outlined) == 1
            c = outlined[0].cursor
            assert (om.from_utf16(c.selectionStart()), om.from_utf16(c.selectionEnd())) == (s, e)
            checked += 1
        assert checked == len([1 for s, e in enc.offsets if e > s])
        assert "target" in [self.TEXT[s:e].strip() for s, e in enc.offsets]

    def test_hovering_a_character_lights_up_its_token(self, qtbot, window) -> None:  # noqa: ANN001
        vm, raw, om, enc = self._encoded(qtbot, window)
        for i, (s, e) in enumerate(enc.offsets):
            if e <= s or self.TEXT[s] in "\r\n":
                continue
            cur = raw.textCursor()
            cur.setPosition(om.to_utf16(s))
            raw._on_hover(cur.position())  # the UTF-16 position the mouse is over
            # the first token holding character s (byte-level tokens that split 👍 overlap on it)
            first = min(j for j, (a, b) in enumerate(enc.offsets) if a <= s < b)
            assert vm.hovered == enc.offsets[first], (i, self.TEXT[s:e])
            raw.decorate()
            lit = [x for x in raw.extraSelections() if x.format.background().color().alpha() == 110]
            got = [(om.from_utf16(x.cursor.selectionStart()), om.from_utf16(x.cursor.selectionEnd())) for x in lit]
            assert got == [enc.offsets[first]]

    def test_clicking_a_character_selects_the_token_holding_it(self, qtbot, window) -> None:  # noqa: ANN001
        vm, raw, om, enc = self._encoded(qtbot, window)
        target = next(i for i, (s, e) in enumerate(enc.offsets) if self.TEXT[s:e] == " target")
        s, e = enc.offsets[target]
        cur = raw.textCursor()
        cur.setPosition(om.to_utf16(s + 3))  # inside "target", after two CRLFs and an astral emoji
        rect = raw.cursorRect(cur)
        qtbot.mouseClick(raw.viewport(), Qt.MouseButton.LeftButton, pos=rect.center() + type(rect.center())(2, 0))
        assert vm.selected == target
        assert vm.encoding.offsets[vm.selected] == (s, e)


class TestUnknownTokens:
    def test_unknown_tokens_are_styled_in_every_view(self, qtbot, window) -> None:  # noqa: ANN001
        import tokviz
        from tokviz.gui.widgets.span_view import FLAG_UNKNOWN

        tok = tokviz.load(bundle_bytes("bert-base-uncased/vocab.txt"))
        vm = window.vm
        vm.set_tokenizer(tok, name="bert")
        vm.set_text("hi \U0001f9ff x", from_editor=False)
        wait_encoded(qtbot, vm)
        enc = vm.encoding
        unk = tok.token_to_id("[UNK]")
        idx = enc.ids.index(unk)
        assert vm.update.unknown == (idx,)
        # token pane
        src = window.inspect.tokens._src
        assert src.flags(idx) & FLAG_UNKNOWN
        assert not any(src.flags(i) & FLAG_UNKNOWN for i in range(len(enc.ids)) if i != idx)
        # raw pane: the characters it covers are marked
        raw = window.inspect.raw
        raw.decorate()
        om = OffsetMap(vm.text)
        spans = [(om.from_utf16(x.cursor.selectionStart()), om.from_utf16(x.cursor.selectionEnd())) for x in raw.extraSelections()
                 if x.format.underlineStyle() == x.format.UnderlineStyle.WaveUnderline and x.format.background().color() == raw.theme.error_bg]
        assert spans == [enc.offsets[idx]]
        # token card
        vm.select_token(idx)
        assert window.inspect.card.details.unknown
        assert "UNKNOWN" in window.inspect.card.toPlainText()


_COPY_AND_QUIT = """
import sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from tokviz.gui.app import hand_clipboard_to_qt
from tokviz.gui.main_window import MainWindow
w = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat))
w.show()
w.vm.set_text("a\\u00a0b\\r\\nc", from_editor=False)
def go():
    w.inspect.raw.selectAll()
    w.inspect.raw.copy()
    QTimer.singleShot(200, app.quit)
QTimer.singleShot(300, go)
app.aboutToQuit.connect(hand_clipboard_to_qt)
app.exec()
"""


class TestQuitAfterCopy:
    def test_the_app_exits_cleanly_after_a_copy(self, tmp_path) -> None:  # noqa: ANN001
        """Regression: quitting after a copy from an exact editor crashed (SIGSEGV) while Qt deleted
        the Python-made clipboard data at exit; run_app hands the clipboard to Qt before quitting."""
        import os
        import subprocess
        import sys

        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        out = subprocess.run(
            [sys.executable, "-c", _COPY_AND_QUIT, str(tmp_path / "s.ini")],
            capture_output=True, text=True, timeout=120, env=env, check=False,
        )
        assert out.returncode == 0, out.stderr[-2000:]
