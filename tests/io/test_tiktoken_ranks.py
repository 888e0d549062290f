"""tiktoken rank files: parsing, published presets, custom rank files, error messages."""

from __future__ import annotations

import base64
import gzip
import hashlib

import pytest
from support import bundle_bytes, require_module

import tokviz
from tokviz import TokvizFormatError
from tokviz.io.tiktoken_ranks import (
    PRESETS,
    looks_like_ranks,
    parse_ranks,
    preset_for,
)


def rank_file(tokens: list[bytes]) -> bytes:
    return b"".join(base64.b64encode(t) + b" " + str(i).encode() + b"\n" for i, t in enumerate(tokens))


# a small byte-level vocabulary: every byte, then a few merges
BYTES = [bytes([b]) for b in range(256)]
SMALL = [*BYTES, b"ab", b"abc", b" a", b" ab", b"\xe2\x82", b"\xe2\x82\xac"]


class TestParseRanks:
    def test_hand_checkable(self) -> None:
        t = parse_ranks(b"YQ== 0\nYg== 1\nYWI= 2\nIGE= 3\n")
        assert t.tokens == ["a", "b", "ab", "Ġa"]
        assert t.ranks == [0, 1, 2, 3]
        assert t.vocab["Ġa"] == 3 and t.max_rank == 3

    def test_crlf_blank_lines_and_no_final_newline(self) -> None:
        t = parse_ranks(b"\r\nYQ== 0\r\n\r\nYg== 5")
        assert t.tokens == ["a", "b"] and t.ranks == [0, 5]

    def test_invalid_utf8_tokens_are_kept_as_bytes(self) -> None:
        t = parse_ranks(rank_file([b"\xe2\x82", b"\xff"]))
        assert [t.token_bytes(i) for i in range(2)] == [b"\xe2\x82", b"\xff"]

    def test_real_file_matches_tiktoken_loader(self) -> None:
        require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        data = bundle_bytes("gpt2/r50k_base.tiktoken")
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".tiktoken") as f:
            f.write(data)
            f.flush()
            ref = load_tiktoken_bpe(f.name)
        t = parse_ranks(data)
        assert len(t) == len(ref) == 50256
        assert {t.token_bytes(i): r for i, r in enumerate(t.ranks)} == ref

    @pytest.mark.parametrize(
        ("data", "where", "what"),
        [
            pytest.param(b"YQ== 0\nYg==\n", "line 2", "no rank", id="missing-rank"),
            pytest.param(b"YQ== 0\nYg== x\n", "line 2", "bad base64 or rank", id="bad-rank"),
            pytest.param(b"YQ== 0\nY!== 1\n", "line 2", "bad base64", id="bad-base64"),
            pytest.param(b"YQ== 0\nYWJj 1\nYW", "line 3", "no rank", id="truncated-last-line"),
            pytest.param(b"YQ== 0\nYQ== 1\n", "entry 2", "appears twice", id="duplicate-token"),
            pytest.param(b"YQ== 0\nYg== 0\n", "entry 2", "two tokens", id="duplicate-rank"),
            pytest.param(b"YQ== 0 7\n", "line 1", "expected", id="three-fields"),
            # one line too many fields, the next too few: the field count alone would pair up
            pytest.param(b"YQ== 0 Yg==\n1\n", "line 1", "expected", id="fields-compensate"),
        ],
    )
    def test_malformed_names_the_place(self, data: bytes, where: str, what: str) -> None:
        with pytest.raises(TokvizFormatError) as err:
            parse_ranks(data, source="x.tiktoken")
        msg = str(err.value)
        assert msg.startswith("x.tiktoken: ") and where in msg and what in msg

    def test_empty(self) -> None:
        with pytest.raises(TokvizFormatError, match="empty rank file"):
            parse_ranks(b"\n\n")

    def test_sniff(self) -> None:
        assert looks_like_ranks(b"IQ== 0\nIg== 1\n")
        assert not looks_like_ranks(b"hello world\n")
        assert not looks_like_ranks(b'{"model": 1}')


@pytest.fixture(scope="module")
def published() -> dict[str, dict]:
    require_module("tiktoken")
    from tiktoken_ext import openai_public

    seen: dict[str, str] = {}

    def fake_load(url: str, expected_hash: str | None = None) -> dict:
        seen["hash"] = expected_hash or ""
        return {}

    orig = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = fake_load
    try:
        out = {}
        for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
            spec = openai_public.ENCODING_CONSTRUCTORS[name]()
            out[name] = {**spec, "sha256": seen["hash"]}
        return out
    finally:
        openai_public.load_tiktoken_bpe = orig


class TestPresets:
    """Our preset data must equal what tiktoken publishes (read without any download)."""

    @pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
    def test_preset_equals_published(self, published: dict[str, dict], name: str) -> None:
        spec = published[name]
        preset = PRESETS[spec["sha256"]]
        assert preset.name == name
        assert preset.pattern == spec["pat_str"]
        assert dict(preset.special_tokens) == spec["special_tokens"]
        assert preset.explicit_n_vocab == spec.get("explicit_n_vocab")

    @pytest.mark.parametrize(
        ("rel", "name"),
        [
            ("gpt2/r50k_base.tiktoken", "r50k_base"),
            ("cl100k_base/cl100k_base.tiktoken", "cl100k_base"),
            ("o200k_base/o200k_base.tiktoken", "o200k_base"),
        ],
    )
    def test_bundles_are_recognised_by_content(self, rel: str, name: str) -> None:
        data = bundle_bytes(rel)
        preset = preset_for(data)
        assert preset is not None and preset.name == name
        assert preset_for(data + b"\n") is None


