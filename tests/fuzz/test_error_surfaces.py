"""Every error class of issue #11 reaches the user as one line: CLI exit 2, GUI error bar.

The files are the regression cases (deep JSON, a wrong field type, a hostile regex met at
encode time, a non-UTF-8 piece, a diamond charsmap); the CLI runs in-process (`cli.main`), the
GUI through the Inspect view-model whose worker turns an exception into ``error_raised``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_bundles import base_model_pieces, diamond_charsmap, json_bundle, model_file

from tokviz import cli

HANG = r"(?x)(a{1,10}) {1,10}$"
TEXT = "a" * 40 + "b"


def bad_files() -> dict[str, bytes]:
    wrong_type = json_bundle("qwen3")
    wrong_type["decoder"] = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "BPEDecoder", "suffix": ["x"]}]}
    hostile = json_bundle("qwen3")
    hostile["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": HANG}
    pieces = base_model_pieces()
    pieces[5] = (b"\xc3\x28", 0.0, 1)
    return {
        "deep.json": b'{"model": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "wrong_type.json": json.dumps(wrong_type).encode(),
        "hostile_regex.json": json.dumps(hostile).encode(),
        "not_utf8.model": model_file(pieces),
        "diamond.model": model_file(base_model_pieces(), normalizer={"precompiled_charsmap": diamond_charsmap(24)}),
    }


EXPECTED = {
    "deep.json": "JSON nested 5001 levels deep",
    "wrong_type.json": "decoder.decoders[1].suffix: expected a string, got a list",
    "hostile_regex.json": "took too long",
    "not_utf8.model": "pieces[5]: piece 5 is not valid UTF-8",
    "diamond.model": "precompiled_charsmap: trie walk took more than",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_prints_one_line_and_exits_2(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_bytes(bad_files()[name])
    code = cli.main(["encode", str(path), "ab" * 12 if "diamond" in name else TEXT])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and EXPECTED[name] in err, err
    if name != "hostile_regex.json":  # met at encode time: that error names the pattern instead
        assert err.startswith(f"tokviz: error: {path}: "), err


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_gui_shows_one_line_in_the_error_bar(name: str, tmp_path: Path, qtbot) -> None:  # noqa: ANN001
    from tokviz.gui.viewmodel import InspectViewModel

    path = tmp_path / name
    path.write_bytes(bad_files()[name])
    vm = InspectViewModel()
    errors: list[str] = []
    vm.error_raised.connect(errors.append)
    vm.set_text("ab" * 12 if "diamond" in name else TEXT)
    vm.load_tokenizer(path)
    qtbot.waitUntil(lambda: bool(errors) and not vm.is_busy(), timeout=60_000)
    assert EXPECTED[name] in errors[0] and "\n" not in errors[0], errors
    assert "Traceback" not in errors[0]
