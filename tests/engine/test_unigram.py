"""Unigram (HF and SentencePiece flavours), SentencePiece BPE, and the lattice data API."""

from __future__ import annotations

import itertools
import math
import os
import random

import pytest
from hypothesis import given, settings, strategies as st
from support import bundle_bytes, corpus_text, require_module

from tokviz.engine import kernels
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.lattice import Lattice
from tokviz.engine.models._py_fast import SpmBpeChunks, UnigramChunks
from tokviz.engine.models._spm import PieceType
from tokviz.engine.models.sentencepiece_bpe import SentencePieceBPE
from tokviz.engine.models.unigram import Unigram

N, U, C, UD, UNUSED, B = (PieceType.NORMAL, PieceType.UNKNOWN, PieceType.CONTROL, PieceType.USER_DEFINED,
                          PieceType.UNUSED, PieceType.BYTE)


def _chunked(fast: UnigramChunks, text: str) -> list[tuple[int, int, int]]:
    """The tuned kernel's path as ``(id, start, end)`` nodes (compared with `Unigram._viterbi`)."""
    return list(zip(*fast.columns(text)))


def _python_text(n: int) -> str:
    """``n`` characters of this interpreter's own Python source (code-shaped text)."""
    import inspect

    return (inspect.getsource(inspect) * 4)[:n]


def toks(model, text: str) -> list[str]:  # noqa: ANN001
    return [model.id_to_token(i) for i, _, _ in model.tokenize(text)]


def all_paths(lat: Lattice, pos: int = 0) -> list[list[int]]:
    """Every path from ``pos`` to the end, by brute force."""
    if pos == len(lat.text):
        return [[]]
    return [[k, *rest] for k in lat.begin[pos] for rest in all_paths(lat, lat.nodes[k].end)]


SEED_PROBS = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}


def seed_model() -> Unigram:
    return Unigram([("<unk>", -20.0)] + [(p, math.log(q)) for p, q in SEED_PROBS.items()], unk_id=0)


class TestUnigramHF:
    def test_viterbi(self) -> None:
        m = seed_model()
        assert toks(m, "abab") == ["ab", "ab"]
        assert toks(m, "aba") == ["aba"]

    def test_tie_goes_to_the_earliest_start(self) -> None:
        # "a"+"bc" and "ab"+"c" score the same: the path whose last node starts first wins
        m = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -2.0), ("bc", -2.0)], unk_id=0)
        assert toks(m, "abc") == ["a", "bc"]

    def test_unknown_chars_are_fused(self) -> None:
        m = Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0)
        assert m.tokenize("axyza") == ((1, 0, 1), (0, 1, 4), (1, 4, 5))
        assert m.unk_score == -11.0  # min score (over all pieces) - 10

    def test_byte_fallback_spans_whole_run(self) -> None:
        vocab = [("<unk>", 0.0), ("a", -1.0)] + [(f"<0x{b:02X}>", -5.0) for b in range(256)]
        m = Unigram(vocab, unk_id=0, byte_fallback=True)
        out = m.tokenize("a龘")
        assert [m.id_to_token(i) for i, _, _ in out] == ["a", "<0xE9>", "<0xBE>", "<0x98>"]
        assert [(s, e) for _, s, e in out] == [(0, 1), (1, 2), (1, 2), (1, 2)]

    def test_no_unk_id(self) -> None:
        m = Unigram([("a", -1.0)])
        with pytest.raises(TokvizFormatError, match="no unk_id"):
            m.tokenize("ab")

    def test_json(self) -> None:
        m = Unigram.from_json({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]})
        assert Unigram.from_json(m.to_json()).tokenize("aa") == m.tokenize("aa")
        with pytest.raises(TokvizFormatError):
            Unigram.from_json({"type": "Unigram", "vocab": [["a"]]})

    def test_equal_to_hf_on_albert_vocab(self) -> None:
        tk = require_module("tokenizers")
        from tokviz.io.sentencepiece import parse_model_proto

        proto = parse_model_proto(bundle_bytes("albert-30k-clean/30k-clean.model"), source="albert")
        vocab = [(p.piece, p.score) for p in proto.pieces]
        ours = Unigram(vocab, unk_id=1)
        hf = tk.models.Unigram(vocab, 1, False)
        words = "▁the ▁quick ▁brown ▁fox ▁jumps ▁internationalization ▁ﬁ ▁龘x ▁hello▁world ▁a1b2c3 ▁" .split(" ")
        for w in words:
            assert [t[0] for t in ours.tokenize(w)] == [t.id for t in hf.tokenize(w)], w


