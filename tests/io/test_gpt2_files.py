"""GPT-2 vocab.json + merges.txt: parsing, errors, and parity with HF's GPT-2 pipeline and tiktoken."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from gpt2_data import write_gpt2_files
from parity.cases import TRICKY, corpus_lines, llamacpp_vectors
from support import bundle_bytes, require_module

import tokviz
from tokviz import TokvizFormatError
from tokviz.io.gpt2_files import load_gpt2_files, looks_like_merges, parse_merges, parse_vocab_json


@pytest.fixture(scope="module")
def gpt2_vocab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gpt2_files(bundle_bytes("gpt2/r50k_base.tiktoken"), tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def tok(gpt2_vocab: Path) -> tokviz.Tokenizer:
    return tokviz.load(gpt2_vocab)


@pytest.fixture(scope="module")
def hf_ref(gpt2_vocab: Path):  # noqa: ANN201
    """HF tokenizers configured as GPT-2's own tokenizer.json."""
    tk = require_module("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, processors

    ref = tk.Tokenizer(models.BPE.from_file(str(gpt2_vocab), str(gpt2_vocab.parent / "merges.txt")))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    ref.post_processor = processors.ByteLevel(trim_offsets=False)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens([tk.AddedToken("<|endoftext|>", special=True, normalized=True)])
    return ref


class TestParseVocabJson:
    def test_hand_checkable(self) -> None:
        assert parse_vocab_json('{"a": 0, "Ġb": 1}') == {"a": 0, "Ġb": 1}

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ('{"a": "0"}', "entry 'a': expected a non-negative integer, got '0'"),
            ('{"a": -1}', "non-negative"),
            ('{"a": true}', "non-negative"),
            ('{"a": 0, "b": 0}', "id 0 is given to both 'a' and 'b'"),
            ("[1, 2]", "expected a JSON object"),
            ('{"a": 0,', "line 1 column"),
            ("{}", "empty vocabulary"),
        ],
    )
    def test_errors(self, text: str, match: str) -> None:
        with pytest.raises(TokvizFormatError, match=match):
            parse_vocab_json(text, source="vocab.json")


class TestParseMerges:
    def test_header_and_crlf(self) -> None:
        assert parse_merges("#version: 0.2\r\nĠ t\r\nh e\r\n") == [("Ġ", "t"), ("h", "e")]

    def test_checked_against_vocab(self) -> None:
        vocab = {"a": 0, "b": 1, "ab": 2}
        assert parse_merges("a b\n", vocab=vocab) == [("a", "b")]
        with pytest.raises(
            TokvizFormatError, match=r"merges\.txt: line 2: merge 'b' \+ 'a': 'ba' is not in vocab"
        ):
            parse_merges("a b\nb a\n", vocab=vocab, source="merges.txt")

    @pytest.mark.parametrize("line", ["a", "a b c", " a"])
    def test_bad_line(self, line: str) -> None:
        with pytest.raises(TokvizFormatError, match="line 1: expected 'left right'"):
            parse_merges(line + "\n")

    def test_sniff(self) -> None:
        assert looks_like_merges("#version: 0.2\n")
        assert looks_like_merges("a b\nc d\n")
        assert not looks_like_merges("[PAD]\n[UNK]\n")


class TestGpt2Tokenizer:
    def test_hand_checkable(self, tok: tokviz.Tokenizer) -> None:
        enc = tok.encode("Hello world")
        assert enc.ids == [15496, 995]
        assert enc.tokens == ["Hello", "Ġworld"]
        assert enc.offsets == [(0, 5), (5, 11)]
        assert tok.decode(enc.ids) == "Hello world"

    def test_endoftext_is_special(self, tok: tokviz.Tokenizer) -> None:
        assert tok.encode("a<|endoftext|>b").ids == [64, 50256, 65]
        assert tok.decode([64, 50256, 65], skip_special_tokens=True) == "ab"

    def test_gzip_pair(self, tmp_path: Path, gpt2_vocab: Path) -> None:
        (tmp_path / "vocab.json.gz").write_bytes(gzip.compress(gpt2_vocab.read_bytes()))
        (tmp_path / "merges.txt.gz").write_bytes(
            gzip.compress((gpt2_vocab.parent / "merges.txt").read_bytes())
        )
        assert tokviz.load(tmp_path).encode(" world").ids == [995]

    def test_merge_out_of_vocab_names_the_line(self, tmp_path: Path) -> None:
        (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2}))
        (tmp_path / "merges.txt").write_text("#version: 0.2\na b\nb b\n")
        with pytest.raises(TokvizFormatError, match=r"merges\.txt: line 3: merge 'b' \+ 'b'"):
            tokviz.load(tmp_path / "vocab.json")

    def test_direct_call(self) -> None:
        tok = load_gpt2_files('{"a": 0, "b": 1, "ab": 2}', "a b\n")
        assert tok.encode("abab").ids == [2, 2]

    @pytest.mark.parametrize(("case_id", "text"), TRICKY, ids=[c for c, _ in TRICKY])
    def test_tricky_equals_hf(self, tok: tokviz.Tokenizer, hf_ref, case_id: str, text: str) -> None:  # noqa: ANN001
        enc = tok.encode(text)
        ref = hf_ref.encode(text)
        assert (enc.ids, enc.tokens, enc.offsets) == (ref.ids, ref.tokens, ref.offsets)
        assert tok.decode(enc.ids) == hf_ref.decode(ref.ids, skip_special_tokens=False)

    def test_llamacpp_vectors(self, tok: tokviz.Tokenizer) -> None:
        for text, ids in llamacpp_vectors("gpt-2"):
            assert tok.encode(text, add_special_tokens=False).ids == ids, text

    def test_equals_tiktoken_r50k(self, tok: tokviz.Tokenizer) -> None:
        """GPT-2's merges and r50k's ranks are one tokenizer: same ids on a corpus sample."""
        tiktoken = require_module("tiktoken")
        from tokviz.io.tiktoken_ranks import PRESETS

        preset = next(p for p in PRESETS.values() if p.name == "r50k_base")
        table = tokviz.load(bundle_bytes("gpt2/r50k_base.tiktoken")).model.get_vocab()
        from tokviz.engine.byte_alphabet import proxy_to_bytes

        ref = tiktoken.Encoding(
            "r50k",
            pat_str=preset.pattern,
            mergeable_ranks={proxy_to_bytes(t): r for t, r in table.items()},
            special_tokens=dict(preset.special_tokens),
        )
        for line in corpus_lines("botchan.txt", limit=300):
            assert tok.encode(line).ids == ref.encode_ordinary(line), line
