"""BPE variants: `BPE.replace`, `BPE.first_merges`, `Tokenizer.with_model` and `RankCutoff`.

The oracles for "the first k merges" are the reference libraries run on their own definition of
it: tiktoken with a rank table holding the single bytes plus the k lowest-ranked longer tokens,
and HF tokenizers with the tokenizer.json's merges list cut after k lines.
"""

from __future__ import annotations

import json

import pytest
from support import bundle_bytes, bundle_path, require_module, tiktoken_encoding

import tokviz
from tokviz.engine.cutoff import RankCutoff, cutoff_supported
from tokviz.engine.models.bpe import BPE
from tokviz.engine.tokenizer import Tokenizer

TEXT = (
    "Tokenization of unbelievable words, 1234567 and 3.14!\n"
    "def f(x):\n\treturn x  # note\n"
    "日本語の文章。 Emoji 🙂👍🏽 and\u00a0NBSP, Ünïcödé.\n"
)


def _ids(tok: Tokenizer, text: str = TEXT) -> list[int]:
    return tok.encode(text, add_special_tokens=False).ids


class TestReplace:
    def test_options_change_and_the_original_stays(self) -> None:
        bpe = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], unk_token="a")
        no_merges = bpe.replace(dropout=1.0)  # every merge skipped
        assert [t for t, _, _ in no_merges.tokenize("ab")] == [0, 1]
        assert [t for t, _, _ in bpe.tokenize("ab")] == [2]
        assert bpe.dropout is None and no_merges.dropout == 1.0
        assert no_merges.unk_token == "a" and no_merges.merges == bpe.merges and no_merges.get_vocab() == bpe.get_vocab()
        assert not no_merges.deterministic and bpe.deterministic

    def test_vocab_and_merges_can_be_replaced(self) -> None:
        bpe = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, [("a", "b"), ("b", "c")])
        swapped = bpe.replace(merges=[("b", "c"), ("a", "b")])
        assert [swapped.id_to_token(i) for i, _, _ in swapped.tokenize("abc")] == ["a", "bc"]
        assert [bpe.id_to_token(i) for i, _, _ in bpe.tokenize("abc")] == ["ab", "c"]

    def test_rank_mode(self) -> None:
        bpe = BPE.from_ranks({b"a": 0, b"b": 1, b"ab": 2})
        d = bpe.replace(dropout=1.0)
        # with dropout the "a chunk that is a token stays whole" shortcut is skipped, as HF's BPE
        # does (it sits in its cached path only): every merge is dropped
        assert d.rank_mode and d.dropout == 1.0 and [t for t, _, _ in d.tokenize("ab")] == [0, 1]
        assert [t for t, _, _ in bpe.tokenize("ab")] == [2]
        with pytest.raises(ValueError, match="rank-mode BPE .* no merges, unk_token"):
            bpe.replace(merges=[("a", "b")], unk_token="a")

    def test_unknown_option(self) -> None:
        with pytest.raises(TypeError, match="unknown option"):
            BPE({"a": 0}).replace(droupout=0.1)

    def test_dropout_samples_through_the_pipeline(self) -> None:
        gpt2 = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        tok = gpt2.with_model(gpt2.model.replace(dropout=0.3, seed=1))
        words = "unbelievable internationalization " * 4
        samples = {tuple(_ids(tok, words)) for _ in range(20)}
        assert len(samples) > 1  # each encode samples (no cache keeps the first answer)
        assert all("".join(tok.encode(words).tokens) == "".join(gpt2.encode(words).tokens) for _ in range(3))


class TestWithModel:
    def test_same_pipeline_other_model(self) -> None:
        qwen = tokviz.load(bundle_path("qwen3/tokenizer.json"))
        other = qwen.with_model(qwen.model.replace(), name="copy")
        assert other.name == "copy" and other.model is not qwen.model
        for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder", "added_tokens", "special_policy"):
            assert getattr(other, part) is getattr(qwen, part), part
        text = TEXT + "<|im_start|>user<|im_end|>"
        assert other.encode(text).ids == qwen.encode(text).ids


