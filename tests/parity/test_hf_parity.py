"""Parity with HF tokenizers on the tokenizer.json bundles: ids, tokens, offsets and decode.

Every comparison is recorded in the parity report (see conftest.py). Inputs: the tricky
strings, both corpora line by line (one test per bundle and corpus, collecting every mismatch)
and as whole documents, the llama.cpp vectors (bert-bge on bert-base-uncased, qwen2 on qwen3
after NFC; ids compared to llama.cpp's expected ids as well as to HF) and hypothesis text.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import SHARED, bundle_bytes, require, require_module

from parity.cases import TRICKY, corpus_document, corpus_lines, llamacpp_vectors

BUNDLES = ["claude-legacy", "qwen3", "mistral-7b-v0.1", "bert-base-uncased"]
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]
# llama.cpp vector sets run on our bundles (the gpt-2 set belongs to the tiktoken parity tests)
LLAMACPP = {"bert-bge": "bert-base-uncased", "qwen2": "qwen3"}


@cache
def _pair(bundle: str) -> tuple[Any, Any]:
    """(tokviz tokenizer, HF tokenizer) loaded from the same tokenizer.json bytes."""
    from tokviz.io.hf_json import load_hf_json

    tokenizers = require_module("tokenizers")
    data = bundle_bytes(f"{bundle}/tokenizer.json")
    ours = load_hf_json(data, source=f"{bundle}/tokenizer.json")
    ref = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    return ours, ref


def _first_diff(a: list, b: list) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"at {i}: ours {a[max(0, i - 2):i + 3]!r} vs hf {b[max(0, i - 2):i + 3]!r}"
    return f"lengths {len(a)} vs {len(b)}"


def compare_encoding(ours: Any, ref_enc: Any, text: str, *, add_special_tokens: bool) -> str:
    """'' when ids, tokens, offsets, word and type ids equal HF's encoding ``ref_enc`` of ``text``, else what differs."""
    enc = ours.encode(text, add_special_tokens=add_special_tokens)
    for field, a, b in (
        ("ids", enc.ids, ref_enc.ids),
        ("tokens", enc.tokens, ref_enc.tokens),
        ("offsets", [tuple(o) for o in enc.offsets], [tuple(o) for o in ref_enc.offsets]),
        ("word_ids", enc.word_ids, ref_enc.word_ids),
        ("type_ids", enc.type_ids, ref_enc.type_ids),
    ):
        if a != b:
            return f"{field} differ {_first_diff(a, b)}"
    if not add_special_tokens and ours.truncation is None and ours.padding is None:
        got = ours.encode_ids(text)
        if got != ref_enc.ids:
            return f"encode_ids differ {_first_diff(got, ref_enc.ids)}"
    return ""


def compare_decode(ours: Any, ref: Any, ids: list[int]) -> str:
    for skip in (False, True):
        a = ours.decode(ids, skip_special_tokens=skip)
        b = ref.decode(ids, skip_special_tokens=skip)
        if a != b:
            return f"decode(skip_special_tokens={skip}) differs: ours {a[:80]!r} vs hf {b[:80]!r}"
    return ""


def compare_text(bundle: str, text: str) -> str:
    """Full comparison of one text: with and without special tokens, and decode of HF's ids."""
    ours, ref = _pair(bundle)
    for add in (True, False):
        ref_enc = ref.encode(text, add_special_tokens=add)
        detail = compare_encoding(ours, ref_enc, text, add_special_tokens=add)
        if detail:
            return f"add_special_tokens={add}: {detail}"
    return compare_decode(ours, ref, ref.encode(text).ids)


@pytest.fixture(params=BUNDLES)
def bundle(request: pytest.FixtureRequest) -> str:
    return request.param


class TestTricky:
    @pytest.mark.parametrize("case_id,text", TRICKY, ids=[c for c, _ in TRICKY])
    def test_tricky(self, bundle: str, case_id: str, text: str, parity_report) -> None:  # noqa: ANN001
        detail = compare_text(bundle, text)
        parity_report.record(bundle, f"tricky/{case_id}", not detail, detail)
        assert not detail, f"{bundle} {case_id}: {detail}"

    def test_decode_special_and_unknown_ids(self, bundle: str, parity_report) -> None:  # noqa: ANN001
        ours, ref = _pair(bundle)
        added = sorted(ref.get_added_tokens_decoder())[:6]
        ids = [*added, 5, 100, 1000, *added[:2], 3000, 10**9]  # 10**9: unknown, dropped by both
        detail = compare_decode(ours, ref, ids)
        parity_report.record(bundle, "decode/special-and-unknown", not detail, detail)
        assert not detail


