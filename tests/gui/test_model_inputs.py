"""Inspect's model inputs: the pair field and the truncation / stride / padding controls, driven by
keys and clicks, against HF tokenizers run here on the same tokenizer.json (ids, type_ids,
attention_mask, sequence_ids, offsets of the encoding and of every overflowing window; the window
spans drawn over the texts), plus the per-window lint, a bad stride and the settings round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication
from support import bundle_bytes, require_module

import tokviz

QUESTION = "Where do the windows overlap?"
CONTEXT = "A long context, cut into windows that overlap by a stride of a few tokens, for question answering."


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, rel in (("bert", "bert-base-uncased/tokenizer.json"), ("bytelevel", "claude-legacy/tokenizer.json")):
        p = tmp_path_factory.mktemp(name) / "tokenizer.json"
        p.write_bytes(bundle_bytes(rel))
        out[name] = p
    return out


@pytest.fixture
def win(qtbot, settings):  # noqa: ANN001, ANN201
    from tokviz.gui.main_window import MainWindow

    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 1000)
    w.show()
    return w


def _open(qtbot, w, path: Path, text: str, encoded) -> None:  # noqa: ANN001
    w.vm.set_text(text, from_editor=False)
    w.vm.set_tokenizer(tokviz.load(path), name=path.parent.name)
    encoded(qtbot, w.vm)


def _hf(path: Path, configure) -> Any:  # noqa: ANN001
    ref = require_module("tokenizers").Tokenizer.from_file(str(path))
    configure(ref)
    return ref


def _type(edit, text: str) -> None:  # noqa: ANN001
    """Key presses as a keyboard sends them, one event per character (QTest.keyClicks takes
    Latin-1 only and would split an emoji into its surrogates)."""
    for ch in text:
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(edit, QKeyEvent(kind, Qt.Key.Key_unknown, Qt.KeyboardModifier.NoModifier, ch))


def _type_number(qtbot, spin, value: int) -> None:  # noqa: ANN001
    spin.setFocus()
    qtbot.keyClick(spin, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(spin, str(value))


def _choose(qtbot, combo, data: str) -> None:  # noqa: ANN001 - arrow keys until the item is current
    combo.setFocus()
    for _ in range(combo.count()):
        if combo.currentData() == data:
            return
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentData() == data


def _wait_inputs(qtbot, w, encoded) -> None:  # noqa: ANN001
    encoded(qtbot, w.vm)
    vm = w.inputs_vm
    qtbot.waitUntil(lambda: not vm.is_busy() and (vm.inputs is not None or bool(vm.error)), timeout=20000)


def _click_window(qtbot, w, row: int) -> None:  # noqa: ANN001
    lst = w.inputs_panel.windows
    rect = lst.visualItemRect(lst.item(row))
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert w.inputs_vm.selected == row


def _shown_rows(qtbot, w) -> list[dict[str, list[str]]]:  # noqa: ANN001
    """Each window as the table shows it, chosen by a click in the window list."""
    panel = w.inputs_panel
    rows = []
    for r in range(panel.windows.count()):
        _click_window(qtbot, w, r)
        m = panel.model
        cols = {name: [m.cell(i, c) for i in range(m.rowCount())] for c, name in enumerate(m_cols())}
        rows.append(cols)
    return rows


def m_cols() -> tuple[str, ...]:
    from tokviz.gui.widgets.inputs_panel import COLUMNS

    return COLUMNS


def _want(enc: Any) -> dict[str, list[str]]:
    return {
        "id": [str(i) for i in enc.ids], "type_ids": [str(t) for t in enc.type_ids],
        "attention_mask": [str(m) for m in enc.attention_mask],
        "sequence_ids": ["—" if s is None else str(s) for s in enc.sequence_ids],
        "offsets": [f"{s}–{e}" for s, e in enc.offsets],
    }


def _hf_spans(rows: list[Any], seq: int) -> list[tuple[int, int]]:
    """The distinct character spans HF's rows cover in sequence ``seq``, in order: its real
    tokens (mask 1, not special) of type id ``seq`` (HF's ``sequence_ids`` of the windows of a
    pair without a post-processor read all 0; the type ids keep the pair's 1)."""
    out: list[tuple[int, int]] = []
    for enc in rows:
        offs = [o for o, t, m, sp in zip(enc.offsets, enc.type_ids, enc.attention_mask, enc.special_tokens_mask)
                if t == seq and m and not sp]
        if offs and (span := (min(a for a, _ in offs), max(b for _, b in offs))) not in out:
            out.append(span)
    return out


def _assert_rows_equal_hf(qtbot, w, ref: Any) -> list[Any]:  # noqa: ANN001
    enc = ref.encode(w.vm.text, w.inputs_vm.pair)
    rows = [enc, *enc.overflowing]
    shown = _shown_rows(qtbot, w)
    assert len(shown) == len(rows) > 1
    for got, want in zip(shown, rows):
        assert {k: got[k] for k in _want(want)} == _want(want)
    for seq, view in enumerate(w.inputs_panel.texts[:2]):
        assert view.spans == _hf_spans(rows, seq)
        assert view.chosen == _hf_spans(rows[-1:], seq)[0]  # the last window clicked is underlined
    return rows


class TestDefaults:
    def test_controls_off_change_nothing(self, win, qtbot, encoded, files) -> None:  # noqa: ANN001
        _open(qtbot, win, files["bert"], QUESTION, encoded)
        ref = _hf(files["bert"], lambda t: None).encode(QUESTION)
        assert win.vm.encoding.ids == ref.ids
        assert not win.inputs_box.isVisible() and win.inputs_vm.inputs is None and not win.inputs_vm.active
        c = win.inputs_controls
        assert (c.max_spin.text(), c.padding_combo.currentText(), c.pair_edit.text()) == ("off", "off", "")
        assert not c.stride_spin.isEnabled() and not c.multiple_spin.isEnabled()


class TestBert:
    def test_pair_only_second_stride_and_max_length_padding(self, win, qtbot, encoded, files) -> None:  # noqa: ANN001
        _open(qtbot, win, files["bert"], QUESTION, encoded)
        c = win.inputs_controls
        qtbot.keyClicks(c.pair_edit, CONTEXT)
        _type_number(qtbot, c.max_spin, 20)
        _type_number(qtbot, c.stride_spin, 3)
        _choose(qtbot, c.strategy_combo, "only_second")
        _choose(qtbot, c.padding_combo, "max_length")
        _wait_inputs(qtbot, win, encoded)
        assert win.inputs_vm.pair == CONTEXT and win.inputs_box.isVisible()
        ref = _hf(files["bert"], lambda t: (t.enable_truncation(20, stride=3, strategy="only_second"),
                                            t.enable_padding(length=20, pad_id=0, pad_token="[PAD]")))
        rows = _assert_rows_equal_hf(qtbot, win, ref)
        # the last window is short: HF pads it, and the table greys its pads with mask 0
        assert rows[-1].attention_mask.count(0) > 0
        m = win.inputs_panel.model
        pad = rows[-1].attention_mask.index(0)
        assert m.cell(pad, 1) == "[PAD]" and m.data(m.index(pad, 5), Qt.ItemDataRole.ForegroundRole) == win.theme.muted
        # a click on a token row: a text token lights up in the Inspect panes, a pair token in the pair's view
        table = win.inputs_panel.table
        for row, seq in ((2, 0), (rows[-1].sequence_ids.index(1), 1)):
            qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(m.index(row, 1)).center())
            span = tuple(rows[-1].offsets[row])
            assert win.inputs_panel.texts[seq].token == span and win.inputs_panel.texts[1 - seq].token is None
        assert win.vm.hovered == tuple(rows[-1].offsets[2])
        # the pair's overlaps: what consecutive windows share, hatched (hand check: intersections)
        spans = _hf_spans(rows, 1)
        assert win.inputs_panel.texts[1].overlaps == [(b[0], a[1]) for a, b in zip(spans, spans[1:])]

    def test_a_stride_too_long_is_a_message(self, win, qtbot, encoded, files) -> None:  # noqa: ANN001
        _open(qtbot, win, files["bert"], CONTEXT, encoded)
        c = win.inputs_controls
        _type_number(qtbot, c.max_spin, 5)
        _type_number(qtbot, c.stride_spin, 4)
        _wait_inputs(qtbot, win, encoded)
        ref = _hf(files["bert"], lambda t: None)
        with pytest.raises(Exception, match="stride"):  # HF refuses it too
            ref.enable_truncation(5, stride=4)
            ref.encode(CONTEXT)
        msg = win.inputs_panel.message.text()
        assert "stride 4 must be less than" in msg and "2 special tokens" in msg
        assert win.inputs_box.isVisible() and win.inputs_panel.windows.count() == 0
        _type_number(qtbot, c.stride_spin, 1)  # fixed: the windows come back
        _wait_inputs(qtbot, win, encoded)
        assert win.inputs_vm.error == "" and win.inputs_panel.windows.count() > 1