class TestUnigramSentencePiece:
    def model(self, **kw) -> Unigram:  # noqa: ANN003
        vocab = [("<unk>", 0.0), ("<s>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -4.0), ("xy", 0.0), ("ba", -0.5)]
        types = [U, C, N, N, N, UD, UNUSED]
        return Unigram(vocab, piece_types=types, sentencepiece=True, **kw)

    def test_user_defined_always_wins_and_unused_never(self) -> None:
        m = self.model()
        assert toks(m, "xyab") == ["xy", "a", "b"]  # "a"+"b" (-3) beats "ab" (-4)
        assert toks(m, "axy") == ["a", "xy"]
        assert "ba" not in toks(m, "aba")
        assert m.unk_score == pytest.approx(-14.0)  # min over NORMAL pieces (-4) - 10

    def test_unknown_run_merged(self) -> None:
        m = self.model()
        assert m.tokenize("a??b") == ((2, 0, 1), (0, 1, 3), (3, 3, 4))

    def test_byte_fallback_only_last_byte_has_the_span(self) -> None:
        vocab = [("<unk>", 0.0), ("a", -1.0)] + [(f"<0x{b:02X}>", 0.0) for b in range(256)]
        types = [U, N] + [B] * 256
        m = Unigram(vocab, piece_types=types, sentencepiece=True, byte_fallback=True)
        out = m.tokenize("a龘")
        assert [m.id_to_token(i) for i, _, _ in out] == ["a", "<0xE9>", "<0xBE>", "<0x98>"]
        assert [(s, e) for _, s, e in out] == [(0, 1), (1, 1), (1, 1), (1, 2)]

    def test_bad_vocabularies(self) -> None:
        with pytest.raises(TokvizFormatError, match="no UNKNOWN"):
            Unigram([("a", 0.0)], piece_types=[N], sentencepiece=True)
        with pytest.raises(TokvizFormatError, match="defined twice"):
            Unigram([("<unk>", 0.0), ("a", 0.0), ("a", 0.0)], piece_types=[U, N, N], sentencepiece=True)
        with pytest.raises(TokvizFormatError, match="byte_fallback is false"):
            Unigram([("<unk>", 0.0), ("<0x00>", 0.0)], piece_types=[U, B], sentencepiece=True)

    def test_chunked_equals_whole_text_viterbi(self) -> None:
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("sentencepiece-test/test_model.model"), source="t")
        m = tok.model
        text = tok.normalizer.normalize_str("the quick brown fox " * 40 + "...... ." * 30)
        fast = UnigramChunks.of(m)
        assert fast is not None
        assert _chunked(fast, text) == m._viterbi(text, float32=True)[0]
        assert _chunked(fast, text) == _chunked(fast, text)  # second run from the cache

    def test_composed_cap_accounts_for_the_scores_before_a_part(self) -> None:
        # "x" * 100 + "ab": no piece holds "xx" or "xa", so the chunk is composed of 101 parts.
        # "a"+"b" (-2) beats "ab" (-2.0001) in exact arithmetic, but the float32 DP reaches "ab"
        # at T = -3000, where -3002.0001 rounds to -3002 (a tie, the first candidate "ab" stays),
        # as sentencepiece does. The composed cap must see that and send the chunk to the exact DP.
        vocab = [("<unk>", 0.0), ("x", -30.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0001)]
        m = Unigram(vocab, piece_types=[U, N, N, N, N], sentencepiece=True)
        text = "x" * 100 + "ab"
        fast = UnigramChunks.of(m)
        assert fast._chunk_path(text)[2] < 0  # no |T| makes the cached path safe
        assert toks(m, text) == ["x"] * 100 + ["ab"]
        assert _chunked(fast, text) == m._viterbi(text, float32=True)[0]
        assert toks(m, "ab") == ["a", "b"]  # from T = 0 the exact path holds

    def test_cached_paths_hold_for_every_state_under_their_cap(self) -> None:
        # an entry (DP or composed) promises: the float32 DP from any |T| < cap takes its path
        from array import array

        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("albert-30k-clean/30k-clean.model"), source="a")
        m = tok.model
        text = tok.normalizer.normalize_str(
            "The quick brown fox's re-entry; naïve co-operation!! x=f(a,b)**2 -- self.assertEqual(1e-10, 0x1F) "
            "Ｆｕｌｌ width and 日本語のテキスト 1234567 ..." + corpus_text("botchan.txt")[:6000] + _python_text(6000)
        )
        fast = UnigramChunks.of(m)
        chunks = [c for c in dict.fromkeys(fast.chunker.findall(text)) if c[0] in fast.piece_chars]
        assert any(len(fast._chunk_path(c)[0]) > 2 for c in chunks)
        for c in chunks:
            for entry in (fast._chunk_path(c), fast._chunk_dp(c)):
                ids, lens, cap, _, _ = entry
                ends = list(itertools.accumulate(lens))
                if cap <= 0:
                    continue
                for t in (0.0, cap * 0.999, -cap * 0.999, cap * 0.37, -cap * 0.61):
                    t32 = array("f", [t])[0]
                    if abs(t32) >= cap:
                        continue
                    path, _ = m._viterbi(c, float32=True, start_score=t32)
                    assert [p[0] for p in path] == list(ids), (c, t32)
                    assert [p[2] for p in path] == list(ends), (c, t32)

    def test_long_texts_equal_the_uncached_dp(self) -> None:
        # long enough for the float32 state to pass the re-basing threshold several times
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("albert-30k-clean/30k-clean.model"), source="a")
        m = tok.model
        fast = UnigramChunks.of(m)
        for raw in (corpus_text("botchan.txt")[:60_000], _python_text(40_000)):
            text = tok.normalizer.normalize_str(raw)
            fast.cache.clear()
            assert _chunked(fast, text) == m._viterbi(text, float32=True)[0]
            assert _chunked(fast, text) == m._viterbi(text, float32=True)[0]  # again, from the caches

    def test_columns_equal_tokenize(self) -> None:
        m = self.model()
        for text in ("a??b", "xyab", "ba", "?"):
            cols = m.tokenize_columns(text)
            assert list(zip(*cols)) == list(m.tokenize(text))
        assert m.token_values_columns("a??b", *m.tokenize_columns("a??b"), ["a", "<unk>", "b"]) == ["a", "??", "b"]

    def test_trie_is_not_tracked_by_the_cycle_collector(self) -> None:
        # a trie of nested lists made every full collection walk ~100k objects per model
        import gc

        from tokviz.io.sentencepiece import load_sentencepiece_model

        m = load_sentencepiece_model(bundle_bytes("albert-30k-clean/30k-clean.model"), source="a").model
        gc.collect()
        assert len(m._kids) > 30_000
        assert not any(gc.is_tracked(k) for k in m._kids)


