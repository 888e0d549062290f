"""The command line reads text files and standard input byte-exact (CR, CRLF, BOM kept)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, SHARED, bundle_bytes, require, require_module

from tokviz.cli import main


def _tiktoken(rel: str, tmp: Path):  # noqa: ANN202 - tiktoken.Encoding from the same rank file
    tiktoken = require_module("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.io.tiktoken_ranks import preset_for

    data = bundle_bytes(rel)
    preset = preset_for(data)
    path = tmp / "ranks.tiktoken"
    path.write_bytes(data)
    ref = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=dict(preset.special_tokens), explicit_n_vocab=preset.explicit_n_vocab)
    return ref, path


class TestEncodeFile:
    def test_two_line_crlf_file_is_tiktokens_ids(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        ref, ranks = _tiktoken("cl100k_base/cl100k_base.tiktoken", tmp_path)
        f = tmp_path / "two.txt"
        f.write_bytes(b"a\r\nb")
        expected = ref.encode("a\r\nb")  # "64 319 65" in the issue: a, CRLF as one token, b
        assert len(expected) == 3 and ref.decode_single_token_bytes(expected[1]) == b"\r\n"
        assert main(["encode", str(ranks), "--file", str(f)]) == 0
        assert capsys.readouterr().out.split() == [str(i) for i in expected]

    def test_bom_and_lone_cr_are_text(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        ref, ranks = _tiktoken("gpt2/r50k_base.tiktoken", tmp_path)
        f = tmp_path / "bom.txt"
        f.write_bytes(b"\xef\xbb\xbfx\ry\r\n")
        assert main(["encode", str(ranks), "--file", str(f)]) == 0
        assert capsys.readouterr().out.split() == [str(i) for i in ref.encode("\ufeffx\ry\r\n")]

    def test_invalid_utf8_names_the_file_and_byte(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        _ref, ranks = _tiktoken("gpt2/r50k_base.tiktoken", tmp_path)
        f = tmp_path / "bad.txt"
        f.write_bytes(b"abc\r\n\xc3(")
        assert main(["encode", str(ranks), "--file", str(f)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "bad.txt" in err and "byte 5" in err

    def test_stdin_bytes_keep_crlf(self, tmp_path: Path) -> None:
        ref, ranks = _tiktoken("gpt2/r50k_base.tiktoken", tmp_path)
        r = subprocess.run([sys.executable, "-m", "tokviz", "encode", str(ranks)], input=b"a\r\nb\xc2\xa0c",
                           capture_output=True, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().split() == [str(i) for i in ref.encode("a\r\nb\u00a0c")]

    def test_one_megabyte_crlf_file_gives_tiktokens_count(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        require(SHARED is not None, "shared corpora not found")
        f = SHARED / "corpora" / "wagahaiwa_nekodearu.txt"
        data = f.read_bytes()
        assert len(data) > 1_000_000 and b"\r\n" in data
        ref, ranks = _tiktoken("cl100k_base/cl100k_base.tiktoken", tmp_path)
        expected = ref.encode(data.decode("utf-8"), disallowed_special=())
        assert main(["encode", str(ranks), "--file", str(f)]) == 0
        out = capsys.readouterr().out.split()
        assert len(out) == len(expected)
        assert out == [str(i) for i in expected]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_train_corpus_lines_keep_their_line_ends(newline: str, tmp_path: Path) -> None:
    from tokviz.training.words import read_corpus_files

    f = tmp_path / "c.txt"
    text = newline.join(["one", "two", "", "three"]) + newline
    f.write_bytes(text.encode())
    lines = read_corpus_files([f])
    assert "".join(lines) == text
    assert all(line.endswith("\n") for line in lines) or newline == "\r"
