"""Every view shows the token itself: the token pane (text and bytes views), the card, the
tooltips and the Train probe draw the token's own surface, not the text under HF's offset, and
say so where the two differ; one HF/exact switch moves the spans of every pane.

Expected tokens and offsets come from HF ``tokenizers`` run on the same file in the test.
"""

from __future__ import annotations

import gzip

import pytest
from PySide6.QtCore import QPointF, Qt

import tokviz
from tokviz.gui.display import Style, ViewMode, label_text
from tokviz.resources import resource_path

MISTRAL = ("bundles", "mistral-7b-v0.1", "tokenizer.json.gz")


@pytest.fixture(scope="module")
def mistral():  # noqa: ANN201
    return tokviz.load(resource_path(*MISTRAL))


@pytest.fixture(scope="module")
def hf_mistral():  # noqa: ANN201
    from tokenizers import Tokenizer

    return Tokenizer.from_str(gzip.decompress(resource_path(*MISTRAL).read_bytes()).decode("utf-8"))


def _center(view, i: int) -> QPointF:  # noqa: ANN001 - viewport position of item i
    r = view.item_rect(i)
    return QPointF(r.center().x(), r.center().y() - view.verticalScrollBar().value())


def _typed(qtbot, window, tok, text: str) -> None:  # noqa: ANN001
    """Load ``tok`` and type (or paste) ``text`` into the raw editor with key events."""
    window.vm.set_tokenizer(tok, name="Mistral 7B v0.1")
    wait_encoded(qtbot, window.vm)
    if window.vm.text == text:
        return
    raw = window.inspect.raw
    raw.setFocus()
    qtbot.keyClick(raw, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(raw, Qt.Key.Key_Delete)
    if text.isascii():
        qtbot.keyClicks(raw, text)
    else:  # QTest types ASCII only: paste the rest, as a user would
        from PySide6.QtGui import QGuiApplication

        QGuiApplication.clipboard().setText(text)
        qtbot.keyClick(raw, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.vm.text == text, timeout=5000)
    wait_encoded(qtbot, window.vm)


def wait_encoded(qtbot, vm) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: vm.update is not None and vm.update.encoding.text == vm.text and not vm.is_busy(),
                    timeout=20000)


def _marker(hf, text: str) -> tuple[int, tuple[int, int]]:
    """The index of the prepended ``▁`` whose HF offset covers a character, and that offset."""
    e = hf.encode(text)
    i = next(k for k, (t, (s, end)) in enumerate(zip(e.tokens, e.offsets)) if t == "▁" and end > s)
    return i, e.offsets[i]


TEXT = "中文 中文"


