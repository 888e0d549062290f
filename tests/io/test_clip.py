"""CLIP merges files (tokviz.io.clip) on a hand-made file; the real file and the references are in
tests/parity/test_clip_parity.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.text import NormalizedText
from tokviz.io.clip import CLIPClean, clip_vocabulary
from tokviz.io.detect import format_details, sniff

MERGES = '"bpe_simple_vocab_tiny.txt#version: 0.2\nh e\nl l\nhe ll\nhell o</w>\n'


def write(folder: Path, name: str = "bpe_simple_vocab_tiny.txt.gz", text: str = MERGES) -> Path:
    path = folder / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


class TestVocabulary:
    def test_alphabet_order_then_suffixed_then_merges_then_specials(self) -> None:
        vocab = clip_vocabulary([("h", "e"), ("l", "l")])
        # GPT-2's bytes_to_unicode order: "!" (byte 33) first, then the printable bytes
        assert vocab["!"] == 0 and vocab["h"] == ord("h") - 33 and vocab["!</w>"] == 256
        assert (vocab["he"], vocab["ll"], vocab["<|startoftext|>"], vocab["<|endoftext|>"]) == (512, 513, 514, 515)


class TestLoad:
    def test_encode(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path))
        # "Hello" -> "hello" -> h e l l o</w> -> he l l o</w> -> he ll o</w> -> hell o</w> -> hello</w> (515)
        assert tok.encode("Hello", add_special_tokens=False).ids == [515]
        # "Hi!" -> "hi", "!": h (71) i</w> (256 + 72), !</w> (256)
        assert tok.encode("Hi!", add_special_tokens=False).ids == [71, 328, 256]
        assert tok.encode("Hello").ids == [516, 515, 517]
        assert tok.decode([515, 515]) == "hello hello "

    def test_cleaning_before_the_split(self, tmp_path: Path) -> None:
        tok = tokviz.load(write(tmp_path))
        # html entities unescaped twice, curly quotes straightened by ftfy, spaces collapsed
        assert tok.encode("  HELLO&amp;amp;\u201d ", add_special_tokens=False).ids == tok.encode(
            'hello&"', add_special_tokens=False).ids

    def test_sniff_folder_and_info(self, tmp_path: Path) -> None:
        path = write(tmp_path)
        assert sniff(gzip.decompress(path.read_bytes())) == "clip-merges"
        tok = tokviz.load(tmp_path)
        details = format_details(tok)
        assert details["format"].startswith("CLIP merges") and details["derived vocabulary"] == 518

    def test_a_merges_txt_beside_a_vocab_json_is_not_clip(self, tmp_path: Path) -> None:
        path = write(tmp_path, name="merges.txt")
        (tmp_path / "vocab.json").write_text('{"a": 0}')
        with pytest.raises(TokvizFormatError, match="merges.txt with a vocab.json beside it"):
            tokviz.load(path)

    def test_gpt2_merges_still_need_their_vocab(self, tmp_path: Path) -> None:
        path = write(tmp_path, name="merges.txt", text="#version: 0.2\n\u0120 t\nh e\n")
        with pytest.raises(TokvizFormatError, match="load vocab.json beside it"):
            tokviz.load(path)

    def test_bad_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, text=MERGES.replace("l l\n", "l l l\n"))
        with pytest.raises(TokvizFormatError, match=r"bpe_simple_vocab_tiny\.txt\.gz: line 3: expected 'left right'"):
            tokviz.load(path)


class TestCleanAlignment:
    def test_entity_aligns_to_its_ampersand_and_the_rest_keeps_its_place(self) -> None:
        nt = CLIPClean().normalize(NormalizedText.identity("A &amp; B"))
        assert nt.text == "a & b"
        assert [nt.align(i) for i in range(len(nt.text))] == [(0, 1), (1, 2), (2, 3), (7, 8), (8, 9)]

    def test_strip_and_spaces(self) -> None:
        nt = CLIPClean().normalize(NormalizedText.identity(" \x1cx \t y\x1f"))
        # Python's str.strip also strips U+001C..U+001F; the \t run collapses to one space
        assert nt.text == "x y"
        assert nt.original_span(0, 3) == (2, 7)

    def test_final_sigma_is_pythons(self) -> None:
        assert CLIPClean().normalize_str("ΟΔΟΣ ΟΔΟΣ") == "οδος οδος"
