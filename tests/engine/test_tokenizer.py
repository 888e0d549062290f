"""The pipeline (`Tokenizer`): stages, offsets and exact byte spans, traces, decode, vocabulary
numbers, caches, and the production path against the reference path (``trace=True``) on the
pipeline shapes with their own offset rules (byte-level, cut-only, SentencePiece whole text).
The harness over every bundle and pre-tokenizer type is ``tests/engine/test_paths.py``."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings, strategies as st
from support import bundle_bytes

from tokviz.engine.added_tokens import AddedToken
from tokviz.engine.byte_alphabet import BYTE_TO_CHAR
from tokviz.engine.encoding import BpeTrace, PreToken, token_spans_tile
from tokviz.engine.models.bpe import BPE
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.tokenizer import Tokenizer, TokenizerConfig
from tokviz.io.hf_json import load_hf_json


def byte_level_tokenizer(*, specials: bool = True, normalizer=None) -> Tokenizer:  # noqa: ANN001
    """A small byte-level BPE with a Split + ByteLevel pre-tokenizer (Qwen's shape)."""
    vocab = {c: i for i, c in enumerate(BYTE_TO_CHAR)}
    merges = [("Ġ", "w"), ("Ġw", "o"), ("h", "e"), ("he", "l"), ("hel", "l"), ("hell", "o"), ("Ã", "©"), ("æ", "Ĺ")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    pre = pre_tokenizer_from_json({
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r" ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ],
    })
    from tokviz.engine.decoders.byte_level import ByteLevel

    added = [AddedToken("<|end|>", 1000, special=True, normalized=False)] if specials else []
    return Tokenizer(BPE(vocab, merges), pre_tokenizer=pre, decoder=ByteLevel(), added_tokens=added, normalizer=normalizer, name="toy")


class TestEncode:
    def test_ids_tokens_offsets(self) -> None:
        tok = byte_level_tokenizer()
        enc = tok.encode("hello wo")
        assert enc.tokens == ["hello", "Ġwo"]
        assert enc.offsets == [(0, 5), (5, 8)]
        assert enc.byte_offsets == [(0, 5), (5, 8)]
        assert enc.word_ids == [0, 1]

    def test_partial_character_byte_spans(self) -> None:
        # "日" is 3 bytes E6 97 A5: merged "æĹ" holds two of them, "¥" the third
        tok = byte_level_tokenizer()
        enc = tok.encode("a日")
        assert enc.tokens == ["a", "æĹ", "¥"]
        assert enc.offsets == [(0, 1), (1, 2), (1, 2)]  # HF: each covers the whole character
        assert enc.byte_offsets == [(0, 1), (1, 3), (3, 4)]

    def test_added_token_segment_and_stages(self) -> None:
        tok = byte_level_tokenizer()
        enc = tok.encode("hello<|end|> wo")
        assert enc.ids[1] == 1000 and enc.special_tokens_mask == [1 if i == 1 else 0 for i in range(len(enc))]
        st = enc.stages
        assert [(s.start, s.end, s.added_id) for s in st.segments] == [(0, 5, None), (5, 12, 1000), (12, 15, None)]
        assert list(st.pre_tokens) == [PreToken("hello", 0, 5), PreToken("Ġwo", 12, 15)]
        assert st.normalized.text == "hello<|end|> wo"
        assert enc.word_ids == [0, 1, 2]

    def test_empty(self) -> None:
        enc = byte_level_tokenizer().encode("")
        assert enc.ids == [] and list(enc.stages.pre_tokens) == []

    def test_lone_surrogate_is_a_clear_error(self) -> None:
        with pytest.raises(ValueError, match="lone surrogate U\\+D800"):
            byte_level_tokenizer().encode("ab\ud800")

    def test_trace_attaches_merges(self) -> None:
        enc = byte_level_tokenizer().encode("hello", trace=True)
        assert enc.traces is not None and isinstance(enc.traces[0], BpeTrace)
        assert [m.merged for m in enc.traces[0].merges] == ["he", "hel", "hell", "hello"]
        assert byte_level_tokenizer().encode("hello").traces is None

    def test_cache_gives_same_result(self) -> None:
        tok = byte_level_tokenizer()
        text = "hello wo hello wo 日日 é"
        first = tok.encode(text)
        second = tok.encode(text)
        assert (first.ids, first.offsets, first.byte_offsets) == (second.ids, second.offsets, second.byte_offsets)


TEXT = st.lists(st.sampled_from(list("hel owé日😀\n\t") + ["<|end|>", "  "]), max_size=30).map("".join)

NORMALIZED_TEXT = st.lists(st.sampled_from(list("hel ow日😀\n") + ["ﬁ", "ＡＢ", "①", "e\u0301", "é", "<|end|>", "\u00a0"]), max_size=30).map("".join)


def same_as_reference(tok: Tokenizer, text: str) -> None:
    """The production path (plain encode) equals the reference path (trace=True) on ``text``."""
    enc = tok.encode(text)
    ref = tok.encode(text, trace=True)
    assert (enc.ids, enc.tokens, enc.offsets) == (ref.ids, ref.tokens, ref.offsets), repr(text)
    assert (enc.byte_offsets, enc.word_ids) == (ref.byte_offsets, ref.word_ids), repr(text)
    assert list(enc.stages.pre_tokens) == list(ref.stages.pre_tokens), repr(text)


class TestByteLevelAgreesWithReference:
    """A byte-level pipeline (the byte map of the chunk plan) against the reference path."""

    @settings(max_examples=80, deadline=None)
    @given(TEXT)
    def test_same_encoding(self, text: str) -> None:
        tok = byte_level_tokenizer()
        fast = tok.encode(text)
        general = tok.encode(text, trace=True)
        assert fast.ids == general.ids
        assert fast.tokens == general.tokens
        assert fast.offsets == general.offsets
        assert fast.byte_offsets == general.byte_offsets
        assert fast.word_ids == general.word_ids
        assert list(fast.stages.pre_tokens) == list(general.stages.pre_tokens)

    @settings(max_examples=80, deadline=None)
    @given(NORMALIZED_TEXT)
    def test_same_encoding_with_normalization(self, text: str) -> None:
        from tokviz.engine.normalizers import normalizer_from_json

        tok = byte_level_tokenizer(normalizer=normalizer_from_json({"type": "NFKC"}))
        fast = tok.encode(text)
        general = tok.encode(text, trace=True)
        assert (fast.ids, fast.tokens, fast.offsets) == (general.ids, general.tokens, general.offsets)
        assert (fast.byte_offsets, fast.word_ids) == (general.byte_offsets, general.word_ids)
        assert list(fast.stages.pre_tokens) == list(general.stages.pre_tokens)

    @settings(max_examples=80, deadline=None)
    @given(TEXT)
    def test_byte_spans_tile(self, text: str) -> None:
        enc = byte_level_tokenizer(specials=False).encode(text)
        assert token_spans_tile(enc.byte_offsets, len(text.encode("utf-8")))
        assert byte_level_tokenizer().decode(enc.ids) == text


SPAN_TEXT = st.lists(
    st.sampled_from(list("Hel ow,!日本😀\n\t\x00é") + ["ﬁ", "ＡＢ", "e\u0301", "Ⅻ", "<|end|>", "  ", "\u3000", "ｶﾞ"]),
    max_size=30,
).map("".join)


@functools.cache
def _bert() -> Tokenizer:
    return load_hf_json(bundle_bytes("bert-base-uncased/tokenizer.json"), source="bert")


@functools.cache
def _fallback_bpe(pre: str) -> Tokenizer:
    """A byte-fallback BPE (unknown chars become <0xNN> pieces) behind a span pre-tokenizer."""
    from tokviz.engine.normalizers import normalizer_from_json

    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": b + 1 for b in range(256)}}
    for t in ["H", "e", "l", "o", "w", ",", "!", "日", "He", "ll", "llo", "Hello"]:
        vocab[t] = len(vocab)
    merges = [("H", "e"), ("l", "l"), ("ll", "o"), ("He", "llo")]
    model = BPE(vocab, merges, byte_fallback=True, unk_token="<unk>")
    return Tokenizer(
        model,
        normalizer=normalizer_from_json({"type": "NFKC"}),
        pre_tokenizer=pre_tokenizer_from_json({"type": pre}),
        added_tokens=[AddedToken("<|end|>", 10_000, special=True)],
    )


class TestCutOnlyAgreesWithReference:
    """Pre-tokenizers that only cut (`PreTokenizer.chunk_spans`), byte-fallback pieces included."""

    @settings(max_examples=100, deadline=None)
    @given(SPAN_TEXT)
    def test_bert(self, text: str) -> None:
        same_as_reference(_bert(), text)

    @pytest.mark.parametrize("pre", ["Whitespace", "WhitespaceSplit", "BertPreTokenizer"])
    @settings(max_examples=60, deadline=None)
    @given(text=SPAN_TEXT)
    def test_byte_fallback_pieces(self, pre: str, text: str) -> None:
        same_as_reference(_fallback_bpe(pre), text)

    @pytest.mark.parametrize("pre", ["bert", "WhitespaceSplit"])
    def test_long_text_by_blocks(self, pre: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """Long texts go through the column passes block by block (chunk numbers carry over)."""
        from tokviz.engine import tokenizer as tokenizer_module

        monkeypatch.setattr(tokenizer_module, "_BLOCK", 3)
        tok = _bert() if pre == "bert" else _fallback_bpe(pre)
        same_as_reference(tok, "Hello, wörld! 日本 é\tHello ﬁ 😀 Ｈｅ, " * 7)
        same_as_reference(byte_level_tokenizer(), "hello wo日😀\n\té " * 9)


class TestCaches:
    def test_repeated_text_is_not_tokenized_again(self, monkeypatch: pytest.MonkeyPatch) -> None:
        tok = _fallback_bpe("WhitespaceSplit")
        tok.clear_caches()
        text = "Hello 日本 é, Hello\tworld " * 50
        first = tok.encode(text)
        seen: list[str] = []
        real = tok._plain_maker  # the model's entry maker (native, or `_plain_entry` over the model)

        def counting():  # noqa: ANN202
            make = real()

            def counted(chunk: str):  # noqa: ANN202
                seen.append(chunk)
                return make(chunk)

            return counted

        monkeypatch.setattr(tok, "_plain_maker", counting)
        again = tok.encode(text)
        assert seen == []  # every chunk came from the chunk cache
        assert (first.ids, first.offsets, first.byte_offsets) == (again.ids, again.offsets, again.byte_offsets)
        tok.clear_caches()  # the pipeline's and the model's caches
        assert tok.encode(text).ids == first.ids
        assert len(set(seen)) == len(set(text.split()))  # each distinct chunk tokenized once

    def test_encoding_carries_its_offset_map(self) -> None:
        enc = byte_level_tokenizer().encode("a日😀")
        assert enc.offset_map.text == "a日😀"
        assert enc.offset_map.to_utf8(2) == 4  # 'a' is 1 byte, '日' 3 bytes


class TestBundles:
    def test_qwen3_byte_spans_tile_with_normalization(self) -> None:
        tok = load_hf_json(bundle_bytes("qwen3/tokenizer.json"), source="qwen3/tokenizer.json")
        text = "e\u0301 and é, 日本語 😀 <|im_start|>x"  # NFC changes the first segment
        enc = tok.encode(text)
        # every token's bytes lie inside the bytes of its character span
        for (s, e), (bs, be) in zip(enc.offsets, enc.byte_offsets):
            assert len(text[:s].encode()) <= bs <= be <= len(text[:e].encode())
        # the chunks NFC left alone still tile exactly (partial characters included)
        tail = "日本語 😀 <|im_start|>x"
        enc = tok.encode(tail)
        assert token_spans_tile(enc.byte_offsets, len(tail.encode("utf-8")))

    def test_mistral_byte_fallback_spans(self) -> None:
        tok = load_hf_json(bundle_bytes("mistral-7b-v0.1/tokenizer.json"), source="mistral-7b-v0.1/tokenizer.json")
        enc = tok.encode("龘", add_special_tokens=False)
        assert enc.tokens[-3:] == ["<0xE9>", "<0xBE>", "<0x98>"]
        assert enc.byte_offsets[-3:] == [(0, 1), (1, 2), (2, 3)]
        assert enc.offsets[-3:] == [(0, 1)] * 3


class TestSentencePieceAgreesWithReference:
    """SentencePiece .model pipelines (no pre-tokenizer: each piece is its one chunk, a
    `SentencePieceText` with its own rule for empty ranges) against the reference path."""

    ALPHABET = "ab xyz\u3000\t\n  é日本龘😀\u0301ﬁ①０<0x41>▁|"

    @staticmethod
    @functools.cache
    def _sp(rel: str, cut: bool = False):  # noqa: ANN205
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes(rel), source=rel)
        if cut:  # an added token "|": pieces that do not start at the text's start
            tok = Tokenizer(tok.model, normalizer=tok.normalizer, added_tokens=[AddedToken("|", 90_000)])
        return tok

    def test_byte_fallback_pieces_by_hand(self) -> None:
        # mistral: 龘 (E9 BE 98) has no piece: three byte pieces, the first two with an empty
        # span at the character's start, each one byte of it
        enc = self._sp("mistral-7b-v0.1/tokenizer.model").encode("a 龘é")
        assert enc.tokens == ["▁a", "▁", "<0xE9>", "<0xBE>", "<0x98>", "é"]
        assert enc.offsets == [(0, 1), (1, 2), (2, 2), (2, 2), (2, 3), (3, 4)]
        assert enc.byte_offsets == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 7)]

    @pytest.mark.parametrize("rel", ["mistral-7b-v0.1/tokenizer.model", "albert-30k-clean/30k-clean.model"])
    @pytest.mark.parametrize("cut", [False, True], ids=["whole", "cut"])
    @settings(max_examples=60, deadline=None)
    @given(text=st.text(alphabet=ALPHABET, max_size=40))
    def test_same_as_reference(self, rel: str, cut: bool, text: str) -> None:
        same_as_reference(self._sp(rel, cut), text)

    @pytest.mark.parametrize("rel", ["mistral-7b-v0.1/tokenizer.model", "albert-30k-clean/30k-clean.model"])
    def test_short_lines_twice(self, rel: str) -> None:
        tok = self._sp(rel)
        for text in ["", " ", "\n", "   ", "Hello  world\n", "a 龘é", "吾輩は猫である。", "x\u3000y  ", "<s>[CLS]"]:
            same_as_reference(tok, text)
            same_as_reference(tok, text)  # now from the chunk cache

    def test_allowed_special_still_checked(self) -> None:
        with pytest.raises(ValueError, match="not special tokens"):
            self._sp("sentencepiece-test/test_model.model").encode("x", allowed_special={"<nope>"})


