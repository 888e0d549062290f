"""js-tiktoken rank JSON (tokviz.io.tiktoken_json): hand-made files; the real ones are in
tests/parity/test_tiktoken_json_parity.py."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.io.detect import format_details, sniff
from tokviz.io.tiktoken_json import decode_bpe_ranks

GPT2_PAT = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _b64(*tokens: bytes) -> str:
    return " ".join(base64.b64encode(t).decode() for t in tokens)


# ranks: a=0 b=1 " "=2, then a gap: ab=5 " ab"=6; the special <|x|> = 7
RANKS = f"! 0 {_b64(b'a', b'b', b' ')}\n! 5 {_b64(b'ab', b' ab')}"
OBJ = {"pat_str": GPT2_PAT, "special_tokens": {"<|x|>": 7}, "bpe_ranks": RANKS}


def _write(tmp_path: Path, obj: dict, name: str = "tiny.json", wrap: str = "") -> Path:  # type: ignore[type-arg]
    path = tmp_path / name
    path.write_text(wrap + json.dumps(obj) + (";" if wrap else ""), encoding="utf-8")
    return path


class TestDecode:
    def test_lines_and_gaps(self) -> None:
        assert decode_bpe_ranks(RANKS, source="x") == ([b"a", b"b", b" ", b"ab", b" ab"], [0, 1, 2, 5, 6])

    def test_bad_base64_names_the_line(self) -> None:
        with pytest.raises(TokvizFormatError, match=r"x: bpe_ranks line 2: token 2 of the line is not base64"):
            decode_bpe_ranks("! 0 YQ==\n! 1 Yg== ***", source="x")

    def test_rank_must_be_a_number(self) -> None:
        with pytest.raises(TokvizFormatError, match=r"bpe_ranks line 1: expected '<marker> <first rank>"):
            decode_bpe_ranks("! x YQ==", source="x")


class TestLoad:
    def test_encode(self, tmp_path: Path) -> None:
        tok = tokviz.load(_write(tmp_path, OBJ))
        # "ab ab" -> chunks "ab", " ab"; "ab" = a+b (rank 5); " ab" is itself a token (rank 6)
        assert tok.encode("ab ab").ids == [5, 6]
        assert tok.decode([5, 6]) == "ab ab"

    def test_specials_only_when_allowed(self, tmp_path: Path) -> None:
        tok = tokviz.load(_write(tmp_path, OBJ))
        assert tok.encode("a<|x|>b", allowed_special="all").ids == [0, 7, 1]
        with pytest.raises(TokvizFormatError, match="not in the rank table"):
            tok.encode("a<|x|>b")  # as text, "<" has no rank (tiktoken cannot encode it either)

    @pytest.mark.parametrize("wrap", ["export default ", "module.exports = "])
    def test_javascript_module(self, tmp_path: Path, wrap: str) -> None:
        path = _write(tmp_path, OBJ, name="tiny.cjs", wrap=wrap)
        assert sniff(path.read_bytes()) == "tiktoken-json"
        assert tokviz.load(path).encode("ab").ids == [5]

    def test_gzip_bytes_and_folder(self, tmp_path: Path) -> None:
        data = gzip.compress(json.dumps(OBJ).encode())
        assert tokviz.load(data).encode("ab").ids == [5]
        (tmp_path / "claude.json.gz").write_bytes(data)
        (tmp_path / "notes.json").write_text('{"a": 1}')
        assert tokviz.load(tmp_path).encode("ab").ids == [5]

    def test_info(self, tmp_path: Path) -> None:
        details = format_details(tokviz.load(_write(tmp_path, {**OBJ, "explicit_n_vocab": 99})))
        assert details["n_vocab"] == 8
        assert details["format"].startswith("js-tiktoken rank JSON")
        assert details["explicit_n_vocab"].startswith("99 ")

    def test_pattern_override(self, tmp_path: Path) -> None:
        tok = tokviz.load(_write(tmp_path, OBJ), pattern=r"\S+|\s+")
        # " ab" is no longer one chunk: " " then "ab"
        assert tok.encode("ab ab").ids == [5, 2, 5]


class TestBadFiles:
    def test_special_on_a_rank(self, tmp_path: Path) -> None:
        with pytest.raises(TokvizFormatError, match="already a mergeable token's rank"):
            tokviz.load(_write(tmp_path, {**OBJ, "special_tokens": {"<|x|>": 5}}))

    def test_no_pattern(self, tmp_path: Path) -> None:
        obj = {k: v for k, v in OBJ.items() if k != "pat_str"}
        with pytest.raises(TokvizFormatError, match=r"tiny\.json: pat_str: no pat_str"):
            tokviz.load(_write(tmp_path, obj))

    def test_cli_exit_2_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from tokviz.cli import main

        bad = _write(tmp_path, {**OBJ, "bpe_ranks": "! 0 %%%"}, name="bad.json")
        assert main(["info", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "bad.json: bpe_ranks line 1" in err[0]
