"""Lazy tables (`tokviz.engine.caching.is_built`): a load followed by an encode builds only what
that encode reads, and a table asked for later is built right. Expected values come from the
reference libraries run here (HF tokenizers, sentencepiece, tiktoken) or from the file itself."""

from __future__ import annotations

import json

from support import bundle_bytes, bundle_path, corpus_text, require_module

from tokviz.engine import kernels
from tokviz.engine.caching import is_built
from tokviz.io.hf_json import load_hf_json
from tokviz.io.sentencepiece import load_sentencepiece_model
from tokviz.io.tiktoken_ranks import load_tiktoken_ranks, preset_for

TEXT = "Hello world, 世界! Pneumonoultramicroscopic xyzzyq"
NATIVE = kernels.native is not None


def _hf(rel: str):  # noqa: ANN202
    tokenizers = require_module("tokenizers")
    return tokenizers.Tokenizer.from_str(bundle_bytes(rel).decode("utf-8"))


def _sp(rel: str):  # noqa: ANN202
    spm = require_module("sentencepiece")
    return spm.SentencePieceProcessor(model_proto=bundle_bytes(rel))


class TestBpeTables:
    REL = "mistral-7b-v0.1/tokenizer.json"

    def test_an_encode_builds_only_the_merge_loop_table(self) -> None:
        tok = load_hf_json(bundle_bytes(self.REL), source=self.REL)
        assert tok.encode(TEXT).ids == _hf(self.REL).encode(TEXT).ids
        model = tok.model
        assert not is_built(model, "_vocab_r")
        if NATIVE:
            assert is_built(model, "_native_table")
            assert not any(is_built(model, name) for name in ("_ranks", "_merged", "_pairs", "_fast"))
        else:  # (the tuned pure-Python kernel reads the pair tables)
            assert is_built(model, "_fast") and model._native_table is None

    def test_tables_asked_for_are_right(self) -> None:
        tok = load_hf_json(bundle_bytes(self.REL), source=self.REL)
        ref = _hf(self.REL)
        model = tok.model
        for i in range(0, ref.get_vocab_size(with_added_tokens=False), 499):
            assert model.id_to_token(i) == ref.id_to_token(i)
        assert is_built(model, "_vocab_r")
        # the pair tables from the file's own merges list (a merge's rank is its line)
        merges = json.loads(bundle_bytes(self.REL))["model"]["merges"]
        pairs = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]
        assert model._ranks == {p: k for k, p in enumerate(pairs)}
        assert model._merged == {p: p[0] + p[1] for p in pairs}
        assert model.merges == pairs
        # the Python kernel over the lazily built tables (the traced reference path)
        assert tok.encode(TEXT, trace=True).ids == ref.encode(TEXT).ids

    def test_merge_parts_are_the_vocab_strings(self) -> None:
        # the file's own copies of merge parts and results are not kept (one string per token)
        model = load_hf_json(bundle_bytes(self.REL), source=self.REL).model
        own = {t: t for t in model._vocab}
        for column in (model._lefts, model._rights, model._results):
            assert all(s is own[s] for s in column)

    def test_rank_mode_keeps_no_reverse_map(self) -> None:
        tiktoken = require_module("tiktoken")
        from tiktoken.load import load_tiktoken_bpe

        rel = "cl100k_base/cl100k_base.tiktoken"
        tok = load_tiktoken_ranks(bundle_bytes(rel), source=rel)
        preset = preset_for(bundle_bytes(rel))
        assert preset is not None
        ref = tiktoken.Encoding(preset.name, pat_str=preset.pattern, mergeable_ranks=load_tiktoken_bpe(str(bundle_path(rel))),
                                special_tokens=dict(preset.special_tokens))
        assert tok.encode(TEXT).ids == ref.encode(TEXT)
        assert not is_built(tok.model, "_vocab_r")
        ids = ref.encode(TEXT)
        assert [tok.model.id_to_token(i) for i in ids] == tok.encode(TEXT).tokens


class TestUnigramTables:
    REL = "albert-30k-clean/30k-clean.model"
    PYTHON_TABLES = ("_trie", "_kids", "_node_score", "_jumps", "_score_of", "_sentinel")

    def test_an_encode_builds_only_the_native_trie(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        assert tok.encode(TEXT).ids == _sp(self.REL).encode(TEXT)
        m = tok.model
        if NATIVE:
            assert is_built(m, "_native_trie")
            assert not any(is_built(m, name) for name in self.PYTHON_TABLES)
        else:
            assert is_built(m, "_kids") and m._native_trie is None

    def test_the_python_trie_asked_for_segments_as_sentencepiece(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        m = tok.model
        norm = tok.normalizer.normalize_str(TEXT)
        ids = [i for i, _, _ in m.spm.finish(norm, m.viterbi(norm))]  # the Python DP over `_kids`
        assert ids == _sp(self.REL).encode(TEXT)
        assert is_built(m, "_kids") and is_built(m, "_jumps")

    def test_the_native_trie_finds_the_python_tries_path(self) -> None:
        # the trie made from the pieces in C and the Python trie give one best path
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        m = tok.model
        norm = tok.normalizer.normalize_str(corpus_text("botchan.txt")[:20_000] + TEXT)
        python = m.spm.finish(norm, m.viterbi(norm))
        if NATIVE:  # (albert has no byte fallback: the native call merges unknown runs itself)
            assert list(zip(*m._native_path(norm))) == python
        assert [i for i, _, _ in python] == _sp(self.REL).encode(corpus_text("botchan.txt")[:20_000] + TEXT)


class TestSentencePieceBpeTables:
    REL = "mistral-7b-v0.1/tokenizer.model"

    def test_an_encode_builds_only_the_native_table(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        assert tok.encode(TEXT).ids == _sp(self.REL).encode(TEXT)
        m = tok.model
        if NATIVE:
            assert m._native_table() is not None
            assert not any(is_built(m, name) for name in ("_mergeable", "_plain_ids", "_fast"))
        else:
            assert is_built(m, "_fast") and is_built(m, "_mergeable")

    def test_python_tables_asked_for_merge_as_sentencepiece(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        sp = _sp(self.REL)
        assert tok.encode(TEXT, trace=True).ids == sp.encode(TEXT)  # the Python merge loop (`_encode`)
        m = tok.model
        assert len(m._mergeable) == sum(1 for i in range(sp.get_piece_size())
                                        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i)))
        assert all(m._mergeable[sp.id_to_piece(i)][:2] == (sp.get_score(i), i) for i in range(3, sp.get_piece_size(), 211)
                   if not sp.is_byte(i))


class TestSentencePieceNormalizerTables:
    REL = "albert-30k-clean/30k-clean.model"

    def test_native_normalize_builds_no_python_tables(self) -> None:
        tok = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL)
        tok.encode(TEXT)
        norm = tok.normalizer
        if NATIVE:
            assert not is_built(norm, "_scan_sets")
            assert not is_built(norm.charsmap, "_decoded")
        else:
            assert is_built(norm.charsmap, "_decoded")

    def test_python_tables_asked_for_normalize_as_sentencepiece(self) -> None:
        norm = load_sentencepiece_model(bundle_bytes(self.REL), source=self.REL).normalizer
        sp = _sp(self.REL)
        for text in (TEXT, "  ﬁ Ｈｅｌｌｏ\u3000world  e\u0301 "):
            assert norm.normalize_with_map_py(text)[0] == sp.normalize(text)
        assert is_built(norm, "_scan_sets") and is_built(norm.charsmap, "_decoded")
