"""Pre-tokenizers: chunk strings and original offsets identical to HF tokenizers 0.23.3.

Two views are compared: ``pre_tokenize_str`` on raw text (chunk text + offsets_original), and,
after a normalizer, the offsets HF's encode reports when every chunk is one [UNK] token (so the
chunk's alignment, not only its slice bounds, is checked).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from parity.cases import TRICKY
from support import bundle_bytes, corpus_text, require_module

from tokviz.engine import patterns
from tokviz.engine.byte_alphabet import BYTE_TO_CHAR, CHAR_TO_BYTE, bytes_to_proxy, proxy_to_bytes
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.normalizers import normalizer_from_json
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.pre_tokenizers.byte_level import ByteLevel, Gathered
from tokviz.engine.pre_tokenizers.metaspace import Metaspace
from tokviz.engine.pre_tokenizers.punctuation import BertPreTokenizer, Digits, Punctuation, UnicodeScripts
from tokviz.engine.pre_tokenizers.split import Split
from tokviz.engine.pre_tokenizers.whitespace import CharDelimiterSplit, Whitespace, WhitespaceSplit
from tokviz.engine.text import NormalizedText

QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CL100K_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
O200K_PATTERN = "|".join(
    [
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)


def _split(pattern: str, behavior: str = "Isolated", *, regex: bool = True, invert: bool = False) -> dict[str, Any]:
    kind = "Regex" if regex else "String"
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


CONFIGS: dict[str, dict[str, Any]] = {
    "ByteLevel-prefix": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "ByteLevel-claude": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    "ByteLevel-noregex": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False},
    "qwen3": {
        "type": "Sequence",
        "pretokenizers": [
            _split(QWEN_PATTERN),
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ],
    },
    "Split-cl100k": _split(CL100K_PATTERN),
    "Split-o200k": _split(O200K_PATTERN),
    "Split-string-removed": _split(" ", "Removed", regex=False),
    "Split-string-invert-next": _split("a", "MergedWithNext", regex=False, invert=True),
    "Split-contiguous": _split(r"\s+", "Contiguous"),
    "Split-previous": _split(r"[,.!?]", "MergedWithPrevious"),
    "Split-empty-matches": _split(r"b*"),
    "Split-anchors": _split(r"^\s*|$", "Removed"),
    "Whitespace": {"type": "Whitespace"},
    "WhitespaceSplit": {"type": "WhitespaceSplit"},
    "CharDelimiterSplit": {"type": "CharDelimiterSplit", "delimiter": "-"},
    "Metaspace-always": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "Metaspace-first": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
    "Metaspace-never": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
    "Metaspace-nosplit": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False},
    "Metaspace-legacy": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
    "Punctuation-isolated": {"type": "Punctuation", "behavior": "Isolated"},
    "Punctuation-removed": {"type": "Punctuation", "behavior": "Removed"},
    "Punctuation-next": {"type": "Punctuation", "behavior": "MergedWithNext"},
    "Punctuation-contiguous": {"type": "Punctuation", "behavior": "Contiguous"},
    "Digits-individual": {"type": "Digits", "individual_digits": True},
    "Digits-runs": {"type": "Digits", "individual_digits": False},
    "BertPreTokenizer": {"type": "BertPreTokenizer"},
    "UnicodeScripts": {"type": "UnicodeScripts"},
    "Sequence-ws-metaspace": {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
        ],
    },
    "Sequence-digits-bytelevel": {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        ],
    },
}

NORMALIZERS: dict[str, dict[str, Any]] = {
    "NFKC": {"type": "NFKC"},
    "NFD": {"type": "NFD"},
    "mistral": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    },
    "bert": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    },
}


@cache
def _hf(config: str, normalizer: str | None = None) -> Any:
    tokenizers = require_module("tokenizers")
    d = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": json.loads(normalizer) if normalizer else None,
        "pre_tokenizer": json.loads(config),
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(d))


def hf_pre_tokenize(config: dict[str, Any], text: str) -> list[tuple[str, tuple[int, int]]]:
    tok = _hf(json.dumps(config, sort_keys=True))
    return [(s, tuple(o)) for s, o in tok.pre_tokenizer.pre_tokenize_str(text)]


def assert_pre_parity(config: dict[str, Any], text: str) -> None:
    got = pre_tokenizer_from_json(config).pre_tokenize_str(text)
    assert got == hf_pre_tokenize(config, text), f"chunks differ for {text!r}"


def assert_pipeline_parity(normalizer: dict[str, Any], config: dict[str, Any], text: str) -> None:
    tok = _hf(json.dumps(config, sort_keys=True), json.dumps(normalizer, sort_keys=True))
    expected = [tuple(o) for o in tok.encode(text, add_special_tokens=False).offsets]
    nt = normalizer_from_json(normalizer).normalize(NormalizedText.identity(text))
    chunks = pre_tokenizer_from_json(config).pre_tokenize([nt])
    got = [c.original_span(0, len(c.text)) for c in chunks]
    assert got == expected, f"chunk spans differ for {text!r}"


# ---------------------------------------------------------------------------------- hand cases


class TestByteAlphabet:
    def test_bijection_over_256_bytes(self) -> None:
        assert len(set(BYTE_TO_CHAR)) == 256
        assert all(CHAR_TO_BYTE[BYTE_TO_CHAR[b]] == b for b in range(256))
        assert proxy_to_bytes(bytes_to_proxy(bytes(range(256)))) == bytes(range(256))

    def test_space_and_newline(self) -> None:
        assert BYTE_TO_CHAR[0x20] == "Ġ" and BYTE_TO_CHAR[0x0A] == "Ċ" and BYTE_TO_CHAR[ord("a")] == "a"

    def test_non_proxy_char_rejected(self) -> None:
        with pytest.raises(ValueError):
            proxy_to_bytes("a b")


class TestByteLevel:
    def test_gpt2_split_and_proxy(self) -> None:
        assert ByteLevel(add_prefix_space=False).pre_tokenize_str("Hello world!") == [
            ("Hello", (0, 5)),
            ("Ġworld", (5, 11)),
            ("!", (11, 12)),
        ]

    def test_multibyte_chars_share_alignment(self) -> None:
        (chunk,) = ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize([NormalizedText.identity("aé")])
        assert chunk.text == "aÃ©"
        assert chunk.alignments() == [(0, 1), (1, 2), (1, 2)]
        assert chunk.original_span(1, 3) == (1, 2)

    def test_prefix_space_aligned_with_first_char(self) -> None:
        (chunk,) = ByteLevel(add_prefix_space=True).pre_tokenize([NormalizedText.identity("hi")])
        assert chunk.text == "Ġhi" and chunk.alignments() == [(0, 1), (0, 1), (1, 2)]

    def test_json(self) -> None:
        bl = pre_tokenizer_from_json({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True})
        assert isinstance(bl, ByteLevel) and bl.use_regex is True
        assert bl.to_json() == {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


class TestGathered:
    def test_lazy_column(self) -> None:
        from array import array

        g = Gathered(range(10, 20), array("l", [0, 0, 2, 5]))
        assert len(g) == 4 and g[1] == 10 and g[3] == 15 and list(g) == [10, 10, 12, 15]
        assert list(g[1:3]) == [10, 12]


class TestSplit:
    @pytest.mark.parametrize(
        "behavior,expected",
        [
            ("Removed", ["the", "final", "countdown"]),
            ("Isolated", ["the", "-", "final", "-", "-", "countdown"]),
            ("MergedWithPrevious", ["the-", "final-", "-", "countdown"]),
            ("MergedWithNext", ["the", "-final", "-", "-countdown"]),
            ("Contiguous", ["the", "-", "final", "--", "countdown"]),
        ],
    )
    def test_behaviours(self, behavior: str, expected: list[str]) -> None:
        chunks = Split(pattern="-", behavior=behavior).pre_tokenize_str("the-final--countdown")
        assert [c for c, _ in chunks] == expected

    def test_invert(self) -> None:
        chunks = Split(pattern=r"\d+", is_regex=True, behavior="Removed", invert=True).pre_tokenize_str("ab12cd3")
        assert chunks == [("12", (2, 4)), ("3", (6, 7))]

    def test_bad_pattern_is_format_error(self) -> None:
        with pytest.raises(TokvizFormatError, match="does not compile"):
            pre_tokenizer_from_json(_split("(unclosed"))

    def test_bad_behavior(self) -> None:
        with pytest.raises(TokvizFormatError):
            pre_tokenizer_from_json(_split("a", "Sideways"))

    def test_catastrophic_pattern_times_out(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(patterns, "TIMEOUT_BASE", 0.2)
        monkeypatch.setattr(patterns, "TIMEOUT_PER_CHAR", 0.0)
        split = Split(pattern=r"(a|aa)+$", is_regex=True)
        with pytest.raises(patterns.PatternTimeoutError, match=r"\(a\|aa\)\+\$") as info:
            split.pre_tokenize_str("a" * 60 + "!")
        assert isinstance(info.value, TokvizFormatError) and isinstance(info.value, ValueError)

    def test_unicode_17_letters_are_unknown_to_hf(self) -> None:
        # U+0558 is a letter in Unicode 17 (Python regex) but unassigned for Oniguruma 16.0
        assert_pre_parity(CONFIGS["ByteLevel-claude"], "a\u0558b")
        assert_pre_parity(CONFIGS["qwen3"], "a\u0558b 1")


class TestPatterns:
    @pytest.mark.parametrize(
        "pattern,risky",
        [
            (r"(a|aa)+$", True),
            (r"(a+)+b", True),
            (r"(\w+\s?)*$", True),
            (r"(x)\1", True),
            (r"(?:a{2,3})+", True),
            (r"(?x)(a{1,10}) {1,10}$", True),  # verbose mode hid the outer quantifier from the old test
            (r"a*a*a*b", True),  # polynomial, not exponential: bounded too
            (r"(?P<x>a)(?P=x)", True),
            (r"(?:ab){2,}", True),
            (QWEN_PATTERN, False),
            (CL100K_PATTERN, False),
            (O200K_PATTERN, False),
            (r"\p{N}", False),  # no quantifier: linear
            (r"[{}*+?]", False),  # quantifier characters inside a class are literals
        ],
    )
    def test_needs_timeout(self, pattern: str, risky: bool) -> None:
        import tokviz.io.tiktoken_ranks  # noqa: F401 - registers the published patterns

        assert patterns.needs_timeout(pattern) is risky

    def test_hf_regex_hides_unicode_17_but_returns_original_text(self) -> None:
        rx = patterns.compile_pattern(r"\p{L}+|[^\p{L}]+")
        assert rx.findall("ab\u0558cd") == ["ab", "\u0558", "cd"]
        assert [m.span() for m in rx.finditer("ab\u0558cd")] == [(0, 2), (2, 3), (3, 5)]

    @settings(max_examples=200, deadline=None)
    @given(text=st.text(alphabet=st.sampled_from(list("ab 1\n\u0558é!")), max_size=20))
    def test_isolated_fast_paths_equal_the_general_split(self, text: str) -> None:
        for pat in (r"b*", r"\p{L}+", QWEN_PATTERN, r"(?=b)"):
            rx = patterns.compile_pattern(pat)
            general = [(s, e) for s, e in patterns.split_spans(patterns.find_matches(rx, text), "Isolated") if s != e]
            assert patterns.isolated_spans(rx, text) == general
            assert patterns.isolated_chunks(rx, text) == ([s for s, _ in general], [text[s:e] for s, e in general])


class TestWhitespace:
    def test_words_and_symbols(self) -> None:
        assert Whitespace().pre_tokenize_str("Hi, you!") == [("Hi", (0, 2)), (",", (2, 3)), ("you", (4, 7)), ("!", (7, 8))]

    def test_whitespace_split_uses_rust_whitespace(self) -> None:
        # U+001C is str.isspace() in Python but not Rust whitespace
        assert WhitespaceSplit().pre_tokenize_str("a\x1cb c") == [("a\x1cb", (0, 3)), ("c", (4, 5))]

    def test_char_delimiter(self) -> None:
        assert CharDelimiterSplit(delimiter="|").pre_tokenize_str("|a||b|") == [("a", (1, 2)), ("b", (4, 5))]


class TestMetaspace:
    def test_always(self) -> None:
        assert Metaspace().pre_tokenize_str("Hey friend") == [("▁Hey", (0, 3)), ("▁friend", (3, 10))]

    def test_first_only_at_text_start(self) -> None:
        m = Metaspace(prepend_scheme="first")
        piece = NormalizedText.identity("ab cd", 3, 5)  # a piece after an added token
        assert [c.text for c in m.pre_tokenize([piece])] == ["cd"]
        assert [c.text for c in m.pre_tokenize([NormalizedText.identity("ab")])] == ["▁ab"]

    def test_legacy_add_prefix_space_false_needs_never(self) -> None:
        with pytest.raises(TokvizFormatError, match="prepend_scheme"):
            pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False})
        m = pre_tokenizer_from_json(
            {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"}
        )
        assert m.pre_tokenize_str("a b") == [("a", (0, 1)), ("▁b", (1, 3))]


class TestPunctuationDigitsBert:
    def test_punctuation_unicode_8(self) -> None:
        # U+2E43 is punctuation since Unicode 9; HF's table is Unicode 8
        assert [c for c, _ in Punctuation().pre_tokenize_str("a\u2e43b,c")] == ["a\u2e43b", ",", "c"]

    def test_digits_rust_numeric(self) -> None:
        assert [c for c, _ in Digits(individual_digits=False).pre_tokenize_str("x½²3y一")] == ["x", "½²3", "y一"]

    def test_bert(self) -> None:
        assert BertPreTokenizer().pre_tokenize_str("Hello, 世界!") == [
            ("Hello", (0, 5)),
            (",", (5, 6)),
            ("世界", (7, 9)),
            ("!", (9, 10)),
        ]


class TestUnicodeScripts:
    def test_kana_and_prolonged_sound_mark_count_as_han(self) -> None:
        assert [c for c, _ in UnicodeScripts().pre_tokenize_str("ひらがなカタカナー漢字abc")] == ["ひらがなカタカナー漢字", "abc"]

    def test_leading_any_characters_are_dropped(self) -> None:
        # HF quirk: chunks start at the first character with a script
        assert UnicodeScripts().pre_tokenize_str("  ab") == [("ab", (2, 4))]
        assert UnicodeScripts().pre_tokenize_str("   ") == []

    def test_combining_mark_is_its_own_script(self) -> None:
        assert [c for c, _ in UnicodeScripts().pre_tokenize_str("a\u0301b")] == ["a", "\u0301", "b"]


class TestJson:
    def test_round_trip_and_hf_accepts_to_json(self) -> None:
        for name, config in CONFIGS.items():
            built = pre_tokenizer_from_json(config)
            data = built.to_json()
            assert pre_tokenizer_from_json(data).to_json() == data, name
            text = "Hey, it's 2024-01-01 ▁ naïve 日本 🙂"
            assert pre_tokenizer_from_json(data).pre_tokenize_str(text) == hf_pre_tokenize(data, text), name

    @pytest.mark.parametrize(
        "obj",
        [
            {"type": "ByteLevel", "add_prefix_space": "no"},
            {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": "no"},
            {"type": "Split", "pattern": "[", "behavior": "Isolated", "invert": False},
            {"type": "Metaspace", "replacement": "ab"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"},
            {"type": "Punctuation", "behavior": "Sideways"},
            {"type": "Digits"},
            {"type": "CharDelimiterSplit", "delimiter": ""},
            {"type": "Sequence", "pretokenizers": [{"type": "Nope"}]},
            {"type": "Sequence"},
        ],
        ids=lambda o: json.dumps(o)[:60],
    )
    def test_bad_config(self, obj: dict[str, Any]) -> None:
        with pytest.raises(TokvizFormatError):
            pre_tokenizer_from_json(obj)


# ---------------------------------------------------------------------------------- parity

EXTRA = [
    ("proxy-chars", "ĠĊ âĢ ÃĤ"),
    ("u17", "\u0558\u0559 \U000323b0\U000323b1 x"),
    ("o200k-caps", "HTTPServer iPhone DON'T ÉCOLE naïve"),
    ("long-ws", "a" + " " * 17 + "b\n\n \n\t c"),
]
_CASES = TRICKY + EXTRA


@pytest.mark.parametrize("config_id", list(CONFIGS))
@pytest.mark.parametrize("case_id,text", _CASES, ids=[c for c, _ in _CASES])
def test_parity_tricky(config_id: str, case_id: str, text: str) -> None:
    assert_pre_parity(CONFIGS[config_id], text)


@pytest.mark.parametrize("normalizer_id", list(NORMALIZERS))
@pytest.mark.parametrize("config_id", list(CONFIGS))
def test_parity_after_normalizer(normalizer_id: str, config_id: str) -> None:
    for _, text in _CASES:
        assert_pipeline_parity(NORMALIZERS[normalizer_id], CONFIGS[config_id], text)


_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list(" \t\n\r\u3000\u00a0▁'-,.!?0123456789sStT\u0301ﬁİ中é")),
    ),
    max_size=30,
)


@pytest.mark.parametrize("config_id", list(CONFIGS))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_parity_hypothesis(config_id: str, text: str) -> None:
    assert_pre_parity(CONFIGS[config_id], text)


@pytest.mark.parametrize("normalizer_id", list(NORMALIZERS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_parity_hypothesis_after_normalizer(normalizer_id: str, text: str) -> None:
    for config_id in ("ByteLevel-prefix", "qwen3", "Metaspace-first", "BertPreTokenizer", "Whitespace"):
        assert_pipeline_parity(NORMALIZERS[normalizer_id], CONFIGS[config_id], text)


BUNDLES = ["claude-legacy", "qwen3", "bert-base-uncased"]


@cache
def _bundle_config(bundle: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    d = json.loads(bundle_bytes(f"{bundle}/tokenizer.json"))
    return d["normalizer"], d["pre_tokenizer"]


@pytest.mark.parametrize("bundle", BUNDLES)
@pytest.mark.parametrize("corpus", ["botchan.txt", "wagahaiwa_nekodearu.txt"])
def test_bundle_whole_document(bundle: str, corpus: str) -> None:
    """The bundle's own pre-tokenizer on a whole corpus document (raw text, no normalizer)."""
    _, config = _bundle_config(bundle)
    text = corpus_text(corpus)
    assert_pre_parity(config, text)


@pytest.mark.parametrize("bundle", BUNDLES)
def test_bundle_normalized_lines(bundle: str) -> None:
    """Normalizer + pre-tokenizer of the bundle on corpus lines: every chunk's original span."""
    normalizer, config = _bundle_config(bundle)
    lines = corpus_text("botchan.txt").splitlines(keepends=True)[:150]
    lines += corpus_text("wagahaiwa_nekodearu.txt").splitlines(keepends=True)[:150]
    for line in lines:
        if normalizer is None:
            assert_pre_parity(config, line)
        else:
            assert_pipeline_parity(normalizer, config, line)
