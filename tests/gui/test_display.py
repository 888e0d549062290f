"""How tokens are spelled: visible whitespace, split characters, hex bytes, ids, colors."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tokviz.engine.text import OffsetMap
from tokviz.gui.display import (
    PALETTE_SIZE,
    Style,
    ViewMode,
    color_index,
    editor_text,
    label_text,
    neighbour_variant,
    source_text,
    stand_in,
    token_label,
    visible_runs,
)


def _label(mode, text: str, span: tuple[int, int], *, vocab: str = "v", special: bool = False, tid: int = 7):  # noqa: ANN001
    tb = text.encode("utf-8")
    return token_label(
        mode, token_id=tid, vocab=vocab, special=special, text_bytes=tb, byte_span=span, offset_map=OffsetMap(text)
    )


class TestVisibleRuns:
    def test_each_invisible_character_has_its_own_mark(self) -> None:
        marks = [label_text(tuple(visible_runs(c))) for c in [" ", "\t", "\n", "\r", "\u00a0", "\u200b", "\u200d", "\ufeff"]]
        assert marks == ["·", "→", "↵", "‹CR›", "‹NBSP›", "‹ZWSP›", "‹ZWJ›", "‹BOM›"]
        assert len(set(marks)) == len(marks)

    def test_marks_are_styled_apart_from_text(self) -> None:
        assert visible_runs("a b") == [("a", Style.TEXT), ("·", Style.MARK), ("b", Style.TEXT)]

    def test_other_format_characters_show_their_code_point(self) -> None:
        assert label_text(tuple(visible_runs("\u2066"))) == "‹LRI›"  # a named bidi control
        assert label_text(tuple(visible_runs("\u2064"))) == "‹U+2064›"  # INVISIBLE PLUS: no name of ours

    def test_plain_text_is_one_run(self) -> None:
        assert visible_runs("hello") == [("hello", Style.TEXT)]


class TestTokenLabel:
    def test_text_view_shows_the_covered_characters(self) -> None:
        assert label_text(_label(ViewMode.TEXT, "hi there", (2, 8))) == "·there"

    def test_split_character_is_bracketed_with_its_bytes_never_a_replacement_char(self) -> None:
        text = "a😀"  # 😀 = F0 9F 98 80, split after two bytes
        first = _label(ViewMode.TEXT, text, (0, 3))
        second = _label(ViewMode.TEXT, text, (3, 5))
        assert label_text(first) == "a⟦😀 F0 9F"
        assert label_text(second) == "98 80⟧"
        assert "\ufffd" not in label_text(first) + label_text(second)
        assert (("⟦", Style.BRACKET) in first) and (("⟧", Style.BRACKET) in second)

    def test_middle_bytes_of_a_character_are_hex_only(self) -> None:
        assert label_text(_label(ViewMode.TEXT, "😀", (1, 3))) == "9F 98"

    def test_bytes_view_is_hex(self) -> None:
        assert label_text(_label(ViewMode.BYTES, "é!", (0, 3))) == "C3 A9 21"

    def test_ids_view_is_the_id(self) -> None:
        assert _label(ViewMode.IDS, "x", (0, 1), tid=50256) == (("50256", Style.TEXT),)

    def test_vocab_view_keeps_the_model_spelling(self) -> None:
        assert label_text(_label(ViewMode.VOCAB, " x", (0, 2), vocab="Ġx")) == "Ġx"

    def test_special_token_without_text_shows_its_vocab_string(self) -> None:
        lab = _label(ViewMode.TEXT, "x", (0, 0), vocab="<|endoftext|>", special=True)
        assert lab == (("<|endoftext|>", Style.SPECIAL),)


class TestColors:
    def test_color_is_stable_and_in_range(self) -> None:
        assert color_index(1917) == color_index(1917)
        assert all(0 <= color_index(i) < PALETTE_SIZE for i in range(1000))

    def test_consecutive_ids_spread_over_the_palette(self) -> None:
        assert len({color_index(i) for i in range(100, 120)}) >= PALETTE_SIZE // 2

    def test_neighbours_with_the_same_slot_alternate_shades(self) -> None:
        keys = [5, 5, 5, 9]
        shades = [neighbour_variant(keys, i) for i in range(4)]
        assert shades[:3] == [0, 1, 0]
        colors = [(color_index(k), s) for k, s in zip(keys, shades)]
        assert all(a != b for a, b in zip(colors, colors[1:]))


class TestEditorText:
    """The display text: the stand-in of each character, looked up line by line only where needed."""

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.sampled_from(["a", " ", "\n", "\t", "\r", "é", "日", "😀", "\u3000", "\u00a0", "\ufffc",
                                             "\u200d", "\x1b", "\ufeff", "\u2028", "\U000e0041", "\ue000"]), max_size=40))
    def test_equals_the_stand_in_of_every_character(self, text: str) -> None:
        assert editor_text(text) == "".join(map(stand_in, text))
        if "\ue000" not in text:  # (a user's own private-use character reads back wrong: documented)
            assert source_text(editor_text(text)) == text