class TestVocabularyAndInfo:
    def test_numbers(self) -> None:
        tok = byte_level_tokenizer()
        info = tok.info()
        assert info["normal_entries"] == 256 + 8
        assert info["added_entries"] == 1 and info["special_entries"] == 1
        assert info["total_entries"] == tok.vocab_size == 265
        assert info["id_space"] == 1001  # ids 264..999 are a hole
        assert info["embedding_rows"] is None
        assert info["pipeline"]["pre_tokenizer"] == "Sequence[Split, ByteLevel]"
        assert info["model"] == "BPE"

    def test_embedding_rows_from_config(self) -> None:
        tok = byte_level_tokenizer()
        tok.config = TokenizerConfig(embedding_rows=2048)
        assert tok.info()["embedding_rows"] == 2048

    def test_token_id_lookup(self) -> None:
        tok = byte_level_tokenizer()
        assert tok.token_to_id("<|end|>") == 1000
        assert tok.id_to_token(1000) == "<|end|>"
        assert tok.token_to_id("hello") == 261
        assert tok.get_vocab()["<|end|>"] == 1000

    def test_decode(self) -> None:
        tok = byte_level_tokenizer()
        ids = tok.encode("hello<|end|> wo").ids
        assert tok.decode(ids) == "hello<|end|> wo"
        assert tok.decode(ids, skip_special_tokens=True) == "hello wo"
        assert tok.decode([10**6]) == ""  # unknown ids are dropped, as HF does

    def test_no_decoder_joins_with_spaces(self) -> None:
        tok = Tokenizer(BPE({"a": 0, "b": 1}, []))
        assert tok.decode([0, 1, 0]) == "a b a"