class TestLoadRankFile:
    def test_published_file_gets_pattern_and_specials(self, tmp_path) -> None:
        p = tmp_path / "renamed.bin"  # the name says nothing
        p.write_bytes(gzip.compress(bundle_bytes("cl100k_base/cl100k_base.tiktoken")))
        tok = tokviz.load(p)
        assert tok.name == "cl100k_base"
        assert tok.encode("hello world").ids == [15339, 1917]
        assert tok.vocab_size == 100277  # n_vocab = max id + 1 (ids 100261..100275 are holes)
        assert tok.token_to_id("<|endofprompt|>") == 100276

    def test_custom_file_needs_a_pattern(self) -> None:
        with pytest.raises(TokvizFormatError, match="pattern="):
            tokviz.load(rank_file(SMALL))

    def test_bad_custom_pattern(self) -> None:
        with pytest.raises(TokvizFormatError, match="bad pre-tokenizer pattern"):
            tokviz.load(rank_file(SMALL), pattern="(unclosed")

    def test_special_id_clashing_with_a_rank(self) -> None:
        with pytest.raises(TokvizFormatError, match="already a mergeable"):
            tokviz.load(rank_file(SMALL), pattern=r"\S+", special_tokens={"<eot>": 3})

    def test_custom_file_matches_tiktoken(self) -> None:
        tiktoken = require_module("tiktoken")
        pattern = r" ?[a-z]+| ?[^a-z\s]+|\s+"
        specials = {"<eot>": len(SMALL)}
        ref = tiktoken.Encoding(
            "small",
            pat_str=pattern,
            mergeable_ranks={t: i for i, t in enumerate(SMALL)},
            special_tokens=specials,
        )
        tok = tokviz.load(rank_file(SMALL), pattern=pattern, special_tokens=specials)
        for text in ["abc ab a b", "abcabc €€", "x<eot>y", "  ab\n\nabc", ""]:
            assert tok.encode(text).ids == ref.encode(text, disallowed_special=()), text
            assert tok.encode(text, allowed_special="all").ids == ref.encode(text, allowed_special="all"), (
                text
            )
        assert tok.decode(ref.encode("ab € x")) == "ab € x"
        assert tok.vocab_size == ref.n_vocab

    def test_gaps_between_matches_are_dropped_like_tiktoken(self) -> None:
        """tiktoken encodes only the regex matches; text between matches vanishes."""
        tiktoken = require_module("tiktoken")
        pattern = r"[a-z]+"  # spaces and digits are never matched
        ref = tiktoken.Encoding(
            "gappy", pat_str=pattern, mergeable_ranks={t: i for i, t in enumerate(SMALL)}, special_tokens={}
        )
        tok = tokviz.load(rank_file(SMALL), pattern=pattern)
        text = "ab 12 abc  c"
        assert tok.encode(text).ids == ref.encode_ordinary(text) == [256, 257, 99]

    def test_hash_is_of_decompressed_content(self) -> None:
        data = bundle_bytes("gpt2/r50k_base.tiktoken")
        assert hashlib.sha256(data).hexdigest() in PRESETS
        tok = tokviz.load(gzip.compress(data))
        assert tok.name == "r50k_base"


# every byte, then every pair of a few characters, so chunk boundaries show in the ids
_PAIR_CHARS = b"abcdxyz \n\r\t19"
PAIRS = [*BYTES, *(bytes((a, b)) for a in _PAIR_CHARS for b in _PAIR_CHARS)]


class TestCustomPatternSemantics:
    """A custom pattern means what it means to tiktoken (Rust fancy-regex), not to Oniguruma."""

    @pytest.mark.parametrize(
        "pattern",
        [
            r"[a-z]+$|[a-z]|\s",
            r"^[a-z]+|[a-z]|\s",
            r"[a-z]+\Z|[a-z]|\s",
            r"[a-z]+\z|[a-z]|\s",
            r"(?m)[a-z]+$|[a-z]|\s",
            r"\s+$|\s|[a-z]",
            r"[$^a-z]+|\s",
            r"[a-z]+(?=\n)|[a-z]|\s",
        ],
        ids=[
            "dollar",
            "caret",
            "big-Z",
            "small-z",
            "multiline-flag",
            "space-dollar",
            "anchors-in-class",
            "lookahead",
        ],
    )
    def test_anchors_match_tiktoken(self, pattern: str) -> None:
        tiktoken = require_module("tiktoken")
        ref = tiktoken.Encoding(
            "p", pat_str=pattern, mergeable_ranks={t: i for i, t in enumerate(PAIRS)}, special_tokens={}
        )
        tok = tokviz.load(rank_file(PAIRS), pattern=pattern)
        for text in [
            "ab\ncd\n",
            "ab\n",
            "ab",
            "x ab\n\n",
            "ab\n\n\n",
            "ab\r\n",
            "ab \n",
            "ab cd",
            "ab\n\n",
            "ab\r\n",
            "a$b^c",
            "  \n  ",
            "",
        ]:
            assert tok.encode(text).ids == ref.encode_ordinary(text), text

    def test_rewrite(self) -> None:
        from tokviz.io.tiktoken_ranks import engine_pattern

        assert engine_pattern(r"^a|b$|[$^]|\$|\Z|\z") == r"\Aa|b\Z|[$^]|\$|(?=\n*\Z)|\Z"
        assert engine_pattern(r"[]$]|[^]^]$") == r"[]$]|[^]^]\Z"
        assert engine_pattern(r"(?m)^a$") == r"(?m)^a$"
