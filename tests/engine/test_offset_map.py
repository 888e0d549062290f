"""`OffsetMap`: code point <-> UTF-8 byte <-> UTF-16 unit positions, against a per-character count."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tokviz.engine.text import OffsetMap

# ASCII, 2-, 3- and 4-byte characters, the BMP's last char, an astral plane's last, NUL
CHARS = st.sampled_from(list("a\x00é\u0800日\uffff😀\U0010ffff"))


def _running(text: str, size) -> list[int]:  # noqa: ANN001
    out = [0]
    for c in text:
        out.append(out[-1] + size(ord(c)))
    return out


def _utf8_len(o: int) -> int:
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


class TestOffsetMap:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(CHARS, max_size=40).map("".join))
    def test_tables_match_per_character_counts(self, text: str) -> None:
        m = OffsetMap(text)
        u8 = _running(text, _utf8_len)
        u16 = _running(text, lambda o: 2 if o >= 0x10000 else 1)
        assert [m.to_utf8(i) for i in range(len(text) + 1)] == u8
        assert [m.to_utf16(i) for i in range(len(text) + 1)] == u16
        # every byte / unit maps back to the character holding it
        for i, c in enumerate(text):
            assert all(m.from_utf8(b) == i for b in range(u8[i], u8[i + 1]))
            assert all(m.from_utf16(u) == i for u in range(u16[i], u16[i + 1]))
        assert m.from_utf8(u8[-1]) == len(text) and m.from_utf16(u16[-1]) == len(text)

    @settings(max_examples=100, deadline=None)
    @given(st.lists(CHARS, max_size=40).map("".join))
    def test_tables_built_by_blocks(self, text: str) -> None:
        """Long texts build the tables block by block; tiny blocks give the same tables."""
        from unittest import mock

        from tokviz.engine import text as text_module

        whole = OffsetMap(text)
        with mock.patch.object(text_module, "_TABLE_BLOCK", 3):
            blocks = OffsetMap(text)
            u8 = [blocks.to_utf8(i) for i in range(len(text) + 1)]
            u16 = [blocks.to_utf16(i) for i in range(len(text) + 1)]
        assert u8 == [whole.to_utf8(i) for i in range(len(text) + 1)]
        assert u16 == [whole.to_utf16(i) for i in range(len(text) + 1)]

    def test_lone_surrogate_counts_as_one_bmp_char(self) -> None:
        m = OffsetMap("a\ud800b")
        assert [m.to_utf8(i) for i in range(4)] == [0, 1, 4, 5]
        assert [m.to_utf16(i) for i in range(4)] == [0, 1, 2, 3]
