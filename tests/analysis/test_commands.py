"""The chat, heal and specials subcommands (through tokviz.cli.main, as a user runs them)."""

from __future__ import annotations

import json

import pytest
from support import bundle_path

from tokviz.cli import main

from .oracles import tiktoken_pair


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class TestChatCommand:
    def test_json(self, tmp_path, capsys) -> None:  # noqa: ANN001
        msgs = tmp_path / "m.json"
        msgs.write_bytes(json.dumps([{"role": "user", "content": "Hi 中文"}]).encode())
        code, out, _ = run(capsys, "chat", str(bundle_path("qwen3/tokenizer.json")), "--messages", str(msgs),
                           "--add-generation-prompt", "--var", "enable_thinking=false", "--json")
        assert code == 0
        data = json.loads(out)
        assert data["text"].startswith("<|im_start|>user\nHi 中文<|im_end|>\n<|im_start|>assistant\n<think>")
        assert data["ids"][:3] == [151644, 872, 198]  # <|im_start|> user \n
        assert {"id", "message"} <= data["lints"][0].keys()

    def test_template_file_and_raise(self, tmp_path, capsys) -> None:  # noqa: ANN001
        msgs = tmp_path / "m.json"
        msgs.write_bytes(b'{"messages": [{"role": "system", "content": "x"}]}')
        tpl = tmp_path / "t.jinja"
        tpl.write_bytes(b"{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}")
        code, out, err = run(capsys, "chat", str(bundle_path("qwen3/tokenizer.json")), "--messages", str(msgs),
                             "--template", str(tpl), "--json")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "System role not supported" in err

    def test_bad_inputs_are_one_line(self, tmp_path, capsys) -> None:  # noqa: ANN001
        tok = str(bundle_path("qwen3/tokenizer.json"))
        bad = tmp_path / "bad.json"
        bad.write_bytes(b"[{,}]")
        code, _, err = run(capsys, "chat", tok, "--messages", str(bad))
        assert code == 2 and "bad.json" in err and "line 1" in err
        good = tmp_path / "m.json"
        good.write_bytes(b'[{"role": "user", "content": "x"}]')
        tpl = tmp_path / "t.jinja"
        tpl.write_bytes(b"line1\n{% for m in messages %}\n{{ m.content }\n")
        code, _, err = run(capsys, "chat", tok, "--messages", str(good), "--template", str(tpl))
        assert code == 2 and "line 3" in err and err.count("\n") == 1
        code, _, err = run(capsys, "chat", tok, "--messages", str(good), "--var", "enable_thinking=nope")
        assert code == 2 and "--var" in err


class TestHealCommand:
    @pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
    def test_json_equals_tiktoken(self, name, tmp_path_factory, capsys) -> None:  # noqa: ANN001
        tok, ref = tiktoken_pair(name, tmp_path_factory)
        path = {"r50k_base": "gpt2/r50k_base.tiktoken", "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
                "o200k_base": "o200k_base/o200k_base.tiktoken"}[name]
        for text in ("hello fanta", "The quick brown fo", "hello\n"):
            code, out, _ = run(capsys, "heal", str(bundle_path(path)), "--text", text, "--json")
            assert code == 0
            data = json.loads(out)
            stable, completions = ref.encode_with_unstable(text)
            assert data["stable"] == stable
            assert data["completions"] == len(completions)
            assert data["single_token_completions"] == sorted(c[0] for c in completions if len(c) == 1)
            assert bytes.fromhex(data["unstable_hex"]) == text.encode()[len(ref.decode_bytes(stable)):]
            assert {"rollback_one", "rollback_covering"} <= data["healing"].keys()

    def test_text_shows_the_completions_text(self, tmp_path_factory, capsys) -> None:  # noqa: ANN001
        """The first 20 completions, shortest first then by ids, each as its text and ids; the
        set, the order and the bytes come from tiktoken's ``encode_with_unstable``."""
        _tok, ref = tiktoken_pair("cl100k_base", tmp_path_factory)
        code, out, _ = run(capsys, "heal", str(bundle_path("cl100k_base/cl100k_base.tiktoken")), "--text", "hello fanta")
        assert code == 0
        stable, completions = ref.encode_with_unstable("hello fanta")
        first = sorted({tuple(c) for c in completions}, key=lambda c: (len(c), c))[:20]
        lines = out.splitlines()
        assert lines[0] == f"stable:   {' '.join(map(str, stable))}"
        assert lines[2].startswith(f"completions: {len({tuple(c) for c in completions}):,} ")
        shown = [repr(ref.decode_bytes(list(c)).decode("utf-8", "backslashreplace")) for c in first]
        assert lines[3 : 3 + len(first)] == [f"  {t}  ids {list(c)}" for t, c in zip(shown, first)]
        assert lines[3 + len(first)] == f"  ... {len({tuple(c) for c in completions}) - 20:,} more"
        assert any(line.startswith("heal ") and "' fantasy'" in line for line in lines)

    def test_caret_out_of_range(self, capsys) -> None:  # noqa: ANN001
        code, _, err = run(capsys, "heal", str(bundle_path("gpt2/r50k_base.tiktoken")), "--text", "ab", "--caret", "9")
        assert code == 2 and "--caret" in err


class TestSpecialsCommand:
    def test_json(self, capsys) -> None:  # noqa: ANN001
        code, out, _ = run(capsys, "specials", str(bundle_path("mistral-7b-v0.1/tokenizer.json")),
                           "--text", "<s>hi</s>", "--json")
        data = json.loads(out)
        assert code == 0 and data["double_bos"] == ["hf-default"]
        assert next(m for m in data["modes"] if m["mode"] == "hf-default")["ids"] == [1, 1, 12014, 2]

    def test_file_is_read_byte_exact(self, tmp_path, tmp_path_factory, capsys) -> None:  # noqa: ANN001
        _tok, ref = tiktoken_pair("r50k_base", tmp_path_factory)
        f = tmp_path / "crlf.txt"
        f.write_bytes(b"line one\r\nline tw")
        code, out, _ = run(capsys, "heal", str(bundle_path("gpt2/r50k_base.tiktoken")), "--file", str(f), "--json")
        assert code == 0 and json.loads(out)["stable"] == ref.encode_with_unstable("line one\r\nline tw")[0]
