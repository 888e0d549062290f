"""Format detection and `tokviz.load`: content decides, never the file name; errors name the file."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
from pathlib import Path

import pytest
from support import bundle_bytes, bundle_path, require_module

import tokviz
from tokviz import TokvizFormatError
from tokviz.io.detect import sniff
from tokviz.io.files import read_bytes


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


class TestSniff:
    @pytest.mark.parametrize(
        ("rel", "kind"),
        [
            ("qwen3/tokenizer.json", "hf-json"),
            ("bert-base-uncased/tokenizer.json", "hf-json"),
            ("qwen3/tokenizer_config.json", "tokenizer-config"),
            ("gpt2/r50k_base.tiktoken", "tiktoken"),
            ("o200k_base/o200k_base.tiktoken", "tiktoken"),
            ("mistral-7b-v0.1/tokenizer.model", "sentencepiece"),
            ("albert-30k-clean/30k-clean.model", "sentencepiece"),
            ("sentencepiece-test/test_ja_model.model", "sentencepiece"),
            ("bert-base-uncased/vocab.txt", "vocab-txt"),  # starts with "[PAD]", not JSON
        ],
    )
    def test_bundles(self, rel: str, kind: str) -> None:
        assert sniff(bundle_bytes(rel)) == kind

    @pytest.mark.parametrize(
        ("data", "kind"),
        [
            (b'{"a": 0, "b": 1}', "vocab-json"),
            (b"#version: 0.2\n\xc4\xa0 t\nh e\n", "merges"),
            (b"h e\nt h\nth e\n", "merges"),
            (b"", "empty"),
            (b" \n\n", "empty"),
            (b"[1, 2, 3]", "json"),
            (b'{"model": ', "hf-json" if False else "json"),
            (
                b"Once upon a time there was a file.\nIt had many words on each line.\nAnd more here too.\n",
                "text",
            ),
            (bytes(range(256)), "binary"),
        ],
        ids=[
            "vocab-json",
            "merges-header",
            "merges-plain",
            "empty",
            "blank",
            "json-array",
            "json-truncated",
            "prose",
            "binary",
        ],
    )
    def test_small(self, data: bytes, kind: str) -> None:
        assert sniff(data) == kind


class TestReadBytes:
    def test_gzip_is_transparent(self) -> None:
        assert read_bytes(gzip.compress(b"IQ== 0\n"), source="x") == b"IQ== 0\n"

    def test_plain_is_unchanged(self) -> None:
        assert read_bytes(b"abc", source="x") == b"abc"

    def test_truncated_gzip(self) -> None:
        data = gzip.compress(b"x" * 1000 + os.urandom(1000))
        with pytest.raises(TokvizFormatError, match=r"^f\.gz: truncated or corrupt gzip"):
            read_bytes(data[: len(data) // 2], source="f.gz")


class TestLoadErrors:
    """Every bad input is a TokvizFormatError whose message starts with the file's path."""

    def _err(self, target: object, **kw: object) -> str:
        with pytest.raises(TokvizFormatError) as exc:
            tokviz.load(target, **kw)  # type: ignore[arg-type]
        return str(exc.value)

    def test_missing_file(self, tmp_path: Path) -> None:
        msg = self._err(tmp_path / "nope.json")
        assert msg == f"{tmp_path / 'nope.json'}: no such file"

    def test_truncated_gzip_file(self, tmp_path: Path) -> None:
        data = gzip.compress(bundle_bytes("gpt2/r50k_base.tiktoken"))
        p = write(tmp_path / "r50k.tiktoken.gz", data[:5000])
        assert self._err(p).startswith(f"{p}: truncated or corrupt gzip")

    def test_truncated_rank_file_names_the_line(self, tmp_path: Path) -> None:
        data = bundle_bytes("gpt2/r50k_base.tiktoken")
        cut = data[:1001]  # ends in the middle of a line
        assert not cut.endswith(b"\n")
        p = write(tmp_path / "r50k.tiktoken", cut)
        msg = self._err(p)
        n_lines = cut.count(b"\n") + 1
        assert msg.startswith(f"{p}: line {n_lines}: ")

    def test_random_binary(self, tmp_path: Path) -> None:
        rng = random.Random(7)
        data = bytes([0xFF, 0xFE]) + bytes(rng.randrange(256) for _ in range(4000))
        p = write(tmp_path / "tokenizer.json", data)  # the name lies
        assert self._err(p).startswith(f"{p}: unrecognised binary content")

    def test_json_that_is_not_a_tokenizer(self, tmp_path: Path) -> None:
        p = write(tmp_path / "tokenizer.json", json.dumps({"name": "x", "layers": [1, 2]}).encode())
        assert "JSON object that is not a tokenizer" in self._err(p)

    def test_malformed_json_names_line_and_column(self, tmp_path: Path) -> None:
        p = write(tmp_path / "tokenizer.json", b'{\n  "a": 1,\n  "b": \n')
        msg = self._err(p)
        assert msg.startswith(f"{p}: line 4 column 1: not valid JSON")

    def test_tokenizer_config_alone(self, tmp_path: Path) -> None:
        p = write(tmp_path / "x.json", bundle_bytes("qwen3/tokenizer_config.json"))
        assert "this is a tokenizer_config.json" in self._err(p)

    def test_vocab_json_without_merges(self, tmp_path: Path) -> None:
        p = write(tmp_path / "vocab.json", b'{"a": 0, "b": 1}')
        assert "needs merges.txt" in self._err(p)

    def test_vocab_json_bytes(self) -> None:
        assert self._err(b'{"a": 0, "b": 1}').startswith("<bytes>: this is a GPT-2 style vocab.json")

    def test_merges_alone(self, tmp_path: Path) -> None:
        p = write(tmp_path / "merges.txt", b"#version: 0.2\na b\n")
        assert "this is a merges.txt" in self._err(p)

    def test_empty_file(self, tmp_path: Path) -> None:
        p = write(tmp_path / "tokenizer.json", b"")
        assert self._err(p) == f"{p}: empty file"

    def test_prose(self, tmp_path: Path) -> None:
        p = write(
            tmp_path / "vocab.txt", b"This is a letter.\nIt is not a vocabulary at all.\nBye now, see you.\n"
        )
        assert "not a tokenizer file" in self._err(p)

    def test_empty_folder(self, tmp_path: Path) -> None:
        assert self._err(tmp_path).startswith(f"{tmp_path}: no tokenizer file in this folder")

    def test_pattern_for_a_non_rank_file(self, tmp_path: Path) -> None:
        p = write(tmp_path / "vocab.json", b'{"a": 0}')
        assert "only apply to tiktoken rank files" in self._err(p, pattern=r"\w+")


