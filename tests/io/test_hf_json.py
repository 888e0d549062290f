"""The tokenizer.json loader: sections built by type, tokenizer_config.json, and errors that name
the file and the JSON path."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from support import bundle_bytes

from tokviz.engine.errors import TokvizFormatError
from tokviz.io.hf_json import load_hf_json


def minimal(**over: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "version": "1.0",
        "added_tokens": [{"id": 3, "content": "<s>", "special": True, "normalized": False, "lstrip": False, "rstrip": False, "single_word": False}],
        "normalizer": None,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
    }
    obj.update(over)
    return obj


class TestLoad:
    def test_minimal(self) -> None:
        tok = load_hf_json(json.dumps(minimal()).encode(), source="t/tokenizer.json")
        assert tok.encode("ab<s>a").ids == [2, 3, 0]
        assert tok.name == "t" and tok.source == "t/tokenizer.json"
        assert tok.config.extra["format"] == "tokenizer.json"

    def test_bundle_pipeline_summary(self) -> None:
        tok = load_hf_json(bundle_bytes("qwen3/tokenizer.json"), source="qwen3/tokenizer.json")
        info = tok.info()
        assert info["pipeline"] == {
            "normalizer": "NFC",
            "pre_tokenizer": "Sequence[Split, ByteLevel]",
            "model": "BPE",
            "post_processor": "ByteLevel",
            "decoder": "ByteLevel",
        }
        assert info["normal_entries"] == 151643
        assert info["added_entries"] == 26
        assert info["total_entries"] == 151669 == tok.vocab_size
        assert info["id_space"] == 151669

    def test_tokenizer_config(self) -> None:
        cfg = json.loads(bundle_bytes("mistral-7b-v0.1/tokenizer_config.json"))
        tok = load_hf_json(bundle_bytes("mistral-7b-v0.1/tokenizer.json"), source="m/tokenizer.json", config_json=cfg)
        assert tok.config.bos_token == "<s>" and tok.config.eos_token == "</s>"
        assert tok.config.add_bos_token is True and tok.config.add_eos_token is False

    def test_config_as_bytes_and_chat_template(self) -> None:
        cfg = {"bos_token": {"content": "<s>"}, "chat_template": [{"name": "default", "template": "{{x}}"}]}
        tok = load_hf_json(minimal(), source="t.json", config=json.dumps(cfg).encode())
        assert tok.config.bos_token == "<s>" and tok.config.chat_template == "{{x}}"

    def test_qwen_chat_template_kept(self) -> None:
        cfg = bundle_bytes("qwen3/tokenizer_config.json")
        tok = load_hf_json(bundle_bytes("qwen3/tokenizer.json"), source="qwen3/tokenizer.json", config=cfg)
        assert tok.config.chat_template and "<|im_start|>" in tok.config.chat_template


class TestErrors:
    def test_truncated(self) -> None:
        data = json.dumps(minimal()).encode()[:-40]
        with pytest.raises(TokvizFormatError, match=r"^t\.json: line 1 column \d+: not valid JSON \(truncated JSON\)"):
            load_hf_json(data, source="t.json")

    def test_malformed(self) -> None:
        with pytest.raises(TokvizFormatError, match=r"malformed JSON"):
            load_hf_json(b'{"model": [1,,2]}', source="t.json")

    def test_not_utf8(self) -> None:
        with pytest.raises(TokvizFormatError, match="not valid UTF-8"):
            load_hf_json(gzip.compress(b"{}"), source="t.json")

    def test_not_an_object(self) -> None:
        with pytest.raises(TokvizFormatError, match="top level"):
            load_hf_json(b"[1, 2]", source="t.json")

    def test_no_model(self) -> None:
        with pytest.raises(TokvizFormatError, match="no \"model\""):
            load_hf_json(b'{"version": "1.0"}', source="t.json")

    def test_bad_merge_names_the_path(self) -> None:
        obj = minimal(model={"type": "BPE", "vocab": {"a": 0}, "merges": ["a b", 42]})
        with pytest.raises(TokvizFormatError, match=r"^t\.json: model\.merges\[1\]: "):
            load_hf_json(obj, source="t.json")

    def test_unknown_type_names_the_section(self) -> None:
        with pytest.raises(TokvizFormatError, match=r"^t\.json: normalizer: unknown normalizer type 'Nope'"):
            load_hf_json(minimal(normalizer={"type": "Nope"}), source="t.json")

    def test_nested_sequence_error_path(self) -> None:
        dec = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Nope"}]}
        with pytest.raises(TokvizFormatError, match=r"^t\.json: decoder\.decoders\[1\]: "):
            load_hf_json(minimal(decoder=dec), source="t.json")

    def test_bad_added_token(self) -> None:
        obj = minimal()
        obj["added_tokens"].append({"id": 4, "content": 5})
        with pytest.raises(TokvizFormatError, match=r"added_tokens\[1\]\.content"):
            load_hf_json(obj, source="t.json")
        obj["added_tokens"][1] = {"id": 4, "content": "<x>", "special": "yes"}
        with pytest.raises(TokvizFormatError, match=r"added_tokens\[1\]\.special"):
            load_hf_json(obj, source="t.json")

    def test_bad_template(self) -> None:
        pp = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}}], "pair": None, "special_tokens": {}}
        with pytest.raises(TokvizFormatError, match=r"^t\.json: post_processor: .*<x>"):
            load_hf_json(minimal(post_processor=pp), source="t.json")

    def test_unknown_version(self) -> None:
        with pytest.raises(TokvizFormatError, match="version"):
            load_hf_json(minimal(version="2.0"), source="t.json")
