"""Parity of tokenizers loaded from llama.cpp's vocab-only GGUF files (../shared/bundles/gguf).

Two references:

* the ``.out`` beside each file: the ids HF tokenizers gave for llama.cpp's 46 hard strings
  (``add_special_tokens=False``), for all five files;
* the equivalent published tokenizer run in the test, on the parity texts: tiktoken's r50k
  (the same GPT-2 ranks) for ``gpt-2``, HF tokenizers on bert-base-uncased's tokenizer.json (the
  same vocabulary) for ``bert-bge``, HF tokenizers on qwen3's tokenizer.json (qwen2's base
  vocabulary and merges) for ``qwen2``, on NFC text (qwen3's tokenizer.json normalizes to NFC;
  llama.cpp's qwen2 does not normalize, so only NFC-stable text can be compared).

Every comparison is recorded in the parity report as bundle ``gguf-<name>``.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import Any

import pytest
from support import bundle_bytes, bundle_path, require_module

from parity.cases import TRICKY, corpus_lines, llamacpp_vectors
from tokviz.io.gguf import load_gguf

pytestmark = pytest.mark.parity

GGUFS = ["gpt-2", "llama-spm", "bert-bge", "qwen2", "phi-3"]
CORPORA = ["botchan.txt", "wagahaiwa_nekodearu.txt"]
_LINES = 300  # corpus lines per corpus and bundle


@cache
def gguf_tokenizer(name: str) -> Any:
    return load_gguf(bundle_path(f"gguf/ggml-vocab-{name}.gguf"))


@cache
def hf_reference(bundle: str) -> Any:
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_str(bundle_bytes(f"{bundle}/tokenizer.json").decode("utf-8"))


@cache
def tiktoken_r50k() -> Any:
    tiktoken = require_module("tiktoken")
    from tokviz.io.tiktoken_ranks import preset_for

    data = bundle_bytes("gpt2/r50k_base.tiktoken")
    preset = preset_for(data)
    assert preset is not None
    import base64

    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding("r50k_base", pat_str=preset.pattern, mergeable_ranks=ranks,
                             special_tokens=dict(preset.special_tokens))


def _diff(got: list[int], want: list[int]) -> str:
    if got == want:
        return ""
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"ids differ at {i}: gguf {got[i:i + 5]} reference {want[i:i + 5]}"


def compare(name: str, text: str) -> str:
    """'' when the GGUF tokenizer agrees with its published equivalent on ``text``."""
    tok = gguf_tokenizer(name)
    if name == "gpt-2":
        ref = tiktoken_r50k()
        want = ref.encode(text, allowed_special="all")
        got = tok.encode(text, add_special_tokens=False).ids
        detail = _diff(got, want)
        if not detail and tok.decode(got) != ref.decode(want):
            detail = f"decode differs: {tok.decode(got)[:60]!r} vs {ref.decode(want)[:60]!r}"
        return detail
    bundle = {"bert-bge": "bert-base-uncased", "qwen2": "qwen3"}[name]
    ref = hf_reference(bundle)
    for add in (False, True):
        ref_enc = ref.encode(text, add_special_tokens=add)
        enc = tok.encode(text, add_special_tokens=add)
        detail = _diff(enc.ids, ref_enc.ids)
        if not detail and [tuple(o) for o in enc.offsets] != [tuple(o) for o in ref_enc.offsets]:
            detail = "offsets differ"
        if detail:
            return f"add_special_tokens={add}: {detail}"
    return ""


class TestLlamaCppVectors:
    @pytest.mark.parametrize("name", GGUFS)
    def test_expected_ids(self, name: str, parity_report) -> None:  # noqa: ANN001
        tok = gguf_tokenizer(name)
        bad = []
        for k, (text, want) in enumerate(llamacpp_vectors(name, folder="gguf")):
            got = tok.encode(text, add_special_tokens=False).ids
            detail = _diff(got, want)
            parity_report.record(f"gguf-{name}", f"llamacpp/{k}", not detail, f"{text[:40]!r}: {detail}")
            if detail:
                bad.append(k)
        assert bad == []


EQUIVALENT = ["gpt-2", "bert-bge", "qwen2"]


def _texts(name: str, text: str) -> str:
    return unicodedata.normalize("NFC", text) if name == "qwen2" else text


class TestAgainstPublished:
    @pytest.mark.parametrize("name", EQUIVALENT)
    def test_tricky(self, name: str, parity_report) -> None:  # noqa: ANN001
        bad = []
        for case_id, text in TRICKY:
            detail = compare(name, _texts(name, text))
            parity_report.record(f"gguf-{name}", f"tricky/{case_id}", not detail, detail)
            if detail:
                bad.append((case_id, detail))
        assert bad == []

    @pytest.mark.parametrize("name", EQUIVALENT)
    @pytest.mark.parametrize("corpus", CORPORA)
    def test_corpus_lines(self, name: str, corpus: str, parity_report) -> None:  # noqa: ANN001
        bad = []
        for k, line in enumerate(corpus_lines(corpus, limit=_LINES)):
            detail = compare(name, _texts(name, line))
            parity_report.record(f"gguf-{name}", f"{corpus}/line{k + 1}", not detail, detail)
            if detail:
                bad.append(k + 1)
        assert bad == [], f"{len(bad)} lines differ, first {bad[:10]}"

    @pytest.mark.parametrize("name", EQUIVALENT)
    def test_llamacpp_texts(self, name: str, parity_report) -> None:  # noqa: ANN001
        bad = []
        for k, (text, _) in enumerate(llamacpp_vectors("gpt-2", folder="gguf")):
            detail = compare(name, _texts(name, text))
            parity_report.record(f"gguf-{name}", f"llamacpp-text/{k}", not detail, detail)
            if detail:
                bad.append(k)
        assert bad == []


# ---------------------------------------------------------------------------- Gemma 4 (gemma4)
# llama.cpp's ggml-vocab-gemma-4.gguf (262,144 tokens, 514,906 merges, tokenizer.ggml.model =
# "gemma4") and its 45 test vectors ship inside llama-cpp-python's sdist, which .ci/run downloads
# into the fixture cache (the vocabulary is under Gemma's terms: not committed). Two references:
# the .out ids (HF tokenizers on Gemma 4's own tokenizer, add_special_tokens=False), and
# transformers' GemmaTokenizer (BPE with byte fallback, U+2581 for spaces) built in the test from
# the GGUF's own vocabulary and merges, with its control tokens as special added tokens and its
# user-defined ones as plain added tokens, on the parity texts (ids and offsets).
_GEMMA4 = "ggml-vocab-gemma-4.gguf"


@cache
def gemma4_files() -> dict[str, Any]:
    import tempfile
    from pathlib import Path

    from support import fixture_members

    dest = Path(tempfile.mkdtemp(prefix="gemma4-"))
    return fixture_members("llama_cpp_python-0.3.36.tar.gz", (_GEMMA4, _GEMMA4 + ".inp", _GEMMA4 + ".out"), dest)


@cache
def gemma4_tokenizer() -> Any:
    return load_gguf(gemma4_files()[_GEMMA4])


@cache
def gemma4_reference() -> Any:
    tokenizers = require_module("tokenizers")
    require_module("transformers")
    from transformers.models.gemma.tokenization_gemma import GemmaTokenizer

    from tokviz.io.gguf import read_gguf_vocab

    v = read_gguf_vocab(gemma4_files()[_GEMMA4])
    ref = GemmaTokenizer(vocab={t: i for i, t in enumerate(v.tokens)}, merges=[tuple(m.split(" ", 1)) for m in v.merges])
    types = v.token_types or []
    ref.add_tokens([
        tokenizers.AddedToken(t, special=ty == 3, normalized=False)
        for t, ty in zip(v.tokens, types) if ty in (3, 4)
    ])
    return ref._tokenizer


def _gemma4_vectors() -> list[tuple[str, list[int]]]:
    files = gemma4_files()
    texts = files[_GEMMA4 + ".inp"].read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1]
    lines = files[_GEMMA4 + ".out"].read_text(encoding="utf-8").split("\n")[: len(texts)]
    assert len(texts) == len(lines) > 40
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]


def _gemma4_compare(text: str) -> str:
    tok, ref = gemma4_tokenizer(), gemma4_reference()
    want = ref.encode(text, add_special_tokens=False)
    got = tok.encode(text, add_special_tokens=False)
    detail = _diff(got.ids, want.ids)
    if not detail and [tuple(o) for o in got.offsets] != [tuple(o) for o in want.offsets]:
        detail = "offsets differ"
    if not detail and tok.decode(got.ids) != ref.decode(want.ids, skip_special_tokens=False):
        detail = "decode differs"
    return detail


class TestGemma4:
    def test_llamacpp_vectors(self, parity_report) -> None:  # noqa: ANN001
        tok = gemma4_tokenizer()
        bad = []
        for k, (text, want) in enumerate(_gemma4_vectors()):
            detail = _diff(tok.encode(text, add_special_tokens=False).ids, want)
            parity_report.record("gguf-gemma-4", f"llamacpp/{k}", not detail, f"{text[:40]!r}: {detail}")
            if detail:
                bad.append(k)
        assert bad == []

    def test_bos_is_always_added(self) -> None:
        # llama.cpp forces add_bos on for gemma4; the file's bos id is 2 (<bos>)
        tok = gemma4_tokenizer()
        assert tok.encode("Hello").ids[0] == 2
        assert tok.encode("Hello").ids[1:] == tok.encode("Hello", add_special_tokens=False).ids

    def test_tricky_and_corpus_against_transformers(self, parity_report) -> None:  # noqa: ANN001
        cases = [(f"tricky/{cid}", text) for cid, text in TRICKY]
        cases += [(f"llamacpp-text/{k}", text) for k, (text, _) in enumerate(_gemma4_vectors())]
        for corpus in CORPORA:
            cases += [(f"{corpus}/line{k + 1}", line) for k, line in enumerate(corpus_lines(corpus, limit=_LINES))]
        bad = []
        for case_id, text in cases:
            detail = _gemma4_compare(text)
            parity_report.record("gguf-gemma-4", case_id, not detail, detail)
            if detail:
                bad.append(case_id)
        assert bad == [], f"{len(bad)} cases differ, first {bad[:10]}"
