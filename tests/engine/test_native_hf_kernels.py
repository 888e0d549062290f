"""The native byte-fallback BPE and WordPiece kernels against their pure-Python twins and HF
tokenizers, on hypothesis text.

Each case is a small tokenizer.json built here, loaded three times: by tokviz with the native
core, by tokviz with the pure-Python kernels (`python_twin`) and by HF tokenizers. The two
tokviz encodes must agree on ids, tokens, char offsets and byte offsets; HF's encode on ids,
tokens and char offsets (HF has no byte offsets of its own). Without the native core
(``TOKVIZ_PURE_PYTHON=1``) the twin and the production tokenizer are both pure Python, and the
comparison with HF still runs.

* BPE with ``byte_fallback`` (Mistral's and Llama 2's setup): CJK, emoji and other astral
  characters, combining marks, noncharacters, U+FFFD and controls that are not in the vocab
  become ``<0xNN>`` pieces; a vocab missing some byte pieces sends those chars to the unk
  token (fused or not) or drops them (no unk), with HF's drifting offsets; merges that take
  byte pieces as parts; chunks long enough for the native merge to cut them apart.
* WordPiece: words over ``max_input_chars_per_word``, unknown chars (the whole word is unk),
  prefixes ``##``, empty, one char that also occurs in words, several chars, an astral char;
  vocab entries that start with the prefix read at a word's start.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import python_twin, require_module

from tokviz.engine.errors import TokvizFormatError
from tokviz.io.hf_json import load_hf_json

# chars the toy vocabs hold, and chars they do not (byte fallback / unk): CJK, astral emoji and
# symbols, a combining mark alone, noncharacters, U+FFFD, NUL, a private-use char, a BOM
KNOWN = "abcde ▁日本"
UNKNOWN = "語😀🚀𝔘\U0010ffff\uffff\ufffd\x00\ue000\ufeff\u0301é\n\t"


def tokenizer_json(model: dict[str, Any], *, normalizer: Any = None, pre_tokenizer: Any = None) -> str:
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None, "model": model,
    })


@cache
def triple(data: str) -> tuple[Any, Any, Any]:
    """(tokviz, its pure-Python twin, HF) from one tokenizer.json text."""
    tokenizers = require_module("tokenizers")
    ours = load_hf_json(data.encode(), source="toy.json")
    twin = python_twin(lambda: load_hf_json(data.encode(), source="toy.json"))
    return ours, twin, tokenizers.Tokenizer.from_str(data)


def check(data: str, text: str) -> None:
    ours, twin, hf = triple(data)
    a, b, ref = ours.encode(text), twin.encode(text), hf.encode(text)
    assert (a.ids, a.tokens, a.offsets, a.byte_offsets) == (b.ids, b.tokens, b.offsets, b.byte_offsets)
    assert (a.ids, a.tokens, [tuple(o) for o in a.offsets]) == (ref.ids, ref.tokens, [tuple(o) for o in ref.offsets])


# ---------------------------------------------------------------------- BPE with byte fallback
def bpe_model(seed: int, *, pieces: str = "all", byte_merges: bool = False, **opts: Any) -> dict[str, Any]:
    """A BPE model over `KNOWN` with merges grown by joining random pairs of tokens; the byte
    pieces of every byte (``pieces="all"``) or of the bytes below 0xE0 only (``"some"``: chars
    of three or four UTF-8 bytes have no pieces); ``byte_merges``: merges that take byte pieces
    (of 語 and 😀) and chars as parts."""
    rng = random.Random(seed)
    vocab = {c: k for k, c in enumerate(KNOWN)}
    vocab["<unk>"] = len(vocab)
    for b in range(256 if pieces == "all" else 0xE0):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    parts = list(KNOWN)
    if byte_merges:
        parts += [f"<0x{b:02X}>" for c in "語😀" for b in c.encode()]
    merges: list[list[str]] = []
    for _ in range(120):
        left, right = rng.choice(parts), rng.choice(parts)
        if [left, right] in merges or left + right in parts or left not in vocab or right not in vocab:
            continue
        merges.append([left, right])
        vocab.setdefault(left + right, len(vocab))
        parts.append(left + right)
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": True, "ignore_merges": False}
    return {**model, **opts, "vocab": vocab, "merges": merges}


MISTRAL_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
BPE_CASES = {
    # no pre-tokenizer (the whole text is one chunk), Mistral's normalizer (a shifted alignment)
    "mistral-like": tokenizer_json(bpe_model(1, fuse_unk=True), normalizer=MISTRAL_NORMALIZER),
    "chunks": tokenizer_json(bpe_model(2), pre_tokenizer={"type": "WhitespaceSplit"}),
    "byte-merges": tokenizer_json(bpe_model(3, byte_merges=True)),
    "ignore-merges": tokenizer_json(bpe_model(4, byte_merges=True, ignore_merges=True),
                                    pre_tokenizer={"type": "WhitespaceSplit"}),
    "some-pieces-unk": tokenizer_json(bpe_model(5, pieces="some")),
    "some-pieces-fused-unk": tokenizer_json(bpe_model(6, pieces="some", fuse_unk=True)),
    "some-pieces-no-unk": tokenizer_json(bpe_model(7, pieces="some", unk_token=None)),
}

bpe_texts = st.text(alphabet=KNOWN + UNKNOWN, max_size=300)


class TestByteFallbackBpe:
    @pytest.mark.parametrize("case", sorted(BPE_CASES))
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=bpe_texts)
    def test_native_twin_and_hf_agree(self, case: str, text: str) -> None:
        check(BPE_CASES[case], text)

    @pytest.mark.parametrize("case", ["mistral-like", "byte-merges", "some-pieces-fused-unk"])
    def test_long_texts(self, case: str) -> None:
        # thousands of symbols in one chunk: the native merge cuts them into parts
        rng = random.Random(11)
        alphabet = KNOWN * 4 + UNKNOWN
        for n in (200, 2000, 20_000):
            check(BPE_CASES[case], "".join(rng.choice(alphabet) for _ in range(n)))

    def test_hand_checked_pieces(self) -> None:
        # 語 is U+8A9E, UTF-8 E8 AA 9E: three pieces, each spanning the char, each its own byte
        ours, _, _ = triple(BPE_CASES["chunks"])
        enc = ours.encode("a語")
        assert enc.tokens[-3:] == ["<0xE8>", "<0xAA>", "<0x9E>"]
        assert enc.offsets[-3:] == [(1, 2)] * 3
        assert enc.byte_offsets[-3:] == [(1, 2), (2, 3), (3, 4)]


class TestTextEntry:
    """The native entry of a plain chunk (`BPE.text_entry_maker`) against `Tokenizer._plain_entry`,
    slot by slot; a chunk over the cache's length limit has buffers where the twin has tuples."""

    @pytest.mark.parametrize("case", ["mistral-like", "byte-merges", "ignore-merges", "some-pieces-unk"])
    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=bpe_texts)
    def test_same_entry(self, case: str, text: str) -> None:
        ours, _, _ = triple(BPE_CASES[case])
        maker = ours._plain_maker()
        if maker == ours._plain_entry:
            pytest.skip("no native entry maker (pure-Python backend)")
        assert maker(text) == ours._plain_entry(text)

    def test_long_chunk_keeps_buffers(self) -> None:
        from tokviz.engine.tokenizer import CHUNK_CACHE_MAX_CHARS

        ours, _, _ = triple(BPE_CASES["mistral-like"])
        maker = ours._plain_maker()
        if maker == ours._plain_entry:
            pytest.skip("no native entry maker (pure-Python backend)")
        rng = random.Random(5)
        text = "".join(rng.choice(KNOWN + UNKNOWN) for _ in range(CHUNK_CACHE_MAX_CHARS + 1))
        got, want = maker(text), ours._plain_entry(text)
        assert not isinstance(got[0], tuple)  # ids in a buffer, not int objects
        assert [tuple(slot) for slot in got[:-1]] == [tuple(slot) for slot in want[:-1]]
        assert got[-1] is want[-1]  # (the irregular flag)


