"""The rank-file dialog starts from what the file's content says (Qwen's 151,643 ranks: the Qwen
preset and Qwen's special tokens); picking another family's preset fills that family's specials."""

from __future__ import annotations

import base64
from itertools import product
from pathlib import Path

import pytest
from PySide6.QtCore import Qt


@pytest.fixture(scope="module")
def qwen_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tokens = [bytes([b]) for b in range(256)] + [bytes(p) for p in product(range(256), repeat=2)]
    tokens += [bytes(t) for t in product(range(256), repeat=3)][: 151_643 - len(tokens)]
    p = tmp_path_factory.mktemp("qwen") / "qwen.tiktoken"
    p.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens)))
    return p


def _specials(dialog) -> dict[str, int]:  # noqa: ANN001
    return {literal: int(id_) for literal, id_ in dialog._rows()}


def test_qwen_is_preselected_with_its_specials(qtbot, qwen_file: Path) -> None:  # noqa: ANN001
    from tokviz.gui.pattern_choice import rank_file_facts
    from tokviz.gui.pattern_dialog import PatternDialog
    from tokviz.io.tiktoken_ranks import QWEN_PATTERN, qwen_specials

    dialog = PatternDialog(qwen_file, facts=rank_file_facts(qwen_file))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.preset_box.currentData() == "qwen"
    assert dialog.pattern_edit.toPlainText() == QWEN_PATTERN
    assert _specials(dialog) == qwen_specials(151643)
    # another family's preset (keyboard): its specials replace the ones the preset filled in
    dialog.preset_box.setFocus()
    while dialog.preset_box.currentData() != "whisper":
        qtbot.keyClick(dialog.preset_box, Qt.Key.Key_Down)
    assert _specials(dialog)["<|startoftranscript|>"] == 151644
    while dialog.preset_box.currentData() != "cl100k":
        qtbot.keyClick(dialog.preset_box, Qt.Key.Key_Up)
    assert _specials(dialog) == {}  # cl100k's special ids are not a function of the rank count
    while dialog.preset_box.currentData() != "qwen":
        qtbot.keyClick(dialog.preset_box, Qt.Key.Key_Down)
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert dialog.choice is not None and dict(dialog.choice.special_tokens) == qwen_specials(151643)


def test_rows_the_user_typed_are_kept(qtbot, qwen_file: Path) -> None:  # noqa: ANN001
    from tokviz.gui.pattern_choice import rank_file_facts
    from tokviz.gui.pattern_dialog import PatternDialog

    dialog = PatternDialog(qwen_file, facts=rank_file_facts(qwen_file))
    qtbot.addWidget(dialog)
    dialog.table.setRowCount(0)
    dialog._add_row("<|mine|>", 151643)
    dialog.preset_box.setCurrentIndex(dialog.preset_box.findData("llama3"))
    assert _specials(dialog) == {"<|mine|>": 151643}
