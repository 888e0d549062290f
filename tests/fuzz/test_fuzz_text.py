"""Fuzz family "text": any text through every real bundle, whole (not the small copies).

Text is drawn from every Unicode category (surrogates included: the only allowed error is the
lone-surrogate one), with whitespace runs, CRLF, combining marks, emoji sequences and the
bundles' special tokens spliced in. Every encoding must have offsets inside the text and decode
without error.
"""

from __future__ import annotations

from functools import lru_cache

from fuzzkit import LONG, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st
from support import bundle_path

import tokviz

BUNDLES = [
    "gpt2/r50k_base.tiktoken",
    "cl100k_base/cl100k_base.tiktoken",
    "bert-base-uncased/tokenizer.json",
    "bert-base-uncased/vocab.txt",
    "mistral-7b-v0.1/tokenizer.json",
    "mistral-7b-v0.1/tokenizer.model",
    "sentencepiece-test/test_model.model",
    "albert-30k-clean/30k-clean.model",
    "claude-legacy/tokenizer.json",
]
if LONG:
    BUNDLES += ["o200k_base/o200k_base.tiktoken", "qwen3/tokenizer.json", "sentencepiece-test/test_ja_model.model"]


@lru_cache(maxsize=None)
def tokenizer(rel: str) -> tokviz.Tokenizer:
    return tokviz.load(bundle_path(rel))


PIECES = st.sampled_from([
    " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u200b", "\ufeff", "e\u0301", "\u0301", "👩\u200d👩\u200d👧",
    "🇯🇵", "ﬁ", "①", "日本語", "한국어", "ا\u064b", "<|endoftext|>", "<s>", "</s>", "<unk>", "[CLS]", "[SEP]",
    "[MASK]", "▁", "Ġ", "<0x41>", "'s", "'LL", "123456", "\x00", "\ud800", "\udfff",
])
TEXTS = st.lists(PIECES | st.text(max_size=8), max_size=12).map("".join) | st.text(max_size=60)


@fuzz_settings(40)
@given(rel=st.sampled_from(BUNDLES), text=TEXTS)
def test_any_text_on_real_bundles(rel: str, text: str) -> None:
    tok = tokenizer(rel)
    run_case("text", lambda: check_encoding(tok, text))
