"""Normalizers: text *and* alignment parity with HF tokenizers 0.23.3.

HF's alignment is observed through a tokenizer whose pre-tokenizer isolates every normalized
character and whose WordLevel model maps each one to [UNK]: the encoding's offsets are then the
original span of every normalized character, which must equal ours (`NormalizedText.alignments`).
"""

from __future__ import annotations

import json
import unicodedata
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from parity.cases import TRICKY
from support import bundle_bytes, corpus_text, require_module

from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.normalizers import normalizer_from_json
from tokviz.engine.normalizers.basic import Lowercase, Prepend, Replace, Strip, StripAccents
from tokviz.engine.normalizers.bert import BertNormalizer
from tokviz.engine.normalizers.unicode import NFC, NFD, NFKC, NFKD, normalize_with_changes
from tokviz.engine.text import NormalizedText

# ---------------------------------------------------------------------------------- helpers


@cache
def _hf_char_tokenizer(config: str) -> Any:
    tokenizers = require_module("tokenizers")
    d = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": json.loads(config),
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": r"[\s\S]"}, "behavior": "Isolated", "invert": False},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(d))


def hf_normalize(config: dict[str, Any], text: str) -> tuple[str, list[tuple[int, int]]]:
    """HF's normalized text and the original char span of each normalized character."""
    tok = _hf_char_tokenizer(json.dumps(config, sort_keys=True))
    normalized = tok.normalizer.normalize_str(text)
    offsets = [tuple(o) for o in tok.encode(text, add_special_tokens=False).offsets]
    return normalized, offsets


def ours(config: dict[str, Any], text: str) -> tuple[str, list[tuple[int, int]]]:
    nt = normalizer_from_json(config).normalize(NormalizedText.identity(text))
    return nt.text, nt.alignments()


def assert_parity(config: dict[str, Any], text: str) -> None:
    expected = hf_normalize(config, text)
    got = ours(config, text)
    assert got[0] == expected[0], f"text differs for {text!r}"
    assert got[1] == expected[1], f"alignment differs for {text!r}: {got[1][:20]} vs {expected[1][:20]}"


CONFIGS: dict[str, dict[str, Any]] = {
    "NFC": {"type": "NFC"},
    "NFD": {"type": "NFD"},
    "NFKC": {"type": "NFKC"},
    "NFKD": {"type": "NFKD"},
    "Lowercase": {"type": "Lowercase"},
    "StripAccents": {"type": "StripAccents"},
    "Strip-both": {"type": "Strip", "strip_left": True, "strip_right": True},
    "Strip-left": {"type": "Strip", "strip_left": True, "strip_right": False},
    "Strip-right": {"type": "Strip", "strip_left": False, "strip_right": True},
    "Replace-space": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    "Replace-grow": {"type": "Replace", "pattern": {"String": "a"}, "content": "XYZ"},
    "Replace-shrink": {"type": "Replace", "pattern": {"String": "ab"}, "content": "X"},
    "Replace-delete": {"type": "Replace", "pattern": {"String": " "}, "content": ""},
    "Replace-regex": {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
    "Replace-empty-matches": {"type": "Replace", "pattern": {"Regex": r"b*"}, "content": "-"},
    "Prepend": {"type": "Prepend", "prepend": "▁"},
    "Prepend-two": {"type": "Prepend", "prepend": "ab"},
    "mistral": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    },
    "NFD+StripAccents+Lowercase": {
        "type": "Sequence",
        "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}],
    },
    "Bert-uncased": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    },
    "Bert-cased": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": False,
    },
    "Bert-strip-only": {
        "type": "BertNormalizer",
        "clean_text": False,
        "handle_chinese_chars": False,
        "strip_accents": True,
        "lowercase": False,
    },
}

EXTRA_STRINGS = [
    ("nfd-reorder", "é\u0327 a\u0301\u0327 \u1e08\u0316"),
    ("hangul", "한국어 \u1100\u1161\u11a8 \uac00\u11a8"),
    ("post-unicode9-marks", "a\u0898\u0301 \U00011935\U00011930 x\u1ac1\u0301"),
    ("final-sigma", "ΟΔΟΣ Σ ΣΑΣ"),
    ("strip-non-ascii", "  héllo wörld  "),
    ("strip-all-space", " \u3000 \t "),
    ("dotted-i", "İstanbul İ"),
    ("newer-lowercase", "\u1c89 \ua7cb \U00010d50"),
]

# ---------------------------------------------------------------------------------- hand cases