class TestFirstMerges:
    @pytest.mark.parametrize("k", [0, 1, 300, 5000, 49_999])
    def test_rank_mode_equals_tiktoken_with_the_k_lowest_ranks(self, k: int) -> None:
        ref = tiktoken_encoding("gpt2/r50k_base.tiktoken")
        tiktoken = require_module("tiktoken")
        ranks = ref._mergeable_ranks
        longer = sorted((r, b) for b, r in ranks.items() if len(b) > 1)[:k]
        cut = tiktoken.Encoding(
            "cut", pat_str=ref._pat_str, mergeable_ranks={**{b: r for b, r in ranks.items() if len(b) == 1},
                                                           **{b: r for r, b in longer}}, special_tokens={}
        )
        gpt2 = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        ours = gpt2.with_model(gpt2.model.first_merges(k))
        assert _ids(ours) == cut.encode_ordinary(TEXT)
        filtered = gpt2.with_model(gpt2.model.first_merges(k, text=[c.text for c in gpt2.encode(TEXT).stages.pre_tokens]))
        assert _ids(filtered) == cut.encode_ordinary(TEXT)

    @pytest.mark.parametrize("k", [0, 1, 64, 1000, 20_000])
    def test_merges_mode_equals_hf_with_the_first_k_lines(self, k: int) -> None:
        tokenizers = require_module("tokenizers")
        obj = json.loads(bundle_bytes("mistral-7b-v0.1/tokenizer.json"))  # byte fallback, a long merges list
        obj["model"]["merges"] = obj["model"]["merges"][:k]
        ref = tokenizers.Tokenizer.from_str(json.dumps(obj))
        mistral = tokviz.load(bundle_path("mistral-7b-v0.1/tokenizer.json"))
        ours = mistral.with_model(mistral.model.first_merges(k))
        assert _ids(ours) == ref.encode(TEXT, add_special_tokens=False).ids

    def test_ignore_merges_cannot_bypass_the_cut(self) -> None:
        # "abc" is a token that only merge 2 creates: with one merge it must not come out whole
        m = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")], ignore_merges=True)
        assert [t for t, _, _ in m.tokenize("abc")] == [4]
        assert [t for t, _, _ in m.first_merges(1).tokenize("abc")] == [3, 2]

    def test_out_of_range(self) -> None:
        with pytest.raises(ValueError, match="out of range 0..1"):
            BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).first_merges(2)

    def test_labels(self) -> None:
        m = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
        assert m.merge_count == 1 and m.describe_merge(0) == "'a' + 'b' -> 'ab'"
        r = BPE.from_ranks({b"a": 0, b"b": 1, b"ab": 2})
        assert r.merge_count == 1 and r.describe_merge(0) == "token 'ab' (rank 2)"


class TestRankCutoff:
    @pytest.mark.parametrize(
        "rel", ["gpt2/r50k_base.tiktoken", "mistral-7b-v0.1/tokenizer.json"], ids=["rank-mode", "merges-byte-fallback"]
    )
    def test_text_filtered_cut_equals_the_whole_cut(self, rel: str) -> None:
        # the slider builds a model with only the merges that can occur in the text; it must
        # tokenize that text exactly like the whole vocabulary cut at k
        rc = RankCutoff(tokviz.load(bundle_path(rel)))
        for k in (0, 1, 64, 1000, 20000, rc.n - 1):
            filtered = rc.tokenizer(k, text=TEXT)
            assert filtered.model.vocab_size < rc.model.vocab_size
            assert _ids(filtered) == _ids(rc.tokenizer(k)), k

    def test_all_merges_is_the_tokenizer_itself(self) -> None:
        gpt2 = tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))
        rc = RankCutoff(gpt2)
        assert rc.n == 50_000 and rc.tokenizer(rc.n) is gpt2  # r50k: 256 bytes + 50,000 longer tokens
        assert rc.merge_label(0) == "token 'Ġt' (rank 256)"

    def test_needs_a_bpe(self) -> None:
        bert = tokviz.load(bundle_path("bert-base-uncased/tokenizer.json"))
        assert not cutoff_supported(bert)
        with pytest.raises(ValueError, match="needs a BPE model"):
            RankCutoff(bert)
