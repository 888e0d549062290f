"""`tokviz.engine.model_inputs`: settings round trips, refusals, transformers' row layout, and
encodings with windows surviving pickling. Field-by-field parity with HF is in
tests/parity/test_model_inputs_parity.py."""

from __future__ import annotations

import json
import pickle

import pytest
from support import bundle_bytes, require_module

from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.model_inputs import PaddingParams, TruncationParams, overflow_rows, truncate
from tokviz.io.hf_json import load_hf_json

CONTEXT = "a long context that truncation cuts into overlapping windows for question answering"


@pytest.fixture(scope="module")
def bert_json() -> bytes:
    return bundle_bytes("bert-base-uncased/tokenizer.json")


def test_settings_round_trip_through_tokenizer_json_form() -> None:
    t = TruncationParams(12, 3, "only_second", "left")
    assert t.to_json() == {"direction": "Left", "max_length": 12, "strategy": "OnlySecond", "stride": 3}
    assert TruncationParams.from_json(t.to_json()) == t
    for p in (PaddingParams(), PaddingParams("left", 3, 1, "<pad>", 16, 8)):
        assert PaddingParams.from_json(p.to_json()) == p


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: TruncationParams(-1), "max_length must be an integer from 0 to 2,147,483,647"),
        (lambda: TruncationParams(8, strategy="shortest"), "strategy must be one of"),
        (lambda: TruncationParams(8, direction="up"), "direction must be one of"),
        (lambda: PaddingParams(length=-2), "length must be an integer from 0 to 16,777,216"),
        (lambda: PaddingParams(pad_token=5), "pad_token must be a string"),
        (lambda: PaddingParams.from_json({"strategy": "Widest"}), "strategy must be"),
    ],
)
def test_bad_settings_are_refused(make, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_truncation_in_a_file_names_the_section(bert_json: bytes) -> None:
    obj = json.loads(bert_json)
    obj["truncation"] = {"max_length": 8, "strategy": "Sideways", "stride": 0, "direction": "Right"}
    with pytest.raises(TokvizFormatError, match="truncation.*strategy must be one of"):
        load_hf_json(json.dumps(obj).encode(), source="bad/tokenizer.json")


def test_overflow_rows_are_transformers_layout(bert_json: bytes) -> None:
    """Each encoding then its windows, and the sample each row came from (transformers'
    ``overflow_to_sample_mapping``), over the same encodings HF tokenizers makes."""
    tokenizers = require_module("tokenizers")
    ours = load_hf_json(bert_json, source="bert/tokenizer.json")
    ref = tokenizers.Tokenizer.from_str(bert_json.decode())
    batch = [("short question", CONTEXT), ("no windows here", "short"), ("another question?", CONTEXT + " again")]
    for tok in (ours, ref):
        tok.enable_truncation(16, stride=4, strategy="only_second")
    rows, mapping = overflow_rows(ours.encode_batch(batch))
    want_rows = [r for e in ref.encode_batch(batch) for r in [e, *e.overflowing]]
    want_mapping = [i for i, e in enumerate(ref.encode_batch(batch)) for _ in range(1 + len(e.overflowing))]
    assert [r.ids for r in rows] == [r.ids for r in want_rows]
    assert [r.offsets for r in rows] == [[tuple(o) for o in r.offsets] for r in want_rows]
    assert mapping == want_mapping and len(set(mapping)) == 3 and len(mapping) > 3


def test_windows_and_ranges_survive_pickling(bert_json: bytes) -> None:
    tok = load_hf_json(bert_json, source="bert/tokenizer.json")
    tok.enable_truncation(12, stride=2)
    tok.enable_padding(length=12, direction="left")
    enc = tok.encode("a question", CONTEXT)
    back = pickle.loads(pickle.dumps(enc))
    assert back.overflowing and back.sequence_ranges == enc.sequence_ranges
    assert [w.ids for w in back.overflowing] == [w.ids for w in enc.overflowing]
    assert back.sequence_ids == enc.sequence_ids and back.attention_mask == enc.attention_mask


def test_pretokenized_needs_a_list(bert_json: bytes) -> None:
    tok = load_hf_json(bert_json, source="bert/tokenizer.json")
    with pytest.raises(TypeError, match="list of str"):
        tok.encode("not a list", is_pretokenized=True)


@pytest.mark.parametrize("max_length", [2, 50])  # cutting, and not cutting
def test_truncating_an_encoding_refuses_an_unknown_direction(bert_json: bytes, max_length: int) -> None:
    """HF's ``Encoding.truncate`` raises ValueError on a direction other than right / left
    (its binding test test_invalid_truncate_direction); tokviz took anything else for right."""
    tokenizers = require_module("tokenizers")
    ref = tokenizers.Tokenizer.from_str(bert_json.decode("utf-8")).encode("I love HuggingFace")
    with pytest.raises(ValueError):
        ref.truncate(max_length, 1, "not_a_direction")
    enc = load_hf_json(bert_json, source="bert/tokenizer.json").encode("I love HuggingFace")
    with pytest.raises(ValueError, match="direction"):
        truncate(enc, max_length, stride=1, direction="not_a_direction")


def test_with_model_keeps_the_settings(bert_json: bytes) -> None:
    tok = load_hf_json(bert_json, source="bert/tokenizer.json")
    tok.enable_truncation(10, stride=1)
    tok.enable_padding(length=10)
    other = tok.with_model(tok.model)
    assert other.truncation == tok.truncation and other.padding == tok.padding


def test_incremental_reencode_with_truncation_is_the_whole_encode(bert_json: bytes) -> None:
    """A spliced window would keep the old windows and padding: with truncation or padding set
    the re-encode is the whole encode (and says why)."""
    from tokviz.engine.incremental import Fallback, reencode

    tok = load_hf_json(bert_json, source="bert/tokenizer.json")
    tok.enable_truncation(12, stride=2)
    old_text, new_text = CONTEXT, CONTEXT.replace("windows", "frames")
    got = reencode(tok, old_text, tok.encode(old_text), new_text, add_special_tokens=True)
    want = tok.encode(new_text)
    assert got.fallbacks == (Fallback.MODEL_INPUTS,) and not got.windowed
    assert got.encoding.ids == want.ids and [w.ids for w in got.encoding.overflowing] == [w.ids for w in want.overflowing]