class TestNFC:
    def test_composed_char_keeps_the_base_alignment_only(self) -> None:
        # HF: the composite replaces the base (change -1) and swallows the mark, so its span is
        # the base character's, not base+mark
        nt = NFC().normalize(NormalizedText.identity("e\u0301x"))
        assert nt.text == "éx"
        assert nt.alignments() == [(0, 1), (2, 3)]

    def test_already_normalized_is_returned_unchanged(self) -> None:
        nt = NormalizedText.identity("déjà vu 日本語")
        assert NFC().normalize(nt) is nt
        assert NFC().normalize(nt).is_identity

    def test_changes_follow_the_crate(self) -> None:
        assert normalize_with_changes("e\u0301", "NFC") == [("é", -1)]
        assert normalize_with_changes("\u212b", "NFC") == [("Å", 0)]  # singleton: replaced 1:1

    def test_character_unknown_to_unicode_9_is_an_opaque_starter(self) -> None:
        # U+11938 = U+11935 U+11930 in Unicode 13; HF's tables (Unicode 9) do not compose it
        assert NFC().normalize_str("\U00011935\U00011930") == "\U00011935\U00011930"
        assert NFD().normalize_str("\U00011938") == "\U00011938"


class TestNFD:
    def test_reordered_mark_takes_the_alignment_of_its_new_position(self) -> None:
        # é + cedilla: NFD gives e, cedilla, acute; the acute (inserted by é's decomposition)
        # lands after the cedilla and copies the cedilla's alignment (HF quirk)
        nt = NFD().normalize(NormalizedText.identity("é\u0327"))
        assert nt.text == "e\u0327\u0301"
        assert nt.alignments() == [(0, 1), (1, 2), (1, 2)]

    def test_hangul_syllable_decomposes(self) -> None:
        nt = NFD().normalize(NormalizedText.identity("각"))
        assert nt.text == "\u1100\u1161\u11a8"
        assert nt.alignments() == [(0, 1)] * 3


class TestNFKC:
    def test_ligature_expands_with_shared_alignment(self) -> None:
        nt = NFKC().normalize(NormalizedText.identity("ﬁx"))
        assert nt.text == "fix"
        assert nt.alignments() == [(0, 1), (0, 1), (1, 2)]

    def test_fullwidth(self) -> None:
        assert NFKC().normalize_str("ＡＢＣ１２３") == "ABC123"

    def test_large_mostly_normalized_text_keeps_untouched_regions(self) -> None:
        text = "吾輩は猫である。" * 2000 + "ﬁ" + "名前はまだ無い。" * 2000
        nt = NFKC().normalize(NormalizedText.identity(text))
        assert nt.text == unicodedata.normalize("NFKC", text)
        i = text.index("ﬁ")
        assert nt.align(i) == (i, i + 1) and nt.align(i + 1) == (i, i + 1)
        assert nt.align(i + 2) == (i + 1, i + 2)
        assert nt.align(0) == (0, 1)


class TestNFKD:
    def test_compat_and_canonical(self) -> None:
        nt = NFKD().normalize(NormalizedText.identity("ǅ"))
        assert nt.text == "Dz\u030c"
        assert nt.alignments() == [(0, 1)] * 3


class TestLowercase:
    def test_per_character_no_final_sigma(self) -> None:
        assert Lowercase().normalize_str("ΟΔΟΣ") == "οδοσ"

    def test_dotted_capital_i_expands(self) -> None:
        nt = Lowercase().normalize(NormalizedText.identity("İx"))
        assert nt.text == "i\u0307x"
        assert nt.alignments() == [(0, 1), (0, 1), (1, 2)]

    def test_ascii_keeps_identity_alignment_values(self) -> None:
        nt = Lowercase().normalize(NormalizedText.identity("HeLLo"))
        assert nt.text == "hello" and nt.alignments() == [(i, i + 1) for i in range(5)]


class TestStrip:
    def test_both_sides(self) -> None:
        nt = Strip(left=True, right=True).normalize(NormalizedText.identity("  ab  "))
        assert nt.text == "ab" and nt.alignments() == [(2, 3), (3, 4)]

    def test_unicode_whitespace_but_not_file_separator(self) -> None:
        assert Strip().normalize_str("\u3000\u00a0x\u2003") == "x"
        assert Strip().normalize_str("\x1cx\x1c") == "\x1cx\x1c"  # str.isspace() would strip it

    def test_non_ascii_kept_chars_keep_alignment(self) -> None:
        # HF picks the char that swallows the trailing spaces by comparing a char index with
        # the byte length; for non-ASCII text it never matches, with no effect on alignment
        for text in ("  €ab  ", " é€ab   ", "  éé ab  ", "日本\u3000"):
            assert_parity(CONFIGS["Strip-both"], text)
            assert_parity(CONFIGS["Strip-right"], text)

    def test_all_whitespace_becomes_empty(self) -> None:
        nt = Strip().normalize(NormalizedText.identity("   "))
        assert nt.text == "" and nt.alignments() == []


