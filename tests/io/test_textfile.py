"""The one reader of user text: byte-exact whole-file and streamed reads, errors with byte offsets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tokviz.engine.errors import TokvizFormatError
from tokviz.io.textfile import decode_text_bytes, iter_text_blocks, read_text_file

rich = st.text(alphabet=st.sampled_from(list("ab \r\n\t\u00a0\u2028\u2029\ufeff\x00\x85\u0301\u202e你😀")), max_size=200)


class TestTextFile:
    @settings(max_examples=60, deadline=None)
    @given(rich, st.integers(1, 7))
    def test_whole_and_streamed_reads_are_exact(self, text: str, block: int) -> None:
        import tempfile

        p = Path(tempfile.mkdtemp()) / "t.txt"
        p.write_bytes(text.encode("utf-8"))
        assert read_text_file(p).text == text
        seen: list[int] = []
        assert "".join(iter_text_blocks(p, block_bytes=block, progress=lambda d, t: seen.append(d))) == text
        assert not seen or seen[-1] == len(text.encode("utf-8"))

    def test_counts(self) -> None:
        tf = decode_text_bytes(b"\xef\xbb\xbfa\r\nb\rc\r\n")
        assert (tf.bom, tf.crlf, tf.lone_cr, tf.text) == (True, 2, 1, "\ufeffa\r\nb\rc\r\n")

    def test_invalid_utf8_offset_in_a_later_block(self, tmp_path: Path) -> None:
        p = tmp_path / "bad.txt"
        p.write_bytes(b"x" * 10 + "é".encode() + b"\xff")
        with pytest.raises(TokvizFormatError, match=r"byte 12"):
            list(iter_text_blocks(p, block_bytes=4))
        with pytest.raises(TokvizFormatError, match=r"bad.txt.*byte 12|byte 12.*bad.txt"):
            read_text_file(p)
        assert read_text_file(p, errors="replace").replaced == 1