class TestByteLevel:
    def test_pair_longest_first_left_and_multiple_padding(self, win, qtbot, encoded, files) -> None:  # noqa: ANN001
        text = "naïve café 😀 déjà vu, over and over again"
        _open(qtbot, win, files["bytelevel"], text, encoded)
        c = win.inputs_controls
        _type(c.pair_edit, "the pair: 你好 🙂 twice 你好 🙂 and once more")
        _type_number(qtbot, c.max_spin, 14)
        _type_number(qtbot, c.stride_spin, 2)
        _choose(qtbot, c.truncation_side, "left")
        _choose(qtbot, c.padding_combo, "multiple")
        _type_number(qtbot, c.multiple_spin, 8)
        _choose(qtbot, c.padding_side, "left")
        _wait_inputs(qtbot, win, encoded)
        ref = _hf(files["bytelevel"], lambda t: (t.enable_truncation(14, stride=2, direction="left"),
                                                 t.enable_padding(direction="left", pad_to_multiple_of=8)))
        rows = _assert_rows_equal_hf(qtbot, win, ref)
        assert all(len(r) == 16 for r in rows) and rows[0].attention_mask[0] == 0  # 14 rounded up to 16, on the left
        # the pair's window tints sit on Qt's UTF-16 positions (an emoji is two units)
        pair_view = win.inputs_panel.texts[1]

        def u16(i: int) -> int:
            return len(win.inputs_vm.pair[:i].encode("utf-16-le")) // 2

        drawn = {(x.cursor.selectionStart(), x.cursor.selectionEnd()) for x in pair_view.extraSelections()}
        assert {(u16(a), u16(b)) for a, b in _hf_spans(rows, 1)} <= drawn

    def test_lint_runs_per_window_and_marks_a_cut_character(self, win, qtbot, encoded, files) -> None:  # noqa: ANN001
        text = "ok 😀😀😀😀 done"
        _open(qtbot, win, files["bytelevel"], text, encoded)
        c = win.inputs_controls
        _type_number(qtbot, c.max_spin, 3)
        _wait_inputs(qtbot, win, encoded)
        ref = _hf(files["bytelevel"], lambda t: t.enable_truncation(3))
        enc = ref.encode(text)
        rows = [enc, *enc.overflowing]
        # hand check on HF's offsets: a window whose first token has the same span as the last
        # token of the window before starts inside a character the edge cut
        cut = [k for k in range(1, len(rows)) if rows[k].offsets[0] == rows[k - 1].offsets[-1]]
        assert cut, "the case must cut a character at a window edge"
        shown = _shown_rows(qtbot, win)
        for k in cut:
            assert "U1 cut by the window edge" in shown[k]["lint"][0]
            assert "lint" in win.inputs_panel.windows.item(k).text()
        whole = [k for k in range(len(rows)) if k not in cut and k - 1 not in cut and k + 1 not in cut]
        assert all("cut" not in cell for k in whole for cell in shown[k]["lint"])
        # the lint pane's "Exact spans" box: the windows are linted on the exact spans too
        before = win.inputs_vm.inputs
        qtbot.mouseClick(win.lint_panel.exact_box, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: win.inputs_vm.inputs is not before and not win.inputs_vm.is_busy(), timeout=20000)
        assert win.inputs_vm.exact
        assert all("U1 cut by the window edge" in _shown_rows(qtbot, win)[k]["lint"][0] for k in cut)


class TestSettings:
    def test_inputs_round_trip(self, win, qtbot, encoded, files, settings) -> None:  # noqa: ANN001
        from tokviz.gui.main_window import MainWindow

        _open(qtbot, win, files["bert"], QUESTION, encoded)
        c = win.inputs_controls
        _type(c.pair_edit, "a pair\u00a0with a no-break space")
        _type_number(qtbot, c.max_spin, 12)
        _choose(qtbot, c.padding_combo, "longest")
        _choose(qtbot, c.padding_side, "left")
        _wait_inputs(qtbot, win, encoded)
        win.save_settings()
        w2 = MainWindow(settings=settings)
        qtbot.addWidget(w2)
        w2.restore_settings()
        c2 = w2.inputs_controls
        assert c2.pair_edit.text() == "a pair\u00a0with a no-break space"
        assert (c2.max_spin.value(), c2.padding_combo.currentData(), c2.padding_side.currentData()) == (12, "longest", "left")
        assert w2.inputs_vm.settings == win.inputs_vm.settings
        w2.vm.cancel()
