"""Parity with HF tokenizers on model inputs: pairs, truncation (every strategy and direction,
stride windows), padding (fixed, longest, multiple-of, both directions) on every post-processor kind.

Each kind is a tokenizer.json given to both libraries as the same bytes: the bundles' own
post-processors (BertProcessing, Mistral's TemplateProcessing, Qwen3's ByteLevel, none) and
variants of them built here (a BERT TemplateProcessing, a RoBERTa-style RobertaProcessing and a
Llama-3-style Sequence[ByteLevel, TemplateProcessing] over Qwen3's byte-level vocabulary, and a
file whose "truncation"/"padding" keys set the options). Every field is compared, windows
included (recursively, HF's nesting): ids, tokens, type_ids, attention_mask,
special_tokens_mask, offsets, sequence_ids, word_ids and the look-ups with ``sequence_index``.
A case where HF raises must raise here too (HF panics where tokviz raises a ValueError).

Texts avoid the added tokens' literals: tokviz flags special added tokens found in the text in
``special_tokens_mask`` on purpose (see `tokviz.engine.tokenizer`), HF does not.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import bundle_bytes, require_module

QWEN_BOS, QWEN_EOS = ("<|im_start|>", 151644), ("<|endoftext|>", 151643)


def _bert_template(obj: dict[str, Any]) -> dict[str, Any]:
    obj["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
                           "[SEP]": {"id": "[SEP]", "ids": [102], "tokens": ["[SEP]"]}},
    }
    return obj


def _roberta(obj: dict[str, Any]) -> dict[str, Any]:
    obj["post_processor"] = {
        "type": "RobertaProcessing", "sep": list(QWEN_EOS), "cls": list(QWEN_BOS), "trim_offsets": True,
        "add_prefix_space": False,
    }
    return obj


def _llama3(obj: dict[str, Any]) -> dict[str, Any]:
    bos = QWEN_BOS[0]
    obj["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {bos: {"id": bos, "ids": [QWEN_BOS[1]], "tokens": [bos]}}},
        ],
    }
    return obj


def _configured(obj: dict[str, Any]) -> dict[str, Any]:
    obj["truncation"] = {"direction": "Left", "max_length": 9, "strategy": "LongestFirst", "stride": 2}
    obj["padding"] = {"strategy": {"Fixed": 12}, "direction": "Left", "pad_to_multiple_of": None, "pad_id": 3,
                      "pad_type_id": 1, "pad_token": "<pad>"}
    return obj


#: kind -> (bundle, how its tokenizer.json is changed)
KINDS = {
    "bert": ("bert-base-uncased", None),
    "bert-template": ("bert-base-uncased", _bert_template),
    "roberta": ("qwen3", _roberta),
    "llama3-sequence": ("qwen3", _llama3),
    "mistral-template": ("mistral-7b-v0.1", None),
    "byte-level": ("qwen3", None),
    "no-processor": ("claude-legacy", None),
    "configured-in-file": ("bert-base-uncased", _configured),
}


@cache
def _json(kind: str) -> str:
    bundle, change = KINDS[kind]
    obj = json.loads(bundle_bytes(f"{bundle}/tokenizer.json"))
    if change is not None:
        obj = change(copy.deepcopy(obj))
    return json.dumps(obj)


@cache
def _loaded(kind: str) -> tuple[Any, Any, dict[str, Any] | None, dict[str, Any] | None]:
    from tokviz.io.hf_json import load_hf_json

    tokenizers = require_module("tokenizers")
    data = _json(kind)
    ref = tokenizers.Tokenizer.from_str(data)
    return load_hf_json(data.encode("utf-8"), source=f"{kind}/tokenizer.json"), ref, ref.truncation, ref.padding


def _pair(kind: str) -> tuple[Any, Any]:
    """The (tokviz, HF) tokenizers of ``kind`` with the file's own options (each case sets its own)."""
    ours, ref, truncation, padding = _loaded(kind)
    for tok in (ours, ref):
        tok.no_truncation()
        tok.no_padding()
        if truncation is not None:
            tok.enable_truncation(**truncation)
        if padding is not None:
            tok.enable_padding(**padding)
    return ours, ref