class TestTokenPane:
    def test_a_prepended_marker_is_drawn_as_itself_not_the_next_character(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        _typed(qtbot, window, mistral, TEXT)
        i, (s, e) = _marker(hf_mistral, TEXT)
        assert window.vm.encoding.tokens == hf_mistral.encode(TEXT).tokens
        pane = window.inspect.tokens
        # HF gives the ▁ the span of "中"; the pane shows the token: ▁ is Metaspace's stand-in for
        # a space, so its text is " " (drawn as the space mark ·) and its byte 0x20
        assert TEXT[s:e] == "中"
        assert pane.label_texts()[i] == "·"
        assert {st for _r, st in pane.label(i)} == {Style.OWN}
        assert pane.label_texts()[i + 1] == "中"  # the token that really holds it
        qtbot.mouseClick(window.mode_buttons[ViewMode.BYTES], Qt.MouseButton.LeftButton)
        assert window.vm.view_mode is ViewMode.BYTES
        assert pane.label_texts()[i] == "20"
        assert pane.label_texts()[i + 1] == "E4 B8 AD"  # "中" in UTF-8

    def test_an_added_marker_before_a_word_is_drawn_apart(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        text = "Hello world"
        _typed(qtbot, window, mistral, text)
        e = hf_mistral.encode(text)
        k = e.tokens.index("▁Hello")
        assert text[slice(*e.offsets[k])] == "Hello"  # HF's span leaves the prepended space out
        pane = window.inspect.tokens
        assert pane.label(k) == (("·", Style.OWN), ("Hello", Style.TEXT))
        qtbot.mouseClick(window.mode_buttons[ViewMode.BYTES], Qt.MouseButton.LeftButton)
        assert pane.label_texts()[k] == "20 48 65 6C 6C 6F"  # " Hello"

    def test_the_tooltip_names_both_spans(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        _typed(qtbot, window, mistral, TEXT)
        i, (s, e) = _marker(hf_mistral, TEXT)
        tip = window.inspect.tokens._tip(i)
        assert "bytes 20" in tip
        assert f"HF span chars {s}–{e} covers '中'" in tip
        # the prepended ▁ has no source character: its exact span is zero-width where it was inserted
        assert "exact span 0–0: covers no text" in tip


class TestCard:
    def test_card_shows_the_token_and_links_to_its_lint_finding(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        _typed(qtbot, window, mistral, TEXT)
        i, (s, e) = _marker(hf_mistral, TEXT)
        pane = window.inspect.tokens
        qtbot.mouseClick(pane.viewport(), Qt.MouseButton.LeftButton, pos=_center(pane, i).toPoint())
        assert window.vm.selected == i
        card = window.inspect.card
        qtbot.waitUntil(lambda: card.details is not None and card.details.token.index == i, timeout=5000)
        plain = card.toPlainText()
        # one numbering: the card, the tooltip ("token #i"), the lint rows and `tokviz lint` count from 0
        assert plain.startswith(f"Token #{i} of")
        assert window.inspect.tokens._tip(i).startswith(f"token #{i} ")
        assert "token bytes 20 (1 B)" in " ".join(plain.split())
        assert "not this token's text" in plain and "E4 B8 AD" in plain
        assert "zero-width" in plain
        lvm = window.lint_vm
        qtbot.waitUntil(lambda: lvm.view is not None and lvm.view.inspect is window.vm.encoding and not lvm.is_busy(),
                        timeout=30000)
        found = card.document().find("Why?")
        assert not found.isNull()
        found.setPosition(found.selectionStart() + 1)
        qtbot.mouseClick(card.viewport(), Qt.MouseButton.LeftButton, pos=card.cursorRect(found).center())
        f = window.lint_panel.selected_finding()
        assert f is not None and lvm.lint_index(i) in f.tokens
        assert f.check and "prepended" in f.reason
        # the GUI's lint row names the tokens as `tokviz lint` does (both add the special tokens)
        import json
        import subprocess
        import sys

        out = subprocess.run([sys.executable, "-m", "tokviz", "lint", str(resource_path(*MISTRAL)), "--text", TEXT,
                              "--json"], capture_output=True, text=True, check=True, timeout=120)
        cli = next(x for x in json.loads(out.stdout)["findings"] if x["check"] == f.check)
        assert window.lint_panel.tree.currentItem().text(1).split() == [str(k) for k in cli["tokens"]]
        assert i in cli["tokens"]


class TestSpanSwitch:
    def test_one_switch_moves_the_spans_of_every_pane(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        _typed(qtbot, window, mistral, TEXT)
        i, (s, e) = _marker(hf_mistral, TEXT)
        pane = window.inspect.tokens
        assert pane._src.span(i) == (s, e)
        combo = window.span_combo
        combo.setFocus()
        qtbot.keyClick(combo, Qt.Key.Key_Down)  # HF offsets -> Exact spans
        assert window.vm.span_mode == "exact"
        assert window.lint_panel.exact_box.isChecked()
        assert pane._src.span(i) == (0, 0)  # the prepended marker covers no text
        assert pane.label_texts()[i] == "·"  # the token is drawn the same either way
        qtbot.mouseMove(pane.viewport(), _center(pane, i).toPoint())
        qtbot.waitUntil(lambda: window.vm.hovered is None, timeout=3000)
        # the lint panel's box is the same switch
        qtbot.mouseClick(window.lint_panel.exact_box, Qt.MouseButton.LeftButton)
        assert window.vm.span_mode == "hf" and combo.currentData() == "hf"
        assert pane._src.span(i) == (s, e)


    def test_a_long_text_takes_its_exact_spans_from_the_lint(self, qtbot, window, mistral, hf_mistral) -> None:  # noqa: ANN001
        from tokviz.gui.viewmodel import EXACT_MAX_CHARS

        text = (TEXT + "\n") * (EXACT_MAX_CHARS // len(TEXT) + 1)
        assert len(text) > EXACT_MAX_CHARS  # too long for the GUI thread: the lint's worker gives them
        window.span_combo.setFocus()
        qtbot.keyClick(window.span_combo, Qt.Key.Key_Down)  # exact first: the spans arrive after the text
        _typed(qtbot, window, mistral, text)
        i, (s, e) = _marker(hf_mistral, text)
        pane = window.inspect.tokens
        lvm = window.lint_vm
        qtbot.waitUntil(lambda: lvm.view is not None and lvm.view.inspect is window.vm.encoding and not lvm.is_busy(),
                        timeout=60000)
        qtbot.waitUntil(lambda: pane._src.span(i) == (0, 0), timeout=5000)  # the prepended marker: no text


class TestTrainProbe:
    def test_a_dropped_character_does_not_rename_the_next_tokens(self, qtbot, tmp_path) -> None:  # noqa: ANN001
        from tokenizers import Tokenizer

        from tokviz.gui.train_tab import TrainTab
        from tokviz.gui.train_viewmodel import TrainConfig
        from tokviz.gui.viewmodel import InspectViewModel

        tab = TrainTab(InspectViewModel())
        tab._auto_started = True
        qtbot.addWidget(tab)
        tab.resize(1300, 850)
        tab.show()
        try:
            tab.vm.set_corpus("the hen ate the hay\nthe heat\n" * 20, from_editor=False)
            with qtbot.waitSignal(tab.vm.training_finished, timeout=60000):
                tab.vm.train(TrainConfig(algorithm="bpe-char", vocab_size=30))
            qtbot.waitUntil(lambda: tab.vm.step == tab.vm.run.num_steps and not tab.vm.step_busy(), timeout=20000)
            probes = []
            tab.vm.probe_changed.connect(probes.append)
            tab.probe_edit.setFocus()
            qtbot.keyClick(tab.probe_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
            qtbot.keyClicks(tab.probe_edit, "The")  # "T" is not in the corpus's alphabet
            qtbot.waitUntil(lambda: bool(probes) and probes[-1].text == "The", timeout=10000)
            qtbot.waitUntil(lambda: tab.probe_view.count() == len(probes[-1].encoding.ids), timeout=5000)
            hf = Tokenizer.from_file(str(tab.vm.save_tokenizer(tmp_path / "tokenizer.json")))
            ref = hf.encode("The", add_special_tokens=False)
            # HF drops "T" and shifts the offsets: the first token's span holds "T", not the token
            assert "".join(ref.tokens) == "he" and "The"[slice(*ref.offsets[0])] != ref.tokens[0]
            view = tab.probe_view
            assert [label_text(view.label(k)) for k in range(view.count())] == ref.tokens
            assert view.differing >= 1 and "in orange" in tab.probe_info.text()
        finally:
            tab.vm.cancel()
            tab.vm.wait()


class TestChatRendered:
    def test_the_rendered_prompt_draws_a_prepended_marker_as_itself(self, qtbot, tmp_path, mistral, hf_mistral) -> None:  # noqa: ANN001
        from tokviz.gui.chat_tab import ChatTab
        from tokviz.gui.theme import theme_for
        from tokviz.gui.viewmodel import InspectViewModel

        tab = ChatTab(InspectViewModel())
        tab.set_theme(theme_for(False))
        qtbot.addWidget(tab)
        tab.show()
        try:
            tpl = tmp_path / "plain.jinja"
            tpl.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}", encoding="utf-8")
            tab.vm.inspect.set_tokenizer(mistral, name="Mistral 7B v0.1")
            tab.vm.load_template_file(str(tpl))
            tab.list.setCurrentRow(0)
            tab.content.setPlainText(TEXT)
            tab._commit_content()
            qtbot.waitUntil(lambda: tab.vm.view is not None and not tab.vm.is_busy()
                            and tab.vm.view.result.text.startswith(TEXT), timeout=20000)
            view = tab.vm.view
            ref = hf_mistral.encode(view.result.text, add_special_tokens=False)
            assert list(view.result.ids) == ref.ids
            k = next(i for i, (t, (s, e)) in enumerate(zip(ref.tokens, ref.offsets)) if t == "▁" and e > s)
            assert view.result.text[slice(*ref.offsets[k])] == "中"  # HF's span of the marker
            assert view.rendered_pieces[k] == " " and view.rendered_own[k]  # drawn as the token: a space
            assert view.rendered_pieces[k + 1] == "中" and not view.rendered_own[k + 1]
            assert "text-decoration: underline" in tab.rendered.toHtml()  # the one token drawn as its own
            assert "1 token underlined" in tab.render_head.text()
        finally:
            qtbot.waitUntil(lambda: not tab.vm.is_busy(), timeout=20000)
