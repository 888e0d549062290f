"""`tokviz.analysis.inputs`: the rows of `model_inputs` (the encoding, then its windows) equal HF
tokenizers' for each post-processor kind (BERT, a Llama/Mistral template, byte-level, none); each
row's per-sequence span is the hull of HF's offsets of that sequence's real tokens; consecutive
windows of the truncated sequence share ``stride`` tokens (HF's definition of the stride); the
tokenizer handed in keeps its own settings; the pad token is the tokenizer's own (qwen3's
tokenizer_config names ``<|endoftext|>``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import bundle_bytes, require_module

import tokviz
from tokviz.analysis.inputs import InputSettings, model_inputs

BUNDLES = {
    "bert": "bert-base-uncased/tokenizer.json",
    "mistral": "mistral-7b-v0.1/tokenizer.json",
    "qwen3": "qwen3/tokenizer.json",
    "claude-legacy": "claude-legacy/tokenizer.json",
}
TEXT = "How far apart are the windows, café 😀?"
PAIR = "Windows start max_length minus stride tokens apart: 你好 🙂, naïve déjà vu, again and again."

#: (settings, the same settings on an HF tokenizer, with a pair?)
CASES = {
    "pair-longest_first-stride-max_length": (
        InputSettings(max_length=16, stride=2, padding="max_length"),
        lambda t, pad: (t.enable_truncation(16, stride=2), t.enable_padding(length=16, **pad)), True),
    "pair-only_second-left-multiple-left": (
        InputSettings(max_length=26, stride=3, strategy="only_second", truncation_side="left", padding="multiple",
                      multiple=8, padding_side="left"),
        lambda t, pad: (t.enable_truncation(26, stride=3, strategy="only_second", direction="left"),
                        t.enable_padding(direction="left", pad_to_multiple_of=8, **pad)), True),
    "single-only_first-longest": (
        InputSettings(max_length=7, stride=1, strategy="only_first", padding="longest"),
        lambda t, pad: (t.enable_truncation(7, stride=1, strategy="only_first"), t.enable_padding(**pad)), False),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, rel in BUNDLES.items():
        d = tmp_path_factory.mktemp(name)
        (d / "tokenizer.json").write_bytes(bundle_bytes(rel))
        config = rel.replace("tokenizer.json", "tokenizer_config.json")
        if name == "qwen3":  # its pad token comes from here
            (d / "tokenizer_config.json").write_bytes(bundle_bytes(config))
        out[name] = d / "tokenizer.json"
    return out


def _fields(enc: Any) -> dict[str, list]:
    return {"ids": enc.ids, "type_ids": enc.type_ids, "attention_mask": enc.attention_mask,
            "sequence_ids": enc.sequence_ids, "offsets": [tuple(o) for o in enc.offsets]}


def _hull(enc: Any, seq: int) -> tuple[int, int] | None:
    """HF's offsets of the row's real tokens (mask 1, not special) of type id ``seq``."""
    offs = [o for o, t, m, sp in zip(enc.offsets, enc.type_ids, enc.attention_mask, enc.special_tokens_mask)
            if t == seq and m and not sp]
    return (min(a for a, _ in offs), max(b for _, b in offs)) if offs else None


@pytest.mark.parity
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(BUNDLES))
def test_rows_equal_hf(files: dict[str, Path], name: str, case: str) -> None:
    settings, configure, with_pair = CASES[case]
    tok = tokviz.load(files[name])
    ref = require_module("tokenizers").Tokenizer.from_file(str(files[name]))
    pad_token = "<|endoftext|>" if name == "qwen3" else "[PAD]"
    pad_id = ref.token_to_id(pad_token) if name == "qwen3" else 0
    configure(ref, {"pad_id": pad_id, "pad_token": pad_token})
    pair = PAIR if with_pair else None
    got = model_inputs(tok, TEXT, pair, settings)
    want = ref.encode(TEXT, pair)
    rows = [want, *want.overflowing]
    assert len(got.windows) == len(rows) > 1
    for w, r in zip(got.windows, rows):
        assert _fields(w.encoding) == _fields(r)
        assert w.pads == r.attention_mask.count(0)
        for seq in range(len(got.texts)):
            part = w.part(seq)
            assert (part.span if part is not None and part.count else None) == _hull(r, seq)
    assert tok.truncation is None and tok.padding is None  # the shared tokenizer is untouched


@pytest.mark.parametrize("case", ["pair-only_second-left-multiple-left", "single-only_first-longest"])
def test_consecutive_windows_share_the_stride(files: dict[str, Path], case: str) -> None:
    settings, _, with_pair = CASES[case]
    got = model_inputs(tokviz.load(files["bert"]), TEXT, PAIR if with_pair else None, settings)
    cut = 1 if with_pair else 0  # the sequence truncation cuts
    parts = [w.part(cut) for w in got.windows]
    assert len(parts) > 2
    assert [p.shared_tokens for p in parts[1:]] == [settings.stride] * (len(parts) - 1)
    for before, p in zip(parts, parts[1:]):  # the overlap is the characters both spans hold
        lo, hi = max(before.span[0], p.span[0]), min(before.span[1], p.span[1])
        assert p.overlap == ((lo, hi) if hi > lo else None)


def test_bad_settings_are_value_errors(files: dict[str, Path]) -> None:
    tok = tokviz.load(files["bert"])
    with pytest.raises(ValueError, match="stride 4 must be less than .* 2 special tokens"):
        model_inputs(tok, TEXT, None, InputSettings(max_length=5, stride=4))
    with pytest.raises(ValueError, match="only_second needs a second sequence"):
        model_inputs(tok, TEXT, None, InputSettings(max_length=5, strategy="only_second"))
    with pytest.raises(ValueError, match="padding to max_length needs a max length"):
        model_inputs(tok, TEXT, None, InputSettings(padding="max_length"))
    with pytest.raises(ValueError, match="padding must be one of"):
        InputSettings(padding="both")
