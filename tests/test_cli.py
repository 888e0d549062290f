"""The ``tokviz`` command: encode / decode / info output, and one-line errors with exit status 2."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from support import bundle_bytes

from tokviz.cli import main
from tokviz.engine import backend

R50K = "gpt2/r50k_base.tiktoken"


@pytest.fixture(scope="module")
def r50k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("r50k") / "r50k_base.tiktoken.gz"
    p.write_bytes(gzip.compress(bundle_bytes(R50K)))
    return p


@pytest.fixture(scope="module")
def cl100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("cl100k") / "cl100k_base.tiktoken"
    p.write_bytes(bundle_bytes("cl100k_base/cl100k_base.tiktoken"))
    return p


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class TestEncode:
    def test_ids(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        assert run(capsys, "encode", str(r50k), "Hello world") == (0, "15496 995\n", "")

    def test_json(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        code, out, _ = run(capsys, "encode", str(r50k), "Hello wörld", "--json")
        assert code == 0
        # b" w", b"\xc3\xb6r" ("ör" in the byte-level spelling), b"ld": checked against tiktoken
        got = json.loads(out)
        assert {k: got[k] for k in ("ids", "tokens", "offsets")} == {
            "ids": [15496, 266, 30570, 335],
            "tokens": ["Hello", "Ġw", "Ã¶r", "ld"],
            "offsets": [[0, 5], [5, 7], [7, 9], [9, 11]],
        }
        # the model-input fields (tests/test_cli_inputs.py checks them against HF)
        assert got["attention_mask"] == [1, 1, 1, 1] and got["overflowing"] == []

    def test_file_and_stdin(self, capsys, monkeypatch, r50k: Path, tmp_path: Path) -> None:  # noqa: ANN001
        f = tmp_path / "in.txt"
        f.write_text("Hello world", encoding="utf-8")
        assert run(capsys, "encode", str(r50k), "--file", str(f))[1] == "15496 995\n"
        import io

        monkeypatch.setattr(sys, "stdin", io.StringIO(" world"))
        assert run(capsys, "encode", str(r50k))[1] == "995\n"

    def test_special_literal_is_text_unless_allowed(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        plain = run(capsys, "encode", str(r50k), "<|endoftext|>")[1].split()
        assert "50256" not in plain and len(plain) > 1
        assert run(capsys, "encode", str(r50k), "<|endoftext|>", "--allowed-special", "all")[1] == "50256\n"

    def test_no_special_flag(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        assert run(capsys, "encode", str(r50k), "hi", "--no-special")[1] == "5303\n"

    def test_custom_rank_file_with_pattern(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        import base64

        toks = [bytes([b]) for b in range(256)] + [b"ab"]
        p = tmp_path / "custom.tiktoken"
        p.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(toks)))
        code, _, err = run(capsys, "encode", str(p), "abab")
        assert code == 2 and "pattern" in err
        assert run(capsys, "encode", str(p), "abab", "--pattern", r"\w+", "--special-tokens", '{"<e>": 300}')[
            1
        ] == ("256 256\n")


class TestDecode:
    def test_decode(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        assert run(capsys, "decode", str(r50k), "15496", "995") == (0, "Hello world\n", "")

    def test_skip_special(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        assert run(capsys, "decode", str(r50k), "15496", "50256")[1] == "Hello<|endoftext|>\n"
        assert run(capsys, "decode", str(r50k), "15496", "50256", "--skip-special")[1] == "Hello\n"

    def test_json(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        """ids as given, each id's vocabulary string (GPT-2's Ġ for a space) and the text."""
        code, out, _ = run(capsys, "decode", str(r50k), "15496", "995", "50256", "--json")
        assert code == 0
        assert json.loads(out) == {"ids": [15496, 995, 50256], "tokens": ["Hello", "Ġworld", "<|endoftext|>"],
                                   "text": "Hello world<|endoftext|>"}
        code, out, _ = run(capsys, "decode", str(r50k), "15496", "50256", "--skip-special", "--json")
        assert json.loads(out)["text"] == "Hello"

    def test_unknown_id(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        code, out, err = run(capsys, "decode", str(r50k), "15496", "70000")
        assert (code, out) == (2, "")
        assert err.count("\n") == 1 and "not in the vocabulary: 70000" in err


class TestInfo:
    def test_five_numbers(self, capsys, cl100k: Path) -> None:  # noqa: ANN001
        code, out, _ = run(capsys, "info", str(cl100k))
        assert code == 0
        rows = {line[:28].strip(): line[28:].strip() for line in out.splitlines()}
        assert rows["name"] == "cl100k_base"
        assert rows["model"] == "BPE"
        assert rows["normal (mergeable) entries"] == "100,256"
        assert rows["special/added entries"] == "5 (5 special)"
        assert rows["total entries"] == "100,261"
        assert rows["max id + 1"] == "100,277"  # ids 100261..100275 are unused
        assert rows["embedding rows"] == "unknown"
        assert "pre_tokenizer" in out and "Split" in out
        assert rows["engine kernels"] == backend()  # native core or pure Python

    def test_json(self, capsys, cl100k: Path) -> None:  # noqa: ANN001
        info = json.loads(run(capsys, "info", str(cl100k), "--json")[1])
        assert (info["normal_entries"], info["id_space"]) == (100256, 100277)
        assert info["backend"] == backend()


class TestErrors:
    """A bad tokenizer file prints one line on stderr (naming the file) and exits 2."""

    def _bad(self, capsys, path: Path) -> str:  # noqa: ANN001
        code, out, err = run(capsys, "encode", str(path), "hello")
        assert code == 2 and out == ""
        assert err.startswith("tokviz: error: ") and err.endswith("\n") and err.count("\n") == 1
        assert str(path) in err
        return err

    def test_truncated_gzip(self, capsys, r50k: Path, tmp_path: Path) -> None:  # noqa: ANN001
        p = tmp_path / "cut.tiktoken.gz"
        p.write_bytes(r50k.read_bytes()[:20000])
        assert "truncated or corrupt gzip" in self._bad(capsys, p)

    def test_random_binary(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        rng = random.Random(1)
        p = tmp_path / "tokenizer.model"
        p.write_bytes(b"\xff" + bytes(rng.randrange(256) for _ in range(5000)))
        assert "unrecognised binary content" in self._bad(capsys, p)

    def test_json_not_a_tokenizer(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        p = tmp_path / "tokenizer.json"
        p.write_text('{"architectures": ["Llama"], "hidden_size": 4096}')
        assert "not a tokenizer" in self._bad(capsys, p)

    def test_missing_file(self, capsys, tmp_path: Path) -> None:  # noqa: ANN001
        assert "no such file" in self._bad(capsys, tmp_path / "missing.json")

    def test_missing_text_file(self, capsys, r50k: Path, tmp_path: Path) -> None:  # noqa: ANN001
        code, _, err = run(capsys, "encode", str(r50k), "--file", str(tmp_path / "none.txt"))
        assert code == 2 and "none.txt: no such file" in err

    def test_lone_surrogate(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        code, _, err = run(capsys, "encode", str(r50k), "a\udcffb")
        assert code == 2 and "lone surrogate" in err and err.count("\n") == 1

    def test_bad_special_tokens_json(self, capsys, r50k: Path) -> None:  # noqa: ANN001
        code, _, err = run(capsys, "info", str(r50k), "--special-tokens", "[1]")
        assert code == 2 and "--special-tokens" in err

    def test_real_process_prints_no_traceback(self, tmp_path: Path) -> None:
        p = tmp_path / "tokenizer.json"
        p.write_bytes(gzip.compress(b'{"model": {"type": "BPE", "vocab": {}}}')[:15])
        out = subprocess.run(
            [sys.executable, "-m", "tokviz", "info", str(p)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.returncode == 2
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


class TestHelp:
    def test_every_argument_of_every_command_has_help(self) -> None:
        import argparse

        from tokviz.cli import build_parser

        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
        missing = [f"{name} {a.option_strings[0] if a.option_strings else a.dest}"
                   for name, parser in sub.choices.items() for a in parser._actions if not a.help]
        assert len(sub.choices) == 13 and not missing, missing

    def test_gui_tab_choices_are_listed(self, capsys) -> None:  # noqa: ANN001
        with pytest.raises(SystemExit):
            main(["gui", "--help"])
        assert "{inspect,compare,vocabulary,chat,train,lattice}" in capsys.readouterr().out
