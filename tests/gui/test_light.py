"""The app stays light and quick (issue 24): the numbers stay in view, work follows the eye,
one tokenizer per file shared by every tab."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt


def _visible(widget) -> bool:  # noqa: ANN001
    return widget.isVisible() and widget.width() > 0


class TestNumbersStayInView:
    def test_a_file_message_shows_beside_the_token_count(self, window, qtbot, tmp_path: Path, encoded) -> None:  # noqa: ANN001
        path = tmp_path / "crlf.txt"
        path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
        assert window.open_text(path)
        encoded(qtbot, window.vm)
        assert "3 CRLF line ends kept" in window.message_text()
        assert _visible(window.status_message)
        # the count of the opened text is on screen while the message is
        n = len(window.vm.encoding.ids)
        assert _visible(window.stats) and f"{n} token" in window.stats.text()
        # typing changes the count, and the new count shows at once (the message still there)
        window.inspect.raw.setFocus()
        qtbot.keyClick(window.inspect.raw, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(window.inspect.raw, " four five")
        qtbot.waitUntil(lambda: window.vm.text.endswith(" four five") and window.vm.update.encoding.text == window.vm.text)
        n2 = len(window.vm.encoding.ids)
        assert n2 > n and f"{n2} token" in window.stats.text()
        assert _visible(window.stats) and window.statusBar().currentMessage() == ""

    def test_the_message_clears_itself(self, window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
        window.show_message("note", seconds=0.05)
        assert _visible(window.status_message)
        qtbot.waitUntil(lambda: not window.status_message.isVisible(), timeout=2000)
        assert _visible(window.stats)

    def test_menu_tips_do_not_cover_the_numbers(self, window, qtbot) -> None:  # noqa: ANN001
        from PySide6.QtCore import QCoreApplication
        from PySide6.QtGui import QStatusTipEvent

        QCoreApplication.sendEvent(window, QStatusTipEvent("Open a text file"))
        assert window.message_text() == "Open a text file" and _visible(window.stats)
