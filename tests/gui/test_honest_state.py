"""What the window says is true: failed loads, the error bar's count, Compare's row names, the
status bar of the tab shown, the "Add special tokens" box, the lint trace after a change, plurals,
keys beside the charts and no cut text."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from support import bundle_path

import tokviz
from tokviz.gui.display import counted
from tokviz.gui.main_window import MainWindow

CTRL = Qt.KeyboardModifier.ControlModifier


def _bad_tokenizer(tmp_path: Path) -> Path:
    bad = tmp_path / "broken.json"
    bad.write_text('{"a": 1}', encoding="utf-8")
    return bad


def _wait_failed(qtbot, window) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: window.error_bar.isVisible() and not window.vm.is_busy(), timeout=20000)


def _click_tab(qtbot, window, widget) -> None:  # noqa: ANN001
    bar = window.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(window.tabs.indexOf(widget)).center())
    assert window.tabs.currentWidget() is widget


class TestFailedLoads:
    def test_a_failed_file_leaves_no_entry_and_is_named_once(self, qtbot, window, tmp_path) -> None:  # noqa: ANN001
        bad = _bad_tokenizer(tmp_path)
        n = window.picker.count()
        window.load_tokenizer(bad)
        _wait_failed(qtbot, window)
        assert window.picker.findData(str(bad)) < 0 and window.picker.count() == n
        assert window.picker.currentText().startswith("gpt2")  # the active tokenizer, still loaded
        msg = window.error_bar.message
        assert msg.count(str(bad)) == 1 and "errors" not in msg

    def test_a_listed_entry_is_marked_failed_and_not_parsed_again(self, qtbot, settings, gpt2, tmp_path) -> None:  # noqa: ANN001
        bad = _bad_tokenizer(tmp_path)
        settings.setValue("recent", [str(bad)])
        w = MainWindow(settings=settings)
        qtbot.addWidget(w)
        w.show()
        w.vm.set_tokenizer(gpt2, name="gpt2")
        i = w.picker.findData(str(bad))
        assert i >= 0
        w.picker.setFocus()
        w.picker.setCurrentIndex(i - 1)
        qtbot.keyClick(w.picker, Qt.Key.Key_Down)  # the user chooses the recent entry
        _wait_failed(qtbot, w)
        i = w.picker.findData(str(bad))
        assert w.picker.itemText(i).endswith("[failed]")
        assert w.picker.itemData(i, Qt.ItemDataRole.ToolTipRole).count(str(bad)) == 1
        assert [str(p) for p in w._recent()] == []  # no longer offered as recent
        w.error_bar.dismiss()
        loads = []
        w.vm.tokenizer_loading.connect(loads.append)
        w.picker.setCurrentIndex(i - 1)
        qtbot.keyClick(w.picker, Qt.Key.Key_Down)  # chosen again: says why, parses nothing
        assert loads == [] and "try again" in w.error_bar.message
        assert w.picker.currentText().startswith("gpt2")

    def test_the_same_error_again_counts_once(self, qtbot, window) -> None:  # noqa: ANN001
        bar = window.error_bar
        bar.show_error("x.json: broken")
        bar.show_error("x.json: broken")
        assert bar.count == 1 and "errors" not in bar.message
        bar.show_error("y.json: broken")
        assert "the latest of 2 errors" in bar.message
        qtbot.keyClick(window, Qt.Key.Key_Escape)
        assert not bar.isVisible() and bar.count == 0


class TestCompareNames:
    def test_rows_of_the_same_name_say_their_format(self, qtbot, window, gpt2) -> None:  # noqa: ANN001
        vm = window.compare_tab.vm
        vm.add_loaded(gpt2, name="Mistral 7B v0.1", path="/m/tokenizer.json.gz")
        vm.add_loaded(gpt2, name="Mistral 7B v0.1", path="/m/tokenizer.model.gz")
        vm.add_loaded(gpt2, name="cl100k_base", path="/c/cl100k.tiktoken")
        names = [r.name for r in vm.rows]
        assert names == ["Mistral 7B v0.1 · json", "Mistral 7B v0.1 · .model", "cl100k_base"]
        items = [window.compare_tab.list.item(k).text() for k in range(window.compare_tab.list.count())]
        assert items[:2] == ["1. Mistral 7B v0.1 · json", "2. Mistral 7B v0.1 · .model"]
        vm.add_loaded(gpt2, name="cl100k_base", path="/c/cl100k.tiktoken")  # the same file twice
        assert [r.name for r in vm.rows][2:] == ["cl100k_base · .tiktoken (1)", "cl100k_base · .tiktoken (2)"]
        vm.remove(0)
        assert vm.rows[0].name == "Mistral 7B v0.1"  # no longer shared


class TestStatusBar:
    def test_the_status_bar_describes_the_tab_shown(self, qtbot, window) -> None:  # noqa: ANN001
        assert window.stats.isVisible() and "token" in window.stats.text()
        for tab, head in ((window.compare_tab, "Compare:"), (window.chat_tab, "Chat:"), (window.train_tab, "Train:"),
                          (window.lattice_tab, "Lattice:"), (window.vocab_tab, "Vocabulary:")):
            _click_tab(qtbot, window, tab)
            assert not window.stats.isVisible() and window.tab_status.isVisible()
            assert window.tab_status.text().startswith(head)
        _click_tab(qtbot, window, window.inspect)
        assert window.stats.isVisible() and not window.tab_status.isVisible()


class TestSpecialTokensBox:
    @pytest.mark.parametrize(
        ("rel", "enabled", "hint"),
        [
            ("mistral-7b-v0.1/tokenizer.model", False, "SentencePiece"),
            ("mistral-7b-v0.1/tokenizer.json", True, ""),
            ("gpt2/r50k_base.tiktoken", False, "tiktoken"),
        ],
        ids=["spm-model", "hf-json-with-bos", "tiktoken"],
    )
    def test_enabled_only_where_it_adds_tokens(self, qtbot, window, rel: str, enabled: bool, hint: str) -> None:  # noqa: ANN001
        path = bundle_path(rel)
        window.load_tokenizer(path)
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == path and not window.vm.is_busy(), timeout=60000)
        assert window.special_box.isEnabled() is enabled
        assert window.special_action.isEnabled() is enabled
        assert (hint in window.special_hint.text()) and window.special_hint.isHidden() is (not hint)
        if hint:
            assert hint in window.special_box.toolTip()
        # the reference: does the box change the encoding? (HF adds <s> for the json, nothing else)
        tok = window.vm.tokenizer
        text = "hello world"
        changes = tok.encode(text).ids != tok.encode(text, add_special_tokens=False).ids
        assert changes is enabled


class TestLintTrace:
    def test_the_trace_is_cleared_when_the_tokenizer_changes(self, qtbot, window, encoded, gpt2) -> None:  # noqa: ANN001
        mistral = tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.json"))
        window.vm.set_text("中文 中文", from_editor=False)
        window.vm.set_tokenizer(mistral, name="mistral")
        encoded(qtbot, window.vm)
        panel = window.lint_panel
        qtbot.waitUntil(lambda: panel.lvm.view is not None and panel.lvm.view.encoding.text == "中文 中文", timeout=20000)
        window.vm.select_token(2)
        qtbot.waitUntil(lambda: panel.stages.topLevelItemCount() > 0, timeout=5000)
        old = [panel.stages.topLevelItem(k).text(3) for k in range(panel.stages.topLevelItemCount())]
        assert any("中" in t for t in old)
        window.vm.set_text("plain ascii words", from_editor=False)
        window.vm.set_tokenizer(gpt2, name="gpt2")
        encoded(qtbot, window.vm)
        qtbot.waitUntil(lambda: panel.lvm.view is not None and panel.lvm.view.encoding.text == "plain ascii words", timeout=20000)
        now = [panel.stages.topLevelItem(k).text(3) for k in range(panel.stages.topLevelItemCount())]
        assert not any("中" in t for t in now)  # nothing of the Mistral text is left


class TestWording:
    def test_counts_are_singular_for_one(self, qtbot, window, encoded) -> None:  # noqa: ANN001
        assert (counted(1, "finding"), counted(2, "finding"), counted(1, "chunk")) == ("1 finding", "2 findings", "1 chunk")
        window.vm.set_text("a", from_editor=False)
        encoded(qtbot, window.vm)
        assert "1 chunk ·" in window.inspect.chunk_box.header.text()
        assert window.stats.text().startswith("1 token · 1 char · 1 byte · 1 word")

    def test_per_script_key_is_beside_the_chart(self, qtbot, window, gpt2) -> None:  # noqa: ANN001
        tab = window.compare_tab
        _click_tab(qtbot, window, tab)
        tab.vm.add_loaded(gpt2, name="gpt2", path=None)
        qtbot.waitUntil(lambda: tab.vm.analysis is not None, timeout=20000)
        assert tab.script_chart.plotItem.legend is None  # no legend item over the bars
        assert "gpt2" in tab.script_legend.text()

    def test_train_chart_units_are_titles_not_rotated_axis_labels(self, qtbot, window) -> None:  # noqa: ANN001
        tab = window.train_tab
        _click_tab(qtbot, window, tab)  # the first visit trains the toy corpus
        qtbot.waitUntil(lambda: tab.vm.run is not None and bool(tab.chart._plots), timeout=60000)
        for p in tab.chart._plots:
            assert p.getAxis("left").labelText == ""
        assert "entries:" in tab.chart._plots[0].titleLabel.text

    def test_status_text_elides_with_a_tooltip(self, qtbot) -> None:  # noqa: ANN001
        from tokviz.gui.widgets.form import ElidedLabel

        lab = ElidedLabel("12,345 tokens · 67,890 chars · 123,456 bytes · 9,876 words · 3.21 bytes/token")
        qtbot.addWidget(lab)
        lab.resize(120, 20)
        lab.show()
        assert lab.is_elided() and lab.toolTip() == lab.text()
        lab.resize(2000, 20)
        assert not lab.is_elided() and lab.toolTip() == ""
