"""The character tables in `tokviz.engine.unicode_tables` (and the Unicode 9 table of the NFx
normalizers) against HF tokenizers itself: every range edge and a random sample of code points."""

from __future__ import annotations

import random
import unicodedata

import pytest
from support import require_module

from tokviz.engine import unicode_tables as ut
from tokviz.engine.normalizers.unicode import _U9_ENDS, _U9_STARTS, _known


def _probe_points(charset_ranges: list[tuple[int, int]], n_random: int = 3000, seed: int = 7) -> list[int]:
    pts: set[int] = set()
    for a, b in charset_ranges:
        pts.update((a - 1, a, b, b + 1))
    rnd = random.Random(seed)
    pts.update(rnd.randrange(0x110000) for _ in range(n_random))
    return sorted(p for p in pts if 0 <= p < 0x110000 and not 0xD800 <= p < 0xE000)


@pytest.fixture(scope="module")
def hf():  # noqa: ANN201
    return require_module("tokenizers")


class TestCharSet:
    def test_membership(self) -> None:
        cs = ut.CharSet("41-43 61")
        assert "A" in cs and "C" in cs and "a" in cs and "D" not in cs and "b" not in cs


class TestAgainstHF:
    def test_other_is_what_clean_text_removes(self, hf) -> None:  # noqa: ANN001
        bn = hf.normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        for cp in _probe_points(ut.OTHER.ranges):
            c = chr(cp)
            assert (bn.normalize_str(c) == "") == (c in ut.OTHER), hex(cp)

    def test_combining_mark_is_what_strip_accents_removes(self, hf) -> None:  # noqa: ANN001
        sa = hf.normalizers.StripAccents()
        for cp in _probe_points(ut.COMBINING_MARK.ranges):
            c = chr(cp)
            assert (sa.normalize_str(c) == "") == (c in ut.COMBINING_MARK), hex(cp)

    def test_nonspacing_mark_after_nfd(self, hf) -> None:  # noqa: ANN001
        bn = hf.normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
        for cp in _probe_points(ut.NONSPACING_MARK.ranges):
            c = chr(cp)
            assert (bn.normalize_str(c) == "") == (c in ut.NONSPACING_MARK), hex(cp)

    @pytest.mark.parametrize("name", ["PUNCTUATION", "NUMERIC"])
    def test_split_classes(self, hf, name: str) -> None:  # noqa: ANN001
        charset = getattr(ut, name)
        pt = hf.pre_tokenizers.BertPreTokenizer() if name == "PUNCTUATION" else hf.pre_tokenizers.Digits(individual_digits=True)
        for cp in _probe_points(charset.ranges):
            c = chr(cp)
            if c in ut.WHITE_SPACE:
                continue
            isolated = len(pt.pre_tokenize_str("x" + c + "x")) == 3
            assert isolated == (c in charset), hex(cp)

    def test_white_space(self, hf) -> None:  # noqa: ANN001
        ws = hf.pre_tokenizers.WhitespaceSplit()
        for cp in range(0x3100):
            c = chr(cp)
            if 0xD800 <= cp < 0xE000:
                continue
            assert (len(ws.pre_tokenize_str("x" + c + "x")) == 2) == (c in ut.WHITE_SPACE), hex(cp)

    def test_lowercase_extra(self, hf) -> None:  # noqa: ANN001
        low = hf.normalizers.Lowercase()
        for c, lc in ut.LOWERCASE_EXTRA.items():
            assert low.normalize_str(c) == lc

    def test_unicode_9_table(self, hf) -> None:  # noqa: ANN001
        nfkd = hf.normalizers.NFKD()
        nfd = hf.normalizers.NFD()
        for cp in _probe_points(list(zip(_U9_STARTS, _U9_ENDS))):
            c = chr(cp)
            if unicodedata.decomposition(c):
                changed = nfkd.normalize_str(c) != c
                assert changed == _known(c), hex(cp)
            elif unicodedata.combining(c):
                k = unicodedata.combining(c)
                probe = ("a" + c + "\u0334") if k > 1 else ("a\u0301" + c)
                assert (nfd.normalize_str(probe) != probe) == _known(c), hex(cp)

    def test_scripts(self, hf) -> None:  # noqa: ANN001
        us = hf.pre_tokenizers.UnicodeScripts()
        a = "a"
        for cp in _probe_points([(s, e) for s, e in zip(ut._SC_STARTS, ut._SC_ENDS)], n_random=2000):
            c = chr(cp)
            chunks = [t for t, _ in us.pre_tokenize_str(a + c)]
            ours = ut.script_of(c)
            if ours < 0 or ours == ut.script_of(a):
                assert chunks == [a + c], hex(cp)
            else:
                assert chunks == [a, c], hex(cp)

    def test_unknown_to_hf_regex(self, hf) -> None:  # noqa: ANN001
        bl = hf.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        for a, b in ut.UNKNOWN_TO_HF_REGEX.ranges[:20]:
            for cp in {a, b}:
                # HF: not a letter, so it does not join the preceding letters
                assert len(bl.pre_tokenize_str("ab" + chr(cp))) == 2, hex(cp)


@pytest.mark.parametrize("length", [10, 4095, 4096, 50_000])
def test_hf_regex_view_hides_every_unknown_character_in_short_and_long_texts(length: int) -> None:
    """Long texts are tested by their distinct characters, short ones by the class search: both
    must hide exactly the characters of `UNKNOWN_TO_HF_REGEX`."""
    from tokviz.engine.patterns import hf_regex_view

    rng = random.Random(length)
    unknown = [chr(a) for a, _ in ut.UNKNOWN_TO_HF_REGEX.ranges]
    known = "aé日本語🙂\u0557"  # U+0557 sits just below the first unknown code point
    for where in (None, 0, length // 2, length - 1):
        chars = [rng.choice(known) for _ in range(length)]
        if where is not None:
            chars[where] = rng.choice(unknown)
        text = "".join(chars)
        view = hf_regex_view(text)
        expected = "".join(ut.UNKNOWN_HIDDEN_AS if c in ut.UNKNOWN_TO_HF_REGEX else c for c in text)
        assert view == expected
        assert (view is text) == (where is None)
