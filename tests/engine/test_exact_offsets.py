"""Exact spans (`Encoding.exact_offsets`) beside the HF-compatible ones.

The HF-compatible ``offsets`` are checked against HF ``tokenizers`` in the same tests (they must
not move); the exact ones are checked against hand-derived spans for composition, prepended
markers, prefix spaces and deletion, and by two properties over random text: no non-deleted
code point is left out, and two tokens' exact spans only overlap on the source of a character
both hold bytes of (byte split) or of one normalizer expansion split between them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from hf_builders import albert_json, roberta_like_json
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ModuleCache, bundle_path, require_module

import tokviz
from tokviz.engine.encoding import empty_encoding

_WS = regex.compile(r"\p{White_Space}")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("exact-tokenizers")


_loaded = ModuleCache()


def load(path: Path) -> tuple[object, object]:
    key = str(path)
    if key not in _loaded:
        hf = require_module("tokenizers")
        _loaded[key] = (tokviz.load(path), hf.Tokenizer.from_file(key))
    return _loaded[key]


def encode_both(path: Path, text: str):  # noqa: ANN201
    tok, hf = load(path)
    enc = tok.encode(text, add_special_tokens=False)
    assert enc.offsets == [tuple(o) for o in hf.encode(text, add_special_tokens=False).offsets]
    return enc


class TestExactSpans:
    def test_composition_takes_the_union_of_sources(self) -> None:
        # NFC: e + U+0301 -> é. HF keeps (0, 1) for the first é; its sources are 0 and 1
        enc = encode_both(bundle_path("qwen3/tokenizer.json"), "e\u0301te\u0301")
        assert enc.offsets == [(0, 4)] and enc.exact_offsets == [(0, 5)]
        ex = enc.exact_alignment
        assert ex.absorbed == {1: 0, 4: 2} and ex.deleted == ()
        assert ex.char_sources == [(0, 2), (2, 3), (3, 5)]

    def test_prepend_normalizer_marker_is_zero_width(self) -> None:
        enc = encode_both(bundle_path("mistral-7b-v0.1/tokenizer.json"), "中文 中文")
        assert enc.tokens[:2] == ["▁", "中"]
        assert enc.offsets[:2] == [(0, 1), (0, 1)] and enc.exact_offsets[:2] == [(0, 0), (0, 1)]
        assert enc.exact_alignment.inserted == (0,)  # the ▁ at normalized position 0
        assert enc.exact_alignment.origins[0].normalized == (0, 1)

    def test_metaspace_prefix_is_zero_width(self, built: Path) -> None:
        enc = encode_both(albert_json(built), "中文 中文")
        assert enc.offsets == [(0, 1), (0, 2), (2, 3), (3, 5)]
        # the second ▁ is the real space at 2: it keeps its span
        assert enc.exact_offsets == [(0, 0), (0, 2), (2, 3), (3, 5)]
        origin = enc.exact_alignment.origins[0]
        assert origin.synthetic == 1 and origin.inserted_by == "Metaspace prefix"

    def test_prefix_space_after_added_token_keeps_its_character(self, built: Path) -> None:
        enc = encode_both(roberta_like_json(built), "<device_name>BMS-L17-1</device_name>")
        k = enc.tokens.index("ĠB")
        assert enc.offsets[k] == (14, 14)
        assert enc.exact_offsets[k] == (13, 14) == enc.byte_offsets[k]
        # the other tokens are where HF puts them
        assert [o for i, o in enumerate(enc.exact_offsets) if i != k] == [o for i, o in enumerate(enc.offsets) if i != k]

    def test_trimmed_leading_space_is_trimmed_exactly_too(self, built: Path) -> None:
        enc = encode_both(roberta_like_json(built), "  two leading")
        assert enc.exact_offsets == enc.offsets == [(0, 0), (2, 5), (6, 13)]

    def test_deleted_code_points_are_listed(self) -> None:
        enc = encode_both(bundle_path("bert-base-uncased/tokenizer.json"), "e\u0301te\u0301")
        assert enc.exact_alignment.deleted == (1, 4)
        assert enc.exact_offsets == [(0, 3), (3, 4)]

    def test_expansion_keeps_the_source(self) -> None:
        enc = encode_both(bundle_path("claude-legacy/tokenizer.json"), "ヿ")  # NFKC: コト
        assert enc.exact_offsets == [(0, 1), (0, 1)]

    def test_byte_level_split_is_hf_span(self) -> None:
        enc = encode_both(bundle_path("qwen3/tokenizer.json"), "i ⭢ j")
        assert enc.exact_offsets == enc.offsets

    def test_sentencepiece_model_prefix_already_exact(self) -> None:
        tok = tokviz.load(bundle_path("albert-30k-clean/30k-clean.model"))
        enc = tok.encode("中文 中文", add_special_tokens=False)
        assert enc.exact_offsets == enc.offsets

    def test_processor_tokens_keep_their_span(self) -> None:
        tok, hf = load(bundle_path("bert-base-uncased/tokenizer.json"))
        enc = tok.encode("hello", add_special_tokens=True)
        assert enc.offsets == [tuple(o) for o in hf.encode("hello").offsets]
        assert enc.exact_offsets == enc.offsets and enc.exact_alignment.origins[0] is None

    def test_encoding_without_tokenizer_says_so(self) -> None:
        with pytest.raises(ValueError, match="not made by Tokenizer.encode"):
            empty_encoding("x").exact_offsets


_ALPHABET = st.sampled_from(
    list("ab Tz.")
    + ["\u0301", "\u0308", "\u0316", "é", "ﬁ", "ヿ", "中", "文", "😀", "\u200d", "\x10", "\t", "  "]
    + ["\u1106", "\u1161", "\u11af", "한", "İ", "\U0001F1E9", "\U0001F1EA"]
)
_TEXTS = st.lists(_ALPHABET, min_size=1, max_size=14).map("".join)

_PROPERTY_TOKENIZERS = [
    "qwen3/tokenizer.json",
    "claude-legacy/tokenizer.json",
    "mistral-7b-v0.1/tokenizer.json",
    "bert-base-uncased/tokenizer.json",
    "albert-json",  # AlbertConverter's: Precompiled + Metaspace
]


def _check_properties(enc) -> None:  # noqa: ANN001
    text = enc.text
    ex = enc.exact_alignment
    assert ex.available
    deleted = set(ex.deleted)
    content = [i for i in range(len(enc.ids)) if ex.origins[i] is not None]
    covered = set()
    for i in content:
        covered.update(range(*ex.offsets[i]))
    for cp, c in enumerate(text):
        if cp in deleted or _WS.match(c):
            continue
        assert cp in covered, f"code point {cp} {c!r} of {text!r} is in no exact span"
    for i, j in zip(content, content[1:]):
        (si, ei), (sj, ej) = ex.offsets[i], ex.offsets[j]
        if sj >= ei or (si, ei) == (sj, ej):
            continue
        # a partial overlap: exactly the source of normalized characters in both tokens: bytes
        # of one character (a byte split, possibly of a composed one) or two pieces of one
        # expansion (ﬁ -> f | i...)
        src_i = {ex.char_sources[c] for c in range(*ex.origins[i].normalized)}
        src_j = {ex.char_sources[c] for c in range(*ex.origins[j].normalized)}
        assert (sj, ei) in src_i & src_j, f"tokens {i},{j} of {text!r} overlap on {sj}..{ei}"


class TestExactProperties:
    @pytest.mark.parametrize("name", _PROPERTY_TOKENIZERS)
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=_TEXTS)
    def test_cover_and_no_partial_overlap(self, built: Path, name: str, text: str) -> None:
        path = albert_json(built) if name == "albert-json" else bundle_path(name)
        _check_properties(encode_both(path, text))

    def test_leading_deleted_control_before_expansion(self, built: Path) -> None:
        # found by the property test: HF's Precompiled drops the deletion of a leading \x10 (no
        # change emitted yet to fold it into), so its alignment is shifted by one intermediate
        # char: コ (0, 1), ト (1, 2), a (1, 2), leaving the a's own code point 2 uncovered
        enc = encode_both(albert_json(built), "\x10ヿa")
        assert enc.tokens == ["▁", "コト", "a"] and enc.offsets == [(0, 1), (0, 2), (1, 2)]
        _check_properties(enc)
        # exactly: \x10 deleted, ヿ (1) -> コト, a is 2, the Metaspace ▁ a point at the first kept one
        assert enc.exact_alignment.deleted == (0,)
        assert enc.exact_offsets == [(1, 1), (1, 2), (2, 3)]

    def test_zero_width_chars_made_spaces_collapse_into_the_kept_space(self, built: Path) -> None:
        # a sibling the wider fuzzing found: the charsmap maps U+200D and U+200B to spaces and
        # Replace(" {2,}", " ") aligns the collapsed pair with the U+200B (2); the U+200D (1) is
        # no white space itself, yet it went into that space, not into the last "." of … (0)
        enc = encode_both(albert_json(built), "…\u200d\u200b")
        assert enc.tokens == ["▁", ".", ".", ".", "▁"] and enc.offsets[-1] == (2, 3)
        _check_properties(enc)
        assert enc.exact_offsets == [(0, 0), (0, 1), (0, 1), (0, 1), (1, 3)]

    def test_lost_leading_deletion_hidden_by_a_collapse(self, built: Path) -> None:
        # the lost \x10\x10 shift the spaces' alignment by two, then Replace(" {2,}", " ")
        # realigns the collapsed run to its last char, so no code point of the run looks covered:
        # HF puts the second "." of … (5) at (4, 5) and the a (6) at (5, 6)
        enc = encode_both(albert_json(built), "\x10\x10  \u200b…a")
        assert enc.offsets == [(2, 3), (3, 4), (4, 5), (5, 6), (5, 6)]
        _check_properties(enc)
        # exactly: the space run 2..5 is the ▁, … (5) the three dots, a is 6; \x10\x10 deleted
        assert enc.exact_alignment.deleted == (0, 1)
        assert enc.exact_offsets == [(2, 5), (5, 6), (5, 6), (5, 6), (6, 7)]