def fields(enc: Any, *, lookups: bool = True) -> dict[str, Any]:
    """Every model-input field of an encoding (ours or HF's), windows included (the look-ups on
    the encoding itself only: windows can number thousands, HF's combinations of a pair's)."""
    n = len(enc.ids)
    words = [w for w in enc.word_ids if w is not None] if lookups else []
    return {
        "ids": list(enc.ids),
        "tokens": list(enc.tokens),
        "type_ids": list(enc.type_ids),
        "attention_mask": list(enc.attention_mask),
        "special_tokens_mask": list(enc.special_tokens_mask),
        "offsets": [tuple(o) for o in enc.offsets],
        "sequence_ids": list(enc.sequence_ids),
        "word_ids": list(enc.word_ids),
        "n_sequences": enc.n_sequences,
        "lookups": [
            (enc.char_to_token(c, s), enc.word_to_tokens(w, s), enc.char_to_word(c, s))
            for s in (0, 1) for c in range(0, 12 if lookups else 0, 3) for w in sorted(set(words))[:3]
        ] + [(enc.token_to_chars(i), enc.token_to_sequence(i), enc.token_to_word(i)) for i in range(min(n, 6) if lookups else 0)],
        "overflowing": [fields(o, lookups=False) for o in enc.overflowing],
    }


def _outcome(tok: Any, configure: Any, call: Any) -> Any:
    try:
        configure(tok)
        return call(tok)
    except BaseException as exc:  # noqa: BLE001 - HF panics (PanicException derives from BaseException)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return "raises"


def compare(kind: str, configure: Any, call: Any) -> str:
    """'' when ``call`` (after ``configure``) gives the same fields with both libraries."""
    ours, ref = _pair(kind)
    want = _outcome(ref, configure, lambda t: [fields(e) for e in call(t)])
    got = _outcome(ours, configure, lambda t: [fields(e) for e in call(t)])
    if got == want:
        return ""
    if "raises" in (got, want):
        return f"ours {str(got)[:200]} vs hf {str(want)[:200]}"
    for i, (a, b) in enumerate(zip(got, want)):
        for key in a:
            if a[key] != b[key]:
                return f"encoding {i} {key}: ours {str(a[key])[:300]} vs hf {str(b[key])[:300]}"
    return f"{len(got)} vs {len(want)} encodings"


# Letters, digits, spaces, punctuation and a few non-ASCII characters; no "<" or "[" (the
# added tokens' literals).
TEXT = st.text(alphabet=st.sampled_from("abcdefgh xyz XYZ 019 .,!?'-\n\té日本語😀"), max_size=32)
OPTIONS = st.fixed_dictionaries({
    "max_length": st.integers(0, 24),
    "stride": st.integers(0, 6),
    "strategy": st.sampled_from(["longest_first", "only_first", "only_second"]),
    "direction": st.sampled_from(["right", "left"]),
    "truncate": st.booleans(),
    "padding": st.sampled_from([None, "fixed", "longest", "multiple"]),
    "pad_direction": st.sampled_from(["right", "left"]),
    "pad_length": st.integers(0, 30),
    "add_special_tokens": st.booleans(),
})


def _configure(opts: dict[str, Any]) -> Any:
    def configure(tok: Any) -> None:
        if opts["truncate"]:
            tok.enable_truncation(opts["max_length"], stride=opts["stride"], strategy=opts["strategy"],
                                  direction=opts["direction"])
        mode = opts["padding"]
        if mode is not None:
            tok.enable_padding(
                direction=opts["pad_direction"], pad_id=7, pad_type_id=2, pad_token="[PAD]",
                length=opts["pad_length"] if mode == "fixed" else None,
                pad_to_multiple_of=5 if mode == "multiple" else None,
            )
    return configure


PROFILE = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW_PROFILE = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(kind: str, texts: tuple[str, str | None], opts: dict[str, Any], parity_report: Any) -> None:
    first, second = texts
    detail = compare(kind, _configure(opts), lambda t: [t.encode(first, second, add_special_tokens=opts["add_special_tokens"])])
    parity_report.record(f"inputs/{kind}", f"{opts} {texts!r:.80}", not detail, detail)
    assert not detail


@pytest.mark.parity
@pytest.mark.parametrize("kind", list(KINDS))
@PROFILE
@given(texts=st.tuples(TEXT, st.none() | TEXT), opts=OPTIONS)
def test_encode(kind: str, texts: tuple[str, str | None], opts: dict[str, Any], parity_report: Any) -> None:
    _check(kind, texts, opts, parity_report)


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KINDS))
@SLOW_PROFILE
@given(texts=st.tuples(TEXT, st.none() | TEXT), opts=OPTIONS)
def test_encode_many(kind: str, texts: tuple[str, str | None], opts: dict[str, Any], parity_report: Any) -> None:
    _check(kind, texts, opts, parity_report)