class TestCorpora:
    @pytest.mark.parametrize("corpus", CORPORA)
    def test_lines(self, bundle: str, corpus: str, parity_report) -> None:  # noqa: ANN001
        ours, ref = _pair(bundle)
        lines = corpus_lines(corpus)
        ref_encs = ref.encode_batch(lines, add_special_tokens=True)
        failures = []
        results = []
        for n, (line, ref_enc) in enumerate(zip(lines, ref_encs)):
            detail = compare_encoding(ours, ref_enc, line, add_special_tokens=True)
            if not detail:
                detail = compare_decode(ours, ref, ref_enc.ids)
            results.append((f"{corpus}/line{n + 1}", not detail, detail))
            if detail:
                failures.append(f"line {n + 1}: {detail}")
        parity_report.record_many(bundle, results)
        assert not failures, f"{len(failures)} of {len(lines)} lines differ; first: {failures[:3]}"

    @pytest.mark.parametrize("corpus", CORPORA)
    def test_document(self, bundle: str, corpus: str, parity_report) -> None:  # noqa: ANN001
        ours, ref = _pair(bundle)
        text = corpus_document(corpus)
        ref_enc = ref.encode(text, add_special_tokens=True)
        detail = compare_encoding(ours, ref_enc, text, add_special_tokens=True) or compare_decode(ours, ref, ref_enc.ids)
        parity_report.record(bundle, f"{corpus}/document", not detail, detail)
        assert not detail


class TestLlamaCppVectors:
    @pytest.mark.parametrize("vectors", sorted(LLAMACPP))
    def test_vectors(self, vectors: str, parity_report) -> None:  # noqa: ANN001
        require(SHARED is not None and (SHARED / "bundles" / "llamacpp-vectors").is_dir(), "llama.cpp vectors not found")
        bundle = LLAMACPP[vectors]
        ours, ref = _pair(bundle)
        failures = []
        for n, (text, expected) in enumerate(llamacpp_vectors(vectors)):
            if vectors == "qwen2":
                text = unicodedata.normalize("NFC", text)  # llama.cpp's qwen2 vectors assume NFC input
            got = ours.encode(text, add_special_tokens=False).ids
            hf = ref.encode(text, add_special_tokens=False).ids
            detail = ""
            if got != expected:
                detail = f"ids differ from llama.cpp: {_first_diff(got, expected)}"
            elif got != hf:
                detail = f"ids differ from HF: {_first_diff(got, hf)}"
            else:
                detail = compare_text(bundle, text)
            parity_report.record(bundle, f"llama.cpp-{vectors}/{n}", not detail, detail)
            if detail:
                failures.append(f"{n} {text[:30]!r}: {detail}")
        assert not failures, failures[:5]


# Fragments hypothesis mixes with random characters: the things tokenizers trip on.
_FRAGMENTS = [
    " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u200b", "\u200d", "'s", "'ll", "123", "4567",
    "<|endoftext|>", "<|im_start|>", "<s>", "</s>", "[CLS]", "[SEP]", "[UNK]", "<unk>", "<EOT>",
    "é", "e\u0301", "ﬁ", "ＡＢ", "日本語", "한국어", "مرحبا", "👍🏽", "👨\u200d👩\u200d👧", "▁", "Ġ", "##",
]
_TEXT = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12),
        st.sampled_from(_FRAGMENTS),
    ),
    max_size=8,
).map("".join)


@pytest.mark.parametrize("hbundle", BUNDLES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_hypothesis(hbundle: str, text: str, parity_report) -> None:  # noqa: ANN001
    detail = compare_text(hbundle, text)
    parity_report.record(hbundle, f"hypothesis/{text[:20]!r}", not detail, detail)
    assert not detail, f"{text!r}: {detail}"