class TestStripAccents:
    def test_removes_marks_keeps_alignment(self) -> None:
        nt = StripAccents().normalize(NFD().normalize(NormalizedText.identity("héllo")))
        assert nt.text == "hello"
        assert nt.alignments() == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]

    def test_spacing_marks_are_removed_too(self) -> None:
        assert StripAccents().normalize_str("क\u093e") == "क"  # Mc


class TestReplace:
    def test_grow_aligns_to_last_char_of_match(self) -> None:
        nt = Replace(pattern="ab", content="XYZ").normalize(NormalizedText.identity("cab"))
        assert nt.text == "cXYZ"
        assert nt.alignments() == [(0, 1), (2, 3), (2, 3), (2, 3)]

    def test_empty_string_pattern_matches_between_chars(self) -> None:
        # HF compiles the escaped empty string: it matches at every position
        assert Replace(pattern="", content="-").normalize_str("ab") == "-a-b-"

    def test_regex_empty_match_after_match_is_skipped(self) -> None:
        assert Replace(pattern="b*", content="-", is_regex=True).normalize_str("abbc") == "-a-c-"


class TestPrepend:
    def test_shares_first_char_alignment(self) -> None:
        nt = Prepend(prepend="▁▁").normalize(NormalizedText.identity("hi"))
        assert nt.text == "▁▁hi" and nt.alignments() == [(0, 1), (0, 1), (0, 1), (1, 2)]

    def test_empty_text_untouched(self) -> None:
        assert Prepend(prepend="▁").normalize_str("") == ""


class TestSequence:
    def test_mistral_normalizer(self) -> None:
        nt = normalizer_from_json(CONFIGS["mistral"]).normalize(NormalizedText.identity("a b"))
        assert nt.text == "▁a▁b"
        assert nt.alignments() == [(0, 1), (0, 1), (1, 2), (2, 3)]

    def test_json_round_trip(self) -> None:
        for config in CONFIGS.values():
            built = normalizer_from_json(config)
            again = normalizer_from_json(built.to_json())
            assert again.to_json() == built.to_json()

    def test_to_json_loads_in_hf(self) -> None:
        for name, config in CONFIGS.items():
            data = normalizer_from_json(config).to_json()
            tok = _hf_char_tokenizer(json.dumps(data, sort_keys=True))
            assert tok.normalizer.normalize_str("Héllo  Wörld ﬁ") == normalizer_from_json(data).normalize_str(
                "Héllo  Wörld ﬁ"
            ), name


