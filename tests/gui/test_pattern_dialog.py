"""Rank files that need a pattern, in the GUI: the dialog, the remembered choice, the card row."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication
from support import bundle_bytes, bundle_path as shared_bundle_path

from tokviz.gui.pattern_choice import (
    RankFileFacts,
    RankPatternChoice,
    check_choice,
    forget_choice,
    rank_file_facts,
    remember_choice,
    remembered_choice,
)
from tokviz.gui.widgets.exact_edit import text_mime
from tokviz.io.tiktoken_ranks import CL100K_PATTERN, R50K_PATTERN


@pytest.fixture(scope="module")
def custom_ranks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """r50k's ranks without the last line: a rank file no published encoding matches."""
    lines = bundle_bytes("gpt2/r50k_base.tiktoken").splitlines(keepends=True)
    p = tmp_path_factory.mktemp("ranks") / "custom.tiktoken"
    p.write_bytes(b"".join(lines[:-1]))
    return p


class TestChoice:
    def test_presets_are_named(self) -> None:
        assert RankPatternChoice(CL100K_PATTERN).preset == "cl100k"
        assert RankPatternChoice(r"\w+").preset == "custom"

    def test_check(self) -> None:
        facts = RankFileFacts(entries=10, max_rank=9)
        ok, problem = check_choice(r"\w+|\s+", [("<|end|>", "10"), ("", "")], facts)
        assert problem == "" and ok == RankPatternChoice(r"\w+|\s+", {"<|end|>": 10})
        assert "does not compile" in check_choice("(", [], facts)[1]
        assert "is a rank of the file" in check_choice(r"\w", [("<|x|>", "9")], facts)[1]
        assert "listed twice" in check_choice(r"\w", [("<|x|>", "10"), ("<|x|>", "11")], facts)[1]
        assert "two special tokens have id 10" == check_choice(r"\w", [("<|x|>", "10"), ("<|y|>", "10")], facts)[1]
        assert "whole number" in check_choice(r"\w", [("<|x|>", "ten")], facts)[1]

    def test_facts(self, custom_ranks: Path) -> None:
        facts = rank_file_facts(custom_ranks)
        # r50k has ranks 0..50255; the last line is gone
        assert facts == RankFileFacts(entries=50255, max_rank=50254)

    def test_remembered_per_file(self, settings, custom_ranks: Path, tmp_path: Path) -> None:  # noqa: ANN001
        choice = RankPatternChoice(R50K_PATTERN, {"<|endoftext|>": 50255})
        remember_choice(settings, custom_ranks, choice)
        assert remembered_choice(settings, custom_ranks) == choice
        assert remembered_choice(settings, tmp_path / "other.tiktoken") is None
        forget_choice(settings, custom_ranks)
        assert remembered_choice(settings, custom_ranks) is None