class TestChunkCacheLimit:
    @pytest.mark.parametrize("rel", ["albert-30k-clean/30k-clean.model", "mistral-7b-v0.1/tokenizer.model"])
    def test_cache_cleared_during_one_text(self, rel: str, monkeypatch) -> None:  # noqa: ANN001
        # a cache that fills up in the middle of a text is cleared; hits found before the clear
        # and chunks computed after it must all still be used
        import tokviz.engine.models._py_fast as fast_module
        from tokviz.io.sentencepiece import load_sentencepiece_model

        text = corpus_text("botchan.txt")[:20_000]
        want = load_sentencepiece_model(bundle_bytes(rel), source=rel).model
        norm = load_sentencepiece_model(bundle_bytes(rel), source=rel).normalizer.normalize_str(text)
        expected = want.tokenize_columns(norm)
        monkeypatch.setattr(fast_module, "_CACHE_LIMIT", 7)
        monkeypatch.setattr(kernels, "native", None)  # (the tuned kernels run without the native core)
        m = load_sentencepiece_model(bundle_bytes(rel), source=rel).model
        assert m._fast is not None and m._fast.cache.limit == 7
        half = norm[: len(norm) // 2]
        m.tokenize_columns(half)  # (the cache holds some chunks when the whole text comes)
        assert m.tokenize_columns(norm) == expected
        assert m.tokenize_columns(norm) == expected


class TestSentencePieceVocabFinish:
    @pytest.mark.parametrize("byte_fallback", [False, True])
    def test_columns_equal_tuples(self, byte_fallback: bool) -> None:
        from tokviz.engine.models._spm import SentencePieceVocab

        pieces = ["<unk>", "a", "b", "ab"] + ([f"<0x{b:02X}>" for b in range(256)] if byte_fallback else [])
        types = [U, N, N, N] + ([B] * 256 if byte_fallback else [])
        vocab = SentencePieceVocab(pieces, [0.0] * len(pieces), types, byte_fallback=byte_fallback)
        rng = random.Random(5)
        for _ in range(300):
            text = "".join(rng.choice("ab龘é?") for _ in range(rng.randint(0, 12)))
            raw = [(vocab.piece_to_id(c), k, k + 1) for k, c in enumerate(text)]
            want = vocab.finish(text, raw)
            cols = vocab.finish_columns(text, [t[0] for t in raw], [t[1] for t in raw], [t[2] for t in raw])
            assert list(zip(*cols)) == want, text


class TestSentencePieceBPE:
    def model(self) -> SentencePieceBPE:
        pieces = ["<unk>", "a", "b", "c", "ab", "bc", "abc", "X", "ca"]
        scores = [0.0, -1.0, -1.0, -1.0, -2.0, -2.0, -3.0, 0.0, -2.0]
        types = [U, N, N, N, N, N, N, UD, UNUSED]
        return SentencePieceBPE(pieces, scores, types)

    def test_cut_chunks_equal_whole_text_bpe(self) -> None:
        # chunks are cut where no piece holds the two adjacent characters and the parts cached;
        # that must give what one BPE run over the whole text gives
        from tokviz.io.sentencepiece import load_sentencepiece_model

        m = load_sentencepiece_model(bundle_bytes("mistral-7b-v0.1/tokenizer.model"), source="m").model
        fast = SpmBpeChunks(m)  # (the tuned pure-Python kernel, whichever backend runs)
        rng = random.Random(2)
        words = ["self", ".", "assert", "Equal", "(", "x", ",", "▁", "吾輩", "は", "猫", "::", "0x1F", "龘", "'s"]
        for _ in range(200):
            text = "".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
            want = m._encode(text, None)
            assert list(zip(*fast.columns(text))) == want, text
            assert list(zip(*fast.columns(text))) == want, text  # cached
            assert m.tokenize(text) == tuple(m.spm.finish(text, want)), text

    def test_higher_score_first_then_leftmost(self) -> None:
        m = self.model()
        assert toks(m, "abc") == ["abc"]
        assert toks(m, "bcab") == ["bc", "ab"]
        assert toks(m, "abab") == ["ab", "ab"]

    def test_user_defined_is_frozen(self) -> None:
        m = self.model()
        assert toks(m, "aXb") == ["a", "X", "b"]

    def test_unused_merge_is_resegmented(self) -> None:
        m = self.model()
        assert toks(m, "ca") == ["c", "a"]

    def test_unknown_and_trace(self) -> None:
        m = self.model()
        assert m.tokenize("a??") == ((1, 0, 1), (0, 1, 3))
        spans, traces = m.tokenize_traced("abc")
        assert [t.merged for t in traces[0].merges] == ["ab", "abc"]


class TestLattice:
    def test_d04_viterbi_and_forward(self) -> None:
        lat = Lattice.build(seed_model(), "abab")
        vit = lat.viterbi()
        assert vit.pieces == ("ab", "ab")
        assert math.exp(vit.score) == pytest.approx(0.16)
        assert math.exp(lat.log_z()) == pytest.approx(0.22350625, abs=1e-12)
        assert math.exp(lat.log_z()) >= math.exp(vit.score)

    def test_nodes_and_brute_force(self) -> None:
        lat = Lattice.build(seed_model(), "abab")
        assert [(n.piece, n.start, n.end) for n in lat.nodes] == [
            ("a", 0, 1), ("ab", 0, 2), ("aba", 0, 3), ("b", 1, 2), ("bab", 1, 4),
            ("a", 2, 3), ("ab", 2, 4), ("b", 3, 4),
        ]
        paths = all_paths(lat)
        scores = sorted((lat.path_score(p) for p in paths), reverse=True)
        best = lat.nbest(100)
        assert len(best) == len(paths) == 6
        assert [s.score for s in best] == pytest.approx(scores, abs=1e-5)
        z = sum(math.exp(s) for s in scores)
        margs = lat.marginals()
        for k in range(len(lat.nodes)):
            expect = sum(math.exp(lat.path_score(p)) for p in paths if k in p) / z
            assert math.exp(margs[k]) == pytest.approx(expect)

    def test_marginals_with_alpha(self) -> None:
        lat = Lattice.build(seed_model(), "abab")
        paths = all_paths(lat)
        z = sum(math.exp(0.3 * lat.path_score(p)) for p in paths)
        assert lat.log_z(0.3) == pytest.approx(math.log(z))
        m = lat.marginals(0.3)
        assert sum(math.exp(m[k]) for k in lat.begin[0]) == pytest.approx(1.0)

    def test_sampling_matches_the_exact_distribution(self) -> None:
        lat = Lattice.build(seed_model(), "abab")
        paths = all_paths(lat)
        alpha = 0.5
        z = sum(math.exp(alpha * lat.path_score(p)) for p in paths)
        expect = {tuple(p): math.exp(alpha * lat.path_score(p)) / z for p in paths}
        rng = random.Random(1234)
        n = 20000
        counts = {p: 0 for p in expect}
        for _ in range(n):
            counts[lat.sample(alpha=alpha, rng=rng).nodes] += 1
        chi2 = sum((counts[p] - n * q) ** 2 / (n * q) for p, q in expect.items())
        assert chi2 < 22.1  # p = 0.0005 for 5 degrees of freedom

    def test_sample_nbest_only_draws_from_the_nbest(self) -> None:
        lat = Lattice.build(seed_model(), "abab")
        top2 = {s.nodes for s in lat.nbest(2)}
        rng = random.Random(7)
        assert {lat.sample_nbest(nbest_size=2, alpha=1.0, rng=rng).nodes for _ in range(200)} == top2

    def test_empty_text(self) -> None:
        lat = Lattice.build(seed_model(), "")
        assert lat.viterbi().ids == () and lat.marginals() == [] and lat.log_z() == 0.0

    def test_unknown_node_and_original_spans(self) -> None:
        lat = Lattice.build(seed_model(), "aqb", original_spans=[(0, 1), (1, 3), (3, 4)])
        unk = [n for n in lat.nodes if n.unknown]
        assert len(unk) == 1 and unk[0].piece == "q" and (unk[0].orig_start, unk[0].orig_end) == (1, 3)
        assert unk[0].score == pytest.approx(-30.0)

    def test_viterbi_equals_the_encoder_on_real_text(self) -> None:
        from tokviz.io.sentencepiece import load_sentencepiece_model

        tok = load_sentencepiece_model(bundle_bytes("sentencepiece-test/test_model.model"), source="t")
        for line in ["Hello world, this is a test.", "I was born in Tokyo... ", "ﬁnance 123"]:
            text = tok.normalizer.normalize_str(line)
            lat = Lattice.build(tok.model, text)
            assert list(lat.viterbi().ids) == [i for i, _, _ in tok.model.viterbi(text)]
            best = lat.nbest(5)
            assert best[0].ids == lat.viterbi().ids
            assert all(a.score >= b.score for a, b in itertools.pairwise(best))


# ---------------------------------------------------------------------------- long pieces
class _CountingDict(dict):
    """A trie node's children that count the lookups made in them (the walk's steps)."""

    steps = 0

    def get(self, key, default=None):  # noqa: ANN001, ANN201
        _CountingDict.steps += 1
        return dict.get(self, key, default)


def _long_piece_vocab() -> list[tuple[str, float]]:
    """Pieces that make long chains of prefix-only trie nodes, scored pieces inside and at the
    ends of chains, chains that fork late, and short pieces over the same characters."""
    return [
        ("<unk>", 0.0), ("a", -2.0), ("b", -2.5), ("日", -3.0), ("ab", -3.5), ("aaaa", -5.0),
        ("a" * 150, -20.0), ("a" * 300, -30.0), ("a" * 299 + "b", -29.0), ("ab" * 100, -40.0),
        ("日" * 500, -10.0), ("a" * 50 + "日" * 50, -12.0), ("b" * 7, -6.0), ("日b" * 3, -4.0),
    ]


def _spm_pair(vocab: list[tuple[str, float]]) -> tuple[object, object]:
    """sentencepiece and tokviz on one Unigram ``.model`` of ``vocab`` (piece 0 the unknown;
    identity normalizer, no dummy prefix)."""
    spm = require_module("sentencepiece")
    from sentencepiece import sentencepiece_model_pb2 as pb

    import tokviz

    proto = pb.ModelProto()
    for i, (p, s) in enumerate(vocab):
        kind = pb.ModelProto.SentencePiece.UNKNOWN if i == 0 else pb.ModelProto.SentencePiece.NORMAL
        proto.pieces.add(piece=p, score=s, type=kind)
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = False
    proto.normalizer_spec.remove_extra_whitespaces = False
    data = proto.SerializeToString()
    return spm.SentencePieceProcessor(model_proto=data), tokviz.load(data)


def _long_piece_texts(seed: int) -> list[str]:
    """Texts made of the pieces, their near misses (one character changed or cut) and noise."""
    rng = random.Random(seed)
    parts = [p for p, _ in _long_piece_vocab()[1:]]
    out = []
    for _ in range(12):
        bits = []
        for _ in range(rng.randint(1, 8)):
            p = rng.choice(parts)
            k = rng.randrange(len(p))
            bits.append(rng.choice((p, p[:k], p[:k] + rng.choice("abx日") + p[k + 1:], "x")))
        out.append("".join(bits))
    return out + ["a" * 1000, "a" * 299 + "x", "日" * 1499, "ab" * 350]


class TestLongPieces:
    """Chains of prefix-only trie nodes are compared at once (`chain_jumps`, `trie_jumps`): the
    same results as the references, with work linear in the text on one very long piece."""

    def test_hf_flavour_equals_hf_tokenizers(self) -> None:
        tk = require_module("tokenizers")
        vocab = _long_piece_vocab()
        ours = Unigram(vocab, unk_id=0)
        hf = tk.models.Unigram(vocab, 0, False)
        for text in _long_piece_texts(1):
            want = [t.id for t in hf.tokenize(text)]
            assert [t[0] for t in ours.tokenize(text)] == want, text  # (the native DP when built)
            assert [t[0] for t in ours._hf_finish(text, ours.viterbi(text))] == want, text  # the Python DP

    def test_sentencepiece_flavour_equals_sentencepiece(self) -> None:
        sp, tok = _spm_pair(_long_piece_vocab())
        model = tok.model
        fast = UnigramChunks.of(model)
        for text in _long_piece_texts(2):
            want = sp.encode(text)
            assert tok.encode(text).ids == want, text
            assert [t[0] for t in model.spm.finish(text, model.viterbi(text))] == want, text  # the Python DP
            if fast is not None:  # the pure backend's chunked kernel
                assert [t[0] for t in model.spm.finish(text, _chunked(fast, text))] == want, text

    @staticmethod
    def _one_piece_model(n: int, *, sentencepiece: bool) -> Unigram:
        vocab = [("<unk>", 0.0), ("a", -1.0), ("a" * n, -2.0)]
        types = [U, N, N] if sentencepiece else None
        m = Unigram(vocab, unk_id=0, piece_types=types, sentencepiece=sentencepiece)
        m._kids = [_CountingDict(k) for k in m._kids]
        m._root = m._kids[0]
        return m

    @pytest.mark.parametrize("sentencepiece", [False, True])
    def test_python_walks_are_linear_on_one_long_piece(self, sentencepiece: bool) -> None:
        # the text is the piece: every start position walks on until the text ends, n*(n+1)/2
        # steps for n starts without the jumps (50M at 10k), about 2 per start with them
        counts = {}
        for n in (2_000, 8_000):
            m = self._one_piece_model(n, sentencepiece=sentencepiece)
            kernels_ = [lambda t, m=m: m._viterbi(t, float32=sentencepiece)[0]]
            if sentencepiece:
                kernels_.append(lambda t, m=m: list(zip(*UnigramChunks.of(m).columns(t))))
            for k, run in enumerate(kernels_):
                _CountingDict.steps = 0
                assert [i for i, _, _ in run("a" * n)] == [2]
                counts[n, k] = _CountingDict.steps
                assert counts[n, k] <= 3 * n, (n, k, counts[n, k])
        for k in {k for _, k in counts}:
            assert counts[8_000, k] <= 4.5 * counts[2_000, k], counts

    @pytest.mark.skipif(kernels.native is None, reason="the native core is not built (pure-Python backend)")
    @pytest.mark.parametrize("sentencepiece", [False, True])
    def test_native_walk_is_linear_on_one_long_piece(self, sentencepiece: bool) -> None:
        steps = {}
        for n in (10_000, 40_000):
            m = self._one_piece_model(n, sentencepiece=sentencepiece)
            assert m.tokenize("a" * n) == ((2, 0, n),)
            trie = m._native_trie
            for text in ("a" * n, "a" * (n - 1) + "b"):  # the piece, and a near miss at its end
                got = kernels.native.unigram_viterbi(trie, text, 0.0, m.unk_score, 0, sentencepiece)
                steps[n, text[-1]] = got[4]
                assert got[4] <= 3 * n, (n, got[4])
        for end in "ab":
            assert steps[40_000, end] <= 4.5 * steps[10_000, end], steps


_LONG_PIECE = st.text("ab日", min_size=1, max_size=40)


@st.composite
def _long_piece_case(draw: st.DrawFn) -> tuple[list[tuple[str, float]], str]:
    """A vocabulary of long pieces over three characters (many chains, forks inside them) and a
    text made of its pieces, cut and changed."""
    pieces = list(dict.fromkeys(draw(st.lists(_LONG_PIECE, min_size=1, max_size=12))))
    scores = draw(st.lists(st.floats(-60.0, -0.5), min_size=len(pieces), max_size=len(pieces)))
    vocab = [("<unk>", 0.0), *zip(pieces, scores)]
    bits = draw(st.lists(st.one_of(st.sampled_from(pieces), _LONG_PIECE), min_size=1, max_size=10))
    return vocab, "".join(bits)


@pytest.mark.parametrize("sentencepiece", [False, True])
@settings(max_examples=int(os.environ.get("TOKVIZ_LONG_PIECE_EXAMPLES", "80")), deadline=None)
@given(case=_long_piece_case())
def test_long_piece_kernels_agree(sentencepiece: bool, case: tuple[list[tuple[str, float]], str]) -> None:
    """The native DP (when built), the Python DP and the chunked pure-Python kernel give one path
    on vocabularies of long pieces (the chains the walks jump over); HF tokenizers too."""
    vocab, text = case
    types = [U] + [N] * (len(vocab) - 1) if sentencepiece else None
    m = Unigram(vocab, unk_id=0, piece_types=types, sentencepiece=sentencepiece)
    python = m._viterbi(text, float32=sentencepiece)[0]
    if m._native is not None:
        trie = m._native_trie
        ids, starts, ends, _, _ = m._native.unigram_viterbi(trie, text, 0.0, m.unk_score, 0, sentencepiece)
        assert list(zip(ids, starts, ends)) == python
    if sentencepiece:
        fast = UnigramChunks.of(m)
        if fast is not None:
            assert [i for i, _, _ in _chunked(fast, text)] == [i for i, _, _ in python]
        sp, tok = _spm_pair(vocab)
        assert tok.encode(text).ids == sp.encode(text)
    else:
        tk = require_module("tokenizers")
        want = [t.id for t in tk.models.Unigram(vocab, 0, False).tokenize(text)]
        assert [t[0] for t in m._hf_finish(text, python)] == want
