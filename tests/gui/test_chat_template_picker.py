"""The Chat tab's template picker: a folder with several chat templates shows them in a combo box;
picking one with the keyboard renders with it. A tokenizer with one template shows no picker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

DEFAULT = "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}"
TOOLS = "TOOLS{% for m in messages %}[{{ m.content }}]{% endfor %}"


def _folder(tmp_path: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    (tmp_path / "tokenizer.json").write_text(tok.to_str(), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<|endoftext|>",
        "chat_template": [{"name": "default", "template": DEFAULT}, {"name": "tool_use", "template": TOOLS}],
    }), encoding="utf-8")
    return tmp_path


@pytest.fixture
def tab(qtbot):  # noqa: ANN001, ANN201
    from tokviz.gui.chat_tab import ChatTab
    from tokviz.gui.viewmodel import InspectViewModel

    t = ChatTab(InspectViewModel())
    qtbot.addWidget(t)
    t.resize(1200, 800)
    t.show()
    yield t
    qtbot.waitUntil(lambda: not t.vm.is_busy(), timeout=20000)


def _text(qtbot, tab, needle: str) -> str:  # noqa: ANN001
    qtbot.waitUntil(lambda: tab.vm.view is not None and not tab.vm.is_busy() and needle in tab.vm.view.result.text,
                    timeout=20000)
    return tab.vm.view.result.text


def test_pick_a_named_template_with_the_keyboard(qtbot, tab, tmp_path) -> None:  # noqa: ANN001
    import tokviz

    tab.vm.inspect.set_tokenizer(tokviz.load(_folder(tmp_path)), name="two-templates")
    assert _text(qtbot, tab, "<|im_start|>").startswith("<|endoftext|><|im_start|>")  # default, with its bos
    assert tab.own_pick.isVisible() and [tab.own_pick.itemText(i) for i in range(tab.own_pick.count())] == [
        "default", "tool_use"]
    tab.own_pick.setFocus()
    qtbot.keyClick(tab.own_pick, Qt.Key.Key_Down)
    assert _text(qtbot, tab, "TOOLS").startswith("TOOLS[")
    assert "'tool_use'" in tab.template_label.text()
    qtbot.keyClick(tab.own_pick, Qt.Key.Key_Up)
    assert _text(qtbot, tab, "<|im_start|>").startswith("<|endoftext|>")


def test_no_picker_for_one_template(qtbot, tab) -> None:  # noqa: ANN001
    import tokviz
    from support import bundle_path

    tab.vm.inspect.set_tokenizer(tokviz.load(bundle_path("qwen3/tokenizer.json")), name="qwen3")
    qtbot.waitUntil(lambda: tab.vm.view is not None and not tab.vm.is_busy(), timeout=20000)
    assert not tab.own_pick.isVisible()
