"""Caret analysis against tiktoken's ``encode_with_unstable`` (the spec's examples and hypothesis
text on r50k, cl100k and o200k), healing previews, and the probe-verified word rule."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import bundle_path

import tokviz
from tokviz.analysis.healing import analyze_caret

from .oracles import TIKTOKEN_BUNDLES, tiktoken_pair

BUNDLES = list(TIKTOKEN_BUNDLES)


def pair(name: str, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return tiktoken_pair(name, tmp_path_factory)


def assert_like_tiktoken(tok, ref, text: str) -> None:  # noqa: ANN001
    h = analyze_caret(tok, text)
    stable, completions = ref.encode_with_unstable(text)
    expected = {tuple(c) for c in completions}
    assert list(h.stable) == stable, text
    assert set(h.completions) == expected, text
    assert list(h.single_token_completions) == sorted(c[0] for c in expected if len(c) == 1), text
    # the docstring invariants
    data = text.encode()
    assert data.startswith(ref.decode_bytes(stable))
    assert h.unstable == data[len(ref.decode_bytes(stable)):]


SPEC_TEXTS = ["hello fanta", "The quick brown fo", "Hello world ", "hello\n", "print('Hel", "print('Hello, worl",
              'The link is <a href="http:', "a\n\n  ", "中文字", "x  \n \t", "", "🙂", "it's", "1234567"]


class TestLikeTiktoken:
    @pytest.mark.parametrize("name", list(BUNDLES))
    def test_spec_texts(self, name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        tok, ref = pair(name, tmp_path_factory)
        for text in SPEC_TEXTS:
            assert_like_tiktoken(tok, ref, text)

    @pytest.mark.parametrize("name", list(BUNDLES))
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=st.text(st.sampled_from(list("ab xyz\n\t.,'!é中🙂0123")), max_size=14))
    def test_hypothesis(self, name: str, text: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        tok, ref = pair(name, tmp_path_factory)
        assert_like_tiktoken(tok, ref, text)

    def test_spec_numbers(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        # spec 4c [V-run]: r50k "hello fanta": S = [31373], U = " fanta", |C| = 1,432, 4 single tokens,
        # C holds (277, 4910) and (5113, 265); cl100k: S = [15339], |C| = 2,233
        tok, _ = pair("r50k_base", tmp_path_factory)
        h = analyze_caret(tok, "hello fanta")
        assert h.stable == (31373,) and h.unstable == b" fanta" and len(h.completions) == 1432
        assert h.single_token_completions == (8842, 9623, 23857, 30162)
        assert (277, 4910) in h.completions and (5113, 265) in h.completions
        assert analyze_caret(tok, "hello\n").completions == {(198,), (628,), (44320,)}
        assert len(analyze_caret(tok, "Hello world ").completions) == 33135
        cl, _ = pair("cl100k_base", tmp_path_factory)
        assert analyze_caret(cl, "hello fanta").stable == (15339,)
        assert len(analyze_caret(cl, "hello fanta").completions) == 2233


class TestHealingPreviews:
    def test_llamacpp_readme_cases(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        # spec 4c: r50k print('Hel -> mode 1 prefix "Hel", 5 candidates; print('Hello, worl -> E ends
        # " wor"(476), "l"(75); mode 1: 325 candidates start with "l"; mode d1: k = 2, " worl", 5 candidates
        tok, _ = pair("r50k_base", tmp_path_factory)
        h = analyze_caret(tok, "print('Hel")
        assert h.rollback_one.removed == b"Hel"
        assert set(h.rollback_one.candidates) == {12621, 28254, 15496, 22087, 47429}
        h = analyze_caret(tok, "print('Hello, worl")
        assert h.ids[-2:] == (476, 75)
        assert h.rollback_one.candidate_count == 325
        assert h.rollback_covering.k == 2 and h.rollback_covering.removed == b" worl"
        assert set(h.rollback_covering.candidates) == {995, 43249, 11621, 29081, 8688}

    def test_transformers_readme_case(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        tok, ref = pair("r50k_base", tmp_path_factory)
        text = 'The link is <a href="http:'
        h = analyze_caret(tok, text)
        assert h.ids[-1] == 25 and h.rollback_one.candidate_count == 16 and 1378 in h.rollback_one.candidates
        singles = sorted(c[0] for c in ref.encode_with_unstable(text)[1] if len(c) == 1)
        assert sorted(h.rollback_one.candidates) == singles

    def test_trailing_space_warning(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        tok, _ = pair("r50k_base", tmp_path_factory)
        h = analyze_caret(tok, "Hello world ")
        assert h.stable == (15496, 995) and h.unstable == b" "
        assert h.warnings and "33,135" in h.warnings[0]
        assert not analyze_caret(tok, "Hello world").warnings

    def test_caret_inside_text(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        tok, _ = pair("r50k_base", tmp_path_factory)
        assert analyze_caret(tok, "hello fanta and more", 11).unstable == b" fanta"


class TestWordRule:
    @pytest.mark.parametrize("rel", ["mistral-7b-v0.1/tokenizer.model", "bert-base-uncased/tokenizer.json",
                                     "sentencepiece-test/test_model.model"])
    def test_stable_prefix_is_verified_by_probes(self, rel: str) -> None:
        tok = tokviz.load(bundle_path(rel))
        h = analyze_caret(tok, "The quick brown fo")
        assert h.rule == "word" and h.verified is True
        # the last word is the unstable part; the stable ids are a prefix of the full encoding
        assert h.unstable.strip() == b"fo"
        assert h.ids[: len(h.stable)] == h.stable and len(h.stable) < len(h.ids)
        # independently of the probes: a few continuations keep the stable ids
        for x in ("x", "xes", " jumps", "."):
            assert tok.encode("The quick brown fo" + x, add_special_tokens=False).ids[: len(h.stable)] == list(h.stable)


class TestHfByteLevel:
    """An HF ByteLevel pipeline (Qwen3: NFC + Split + ByteLevel) gets tiktoken's rule; no tiktoken
    oracle exists for it, so its invariants are checked: the stable ids are a prefix of the
    encoding of every continuation tried, and every completion extends the prompt's bytes."""

    @pytest.mark.parametrize("text", ["hello fanta", "The quick brown fo", "中文字", "Hello world ", "x = 1\n"])
    def test_invariants(self, text: str) -> None:
        tok = tokviz.load(bundle_path("qwen3/tokenizer.json"))
        h = analyze_caret(tok, text)
        assert h.rule == "tiktoken" and h.completions
        data = text.encode()
        stable_bytes = data[: len(data) - len(h.unstable)]
        assert stable_bytes + h.unstable == data
        for x in ("", "s", "tic", " and", "\n", "é", "字"):
            assert tok.encode(text + x, add_special_tokens=False).ids[: len(h.stable)] == list(h.stable)
        from tokviz.analysis.healing import surface_index

        index = surface_index(tok)
        for seq in list(h.completions)[:300]:
            assert (stable_bytes + b"".join(index.surface[i] for i in seq)).startswith(data)
