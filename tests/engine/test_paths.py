"""The path harness: the production encode path against the reference path (the oracle).

`Tokenizer.encode` (chunk caches, column passes, native kernels when built) must give exactly
what `tokviz.engine.reference.encode` (the plain loop: pre_tokenize -> tokenize_traced -> spans
-> OffsetMap, no caches) gives: ids, tokens, offsets, byte offsets, word ids, masks and stages.
It runs on every bundle, on a toy pipeline for every pre-tokenizer type (each Split behaviour,
Sequence mixes, with and without normalizers and added tokens), and on hypothesis text.
CI runs it once natively and once with ``TOKVIZ_PURE_PYTHON=1``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from parity.cases import TRICKY
from support import ModuleCache, bundle_path, corpus_text

import tokviz
from tokviz.engine import reference
from tokviz.engine.added_tokens import AddedToken
from tokviz.engine.byte_alphabet import bytes_to_proxy
from tokviz.engine.encoding import Encoding
from tokviz.engine.models.bpe import BPE
from tokviz.engine.normalizers import normalizer_from_json
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.tokenizer import Tokenizer

BUNDLES = [
    "qwen3/tokenizer.json",
    "claude-legacy/tokenizer.json",
    "mistral-7b-v0.1/tokenizer.json",
    "bert-base-uncased/tokenizer.json",
    "gpt2/r50k_base.tiktoken",
    "cl100k_base/cl100k_base.tiktoken",
    "o200k_base/o200k_base.tiktoken",
    "albert-30k-clean/30k-clean.model",
    "sentencepiece-test/test_model.model",
    "sentencepiece-test/test_ja_model.model",
    "mistral-7b-v0.1/tokenizer.model",
]

FIELDS = ("ids", "tokens", "offsets", "byte_offsets", "word_ids", "special_tokens_mask", "type_ids")


def assert_same(tok: Tokenizer, text: str, **opts: Any) -> Encoding:
    """Both paths on ``text``; every field and the stages equal (traces exist only in one)."""
    fast = tok.encode(text, **opts)
    ref = reference.encode(tok.pipeline, text, **opts)
    for name in FIELDS:
        assert list(getattr(fast, name)) == list(getattr(ref, name)), f"{name} differ on {text[:60]!r}"
    assert tuple(fast.stages.pre_tokens) == tuple(ref.stages.pre_tokens), f"pre-tokens differ on {text[:60]!r}"
    assert [(s.start, s.end, s.added_id) for s in fast.stages.segments] == [
        (s.start, s.end, s.added_id) for s in ref.stages.segments
    ]
    return fast


# ---------------------------------------------------------------------- bundles
_loaded = ModuleCache()


def bundle_tok(rel: str) -> Tokenizer:
    if rel not in _loaded:
        _loaded[rel] = tokviz.load(bundle_path(rel))
    return _loaded[rel]


def sample_texts() -> list[str]:
    english = corpus_text("botchan.txt")[:6000]
    japanese = corpus_text("wagahaiwa_nekodearu.txt")[:3000]
    lines = (english[:3000] + japanese[:1500]).splitlines(keepends=True)
    return [t for _, t in TRICKY] + [english, japanese] + lines[:60]


@pytest.mark.parametrize("rel", BUNDLES, ids=[b.split("/")[0] + ":" + b.rsplit(".", 1)[-1] for b in BUNDLES])
class TestBundles:
    def test_both_paths_agree(self, rel: str) -> None:
        tok = bundle_tok(rel)
        for text in sample_texts():
            assert_same(tok, text)
        # a second time: the production path now answers from its caches
        for text in sample_texts()[:20]:
            assert_same(tok, text)

    def test_allowed_special(self, rel: str) -> None:
        tok = bundle_tok(rel)
        text = "<|endoftext|> hi <s> </s> [CLS] <|im_start|>x<|im_end|>"
        assert_same(tok, text, allowed_special="all")


# ---------------------------------------------------------------------- toy pipelines
def fallback_bpe() -> BPE:
    """ASCII letters, digits, ▁ and a few merges; every other char falls back to byte pieces."""
    chars = [chr(c) for c in range(0x20, 0x7F)] + ["▁"]
    vocab = {c: k for k, c in enumerate(chars)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    merges = [("▁", "t"), ("h", "e"), ("▁t", "he"), ("i", "n"), ("in", "g"), ("1", "2"), ("e", "r")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return BPE(vocab, merges, byte_fallback=True)


def byte_level_bpe() -> BPE:
    proxies = [bytes_to_proxy(bytes([b])) for b in range(256)]
    vocab = {p: k for k, p in enumerate(proxies)}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("in", "g"), ("ã", "ģ")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return BPE(vocab, merges)


def split(pattern: dict, behavior: str, invert: bool = False) -> dict:
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
PRE_TOKENIZERS: dict[str, dict] = {
    "Metaspace-always": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "Metaspace-first": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
    "Metaspace-never-nosplit": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False},
    **{f"Punctuation-{b}": {"type": "Punctuation", "behavior": b} for b in BEHAVIORS},
    "Digits": {"type": "Digits", "individual_digits": False},
    "Digits-individual": {"type": "Digits", "individual_digits": True},
    "UnicodeScripts": {"type": "UnicodeScripts"},
    "CharDelimiterSplit": {"type": "CharDelimiterSplit", "delimiter": "e"},
    "Whitespace": {"type": "Whitespace"},
    "WhitespaceSplit": {"type": "WhitespaceSplit"},
    "BertPreTokenizer": {"type": "BertPreTokenizer"},
    **{f"Split-regex-{b}": split({"Regex": r"\s+|\d"}, b) for b in BEHAVIORS},
    "Split-regex-inverted": split({"Regex": r"\w+"}, "Isolated", invert=True),
    **{f"Split-string-{b}": split({"String": "e"}, b) for b in BEHAVIORS},
    "Sequence-WhitespaceSplit-Digits": {
        "type": "Sequence",
        "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True}],
    },
    "Sequence-Punctuation-Metaspace": {
        "type": "Sequence",
        "pretokenizers": [{"type": "Punctuation", "behavior": "Isolated"},
                          {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}],
    },
    "Sequence-WhitespaceSplit-Metaspace": {  # T5's shape: a later stage that transforms (fallback plan)
        "type": "Sequence",
        "pretokenizers": [{"type": "WhitespaceSplit"},
                          {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}],
    },
    "Sequence-Bert-CharDelimiterSplit": {  # two stages that keep an uncut piece whole
        "type": "Sequence",
        "pretokenizers": [{"type": "BertPreTokenizer"}, {"type": "CharDelimiterSplit", "delimiter": "x"}],
    },
    "Sequence-UnicodeScripts-Split": {
        "type": "Sequence",
        "pretokenizers": [{"type": "UnicodeScripts"}, split({"String": " "}, "MergedWithNext")],
    },
}
BYTE_LEVEL: dict[str, dict] = {
    "ByteLevel": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "ByteLevel-prefix": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "Sequence-Split-ByteLevel": {
        "type": "Sequence",
        "pretokenizers": [split({"Regex": r" ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+"}, "Isolated"),
                          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}],
    },
    "Sequence-Split-ByteLevel-prefix": {  # a prefix space per chunk: the fallback plan, byte-level chunks
        "type": "Sequence",
        "pretokenizers": [split({"Regex": r"\s+"}, "MergedWithNext"),
                          {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": False}],
    },
    "Sequence-ByteLevel-Digits": {  # a cut after the byte map: the fallback plan over proxy chunks
        "type": "Sequence",
        "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
                          {"type": "Digits", "individual_digits": True}],
    },
    "Sequence-Digits-ByteLevel": {
        "type": "Sequence",
        "pretokenizers": [{"type": "Digits", "individual_digits": True},
                          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}],
    },
}
NORMALIZERS: dict[str, dict | None] = {
    "plain": None,
    "NFKC-lower": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
}
ADDED = [AddedToken("<sep>", 1000, special=True, normalized=False), AddedToken("hello", 1001, normalized=True)]


def toy(pre: dict, normalizer: dict | None, *, byte_level: bool, added: bool) -> Tokenizer:
    model = byte_level_bpe() if byte_level else fallback_bpe()
    return Tokenizer(
        model,
        normalizer=normalizer_from_json(normalizer) if normalizer is not None else None,
        pre_tokenizer=pre_tokenizer_from_json(pre),
        added_tokens=ADDED if added else (),
    )


TOY_TEXTS = [
    "the thing 123 ingested, 4567 e-mail!! <sep>hello world",
    "Ｈｅｌｌｏ  ＷＯＲＬＤ ① ﬁne — «quoted» ",
    "日本語のテキスト、中文。한국어 mixed with English and 😀 emoji 👨\u200d👩\u200d👧",
    "  leading and trailing   \n\n\t tabs\r\n",
    "e" * 40 + " " + "1" * 30,
    "",
]
PIPELINES = [(name, pre, False) for name, pre in PRE_TOKENIZERS.items()]
PIPELINES += [(name, pre, True) for name, pre in BYTE_LEVEL.items()]


@pytest.mark.parametrize("norm", list(NORMALIZERS), ids=list(NORMALIZERS))
@pytest.mark.parametrize("name,pre,byte_level", PIPELINES, ids=[p[0] for p in PIPELINES])
class TestToyPipelines:
    def test_both_paths_agree(self, name: str, pre: dict, byte_level: bool, norm: str) -> None:
        for added in (False, True):
            tok = toy(pre, NORMALIZERS[norm], byte_level=byte_level, added=added)
            for text in TOY_TEXTS + [t for _, t in TRICKY]:
                assert_same(tok, text)

    @settings(max_examples=40, deadline=None)
    @given(st.text(alphabet=st.sampled_from("the 12ing,.!\n\t-eé日本😀ﬁ▁<sep>hello"), max_size=80))
    def test_hypothesis_text(self, name: str, pre: dict, byte_level: bool, norm: str, text: str) -> None:
        tok = toy(pre, NORMALIZERS[norm], byte_level=byte_level, added=True)
        assert_same(tok, text)
