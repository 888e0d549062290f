"""The ``empty-special`` chat lint: a template that writes {{ bos_token }} / {{ eos_token }} for a
tokenizer that has none renders them as '' (as transformers does), and the lint says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import bundle_path

import tokviz
from tokviz.analysis.chat import render_chat, tokenizer_templates

TEMPLATE = "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.content }}{{ eos_token }}{% endfor %}"
MESSAGES = [{"role": "user", "content": "hi"}]


def _lints(tok: tokviz.Tokenizer) -> dict[str, str]:
    return {x.id: x.message for x in render_chat(tok, MESSAGES, template=TEMPLATE).lints}


def test_a_tokenizer_json_alone_has_no_bos(tmp_path: Path) -> None:
    shutil.copy(bundle_path("qwen3/tokenizer.json"), tmp_path / "tokenizer.json")
    tok = tokviz.load(tmp_path / "tokenizer.json")
    res = render_chat(tok, MESSAGES, template=TEMPLATE)
    assert res.text == "<|im_start|>hi"  # both specials rendered as ''
    messages = [x.message for x in res.lints if x.id == "empty-special"]
    assert len(messages) == 2
    assert "{{ bos_token }}" in messages[0] and "{{ eos_token }}" in messages[1]


def test_the_folder_config_gives_them(tmp_path: Path) -> None:
    shutil.copy(bundle_path("qwen3/tokenizer.json"), tmp_path / "tokenizer.json")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"}))
    tok = tokviz.load(tmp_path)
    assert "empty-special" not in _lints(tok)
    assert render_chat(tok, MESSAGES, template=TEMPLATE).text == "<|endoftext|><|im_start|>hi<|im_end|>"


def test_templates_of_a_plain_tokenizer() -> None:
    tok = tokviz.load(bundle_path("qwen3/tokenizer.json"))
    assert list(tokenizer_templates(tok)) == ["default"]
