"""Unigram trainer: forward-backward expected counts, EM/pruning events, vocab size, export."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import ROOT, require_module

from tokviz.training.events import Cancelled, CancelToken, Done, EMIteration, PruneRound
from tokviz.training.unigram import UnigramTrainer, _build_lattice, _digamma

TOY = ROOT / "resources" / "corpora" / "toy.txt"
# the seed's section 2.3 table
SEED_P = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}


def _segmentations(word: str, vocab: set[str]):
    if not word:
        yield []
        return
    for n in range(1, len(word) + 1):
        if word[:n] in vocab:
            for rest in _segmentations(word[n:], vocab):
                yield [word[:n], *rest]


def _counter_words() -> dict[str, int]:
    text = TOY.read_text(encoding="utf-8")
    out: dict[str, int] = {}
    for w in text.split():
        out["\u2581" + w] = out.get("\u2581" + w, 0) + 1
    return out


class TestLattice:
    def test_forward_matches_seed_table(self) -> None:
        pieces = list(SEED_P)
        lat = _build_lattice(["abab"], {p: i for i, p in enumerate(pieces)}, 16)
        logp = np.log(np.array([SEED_P[p] for p in pieces]))
        _, ll, z = lat.expected_counts(logp, np.array([1.0]))
        assert math.exp(z[0]) == pytest.approx(0.22350625, rel=1e-12)  # f4 of the seed's DP table

    def test_expected_counts_equal_brute_force_posteriors(self) -> None:
        pieces = list(SEED_P)
        words, weights = ["abab", "aba", "bab", "ab"], [3.0, 1.0, 2.0, 5.0]
        lat = _build_lattice(words, {p: i for i, p in enumerate(pieces)}, 16)
        logp = np.log(np.array([SEED_P[p] for p in pieces]))
        got, ll, _ = lat.expected_counts(logp, np.array(weights))
        want = dict.fromkeys(pieces, 0.0)
        total_ll = 0.0
        for w, c in zip(words, weights):
            segs = list(_segmentations(w, set(pieces)))
            probs = [math.prod(SEED_P[p] for p in s) for s in segs]
            z = sum(probs)
            total_ll += c * math.log(z)
            for s, pr in zip(segs, probs):
                for p in s:
                    want[p] += c * pr / z
        assert ll == pytest.approx(total_ll)
        assert got == pytest.approx([want[p] for p in pieces])
        # posteriors, not Viterbi: "a" gets fractional mass from paths that are not the best
        assert 0 < got[0] < 1e3 and got[0] != round(got[0])

    def test_viterbi_pieces(self) -> None:
        pieces = list(SEED_P)
        lat = _build_lattice(["abab", "bab"], {p: i for i, p in enumerate(pieces)}, 16)
        logp = np.log(np.array([SEED_P[p] for p in pieces]))
        ids, wix = lat.viterbi_pieces(logp)
        by_word: dict[int, list[str]] = {}
        for i, w in zip(ids, wix):
            by_word.setdefault(int(w), []).insert(0, pieces[i])
        assert by_word[0] == ["ab", "ab"]  # the seed: best path 0.16
        best = max(_segmentations("bab", set(pieces)), key=lambda s: math.prod(SEED_P[p] for p in s))
        assert by_word[1] == best

    def test_digamma(self) -> None:
        # psi(1) = -gamma, psi(x + 1) = psi(x) + 1/x
        assert _digamma(np.array([1.0]))[0] == pytest.approx(-0.5772156649015329, abs=1e-9)
        xs = np.array([0.3, 2.5, 7.0, 40.0])
        assert _digamma(xs + 1) == pytest.approx(_digamma(xs) + 1 / xs, abs=1e-9)


@pytest.fixture(scope="module")
def run():
    return list(UnigramTrainer(vocab_size=60).train_from_counts(_counter_words()))


class TestTraining:
    def test_events_and_vocab_size(self, run) -> None:
        assert isinstance(run[-1], Done)
        result = run[-1].result
        assert len(result.vocab) == 60
        em = [e for e in run if isinstance(e, EMIteration)]
        prunes = [e for e in run if isinstance(e, PruneRound)]
        assert em and prunes
        assert all(p.vocab_after < p.vocab_before for p in prunes)
        assert all(len(p.removed) == p.vocab_before - p.vocab_after for p in prunes)
        assert all(np.isfinite(e.log_likelihood) and e.log_likelihood < 0 for e in em)

    def test_characters_and_specials_are_kept(self, run) -> None:
        result = run[-1].result
        chars = {c for w in _counter_words() for c in w}
        assert chars <= set(result.vocab)
        assert result.vocab["<unk>"] == 0
        removed = {p for e in run if isinstance(e, PruneRound) for p, _ in e.removed}
        assert not any(len(p) == 1 for p in removed)

    def test_pieces_sorted_by_probability(self, run) -> None:
        scores = [s for _, s in run[-1].result.pieces]
        assert scores == sorted(scores, reverse=True)
        assert all(s < 0 for s in scores)

    def test_more_characters_than_vocab(self) -> None:
        # 300 distinct characters, vocab 100: training ends, keeping the most frequent characters
        words = {"\u2581" + chr(0x4E00 + i) * 3 + chr(0x4E00 + (i * 7) % 300): 1 + i % 5 for i in range(300)}
        r = UnigramTrainer(vocab_size=100).train_counts(words)
        assert len(r.vocab) == 100
        assert all(len(p) == 1 for p, _ in r.pieces)

    def test_cancel(self) -> None:
        token = CancelToken()
        out = []
        for ev in UnigramTrainer(vocab_size=40).train_from_counts(_counter_words(), cancel=token):
            out.append(ev)
            if isinstance(ev, EMIteration):
                token.cancel()
        assert isinstance(out[-1], Cancelled)


class TestExport:
    def test_hf_loads_and_encodes_identically(self, tmp_path) -> None:
        tk = require_module("tokenizers")
        import tokviz
        from tokviz.training.export import save_tokenizer_json

        lines = TOY.read_text(encoding="utf-8").splitlines()
        r = UnigramTrainer(vocab_size=80).run(lines)
        path = save_tokenizer_json(r, tmp_path / "tokenizer.json")
        hf = tk.Tokenizer.from_file(str(path))
        ours = tokviz.load(path)
        for text in [*lines, "unseen words here", "ｆｕｌｌ　ｗｉｄｔｈ"]:
            h = hf.encode(text)
            o = ours.encode(text)
            assert o.ids == h.ids and o.tokens == h.tokens, text
            assert [tuple(x) for x in o.offsets] == [tuple(x) for x in h.offsets], text


def test_brute_force_helper_enumerates_all() -> None:
    segs = list(_segmentations("abab", set(SEED_P)))
    assert ["ab", "ab"] in segs and ["a", "bab"] in segs and ["aba", "b"] in segs
    assert len(segs) == len({tuple(s) for s in segs})


class TestQuality:
    def test_tokens_per_byte_not_worse_than_sentencepiece(self) -> None:
        # the bar (<= 1% above SentencePiece at the same vocab size), on a smaller setting
        import io

        spm = require_module("sentencepiece")
        tk = require_module("tokenizers")
        import json

        from support import corpus_text

        lines = corpus_text("botchan.txt").splitlines()
        nbytes = sum(len(x.encode("utf-8")) for x in lines)
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=2000,
                                       minloglevel=2, num_threads=1)
        sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
        sp_tpb = sum(len(x) for x in sp.encode(lines)) / nbytes
        res = UnigramTrainer(vocab_size=2000).run(lines)
        ours = tk.Tokenizer.from_str(json.dumps(res.tokenizer_json()))
        our_tpb = sum(len(e.ids) for e in ours.encode_batch(lines)) / nbytes
        assert len(res.vocab) == 2000
        assert our_tpb <= 1.01 * sp_tpb, (our_tpb, sp_tpb)


class TestExportCorpora:
    def test_corpus_lines_hf_equals_tokviz(self, tmp_path) -> None:
        tk = require_module("tokenizers")
        from support import corpus_text

        import tokviz
        from tokviz.training.export import save_tokenizer_json

        en = corpus_text("botchan.txt").splitlines()[:1500]
        ja = corpus_text("wagahaiwa_nekodearu.txt").splitlines()[:300]
        r = UnigramTrainer(vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>"]).run(en + ja)
        path = save_tokenizer_json(r, tmp_path / "tokenizer.json")
        hf = tk.Tokenizer.from_file(str(path))
        ours = tokviz.load(path)
        assert ours.vocab_size == hf.get_vocab_size() == 1500
        for text in en[:300] + ja[:60] + ["<s> literal </s>", "  spaces  "]:
            h, o = hf.encode(text), ours.encode(text)
            assert o.ids == h.ids, text
            assert [tuple(x) for x in o.offsets] == [tuple(x) for x in h.offsets], text