@pytest.mark.parity
@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=10, deadline=None)
@given(batch=st.lists(st.tuples(TEXT, st.none() | TEXT), min_size=1, max_size=4), opts=OPTIONS)
def test_encode_batch(kind: str, batch: list[tuple[str, str | None]], opts: dict[str, Any], parity_report: Any) -> None:
    inputs = [t if t[1] is not None else t[0] for t in batch]
    detail = compare(kind, _configure(opts), lambda t: t.encode_batch(inputs, add_special_tokens=opts["add_special_tokens"]))
    parity_report.record(f"inputs/{kind}", f"batch {opts}", not detail, detail)
    assert not detail


@pytest.mark.parity
@pytest.mark.parametrize("kind", list(KINDS))
def test_settings_and_counts(kind: str) -> None:
    ours, ref = _pair(kind)
    assert ours.truncation == ref.truncation and ours.padding == ref.padding
    for is_pair in (False, True):
        assert ours.num_special_tokens_to_add(is_pair) == ref.num_special_tokens_to_add(is_pair)
    ours.enable_truncation(16, stride=3, strategy="only_second", direction="left")
    ref.enable_truncation(16, stride=3, strategy="only_second", direction="left")
    ours.enable_padding(direction="left", pad_id=5, length=20, pad_to_multiple_of=8)
    ref.enable_padding(direction="left", pad_id=5, length=20, pad_to_multiple_of=8)
    assert ours.truncation == ref.truncation and ours.padding == ref.padding
    ours.no_truncation(), ref.no_truncation(), ours.no_padding(), ref.no_padding()
    assert ours.truncation is ref.truncation is None and ours.padding is ref.padding is None


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["bert", "roberta", "mistral-template"])
def test_post_process_of_encodings(kind: str) -> None:
    """``post_process`` of the encodings made without special tokens and without a processor."""
    ours, ref = _pair(kind)

    def call(t: Any) -> list[Any]:
        t.enable_truncation(10, stride=2)
        a, b = t.encode("a first text, long enough to cut", add_special_tokens=False), t.encode("then its pair", add_special_tokens=False)
        return [t.post_process(a, b), t.post_process(a), t.post_process(a, b, add_special_tokens=False)]

    assert compare(kind, lambda t: None, call) == ""


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["bert", "byte-level"])
def test_pretokenized(kind: str) -> None:
    words, pair = ["Hello", "wörld", "again,", "and"], ["a", "pair"]
    detail = compare(kind, lambda t: t.enable_truncation(7, stride=1),
                     lambda t: [t.encode(words, pair, is_pretokenized=True), t.encode(words, is_pretokenized=True)])
    assert detail == ""


@pytest.mark.parity
def test_stride_too_long_for_the_room_left_is_refused() -> None:
    ours, ref = _pair("bert")
    for tok in (ours, ref):  # 5 - 2 special tokens leaves 3, and a stride of 3 does not fit
        with pytest.raises(Exception, match="stride"):
            tok.enable_truncation(5, stride=4)
        tok.enable_truncation(5, stride=3)  # == the room: accepted, refused at encode time (HF panics)
    with pytest.raises(ValueError, match="stride"):
        ours.encode("one two three four five")


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["bert", "byte-level"])
def test_batch_input_forms(kind: str) -> None:
    """The input forms of ``encode_batch`` HF reads (its own binding test, test_encode_formats):
    pre-tokenized pairs given as lists of two lists, pre-tokenized words given as tuples, and
    text pairs as lists of two strings."""
    words, other, pair = ["Hello", "wörld"], ["again", ",", "and"], ["a", "pair"]
    pretokenized = [
        [words, other],  # two sequences of words: a pair
        [[words, pair], [other, pair]],
        [(tuple(words), tuple(pair)), (tuple(other), tuple(pair))],
        [tuple(words), tuple(other)],  # tuples of words: single sequences
        [(words, pair), tuple(other)],
    ]
    for batch in pretokenized:
        assert compare(kind, lambda t: None, lambda t, b=batch: t.encode_batch(b, is_pretokenized=True)) == ""
    texts = [["Hello wörld", "a pair"], ("one", "two"), "single"]
    assert compare(kind, lambda t: None, lambda t: t.encode_batch(texts)) == ""