# ---------------------------------------------------------------------- WordPiece
WORD_CHARS = "abcdé日🙂#@"


def wordpiece_model(seed: int, prefix: str, max_chars: int) -> dict[str, Any]:
    """Random pieces over `WORD_CHARS` minus "d" (never in a piece: a word with it is unk), with
    and without the prefix; the prefix alone and prefixed pieces also as word-start entries."""
    rng = random.Random(seed)
    chars = "abcé日🙂#@"
    pieces = {"".join(rng.choice(chars) for _ in range(rng.randint(1, 4))) for _ in range(60)}
    pieces |= set(chars)
    vocab: dict[str, int] = {"[UNK]": 0}
    for p in sorted(pieces):
        vocab.setdefault(p, len(vocab))
        if rng.random() < 0.7:
            vocab.setdefault(prefix + p, len(vocab))
    if prefix:
        vocab.setdefault(prefix, len(vocab))
    return {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": prefix,
            "max_input_chars_per_word": max_chars, "vocab": vocab}


WORDPIECE_CASES = {
    f"{name}-{limit}": tokenizer_json(wordpiece_model(k, prefix, limit), pre_tokenizer={"type": "WhitespaceSplit"})
    for k, (name, prefix) in enumerate([("hashes", "##"), ("empty", ""), ("hash", "#"), ("long", "@@@"),
                                        ("astral", "🙂")])
    for limit in (6, 100)
}
word_texts = st.lists(st.text(alphabet=WORD_CHARS, min_size=1, max_size=12), max_size=12).map(" ".join)


class TestWordPiece:
    @pytest.mark.parametrize("case", sorted(WORDPIECE_CASES))
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(text=word_texts)
    def test_native_twin_and_hf_agree(self, case: str, text: str) -> None:
        check(WORDPIECE_CASES[case], text)

    def test_long_words(self) -> None:
        # words around the limit (6): 6 chars are matched, 7 are unk without trying; and a word
        # longer than the native kernel's stack buffer (64 chars) under the larger limit
        for case in ("hashes-6", "hashes-100"):
            for word in ("abcabc", "abcabca", "a" * 64, "ab" * 40, "ab" * 50 + "a"):
                check(WORDPIECE_CASES[case], f"{word} a {word}")

    def test_missing_unk_token_is_refused_by_both_kernels(self) -> None:
        model = wordpiece_model(1, "##", 100)
        del model["vocab"]["[UNK]"]
        data = tokenizer_json(model, pre_tokenizer={"type": "WhitespaceSplit"})
        ours, twin, _ = triple(data)
        for tok in (ours, twin):
            assert tok.encode("a").ids == [model["vocab"]["a"]]
            with pytest.raises(TokvizFormatError, match="unk_token"):
                tok.encode("d")
