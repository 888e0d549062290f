"""Seed D01: the GPT-2 256-byte <-> 256-character bijection (the byte-level proxy alphabet)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from tokviz.engine.byte_alphabet import (
    BYTE_TO_CHAR,
    CHAR_TO_BYTE,
    bytes_to_proxy,
    proxy_to_bytes,
    text_to_proxy,
)


class TestSeedD01:
    def test_is_a_bijection_of_256(self) -> None:
        assert len(BYTE_TO_CHAR) == 256
        assert len(set(BYTE_TO_CHAR)) == 256
        assert all(CHAR_TO_BYTE[c] == b for b, c in enumerate(BYTE_TO_CHAR))

    def test_printable_bytes_stand_for_themselves(self) -> None:
        kept = [b for b, c in enumerate(BYTE_TO_CHAR) if ord(c) == b]
        assert len(kept) == 188
        assert kept == [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]

    def test_shifted_bytes_go_to_u0100_in_byte_order(self) -> None:
        shifted = [b for b, c in enumerate(BYTE_TO_CHAR) if ord(c) != b]
        assert len(shifted) == 68
        assert [ord(BYTE_TO_CHAR[b]) for b in shifted] == list(range(0x100, 0x100 + 68))
        assert BYTE_TO_CHAR[0x00] == "\u0100"
        assert BYTE_TO_CHAR[0x0A] == "Ċ"
        assert BYTE_TO_CHAR[0x20] == "Ġ"

    def test_seed_roundtrip_string(self) -> None:
        text = " A\n中文🙂\x00"
        proxy = text_to_proxy(text)
        assert len(proxy) == len(text.encode("utf-8"))
        assert proxy.startswith("ĠAĊ")
        assert proxy_to_bytes(proxy).decode("utf-8") == text

    @given(st.binary(max_size=64))
    def test_bytes_roundtrip(self, data: bytes) -> None:
        assert proxy_to_bytes(bytes_to_proxy(data)) == data
