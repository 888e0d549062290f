"""What a rank file is, by its content (tokviz.io.tiktoken_ranks.recognise_ranks): the published
encodings by hash, Qwen's qwen.tiktoken by its 151,643 ranks; the family's special tokens for a
preset; tiktoken-cache entries named by content in discovery."""

from __future__ import annotations

import base64
from itertools import product
from pathlib import Path

import pytest
from support import bundle_bytes

import tokviz
from tokviz.engine.errors import TokvizFormatError
from tokviz.io.discovery import discover
from tokviz.io.tiktoken_ranks import preset_special_tokens, recognise_ranks


def qwen_sized(n: int = 151_643) -> bytes:
    """A rank file with Qwen's number of ranks: every byte, every byte pair, then byte triples."""
    tokens = [bytes([b]) for b in range(256)] + [bytes(p) for p in product(range(256), repeat=2)]
    tokens += [bytes(t) for t in product(range(256), repeat=3)][: n - len(tokens)]
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens))


@pytest.fixture(scope="module")
def qwen_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("qwen") / "qwen.tiktoken"
    p.write_bytes(qwen_sized())
    return p


class TestRecognise:
    def test_published_by_hash(self) -> None:
        g = recognise_ranks(bundle_bytes("o200k_base/o200k_base.tiktoken"))
        assert (g.name, g.pattern_preset, g.by, g.exact) == ("o200k_base", "o200k", "content hash", True)
        assert g.special_tokens["<|endoftext|>"] == 199999

    def test_qwen_by_its_rank_count(self, qwen_file: Path) -> None:
        g = recognise_ranks(qwen_file.read_bytes())
        assert (g.name, g.pattern_preset, g.by) == ("Qwen's qwen.tiktoken", "qwen", "rank count")
        # 3 named specials and 205 extras from id 151,643 (Qwen's tokenization_qwen.py)
        assert len(g.special_tokens) == 208
        assert g.special_tokens["<|endoftext|>"] == 151643 and g.special_tokens["<|im_end|>"] == 151645
        assert g.special_tokens["<|extra_204|>"] == 151850

    def test_one_rank_more_is_not_qwen(self) -> None:
        assert recognise_ranks(qwen_sized(151_644)) is None

    def test_family_specials(self) -> None:
        assert preset_special_tokens("cl100k", 1000) == {}
        llama3 = preset_special_tokens("llama3", 128000)
        assert llama3["<|begin_of_text|>"] == 128000 and len(llama3) == 256


class TestLoad:
    def test_without_pattern_the_error_names_the_guess(self, qwen_file: Path) -> None:
        with pytest.raises(TokvizFormatError, match=r"its 151,643 ranks are Qwen's qwen\.tiktoken's: pattern='qwen'"):
            tokviz.load(qwen_file)

    def test_the_qwen_preset_brings_its_specials(self, qwen_file: Path) -> None:
        tok = tokviz.load(qwen_file.read_bytes(), pattern="qwen")
        assert tok.encode("<|im_start|>", allowed_special="all").ids == [151644]
        assert tok.vocab_size == 151643 + 208

    def test_given_specials_win(self, qwen_file: Path) -> None:
        tok = tokviz.load(qwen_file, pattern="qwen", special_tokens={"<|x|>": 151643})
        assert tok.token_to_id("<|im_start|>") is None and tok.token_to_id("<|x|>") == 151643


def test_tiktoken_cache_entries_are_named_by_content(tmp_path: Path, qwen_file: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "08c551fd0123456789abcdef0123456789abcdef").write_bytes(bundle_bytes("cl100k_base/cl100k_base.tiktoken"))
    (cache / "1a2b3c4d0123456789abcdef0123456789abcdef").write_bytes(qwen_file.read_bytes())
    (cache / "ffffffff0123456789abcdef0123456789abcdef").write_bytes(b"YQ== 0\nYg== 1\n")
    found = discover(hf_hub=tmp_path / "x", tiktoken_dir=cache, ollama_dir=tmp_path / "x", lmstudio_dirs=())
    assert [d.name for d in found] == ["cl100k_base (tiktoken cache)", "Qwen's qwen.tiktoken (tiktoken cache)",
                                       "rank file ffffffff (tiktoken cache)"]