class TestDialog:
    def test_preset_fills_the_pattern_and_editing_makes_it_custom(self, qtbot, custom_ranks: Path) -> None:  # noqa: ANN001
        from tokviz.gui.pattern_dialog import PatternDialog

        d = PatternDialog(custom_ranks, facts=rank_file_facts(custom_ranks))
        qtbot.addWidget(d)
        d.preset_box.setCurrentIndex(d.preset_box.findData("r50k"))
        assert d.pattern_edit.exact_text() == R50K_PATTERN
        d.pattern_edit.moveCursor(QTextCursor.MoveOperation.End)
        qtbot.keyClicks(d.pattern_edit, "|x")
        assert d.pattern_edit.exact_text() == R50K_PATTERN + "|x"
        assert d.preset_box.currentData() == "custom"
        qtbot.keyClick(d.pattern_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(d.pattern_edit, "(")
        assert not d.buttons.button(d.buttons.StandardButton.Ok).isEnabled()
        assert "does not compile" in d.problem.text()
        assert "does not compile" in d.preview.text()

    def test_test_text_shows_the_patterns_chunks_exactly(self, qtbot, custom_ranks: Path) -> None:  # noqa: ANN001
        from tokviz.gui.pattern_dialog import PatternDialog

        d = PatternDialog(custom_ranks, facts=rank_file_facts(custom_ranks))
        qtbot.addWidget(d)
        d.preset_box.setCurrentIndex(d.preset_box.findData("r50k"))
        qtbot.keyClick(d.test_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QApplication.clipboard().setMimeData(text_mime("it's\r\n\u00a0x"))
        qtbot.keyClick(d.test_edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
        assert d.test_edit.exact_text() == "it's\r\n\u00a0x"  # CR, CRLF and NBSP kept
        # the reference: the r50k pattern run by the regex module, as tiktoken runs it (no anchors)
        import regex

        want = [m.group() for m in regex.finditer(R50K_PATTERN, "it's\r\n\u00a0x")]
        assert f"{len(want)} chunks" in d.preview.text()
        shown = [piece for piece in regex.findall(r"<span style='background:#[0-9a-f]+'>(.*?)</span>", d.preview.text())]
        assert len(shown) == len(want)

    def test_special_rows_start_after_the_last_rank(self, qtbot, custom_ranks: Path) -> None:  # noqa: ANN001
        from tokviz.gui.pattern_dialog import PatternDialog

        d = PatternDialog(custom_ranks, facts=rank_file_facts(custom_ranks))
        qtbot.addWidget(d)
        d._add_row("<|endoftext|>", d._next_id())
        d._add_row("<|other|>", d._next_id())
        d.accept()
        assert d.choice is not None and dict(d.choice.special_tokens) == {"<|endoftext|>": 50255, "<|other|>": 50256}


class TestWindow:
    def _accept_with(self, monkeypatch, preset: str, specials: dict[str, int]) -> list[int]:  # noqa: ANN001
        from tokviz.gui import pattern_dialog

        calls: list[int] = []

        def fake_exec(self) -> int:  # noqa: ANN001
            calls.append(1)
            self.preset_box.setCurrentIndex(self.preset_box.findData(preset))
            for literal, id_ in specials.items():
                self._add_row(literal, id_)
            self.accept()
            return int(pattern_dialog.QDialog.DialogCode.Accepted.value)

        monkeypatch.setattr(pattern_dialog.PatternDialog, "exec", fake_exec)
        return calls

    def test_open_asks_once_then_remembers(self, window, qtbot, monkeypatch, custom_ranks: Path) -> None:  # noqa: ANN001
        calls = self._accept_with(monkeypatch, "r50k", {"<|endoftext|>": 50255})
        window.load_tokenizer(custom_ranks, name="custom")
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == custom_ranks and not window.vm.is_busy(), timeout=20000)
        tok = window.vm.tokenizer
        assert tok.config.extra["pattern_preset"] == "r50k"
        assert tok.token_to_id("<|endoftext|>") == 50255
        assert calls == [1]
        # reopening uses the remembered choice: no dialog
        window.vm.set_tokenizer(tok, name="x")
        window.load_tokenizer(custom_ranks, name="custom")
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == custom_ranks and not window.vm.is_busy(), timeout=20000)
        assert calls == [1]

    def test_cancel_keeps_the_current_tokenizer(self, window, qtbot, monkeypatch, custom_ranks: Path, tmp_path: Path) -> None:  # noqa: ANN001
        from tokviz.gui import pattern_dialog

        monkeypatch.setattr(pattern_dialog.PatternDialog, "exec", lambda self: 0)
        other = tmp_path / "other.tiktoken"
        other.write_bytes(custom_ranks.read_bytes())
        before = window.vm.tokenizer
        seen = []
        window.vm.pattern_needed.connect(seen.append)
        window.load_tokenizer(other, name="other")
        qtbot.waitUntil(lambda: bool(seen) and not window.vm.is_busy(), timeout=20000)
        assert window.vm.tokenizer is before

    def test_card_says_which_preset(self, window, qtbot, monkeypatch, custom_ranks: Path, tmp_path: Path) -> None:  # noqa: ANN001
        self._accept_with(monkeypatch, "cl100k", {})
        p = tmp_path / "third.tiktoken"
        p.write_bytes(custom_ranks.read_bytes())
        window.load_tokenizer(p, name="third")
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == p and window.vm.encoding is not None
                        and not window.vm.is_busy(), timeout=20000)
        assert window.vm.pattern_label == "cl100k preset"
        window.vm.select_token(0)
        qtbot.waitUntil(lambda: "cl100k preset" in window.inspect.card.toPlainText(), timeout=5000)

    def test_gguf_and_folder(self, window, qtbot) -> None:  # noqa: ANN001
        pytest.importorskip("gguf")
        path = shared_bundle_path("gguf/ggml-vocab-qwen2.gguf")
        window.load_tokenizer(path.parent, name="gguf folder")  # the folder's first *.gguf
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == path.parent and not window.vm.is_busy(), timeout=30000)
        # the first *.gguf in name order is bert-bge: WordPiece, no pattern
        assert window.vm.tokenizer.source.endswith("ggml-vocab-bert-bge.gguf")
        assert window.vm.pattern_label is None
        window.load_tokenizer(path, name="qwen2")
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == path and not window.vm.is_busy(), timeout=30000)
        assert window.vm.pattern_label == "llama.cpp pre-tokenizer 'qwen2'"
