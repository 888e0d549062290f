"""The command line's ways to name a tokenizer: embedded names, pattern presets, GGUF files,
``tokviz list``; and what ``tokviz info`` says about the file format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import bundle_bytes, bundle_path

import tokviz
from tokviz.cli import main
from tokviz.io.embedded import embedded_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def custom_ranks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """r50k's ranks without its last line: not a published file (its sha256 differs)."""
    data = bundle_bytes("gpt2/r50k_base.tiktoken")
    lines = data.splitlines(keepends=True)
    p = tmp_path_factory.mktemp("custom") / "custom.tiktoken"
    p.write_bytes(b"".join(lines[:-1]))
    return p


class TestNames:
    def test_encode_by_embedded_name(self, capsys: pytest.CaptureFixture[str]) -> None:
        path = embedded_path("cl100k")
        if path is None:
            pytest.skip("cl100k is not embedded in this checkout")
        want = tokviz.load(path).encode("hello world").ids
        code, out, _ = run(capsys, "encode", "cl100k", "hello world")
        assert code == 0 and out.split() == [str(i) for i in want]

    def test_alias(self) -> None:
        assert embedded_path("gpt2") == embedded_path("r50k_base") == embedded_path("r50k")

    def test_unknown_name_is_no_such_file(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, _, err = run(capsys, "encode", "no-such-tokenizer-name", "x")
        assert code == 2 and "no-such-tokenizer-name: no such file" in err

    @pytest.mark.parametrize("name", ["cl100k", "gpt2", "bert", "albert"])
    def test_python_load_takes_the_cli_names(self, name: str) -> None:
        by_name, by_path = tokviz.load(name), tokviz.load(embedded_path(name))
        text = "Hello wörld, 中文 2024!"
        assert by_name.encode(text).ids == by_path.encode(text).ids and by_name.get_vocab() == by_path.get_vocab()

    def test_python_load_prefers_an_existing_path(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "cl100k").write_bytes(bundle_bytes("gpt2/r50k_base.tiktoken"))  # r50k's ranks, named cl100k
        assert tokviz.load("cl100k").get_vocab() == tokviz.load(embedded_path("r50k")).get_vocab()
        with pytest.raises(tokviz.TokvizFormatError, match="no-such-tokenizer-name: no such file"):
            tokviz.load("no-such-tokenizer-name")

    def test_list_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "list", "--embedded", "--json")
        rows = json.loads(out)
        assert code == 0 and all(r["group"] == "embedded" for r in rows)
        for r in rows:  # every listed name loads by that name
            assert embedded_path(r["name"]) == Path(r["path"])


class TestPatternPresets:
    def test_custom_rank_file_needs_a_pattern(self, capsys: pytest.CaptureFixture[str], custom_ranks: Path) -> None:
        code, _, err = run(capsys, "encode", str(custom_ranks), "hi")
        assert code == 2 and "presets: r50k, cl100k" in err

    def test_preset_by_name(self, capsys: pytest.CaptureFixture[str], custom_ranks: Path) -> None:
        text = "Hello world, it's 2024!"
        want = tokviz.load(bundle_bytes("gpt2/r50k_base.tiktoken")).encode(text).ids
        for name in ("gpt2", "r50k"):
            code, out, _ = run(capsys, "encode", str(custom_ranks), text, "--pattern", name)
            assert code == 0 and out.split() == [str(i) for i in want]

    def test_info_says_which_preset(self, capsys: pytest.CaptureFixture[str], custom_ranks: Path) -> None:
        code, out, _ = run(capsys, "info", str(custom_ranks), "--pattern", "cl100k")
        assert code == 0 and re.search(r"pattern preset\s+cl100k", out)
        code, out, _ = run(capsys, "info", str(custom_ranks), "--pattern", r"\w+|\s+")
        assert code == 0 and re.search(r"pattern preset\s+custom", out)


class TestGGUFInfo:
    def test_the_numbers_apart(self, capsys: pytest.CaptureFixture[str]) -> None:
        gguf = pytest.importorskip("gguf")
        path = bundle_path("gguf/ggml-vocab-qwen2.gguf")
        fields = gguf.GGUFReader(str(path)).fields
        tokens = fields["tokenizer.ggml.tokens"].contents()
        pads = sum(1 for i, t in enumerate(tokens) if t == f"[PAD{i}]")
        code, out, _ = run(capsys, "info", str(path), "--json")
        info = json.loads(out)
        assert code == 0
        assert info["embedding_rows"] == len(tokens)
        assert info["id_space"] == len(tokens) - pads  # the padding rows are the list's tail
        assert info["format_details"]["padding rows"] == pads
        assert info["format_details"]["tokenizer.ggml.pre"] == "qwen2"
        code, out, _ = run(capsys, "info", str(path))
        assert re.search(r"padding rows\s+" + f"{pads:,}", out)
        assert re.search(r"chat template\s+yes", out)

    def test_encode_a_gguf(self, capsys: pytest.CaptureFixture[str]) -> None:
        pytest.importorskip("gguf")
        path = bundle_path("gguf/ggml-vocab-llama-spm.gguf")
        want = tokviz.load(path).encode("Hello world").ids
        code, out, _ = run(capsys, "encode", str(path), "Hello world")
        assert code == 0 and out.split() == [str(i) for i in want] and want[0] == 1  # BOS: add_bos_token

    def test_bad_gguf_is_one_line(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        p = tmp_path / "broken.gguf"
        p.write_bytes(bundle_path("gguf/ggml-vocab-gpt-2.gguf").read_bytes()[:500])
        code, _, err = run(capsys, "info", str(p))
        assert code == 2 and err.count("\n") == 1 and "broken.gguf" in err and "truncated" in err