class TestDropout:
    def test_no_chunk_cache_while_the_model_samples(self) -> None:
        base = byte_level_tokenizer(specials=False)
        tok = base.with_model(base.model.replace(dropout=1.0))  # every merge dropped: bytes only
        assert tok.encode("hello hello").tokens == list("hello") + ["Ġ"] + list("hello")
        assert base.encode("hello hello").tokens == ["hello", "Ġ", "hello"]

    def test_each_occurrence_is_sampled(self) -> None:
        """With dropout, equal chunks of one text are sampled one by one (as HF does), not once."""
        base = byte_level_tokenizer(specials=False)
        tok = base.with_model(base.model.replace(dropout=0.5, seed=0))
        enc = tok.encode(" hello" * 40)
        words: dict[int, list[str]] = {}
        for w, t in zip(enc.word_ids, enc.tokens):
            words.setdefault(w, []).append(t)
        # 40 chunks " hello": 5 merges each kept with p = 1/2, so equal samples for all 40 are
        # (next to) impossible; the seed makes the run reproducible
        assert len({tuple(v) for v in words.values()}) > 1


class TestEncodeIds:
    """`Tokenizer.encode_ids`: the ids of `encode` without post-processing (the parity suites
    check it against tiktoken, HF tokenizers and sentencepiece on every text they compare)."""

    @settings(max_examples=60, deadline=None)
    @given(text=SPAN_TEXT)
    def test_the_ids_of_encode(self, text: str) -> None:
        for tok in (_bert(), _fallback_bpe("Whitespace"), byte_level_tokenizer(specials=True)):
            assert tok.encode_ids(text) == tok.encode(text, add_special_tokens=False).ids
            assert tok.encode_ids(text, allowed_special="all") == tok.encode(
                text, add_special_tokens=False, allowed_special="all"
            ).ids

    def test_no_specials_added_no_truncation_no_padding(self) -> None:
        tok = load_hf_json(bundle_bytes("bert-base-uncased/tokenizer.json"), source="bert")
        text = "hello world again and again"
        plain = tok.encode(text, add_special_tokens=False).ids
        assert len(plain) == 5  # one token per word: the five words are in BERT's vocabulary
        assert tok.encode(text).ids == [tok.token_to_id("[CLS]"), *plain, tok.token_to_id("[SEP]")]
        tok.enable_truncation(3)
        tok.enable_padding(length=12)
        assert len(tok.encode(text).ids) == 12  # truncated to 3, then padded to 12
        assert tok.encode_ids(text) == plain

    def test_the_sampled_model_samples(self) -> None:
        base = byte_level_tokenizer(specials=False)
        tok = base.with_model(base.model.replace(dropout=1.0))  # every merge dropped: bytes only
        assert len(tok.encode_ids("hello hello")) == 11 and len(base.encode_ids("hello hello")) == 3

    def test_not_text(self) -> None:
        with pytest.raises(TypeError, match="encode_ids"):
            _bert().encode_ids(b"bytes")  # type: ignore[arg-type]