class TestBertNormalizer:
    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.sampled_from(list("aéÅがパㇷ゚한ǅ\u0301\u3099\u0903\u093c\u05b0ﬁ日 \u00adĳ")), max_size=25).map("".join))
    def test_precomposed_shortcut_equals_full_decomposition(self, text: str) -> None:
        """Stripping accents translates precomposed chars 1:1 before NFD; alignment and text must
        be what NFD + removing the marks gives (and what HF gives)."""
        from unittest import mock

        from tokviz.engine.normalizers import bert

        norm = BertNormalizer()
        fast = norm.normalize(NormalizedText.identity(text))
        with mock.patch.object(bert, "_strip_precomposed", lambda nt: nt):
            full = norm.normalize(NormalizedText.identity(text))
        assert (fast.text, fast.alignments()) == (full.text, full.alignments())
        hf = require_module("tokenizers").normalizers.BertNormalizer()
        assert fast.text == hf.normalize_str(text)

    @pytest.mark.parametrize("prefix", ["", "\x00\u200bÀ"], ids=["identity", "after-cleaning"])
    def test_long_text_pads_like_short_text(self, prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """Long texts repeat the alignment with numpy; the result equals the pure-Python one."""
        from tokviz.engine.normalizers import bert

        text = prefix + corpus_text("wagahaiwa_nekodearu.txt")[:3000] + "Ab 日本\t語 😀"
        norm = BertNormalizer()
        monkeypatch.setattr(bert, "_NUMPY_CHARS", 10**9)
        pure = norm.normalize(NormalizedText.identity(text))
        monkeypatch.setattr(bert, "_NUMPY_CHARS", 0)
        fast = norm.normalize(NormalizedText.identity(text))
        assert pure.text == fast.text and " 日 " in fast.text
        assert (list(pure.starts), list(pure.ends)) == (list(fast.starts), list(fast.ends))

    def test_chinese_chars_padded_with_shared_alignment(self) -> None:
        nt = BertNormalizer().normalize(NormalizedText.identity("a中"))
        assert nt.text == "a 中 "
        assert nt.alignments() == [(0, 1), (1, 2), (1, 2), (1, 2)]

    def test_clean_text_removes_controls_and_maps_whitespace(self) -> None:
        nt = BertNormalizer(lowercase=False).normalize(NormalizedText.identity("a\x00\tb\u200b"))
        assert nt.text == "a b"
        assert nt.alignments() == [(0, 1), (2, 3), (3, 4)]

    def test_strip_accents_follows_lowercase(self) -> None:
        assert BertNormalizer(lowercase=True).normalize_str("Héllo") == "hello"
        assert BertNormalizer(lowercase=False).normalize_str("Héllo") == "Héllo"
        assert BertNormalizer(lowercase=False, strip_accents=True).normalize_str("Héllo") == "Hello"


class TestBadConfig:
    @pytest.mark.parametrize(
        "obj",
        [
            {"type": "Replace", "pattern": {"Regex": "("}, "content": ""},
            {"type": "Replace", "pattern": {"Glob": "*"}, "content": ""},
            {"type": "Replace", "pattern": {"String": "a"}},
            {"type": "Strip", "strip_left": "yes"},
            {"type": "Prepend"},
            {"type": "BertNormalizer", "strip_accents": "maybe"},
            {"type": "Sequence", "normalizers": {"type": "NFC"}},
            {"type": "Sequence", "normalizers": [{"type": "Nope"}]},
            {"type": "NFX"},
        ],
        ids=lambda o: json.dumps(o)[:60],
    )
    def test_raises_format_error(self, obj: dict[str, Any]) -> None:
        with pytest.raises(TokvizFormatError):
            normalizer_from_json(obj)


# ---------------------------------------------------------------------------------- parity


@pytest.mark.parametrize("config_id", list(CONFIGS))
@pytest.mark.parametrize("case_id,text", TRICKY + EXTRA_STRINGS, ids=[c for c, _ in TRICKY + EXTRA_STRINGS])
def test_parity_tricky(config_id: str, case_id: str, text: str) -> None:
    assert_parity(CONFIGS[config_id], text)


_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list(" \t\n\r\u3000\u00a0\u2581\u0301\u0327\u0308\u0316\u093e\u1161\u11a8ﬁİΣ中é")),
    ),
    max_size=24,
)


@pytest.mark.parametrize("config_id", list(CONFIGS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_parity_hypothesis(config_id: str, text: str) -> None:
    assert_parity(CONFIGS[config_id], text)


BUNDLE_NORMALIZERS = ["claude-legacy", "qwen3", "mistral-7b-v0.1", "bert-base-uncased"]


@cache
def _bundle_normalizer(bundle: str) -> dict[str, Any]:
    return json.loads(bundle_bytes(f"{bundle}/tokenizer.json"))["normalizer"]


@pytest.mark.parametrize("bundle", BUNDLE_NORMALIZERS)
@pytest.mark.parametrize("corpus", ["botchan.txt", "wagahaiwa_nekodearu.txt"])
def test_parity_bundle_corpus_lines(bundle: str, corpus: str) -> None:
    config = _bundle_normalizer(bundle)
    lines = corpus_text(corpus).splitlines(keepends=True)[:400]
    bad = [line for line in lines if ours(config, line) != hf_normalize(config, line)]
    assert not bad, f"{len(bad)} lines differ, first {bad[0]!r}"


@pytest.mark.parametrize("bundle", BUNDLE_NORMALIZERS)
def test_parity_bundle_whole_document(bundle: str) -> None:
    """The whole Japanese corpus (about 1 MB of UTF-8) through each bundle's normalizer."""
    config = _bundle_normalizer(bundle)
    text = corpus_text("wagahaiwa_nekodearu.txt")
    require_module("tokenizers")
    tok = _hf_char_tokenizer(json.dumps(config, sort_keys=True))
    assert normalizer_from_json(config).normalize_str(text) == tok.normalizer.normalize_str(text)


def test_normalize_str_matches_hf_on_tricky_for_every_form() -> None:
    hn = require_module("tokenizers").normalizers
    for cls in (NFC, NFD, NFKC, NFKD):
        ref = getattr(hn, cls.type_name)()
        for _, text in TRICKY:
            assert cls().normalize_str(text) == ref.normalize_str(text)