class TestLoadDispatch:
    """The right loader is chosen by content; results are checked against the reference library."""

    def test_rank_file_under_a_misleading_name(self, tmp_path: Path) -> None:
        p = write(tmp_path / "tokenizer.json", bundle_bytes("gpt2/r50k_base.tiktoken"))
        tok = tokviz.load(p)
        assert tok.encode("Hello world").ids == [15496, 995]

    def test_bytes_and_gzip_bytes(self) -> None:
        data = bundle_bytes("gpt2/r50k_base.tiktoken")
        assert tokviz.load(gzip.compress(data)).encode("Hello world").ids == [15496, 995]
        assert tokviz.load(data).encode(" world").ids == [995]

    def test_folder_with_tokenizer_json_and_config(self, tmp_path: Path) -> None:
        tokenizers = require_module("tokenizers")
        folder = tmp_path / "qwen3"
        write(folder / "tokenizer.json.gz", gzip.compress(bundle_bytes("qwen3/tokenizer.json")))
        write(folder / "tokenizer_config.json", bundle_bytes("qwen3/tokenizer_config.json"))
        tok = tokviz.load(folder)
        ref = tokenizers.Tokenizer.from_str(bundle_bytes("qwen3/tokenizer.json").decode("utf-8"))
        text = "Hello, 世界! <|im_start|>user"
        assert tok.encode(text).ids == ref.encode(text).ids
        assert tok.config.chat_template  # read from tokenizer_config.json beside it

    def test_folder_with_gpt2_files(self, gpt2_files: Path) -> None:
        tok = tokviz.load(gpt2_files.parent)
        assert tok.encode("Hello world").ids == [15496, 995]

    def test_folder_prefers_tokenizer_json(self, tmp_path: Path) -> None:
        shutil.copy(bundle_path("bert-base-uncased/tokenizer.json"), tmp_path / "tokenizer.json")
        shutil.copy(bundle_path("bert-base-uncased/vocab.txt"), tmp_path / "vocab.txt")
        tok = tokviz.load(tmp_path)
        # tokenizer.json's TemplateProcessing adds [CLS] ... [SEP]
        assert tok.encode("hello").ids == [101, 7592, 102]

    def test_sentencepiece_model(self) -> None:
        spm = require_module("sentencepiece")
        data = bundle_bytes("mistral-7b-v0.1/tokenizer.model")
        tok = tokviz.load(data)
        ref = spm.SentencePieceProcessor(model_proto=data)
        text = "Hello world, ça va?"
        assert tok.encode(text, add_special_tokens=False).ids == ref.encode(text)

    def test_bert_vocab_txt(self, tmp_path: Path) -> None:
        p = write(tmp_path / "some.file", bundle_bytes("bert-base-uncased/vocab.txt"))
        tok = tokviz.load(p)
        assert tok.encode("Hello world", add_special_tokens=False).ids == [7592, 2088]


@pytest.fixture(scope="module")
def gpt2_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gpt2_data import write_gpt2_files

    return write_gpt2_files(bundle_bytes("gpt2/r50k_base.tiktoken"), tmp_path_factory.mktemp("gpt2"))


class TestGzipEveryFormat:
    """A gzip-compressed file loads exactly like the plain one, whatever the format."""

    @pytest.mark.parametrize(
        "rel",
        [
            "gpt2/r50k_base.tiktoken",
            "claude-legacy/tokenizer.json",
            "mistral-7b-v0.1/tokenizer.model",
            "sentencepiece-test/test_model.model",
            "bert-base-uncased/vocab.txt",
        ],
    )
    def test_same_ids(self, tmp_path: Path, rel: str) -> None:
        data = bundle_bytes(rel)
        plain = write(tmp_path / "plain" / Path(rel).name, data)
        packed = write(tmp_path / "packed" / (Path(rel).name + ".gz"), gzip.compress(data))
        text = "Hello world! Ça va? 日本語 <s> 123"
        a, b = tokviz.load(plain), tokviz.load(packed)
        assert a.encode(text).ids == b.encode(text).ids
        assert a.encode(text).ids  # not trivially empty

    def test_gpt2_pair_gzipped(self, tmp_path: Path, gpt2_files: Path) -> None:
        write(tmp_path / "vocab.json.gz", gzip.compress(gpt2_files.read_bytes()))
        write(tmp_path / "merges.txt.gz", gzip.compress((gpt2_files.parent / "merges.txt").read_bytes()))
        assert tokviz.load(tmp_path / "vocab.json.gz").encode("Hello world").ids == [15496, 995]
