"""Fuzz family "native": hostile vocabularies through both backends, which must agree or both refuse.

Each case is one tokenizer.json (BPE, WordPiece, WordLevel or Unigram) with a random vocabulary
over a small alphabet: ids dense, sparse, repeated, or hostile, merges that name missing tokens,
scores that are not finite, unknown-token settings of every kind. It is loaded twice, once with
the native core and once pure Python (`support.python_twin`), and both must give the same
outcome: the same refusal (`TokvizFormatError`) or the same ids, tokens, offsets and decode of
every probe text.

Ids outside ``[0, 2**31)`` (the native core's 32-bit slots, packed in pairs into 64-bit keys)
are refused at load by every loader on both backends (`fields.MAX_ID`): ``test_hostile_ids_agree``
draws them, and both backends must refuse the same files.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzzkit import fuzz_settings, run_case
from hypothesis import given, strategies as st
from support import python_twin

import tokviz
from tokviz.engine import kernels
from tokviz.engine.errors import TokvizFormatError

pytestmark = pytest.mark.skipif(kernels.native is None, reason="no native core (TOKVIZ_PURE_PYTHON=1 or not built)")

ALPHABET = "abx#"
PIECE = st.text(ALPHABET, min_size=1, max_size=5)
SAFE_IDS = st.integers(0, 40) | st.integers(0, 2**31 - 1)
# 2**32 + k: a pair key left << 32 | right that wraps onto the key of ids (k, right)
HOSTILE_IDS = st.sampled_from([2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**63 - 1, 2**63, 2**64, 10**30, -1,
                               -(2**31), -(2**63)]) | st.integers(0, 20).map(lambda k: 2**32 + k)
PROBES = ("", "a", "ab", "bx", "abx ab", "xxxx", "a#b ##x", "b a x # ab xa", "aaaaaaaaaaaaaaaaaaaa")


@st.composite
def vocabulary(draw: st.DrawFn, ids: st.SearchStrategy[int]) -> str:
    kind = draw(st.sampled_from(["BPE", "BPE", "WordPiece", "WordLevel", "Unigram"]))
    pieces = list(dict.fromkeys([*draw(st.lists(PIECE, min_size=1, max_size=16)), *draw(st.sampled_from(["ab", "abx"]))]))
    dense = draw(st.booleans())
    vocab = {p: (i if dense and draw(st.integers(0, 2)) else draw(ids)) for i, p in enumerate(pieces)}
    unk = draw(st.sampled_from([None, "[UNK]", "a", "zz"]))
    if unk is not None and draw(st.booleans()):
        vocab.setdefault(unk, len(vocab) if dense else draw(ids))
    if kind == "BPE":
        pairs = st.tuples(st.sampled_from(pieces + ["zz"]), st.sampled_from(pieces + ["zz"]))
        model: dict[str, Any] = {"type": "BPE", "vocab": vocab, "merges": [list(p) for p in draw(st.lists(pairs, max_size=12))],
                                 "unk_token": unk, "continuing_subword_prefix": draw(st.sampled_from([None, "##"])),
                                 "byte_fallback": False, "ignore_merges": draw(st.booleans()), "dropout": None}
    elif kind == "WordPiece":
        model = {"type": "WordPiece", "vocab": vocab, "unk_token": unk or "[UNK]", "continuing_subword_prefix": "##",
                 "max_input_chars_per_word": draw(st.sampled_from([1, 5, 100]))}
    elif kind == "WordLevel":
        model = {"type": "WordLevel", "vocab": vocab, "unk_token": unk or "[UNK]"}
    else:
        scores = st.floats(-50, 0) | st.sampled_from([float("nan"), float("-inf"), 0.0, -1e30])
        model = {"type": "Unigram", "vocab": [[p, draw(scores)] for p in pieces], "byte_fallback": False,
                 "unk_id": draw(st.none() | st.integers(0, len(pieces) - 1) | ids)}
    return json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
        "pre_tokenizer": draw(st.sampled_from([None, {"type": "Whitespace"}, {"type": "WhitespaceSplit"}])),
        "model": model,
    })


def outcome(load: Any) -> tuple[Any, ...]:
    """("refused",) or ("loaded", per probe text: ids, tokens, offsets, decode)."""
    try:
        tok = load()
    except TokvizFormatError:
        return ("refused",)
    rows: list[Any] = []
    for text in PROBES:
        try:
            enc = tok.encode(text)
        except TokvizFormatError as exc:  # refused at encode (on both backends, or the cases differ)
            rows.append(("refused", type(exc).__name__))
            continue
        rows.append((enc.ids, enc.tokens, [tuple(o) for o in enc.offsets], tok.decode(enc.ids)))
    return ("loaded", rows)


def compare(source: str) -> None:
    data = source.encode()
    native = outcome(lambda: tokviz.load(data))
    python = python_twin(lambda: outcome(lambda: tokviz.load(data)))
    assert native == python, (source, native, python)


@fuzz_settings(40)
@given(source=vocabulary(SAFE_IDS))
def test_vocabularies_agree(source: str) -> None:
    run_case("native", lambda: compare(source))


@fuzz_settings(30)
@given(source=vocabulary(HOSTILE_IDS | SAFE_IDS))
def test_hostile_ids_agree(source: str) -> None:
    run_case("native", lambda: compare(source))
