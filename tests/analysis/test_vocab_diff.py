"""tokviz.analysis.vocab_diff: entries, merges, specials, pipeline; the D08 regression check."""

from __future__ import annotations

import gzip
import json

import pytest
from support import bundle_path, require_module

import tokviz
from tokviz.analysis.vocab_diff import merge_order, regression_check, special_map, vocab_diff


def load(rel: str) -> tokviz.Tokenizer:
    return tokviz.load(bundle_path(rel))


def ranks_of(rel: str) -> dict[bytes, int]:
    """The rank file read independently: ``base64 rank`` per line."""
    import base64

    p = bundle_path(rel)
    data = p.read_bytes()
    data = gzip.decompress(data) if p.suffix == ".gz" else data
    out = {}
    for line in data.splitlines():
        if line.strip():
            tok, rank = line.split()
            out[base64.b64decode(tok)] = int(rank)
    return out


class TestToyExtension:
    """A vocabulary extension in miniature: a WordLevel-free BPE built by hand."""

    @staticmethod
    def bpe(vocab: dict[str, int], merges: list[tuple[str, str]]) -> tokviz.Tokenizer:
        from tokviz.engine.models.bpe import BPE
        from tokviz.engine.pre_tokenizers.byte_level import ByteLevel

        return tokviz.Tokenizer(BPE(vocab, merges), pre_tokenizer=ByteLevel(add_prefix_space=False))

    def test_added_merge_changes_an_old_text(self) -> None:
        base = {c: i for i, c in enumerate("abc")}
        old = self.bpe({**base, "ab": 3}, [("a", "b")])
        new = self.bpe({**base, "ab": 3, "bc": 4}, [("b", "c"), ("a", "b")])  # new merge ranked first
        d = vocab_diff(old, new)
        # entries: a b c ab in both with the same ids; bc added
        assert (d.same, d.added, d.deleted, d.remapped) == (4, 1, 0, 0)
        assert d.added_sample[0].surface == b"bc"
        # merges by produced surface: ab moved from position 0 to 1, bc is new
        assert d.merges["rank_changed"] == 1 and d.merges["added"] == 1
        rep = regression_check(old, new, ["abc", "ab", "ca"])
        # "abc": old a+b first -> [ab, c]; new b+c first -> [a, bc]: differs at token 0
        assert (rep.documents, rep.changed) == (3, 1)
        case = rep.cases[0]
        assert (case.document, case.token_index, case.old_token, case.new_token) == (0, 0, (3, "ab"), (0, "a"))
        assert not rep.passed


class TestSharedBundles:
    def test_r50k_cl100k(self) -> None:
        d = vocab_diff(load("gpt2/r50k_base.tiktoken"), load("cl100k_base/cl100k_base.tiktoken"))
        a, b = ranks_of("gpt2/r50k_base.tiktoken"), ranks_of("cl100k_base/cl100k_base.tiktoken")
        common = a.keys() & b.keys()
        assert (d.old_size, d.new_size) == (len(a), len(b))
        assert d.added == len(b.keys() - a.keys()) and d.deleted == len(a.keys() - b.keys())
        assert d.remapped == sum(1 for s in common if a[s] != b[s])
        assert ("<|fim_prefix|>", 100258) in d.specials_added
        assert ("<|endoftext|>", 50256, 100257) in d.specials_remapped
        assert any("pattern" in c.path for c in d.pipeline)
        json.dumps(d.to_json())

    def test_cl100k_o200k(self) -> None:
        d = vocab_diff(load("cl100k_base/cl100k_base.tiktoken"), load("o200k_base/o200k_base.tiktoken"))
        a, b = ranks_of("cl100k_base/cl100k_base.tiktoken"), ranks_of("o200k_base/o200k_base.tiktoken")
        assert d.added == len(b.keys() - a.keys())
        assert d.same + d.remapped == len(a.keys() & b.keys())
        assert {s for s, _ in d.specials_deleted} == {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"}

    def test_mistral_model_vs_json(self) -> None:
        sp = load("mistral-7b-v0.1/tokenizer.model")
        hf = load("mistral-7b-v0.1/tokenizer.json")
        d = vocab_diff(sp, hf)
        assert d.identical_vocab
        # the score order of the .model and the merge list of the .json produce pieces in one order
        assert d.merges["comparable"] and d.merges["rank_changed"] == 0
        assert special_map(sp) == special_map(hf) == {"<unk>": 0, "<s>": 1, "</s>": 2}
        # the pipelines are spelled differently (SentencePiece normalizer vs Prepend+Replace)
        assert any(c.path.startswith("normalizer") for c in d.pipeline)

    def test_mistral_regression_against_sentencepiece(self) -> None:
        sentencepiece = require_module("sentencepiece")
        ref = sentencepiece.SentencePieceProcessor(model_file=str(bundle_path("mistral-7b-v0.1/tokenizer.model")))
        docs = ["Hello world", "東京は晴れ", "  two  spaces", "naïve café 🙂"]
        rep = regression_check(load("mistral-7b-v0.1/tokenizer.model"), load("mistral-7b-v0.1/tokenizer.json"), docs)
        # both engine sides equal SentencePiece itself, so nothing changes
        for t in docs:
            assert load("mistral-7b-v0.1/tokenizer.json").encode(t, add_special_tokens=False).ids == ref.encode(t)
        assert rep.changed == 0

    def test_merge_order_of_ranks(self) -> None:
        order = merge_order(load("gpt2/r50k_base.tiktoken"))
        ranks = ranks_of("gpt2/r50k_base.tiktoken")
        multi = sorted((r, s) for s, r in ranks.items() if len(s) > 1)
        assert order is not None and [s for _, s in multi[:5]] == sorted(order, key=order.get)[:5]

    def test_wordpiece_has_no_merges(self) -> None:
        d = vocab_diff(load("bert-base-uncased/tokenizer.json"), load("bert-base-uncased/vocab.txt"))
        assert d.merges["comparable"] is False
        assert d.identical_vocab


@pytest.mark.parametrize("rel", ["gpt2/r50k_base.tiktoken", "mistral-7b-v0.1/tokenizer.json"])
def test_diff_with_itself_is_empty(rel: str) -> None:
    t = load(rel)
    d = vocab_diff(t, t)
    assert d.identical_vocab and not d.pipeline and d.merges["rank_changed"] == 0
    assert regression_check(t, t, ["x y", "東京"]).passed
