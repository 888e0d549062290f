"""The configuration files beside tokenizer.json (tokviz.io.hf_config), read as transformers
reads them: each folder is written in the test around qwen3's tokenizer.json and loaded by both
tokviz and transformers' AutoTokenizer, whose apply_chat_template is the reference render."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support import bundle_path, require_module

import tokviz
from tokviz.analysis.chat import render_chat
from tokviz.engine.errors import TokvizFormatError
from tokviz.io.detect import format_details

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}]
LLAMA_LIKE = ("{{- bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{{ eos_token }}\n"
              "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TOOLS = "{{ bos_token }}TOOLS{% for m in messages %}[{{ m.content }}]{% endfor %}"


def _added(content: str) -> dict[str, Any]:
    return {"__type": "AddedToken", "content": content, "lstrip": False, "rstrip": False, "normalized": False,
            "single_word": False, "special": True}


def _tokenizer_json() -> str:
    """A small byte-level tokenizer.json (one id per byte, no merges) with Qwen's three specials,
    built with HF tokenizers: small enough that each folder loads in milliseconds."""
    tk = require_module("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = tk.Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return tok.to_str()


def folder(tmp_path: Path, files: dict[str, Any]) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "tokenizer.json").write_text(_tokenizer_json(), encoding="utf-8")
    for name, content in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return d


def transformers_render(d: Path, **kw: Any) -> tuple[str, list[int]]:
    trf = require_module("transformers")
    hf = trf.AutoTokenizer.from_pretrained(str(d))
    text = hf.apply_chat_template(MESSAGES, tokenize=False, **kw)
    ids = hf.apply_chat_template(MESSAGES, tokenize=True, **kw)
    return text, list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)


def tokviz_render(d: Path, template: str | None = None, **kw: Any) -> tuple[str, list[int]]:
    res = render_chat(tokviz.load(d), MESSAGES, template=template, lint=False, **kw)
    return res.text, list(res.ids)


class TestLikeTransformers:
    def test_config_tokens_and_jinja_template(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {
            "tokenizer_config.json": {"bos_token": _added("<|endoftext|>"), "eos_token": "<|im_end|>",
                                      "chat_template": "IGNORED {{ messages }}", "model_max_length": 4096},
            "chat_template.jinja": LLAMA_LIKE,
        })
        for agp in (False, True):
            assert tokviz_render(d, add_generation_prompt=agp) == transformers_render(d, add_generation_prompt=agp)
        tok = tokviz.load(d / "tokenizer.json")  # the file with siblings: the same configuration
        assert tok.config.bos_token == "<|endoftext|>" and tok.config.chat_template == LLAMA_LIKE
        details = format_details(tok)
        assert details["bos_token"] == "'<|endoftext|>' (tokenizer_config.json)"
        assert details["chat template 'default'"].endswith("(chat_template.jinja)")
        assert details["model_max_length"] == "4096 (tokenizer_config.json)"
        assert "chat_template (template files replace it" in details["not used"]

    def test_special_tokens_map_overrides_the_config(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {
            "tokenizer_config.json": {"bos_token": "<|im_start|>", "chat_template": LLAMA_LIKE},
            "special_tokens_map.json": {"bos_token": {"content": "<|endoftext|>", "special": True},
                                        "eos_token": "<|im_end|>"},
        })
        assert tokviz_render(d) == transformers_render(d)
        assert format_details(tokviz.load(d))["bos_token"] == "'<|endoftext|>' (special_tokens_map.json)"

    def test_special_tokens_map_is_skipped_beside_added_tokens_decoder(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {
            "tokenizer_config.json": {"eos_token": "<|im_end|>", "chat_template": LLAMA_LIKE,
                                      "added_tokens_decoder": {"256": {k: v for k, v in _added("<|endoftext|>").items() if k != "__type"}}},
            "special_tokens_map.json": {"bos_token": "<|endoftext|>"},
        })
        assert tokviz_render(d) == transformers_render(d)
        tok = tokviz.load(d)
        assert tok.config.bos_token is None  # as transformers 5: bos_token renders ''
        assert "special_tokens_map.json" in format_details(tok)["not used"]

    def test_named_templates_in_the_config(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {"tokenizer_config.json": {
            "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
            "chat_template": [{"name": "tool_use", "template": TOOLS}, {"name": "default", "template": LLAMA_LIKE}]}})
        tok = tokviz.load(d)
        assert list(tok.config.extra["chat_templates"]) == ["default", "tool_use"]
        assert tokviz_render(d) == transformers_render(d)
        assert tokviz_render(d, template=tok.config.extra["chat_templates"]["tool_use"]) == transformers_render(
            d, chat_template="tool_use")

    def test_additional_chat_templates_folder(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {"tokenizer_config.json": {"eos_token": "<|im_end|>", "bos_token": "<|endoftext|>"},
                              "chat_template.jinja": LLAMA_LIKE, "additional_chat_templates/tool_use.jinja": TOOLS})
        tok = tokviz.load(d)
        assert tok.config.extra["chat_templates"] == {"default": LLAMA_LIKE, "tool_use": TOOLS}
        assert tokviz_render(d, template=TOOLS) == transformers_render(d, chat_template="tool_use")
        assert format_details(tok)["chat template 'tool_use'"].endswith("(additional_chat_templates/tool_use.jinja)")


class TestOtherFiles:
    def test_chat_template_json_of_a_processor(self, tmp_path: Path) -> None:
        d = folder(tmp_path, {"tokenizer_config.json": {"chat_template": "config's"},
                              "chat_template.json": {"chat_template": "processor's {{ messages[0].content }}"}})
        tok = tokviz.load(d)
        assert tok.config.chat_template == "processor's {{ messages[0].content }}"
        assert format_details(tok)["chat template 'default'"].endswith("(chat_template.json)")

    def test_template_file_byte_exact(self, tmp_path: Path) -> None:
        src = "{{ bos_token }}\r\n{% for m in messages %}{{ m.content }}  \n{% endfor %}"
        d = folder(tmp_path, {"chat_template.jinja": src})
        assert tokviz.load(d).config.chat_template == src

    def test_a_model_folder_with_tokenizer_model(self, tmp_path: Path) -> None:
        d = tmp_path / "spm"
        d.mkdir()
        shutil.copy(bundle_path("mistral-7b-v0.1/tokenizer.model"), d / "tokenizer.model")
        (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ bos_token }}x", "bos_token": "<s>"}))
        tok = tokviz.load(d)
        assert tok.config.chat_template == "{{ bos_token }}x" and tok.config.bos_token == "<s>"

    @pytest.mark.parametrize(("name", "content", "where"), [
        ("tokenizer_config.json", '{"bos_token": 5}', "tokenizer_config.json: bos_token: expected a string"),
        ("tokenizer_config.json", '{"chat_template": [{"name": 1}]}', "chat_template[0]: expected"),
        ("special_tokens_map.json", "{not json", "special_tokens_map.json: line 1 column 2: not valid JSON"),
        ("chat_template.json", '{"template": "x"}', 'chat_template.json: chat_template: expected {"chat_template"'),
    ])
    def test_a_bad_config_names_its_file(self, tmp_path: Path, name: str, content: str, where: str) -> None:
        d = folder(tmp_path, {name: content})
        with pytest.raises(TokvizFormatError) as info:
            tokviz.load(d)
        assert where in str(info.value)


class TestChatCommand:
    def _run(self, d: Path, tmp_path: Path, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
        from tokviz.cli import main

        msgs = tmp_path / "m.json"
        msgs.write_text(json.dumps(MESSAGES[:2]), encoding="utf-8")
        code = main(["chat", str(d), "--messages", str(msgs), *extra])
        out, err = capsys.readouterr()
        return code, out, err

    def test_folder_default_and_named(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        d = folder(tmp_path, {"tokenizer_config.json": {
            "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
            "chat_template": [{"name": "default", "template": LLAMA_LIKE}, {"name": "tool_use", "template": TOOLS}]}})
        code, out, _ = self._run(d, tmp_path, capsys=capsys)
        assert code == 0 and out.startswith("<|endoftext|><|im_start|>system")
        code, out, _ = self._run(d, tmp_path, "--template-name", "tool_use", capsys=capsys)
        assert code == 0 and out.startswith("<|endoftext|>TOOLS[Be brief.][Hi there]")

    def test_unknown_name_is_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        d = folder(tmp_path, {"chat_template.jinja": LLAMA_LIKE})
        code, _, err = self._run(d, tmp_path, "--template-name", "nope", capsys=capsys)
        assert code == 2 and err.strip().count("\n") == 0
        assert "no chat template named 'nope' (this tokenizer has: default)" in err
