"""The Chat tab and the caret panel, offscreen: edits re-render, errors show, the panel follows the caret."""

from __future__ import annotations

import pytest
from support import bundle_path


@pytest.fixture(scope="module")
def qwen3():  # noqa: ANN201
    import tokviz

    return tokviz.load(bundle_path("qwen3/tokenizer.json"))


@pytest.fixture
def tab(qtbot):  # noqa: ANN001, ANN201
    from tokviz.gui.chat_tab import ChatTab
    from tokviz.gui.theme import theme_for
    from tokviz.gui.viewmodel import InspectViewModel

    t = ChatTab(InspectViewModel())
    t.set_theme(theme_for(False))
    qtbot.addWidget(t)
    t.resize(1300, 800)
    t.show()
    yield t
    qtbot.waitUntil(lambda: not t.vm.is_busy(), timeout=20000)  # no result may arrive after the widget is gone


def _wait_result(qtbot, tab):  # noqa: ANN001, ANN202
    qtbot.waitUntil(lambda: tab.vm.view is not None and not tab.vm.is_busy(), timeout=20000)
    return tab.vm.view.result


class TestChatTab:
    def test_renders_roles_and_lints(self, qtbot, tab, qwen3) -> None:  # noqa: ANN001
        from tokviz.analysis.chat import render_chat
        from tokviz.gui.chat_tab import _roles_of_tokens

        tab.vm.inspect.set_tokenizer(qwen3, name="qwen3")
        result = _wait_result(qtbot, tab)
        expected = render_chat(qwen3, tab.vm.messages, add_generation_prompt=True)
        assert result.ids == expected.ids
        roles = _roles_of_tokens(result)
        assert {"system", "user", "assistant"} <= set(roles) and None in roles
        assert tab.lint_ids == [lint.id for lint in result.lints] and "control-in-user" in tab.lint_ids
        assert "control-in-user" in tab.lints.toPlainText()
        assert "tokens" in tab.render_head.text() and "Sanitised" in tab.sanitized_head.text()

    def test_edit_add_move_remove(self, qtbot, tab, qwen3) -> None:  # noqa: ANN001
        tab.vm.inspect.set_tokenizer(qwen3, name="qwen3")
        _wait_result(qtbot, tab)
        tab.list.setCurrentRow(1)
        tab.content.setPlainText("Edited 中文")
        tab._commit_content()
        qtbot.waitUntil(lambda: tab.vm.view is not None and "Edited 中文" in tab.vm.view.result.text, timeout=20000)
        assert tab.vm.messages[0]["content"] == "You are a helpful assistant."  # the other messages stay
        n = len(tab.vm.messages)
        tab._add()
        assert len(tab.vm.messages) == n + 1
        tab.list.setCurrentRow(1)
        tab._move(1)
        assert tab.vm.messages[2]["content"] == "Edited 中文"
        tab.vm.remove_message(2)
        assert all(m.get("content") != "Edited 中文" for m in tab.vm.messages)

    def test_template_error_shows_line(self, qtbot, tab, qwen3, tmp_path) -> None:  # noqa: ANN001
        tab.vm.inspect.set_tokenizer(qwen3, name="qwen3")
        _wait_result(qtbot, tab)
        bad = tmp_path / "bad.jinja"
        bad.write_bytes(b"ok\n{% for m in messages %}\n{{ m.content }\n")
        tab.vm.load_template_file(str(bad))
        qtbot.waitUntil(lambda: tab.error.isVisible(), timeout=20000)
        assert "line 3" in tab.error.text() and tab.lint_ids == ["raises"]
        tab.vm.set_tools_json("[not json")
        assert "tools" in tab.error.text()


class TestCaretPanel:
    def test_follows_caret(self, qtbot) -> None:  # noqa: ANN001
        import tokviz
        from tokviz.analysis.healing import analyze_caret
        from tokviz.gui.caret_viewmodel import CaretViewModel
        from tokviz.gui.viewmodel import InspectViewModel
        from tokviz.gui.widgets.caret_panel import CaretPanel

        tok = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        inspect = InspectViewModel()
        panel = CaretPanel(CaretViewModel(inspect=inspect))
        qtbot.addWidget(panel)
        panel.show()
        inspect.set_tokenizer(tok, name="r50k")
        text = "print('Hello, worl🙂 <|endoftext|>"
        inspect.set_text(text)
        panel.vm.set_caret_utf16(18)  # after "worl" (no surrogate pair before it)
        qtbot.waitUntil(lambda: panel.vm.view is not None and panel.vm.view.caret == 18, timeout=20000)
        view = panel.vm.view
        assert view.healing.stable == analyze_caret(tok, text[:18]).stable
        assert view.healing.rollback_covering.k == 2
        assert "325" in panel.summary.text() and "␣worl" in panel.summary.text()
        assert panel.modes.rowCount() == 6 and panel.hits.rowCount() == 1
        # the caret after the emoji: UTF-16 position 20 is code point 19
        panel.vm.set_caret_utf16(20)
        qtbot.waitUntil(lambda: panel.vm.view.caret == 19 and not inspect.is_busy(), timeout=20000)
        qtbot.waitUntil(lambda: not panel.vm._lanes.any_busy(), timeout=20000)


def test_screenshot_of_the_chat_tab(tmp_path) -> None:  # noqa: ANN001
    import os
    import subprocess
    import sys

    out = tmp_path / "chat.png"
    r = subprocess.run(
        [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tokenizer",
         str(bundle_path("qwen3/tokenizer.json")), "--tab", "chat", "--size", "1200x800"],
        capture_output=True, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=180,
    )
    assert r.returncode == 0, r.stderr
    from PySide6.QtGui import QImage

    assert (QImage(str(out)).width(), QImage(str(out)).height()) == (1200, 800)
