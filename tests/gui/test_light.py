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


class TestWorkFollowsTheEye:
    def _tab_click(self, qtbot, window, widget) -> None:  # noqa: ANN001
        bar = window.tabs.tabBar()
        qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(window.tabs.indexOf(widget)).center())
        assert window.tabs.currentWidget() is widget

    def test_hidden_compare_waits_and_catches_up_when_shown(self, window, qtbot, gpt2, cl100k, encoded) -> None:  # noqa: ANN001
        compare = window.compare_tab
        self._tab_click(qtbot, window, compare)
        compare.vm.add_loaded(gpt2, name="gpt2")
        compare.vm.add_loaded(cl100k, name="cl100k")
        qtbot.waitUntil(lambda: compare.vm.analysis is not None and compare.vm.analysis.text == window.vm.text, timeout=20000)
        self._tab_click(qtbot, window, window.inspect)
        raw = window.inspect.raw
        raw.setFocus()
        qtbot.keyClick(raw, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(raw, "more words")
        encoded(qtbot, window.vm)
        qtbot.wait(600)  # longer than Compare's debounce of Inspect edits
        # Compare is hidden: it has not analysed the new text and runs nothing
        assert compare.vm.analysis.text != window.vm.text
        assert not compare.vm.is_busy()
        self._tab_click(qtbot, window, compare)
        qtbot.waitUntil(lambda: compare.vm.analysis.text == window.vm.text, timeout=20000)
        text = window.vm.text
        assert compare.vm.analysis.tokens == (len(gpt2.encode(text).ids), len(cl100k.encode(text).ids))

    def test_a_row_loaded_while_hidden_is_analysed_when_shown(self, window, qtbot, gpt2) -> None:  # noqa: ANN001
        compare = window.compare_tab
        assert window.tabs.currentWidget() is window.inspect
        compare.vm.add_loaded(gpt2, name="gpt2")
        assert compare.vm.stale and compare.vm.analysis is None and not compare.vm.is_busy()
        self._tab_click(qtbot, window, compare)
        qtbot.waitUntil(lambda: compare.vm.analysis is not None, timeout=20000)
        assert not compare.vm.stale

    def test_hidden_lattice_does_not_follow_until_shown(self, window, qtbot, cl100k, encoded) -> None:  # noqa: ANN001
        lat = window.lattice_tab.vm
        window.vm.set_tokenizer(cl100k, name="cl100k")
        encoded(qtbot, window.vm)
        assert lat.result is None and not lat.is_busy()
        self._tab_click(qtbot, window, window.lattice_tab)
        qtbot.waitUntil(lambda: lat.result is not None, timeout=20000)


def test_a_foreground_job_holds_other_view_models_background_jobs(qtbot) -> None:  # noqa: ANN001
    import threading

    from PySide6.QtCore import QObject

    from tokviz.gui.workers import Lanes

    owners = QObject(), QObject()  # (two view-models: each has its own Lanes)
    a, b = Lanes(owners[0]), Lanes(owners[1])
    go = threading.Event()
    order: list[str] = []

    def blocked(_token):  # noqa: ANN001, ANN202
        go.wait(20)
        order.append("encode")
        return "encode"

    def other(_token):  # noqa: ANN001, ANN202
        order.append("other")
        return "other"

    done: list[object] = []
    a.submit("encode", lambda: blocked, done.append, done.append)
    b.submit("compare-analysis", lambda: other, done.append, done.append)
    qtbot.wait(200)
    assert order == [] and b.is_busy("compare-analysis")  # waiting, not started
    go.set()
    qtbot.waitUntil(lambda: len(done) == 2, timeout=20000)
    assert order == ["encode", "other"]


class TestOneTokenizerPerFile:
    def test_compare_and_inspect_share_the_loaded_tokenizer(self, window, qtbot, encoded) -> None:  # noqa: ANN001
        from tokviz.io.registry import shared_registry

        from .conftest import bundle_path

        path = bundle_path("cl100k_base/cl100k_base.tiktoken")
        window.load_tokenizer(path)
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == path, timeout=30000)
        encoded(qtbot, window.vm)
        compare = window.compare_tab
        window.tabs.setCurrentWidget(compare)
        k = next(i for i, e in enumerate(compare._entries) if e.path == path)
        compare.catalog.setCurrentIndex(k)
        loads = shared_registry().stats().loads
        qtbot.mouseClick(compare.add_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(compare.vm.ready_rows()), timeout=30000)
        assert compare.vm.ready_rows()[0].tokenizer is window.vm.tokenizer
        assert shared_registry().stats().loads == loads  # handed out again, not loaded

    def test_picker_and_compare_share_one_listing(self, window) -> None:  # noqa: ANN001
        picker = [window.picker.itemData(i) for i in range(window.picker.count()) if window.picker.itemData(i)]
        listed = [str(e.path) for e in window.compare_tab._entries]
        assert listed and all(p in picker for p in listed)


def test_the_budget_is_a_setting(qtbot, settings) -> None:  # noqa: ANN001
    from tokviz.gui.main_window import MainWindow
    from tokviz.io.registry import DEFAULT_BUDGET_MB, shared_registry

    settings.setValue("tokenizers/budget_mb", 300)
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    try:
        w.restore_settings()
        assert shared_registry().budget_bytes == 300 * 1024 * 1024
    finally:
        shared_registry().set_budget(mb=DEFAULT_BUDGET_MB)


def test_a_long_text_is_compared_over_its_start_until_asked(window, qtbot, gpt2, encoded) -> None:  # noqa: ANN001
    from tokviz.gui.compare_viewmodel import WINDOW_CHARS

    line = "The quick brown fox jumps over the lazy dog 12345.\r\n"  # 52 chars
    text = line * (WINDOW_CHARS // len(line) + 40)
    window.vm.set_text(text, from_editor=False)
    encoded(qtbot, window.vm, timeout=60000)
    compare = window.compare_tab
    compare.vm.add_loaded(gpt2, name="gpt2")
    bar = window.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(window.tabs.indexOf(compare)).center())
    qtbot.waitUntil(lambda: compare.vm.analysis is not None, timeout=60000)
    a = compare.vm.analysis
    # cut after the last whole line within the window: whole CRLF lines only
    n_lines = WINDOW_CHARS // len(line)
    assert a.text == line * n_lines and a.tokens == (len(gpt2.encode(line * n_lines).ids),)
    assert compare.whole_button.isVisible() and "the first" in compare.text_stats.text()
    qtbot.mouseClick(compare.whole_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.vm.analysis.text == text, timeout=120000)
    assert compare.vm.analysis.tokens == (len(gpt2.encode(text).ids),)
    assert not compare.whole_button.isVisible()


def test_a_deleted_view_models_last_load_holds_nothing(qtbot) -> None:  # noqa: ANN001
    """A window closed while its load ran: that job's result is dropped; other lanes still run."""
    import threading

    import shiboken6
    from PySide6.QtCore import QObject

    from tokviz.gui.workers import Lanes

    gone, alive = QObject(), QObject()
    a, b = Lanes(gone), Lanes(alive)
    go = threading.Event()
    a.submit("load", lambda: (lambda _t: go.wait(20)), lambda _r: None, lambda _e: None)
    shiboken6.delete(gone)  # deletes its child `a` too: `a` never hears from its job
    done: list[object] = []
    b.submit("caret", lambda: (lambda _t: "ran"), done.append, done.append)
    qtbot.waitUntil(lambda: done == ["ran"], timeout=20000)
    go.set()
