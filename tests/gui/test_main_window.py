"""The main window: linked panes, view toggles, token card, error bar, exports, settings, screenshots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt

from tokviz.gui.display import ViewMode


def _center(view, i: int) -> QPointF:  # noqa: ANN001 - viewport position of item i
    r = view.item_rect(i)
    return QPointF(r.center().x(), r.center().y() - view.verticalScrollBar().value())


class TestLinking:
    def test_hovering_a_token_highlights_its_span_in_every_pane(self, window, qtbot) -> None:  # noqa: ANN001
        tab = window.inspect
        enc = window.vm.encoding
        i = enc.tokens.index("Ġworld")
        qtbot.mouseMove(tab.tokens.viewport(), _center(tab.tokens, i).toPoint())
        qtbot.waitUntil(lambda: window.vm.hovered == (5, 11), timeout=3000)
        # raw pane: an extra selection over "world" (UTF-16 positions 5..11)
        spans = [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in tab.raw.extraSelections()]
        assert (5, 11) in spans
        # chunk pane highlights its overlapping chunk, normalized pane the same characters
        assert tab.chunks.hover_span == (5, 11)
        assert tab.normalized.highlighted_spans(0, 100) == [(5, 11)]

    def test_hovering_raw_text_highlights_the_token(self, window, qtbot) -> None:  # noqa: ANN001
        raw = window.inspect.raw
        cur = raw.textCursor()
        cur.setPosition(7)  # inside "world"
        rect = raw.cursorRect(cur)
        qtbot.mouseMove(raw.viewport(), rect.center())
        qtbot.waitUntil(lambda: window.vm.hovered == (5, 11), timeout=3000)
        assert window.inspect.tokens.hover_span == (5, 11)

    def test_selecting_a_range_in_raw_selects_it_everywhere(self, window) -> None:  # noqa: ANN001
        raw = window.inspect.raw
        cur = raw.textCursor()
        cur.setPosition(0)
        cur.setPosition(5, cur.MoveMode.KeepAnchor)
        raw.setTextCursor(cur)
        assert window.vm.hovered == (0, 5)
        assert window.inspect.tokens.hover_span == (0, 5)

    def test_emoji_positions_go_through_utf16(self, window, qtbot) -> None:  # noqa: ANN001
        text = window.vm.text
        c = text.index("🙂")
        # a token after the emoji: its Qt position is one unit later than its char offset
        enc = window.vm.encoding
        j = next(k for k, (s, e) in enumerate(enc.offsets) if s > c)
        window.vm.select_token(j)
        sel = [s for s in window.inspect.raw.extraSelections() if s.cursor.selectionStart() == enc.offsets[j][0] + 1]
        assert sel, "selected token not highlighted at its UTF-16 position"

    def test_click_selects_and_keyboard_moves(self, window, qtbot) -> None:  # noqa: ANN001
        view = window.inspect.tokens
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_center(view, 1).toPoint())
        assert window.vm.selected == 1 and view.selected == 1
        view.setFocus()
        qtbot.keyClick(view, Qt.Key.Key_Right)
        assert window.vm.selected == 2


class TestViews:
    def test_toggle_changes_the_spelling_not_the_spans(self, window, qtbot) -> None:  # noqa: ANN001
        view = window.inspect.tokens
        enc = window.vm.encoding
        text_labels = view.label_texts()
        assert text_labels[1] == "·world"
        window.mode_buttons[ViewMode.IDS].click()
        assert window.vm.view_mode is ViewMode.IDS
        assert view.label_texts() == [str(i) for i in enc.ids]
        window.mode_buttons[ViewMode.BYTES].click()
        assert view.label_texts()[1] == "20 77 6F 72 6C 64"
        window.mode_buttons[ViewMode.VOCAB].click()
        assert view.label_texts()[1] == "Ġworld"
        assert view.count() == len(enc.ids)

    def test_split_characters_are_bracketed(self, window) -> None:  # noqa: ANN001
        labels = "".join(window.inspect.tokens.label_texts())
        assert "\ufffd" not in labels
        assert "⟦" in labels and "⟧" in labels  # 你好 / 🙂 are split by GPT-2's byte-level BPE

    def test_special_tokens_toggle(self, window, qtbot, encoded) -> None:  # noqa: ANN001
        window.literal_box.setChecked(True)
        window.vm.set_text("x<|endoftext|>y", from_editor=False)
        encoded(qtbot, window.vm)
        from tokviz.gui.widgets.span_view import FLAG_LITERAL, FLAG_SPECIAL

        i = window.vm.encoding.ids.index(50256)
        assert window.inspect.tokens.item_flags(i) == FLAG_SPECIAL | FLAG_LITERAL

    def test_chunks_pane_shows_pre_tokens(self, window) -> None:  # noqa: ANN001
        chunks = window.vm.encoding.stages.pre_tokens
        assert window.inspect.chunks.count() == len(chunks)
        window.vm.set_view_mode(ViewMode.VOCAB)
        from tokviz.gui.display import label_text

        assert label_text(window.inspect.chunks.label(1)) == "Ġworld"

    @pytest.mark.parametrize("mode", [ViewMode.TEXT, ViewMode.VOCAB])
    def test_chunk_span_columns_agree_with_the_chunks(self, window, qtbot, encoded, mode) -> None:  # noqa: ANN001
        # a full encode hands the chunk pane span columns; read item by item (as after a splice)
        # every span, label, break and line end is the same
        from dataclasses import replace

        from tokviz.gui.widgets.token_panes import ChunkSource

        window.vm.set_text("a\r\n  b\u00a0c 日本語 🙂🙂\n\nx<|endoftext|>y\n", from_editor=False)
        window.vm.set_tokenizer(window.vm.tokenizer, name="gpt2")  # a full encode (not an edit's splice)
        encoded(qtbot, window.vm)
        u = window.vm.update
        assert u.chunk_spans is not None and u.splice is None
        cols, items = ChunkSource(u, mode, {}), ChunkSource(replace(u, chunk_spans=None, chunk_line_ends=None), mode, {})
        n = len(u.encoding.stages.pre_tokens)
        assert len(cols) == len(items) == n > 8
        for i in range(n):
            c = u.encoding.stages.pre_tokens[i]
            assert cols.span(i) == items.span(i) == (c.start, c.end)
            assert cols.label(i) == items.label(i) and cols.is_break(i) == items.is_break(i)
        assert cols.line_ends() == items.line_ends() == [i for i in range(n) if items.is_break(i)]


class TestTokenCard:
    def test_card_shows_ids_bytes_offsets_and_merges(self, window, qtbot) -> None:  # noqa: ANN001
        enc = window.vm.encoding
        i = enc.tokens.index("Ġworld")
        window.vm.select_token(i)
        card = window.inspect.card
        qtbot.waitUntil(lambda: card.details is not None and card.details.traced is not None, timeout=10000)
        text = card.toPlainText()
        assert str(enc.ids[i]) in text
        assert "20 77 6F 72 6C 64" in text
        assert "5 – 11" in text  # chars, UTF-8 bytes and UTF-16 units agree for ASCII
        assert "whole chunk" in text  # tiktoken-style: a chunk found whole in the ranks needs no merges

    def test_card_lists_the_merges_in_order(self, window, qtbot, encoded) -> None:  # noqa: ANN001
        window.vm.set_text("unbelievably", from_editor=False)
        encoded(qtbot, window.vm)
        window.vm.select_token(1)
        card = window.inspect.card
        qtbot.waitUntil(lambda: card.details is not None and card.details.traced is not None, timeout=10000)
        merges = card.details.traced.trace.merges
        text = card.toPlainText()
        assert "merges in the order applied" in text
        lines = [ln for ln in text.splitlines() if ln.startswith("rank")]
        assert lines == [f"rank {m.rank}: {m.left} + {m.right} → {m.merged}" for m in merges]

    def test_card_offsets_differ_by_unit_after_an_emoji(self, window, qtbot) -> None:  # noqa: ANN001
        enc = window.vm.encoding
        c = window.vm.text.index("🙂")
        j = next(k for k, (s, e) in enumerate(enc.offsets) if s > c + 1)
        window.vm.select_token(j)
        d = window.inspect.card.details
        s, e = enc.offsets[j]
        assert d.utf16 == (s + 1, e + 1)
        assert (d.token.byte_start, d.token.byte_end) == enc.byte_offsets[j]
        assert d.token.byte_start > s


class TestErrors:
    def test_bad_file_shows_the_bar_and_keeps_the_text(self, window, qtbot, tmp_path) -> None:  # noqa: ANN001
        bad = tmp_path / "tokenizer.json"
        bad.write_bytes(b"\x00\x01 not a tokenizer")
        before = window.inspect.raw.toPlainText()
        window.load_tokenizer(bad)
        qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10000)
        assert "tokenizer.json" in window.error_bar.message
        assert window.inspect.raw.toPlainText() == before
        assert window.vm.tokenizer_name == "gpt2"
        window.error_bar.dismiss()
        assert not window.error_bar.isVisible()

    def test_unreadable_text_file(self, window, tmp_path) -> None:  # noqa: ANN001
        p = tmp_path / "latin1.txt"
        p.write_bytes(b"caf\xe9")
        before = window.vm.text
        window.open_text(p)
        assert window.error_bar.isVisible() and window.vm.text == before


class TestExport:
    def test_png_svg_json(self, window, tmp_path) -> None:  # noqa: ANN001
        window.export_png(tmp_path / "t.png")
        window.export_svg(tmp_path / "t.svg")
        window.vm.export_json(tmp_path / "t.json")
        from PySide6.QtGui import QImage

        img = QImage(str(tmp_path / "t.png"))
        assert img.width() > 100 and img.height() > 20
        svg = (tmp_path / "t.svg").read_text(encoding="utf-8")
        assert "<svg" in svg and "world" in svg
        data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
        assert data["ids"] == window.vm.encoding.ids and data["text"] == window.vm.text


class TestSettings:
    def test_state_round_trips(self, window, settings, qtbot, gpt2) -> None:  # noqa: ANN001
        from tokviz.gui.main_window import MainWindow
        from tokviz.resources import resource_path

        path = resource_path("bundles", "gpt2", "r50k_base.tiktoken.gz")
        window.vm.tokenizer_path = path
        window.vm.set_view_mode(ViewMode.BYTES)
        window.vm.set_text("remember me", from_editor=False)
        window.save_settings()
        w2 = MainWindow(settings=settings)
        qtbot.addWidget(w2)
        assert w2.restore_settings()
        assert w2.vm.text == "remember me" and w2.inspect.raw.toPlainText() == "remember me"
        assert w2.vm.view_mode is ViewMode.BYTES
        qtbot.waitUntil(lambda: w2.vm.tokenizer is not None, timeout=20000)
        assert w2.vm.tokenizer_path == path


class TestDiscoveryInPicker:
    def test_embedded_bundles_listed_and_default_preselected(self, window) -> None:  # noqa: ANN001
        names = [window.picker.itemText(i) for i in range(window.picker.count())]
        assert any("cl100k_base" in n for n in names) and any("Qwen3" in n for n in names)
        window.load_default()
        assert "cl100k_base" in window.picker.currentText()


class TestScreenshotCommand:
    def test_renders_a_png_and_exits(self, tmp_path) -> None:  # noqa: ANN001
        out = tmp_path / "shot.png"
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        tok = Path(__file__).resolve().parents[2] / "resources" / "bundles" / "gpt2" / "r50k_base.tiktoken.gz"
        r = subprocess.run(
            [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(out), "--tokenizer", str(tok),
             "--text", "Hello 🙂 world", "--tab", "inspect", "--size", "1000x700"],
            capture_output=True, text=True, env=env, timeout=180,
        )
        assert r.returncode == 0, r.stderr
        from PySide6.QtGui import QImage

        img = QImage(str(out))
        assert (img.width(), img.height()) == (1000, 700)

    def test_bad_tab_is_a_one_line_error(self, tmp_path) -> None:  # noqa: ANN001
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        r = subprocess.run(
            [sys.executable, "-m", "tokviz", "gui", "--screenshot", str(tmp_path / "x.png"), "--tab", "nope"],
            capture_output=True, text=True, env=env, timeout=180,
        )
        assert r.returncode == 2 and "invalid choice: 'nope'" in r.stderr and "compare" in r.stderr

    def test_tab_choices_are_the_windows_tabs(self, window) -> None:  # noqa: ANN001
        from tokviz.commands.gui import TABS

        assert tuple(window.tabs.tabText(i).lower() for i in range(window.tabs.count())) == TABS

    def test_compare_tab_includes_the_tokenizer_asked_for(self, tmp_path) -> None:  # noqa: ANN001
        """``gui --tab compare --tokenizer bert``: bert (an embedded name) is the first row, then
        the other embedded bundles, none twice."""
        spy = (
            "import json, sys\n"
            "from tokviz.gui import compare_viewmodel as cv\n"
            "rows = []\n"
            "add = cv.CompareViewModel.add_tokenizer\n"
            "def spy(self, path, *, name=None):\n"
            "    rows.append([str(path), name])\n"
            "    return add(self, path, name=name)\n"
            "cv.CompareViewModel.add_tokenizer = spy\n"
            "from tokviz.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "print(json.dumps(rows))\n"
            "sys.exit(code)\n"
        )
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        r = subprocess.run(
            [sys.executable, "-c", spy, "gui", "--screenshot", str(tmp_path / "c.png"), "--tab", "compare",
             "--tokenizer", "bert", "--text", "Hello world", "--size", "1000x700"],
            capture_output=True, text=True, env=env, timeout=300,
        )
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout.strip().splitlines()[-1])
        from tokviz.io.embedded import embedded_path

        assert rows[0] == [str(embedded_path("bert")), "bert"]
        folders = [Path(p).parent.name for p, _ in rows]
        assert len(rows) == 8 and len(set(folders)) == 8


class TestLiveTyping:
    @pytest.mark.parametrize("bundle", [None, "bert-base-uncased/tokenizer.json.gz"], ids=["gpt2", "bert"])
    def test_spliced_panes_equal_a_fresh_rebuild(self, window, qtbot, encoded, bundle) -> None:  # noqa: ANN001
        from PySide6.QtGui import QTextCursor

        text = "".join(f"line {i}: some words, numbers {i * 37} and 🙂 emoji\n" for i in range(120))
        window.vm.set_text(text, from_editor=False)
        if bundle is not None:
            import tokviz
            from tokviz.resources import resource_path

            window.vm.set_tokenizer(tokviz.load(resource_path("bundles", *bundle.split("/"))))
        encoded(qtbot, window.vm)
        view, chunks = window.inspect.tokens, window.inspect.chunks
        view.verticalScrollBar().setValue(view.verticalScrollBar().maximum() // 2)
        view.viewport().repaint()
        raw = window.inspect.raw
        raw.setFocus()
        splices = []
        window.vm.encoding_changed.connect(lambda u: splices.append(u.splice))
        for pos, keys in ((len(text) // 2, "xyz 42"), (100, "\r\rnew"), (len(text) - 3, "end")):
            cur = raw.textCursor()
            cur.setPosition(pos)
            raw.setTextCursor(cur)
            for ch in keys:  # \r: the Return key (a new line)
                if ch == "\r":
                    qtbot.keyClick(raw, Qt.Key.Key_Return)
                else:
                    qtbot.keyClick(raw, ch)
            encoded(qtbot, window.vm)
        qtbot.keyClick(raw, Qt.Key.Key_Backspace)
        cur = raw.textCursor()
        cur.setPosition(50)
        cur.setPosition(260, QTextCursor.MoveMode.KeepAnchor)  # delete across several lines
        raw.setTextCursor(cur)
        qtbot.keyClick(raw, Qt.Key.Key_Delete)
        encoded(qtbot, window.vm)
        assert splices and any(s is not None for s in splices)

        def snapshot(v):  # noqa: ANN001, ANN202
            for li in range(len(v._laid)):
                v._layout_line(li)
            return v._line_first, [(ln.labels, ln.flags, ln.xs, ln.row_of) for ln in v._laid]

        spliced = snapshot(view), snapshot(chunks)
        view.rebuild()
        chunks._rebuild()
        assert (snapshot(view), snapshot(chunks)) == spliced
        assert view.count() == len(window.vm.encoding.ids)


class TestLineBreaks:
    def test_newlines_between_tokens_break_lines(self, window, qtbot, encoded) -> None:  # noqa: ANN001
        import tokviz
        from tokviz.resources import resource_path

        bert = tokviz.load(resource_path("bundles", "bert-base-uncased", "tokenizer.json.gz"))
        window.vm.set_text("first line\nsecond line\n\nthird", from_editor=False)
        window.vm.set_tokenizer(bert, name="bert")
        encoded(qtbot, window.vm)
        enc = window.vm.encoding
        assert "\n" not in "".join(enc.tokens)  # BERT drops the newlines: they lie between tokens
        view = window.inspect.tokens
        first_of_lines = [enc.tokens[i] for i in view._line_first[:-1]]
        assert first_of_lines == ["[CLS]", "second", "third"]
        chunks = window.inspect.chunks
        assert [label_text(chunks.label(i)) for i in chunks._line_first[:-1]] == ["first", "second", "third"]


from tokviz.gui.display import label_text  # noqa: E402


class TestLargeText:
    def test_long_unchanged_normalized_text_is_not_duplicated(self, window, qtbot, encoded) -> None:  # noqa: ANN001
        text = "".join(f"row {i}: the quick brown fox\n" for i in range(9000))  # ~250 K chars, gpt2 does not normalize
        window.vm.set_text(text, from_editor=False)
        encoded(qtbot, window.vm, timeout=120000)
        norm = window.inspect.normalized
        assert norm.toPlainText() == "" and "Identical to the raw text" in norm.placeholderText()
        assert window.inspect.raw.toPlainText() == text
        window.vm.set_text("short again", from_editor=False)
        encoded(qtbot, window.vm)
        assert norm.toPlainText() == "short again" and norm.placeholderText() == ""
