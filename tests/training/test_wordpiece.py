"""WordPiece trainer: score-based choice (the seed's q/u example), ## continuation, slider, export."""

from __future__ import annotations

import json

import pytest
from support import ROOT, require_module

from tokviz.training.bpe import BpeTrainer
from tokviz.training.events import Cancelled, CancelToken, Done, MergeEvent
from tokviz.training.wordpiece import WordPieceTrainer

# The seed's point (section 2.2): q almost only occurs inside "qu", so WordPiece's normalized score
# picks (q, ##u) although (a, ##b) is three times as frequent; BPE picks (a, ##b).
QU = {"ab": 6, "ac": 4, "cb": 4, "qu": 2}


class TestScore:
    def test_qu_example_wordpiece_vs_bpe(self) -> None:
        wp = WordPieceTrainer(vocab_size=12).train_counts(QU)
        assert wp.merges[0] == ("q", "##u")
        # f(q ##u) / (f(q) f(##u)) = 2 / (2 * 2) = 0.5 > f(a ##b) / (f(a) f(##b)) = 6 / (10 * 10)
        assert wp.merge_scores[0] == pytest.approx(0.5)
        bpe = BpeTrainer(vocab_size=20, continuing_subword_prefix="##").train_counts(QU)
        assert bpe.merges[0] == ("a", "##b")

    def test_pair_table_shows_scores(self) -> None:
        wp = WordPieceTrainer(vocab_size=12).train_counts(QU)
        rows = wp.pair_table_at(0)
        assert rows[0].chosen and (rows[0].left, rows[0].right) == ("q", "##u")
        ab = next(r for r in rows if (r.left, r.right) == ("a", "##b"))
        assert ab.count == 6 and ab.score == pytest.approx(0.06) and ab.decided_by == "score"

    def test_scores_follow_recount(self) -> None:
        # every chosen merge has the best score of a full recount at that step
        wp = WordPieceTrainer(vocab_size=40).train_counts({"hugs": 5, "hug": 10, "pug": 5, "pun": 12, "bun": 4})
        for k in range(wp.num_merges):
            counts = wp.pair_counts_at(k)
            freq = wp.symbol_counts_at(k)
            best = max(c / (freq[a] * freq[b]) for (a, b), c in counts.items())
            assert wp.merge_scores[k] == pytest.approx(best)

    def test_continuation_prefix_and_vocab(self) -> None:
        wp = WordPieceTrainer(vocab_size=30).train_counts({"hug": 10, "pug": 5, "hugs": 5})
        v = wp.vocab
        assert v["[UNK]"] == 0
        assert {"h", "p", "##u", "##g", "##s"} <= set(v)
        assert all(not t.startswith("##") or t[2:] for t in v)
        for a, b in wp.merges:
            assert not a.startswith("##") or b.startswith("##")

    def test_cancel(self) -> None:
        token = CancelToken()
        out = []
        words = {f"w{i}x{i % 7}": i + 1 for i in range(200)}
        for ev in WordPieceTrainer(vocab_size=400).train_from_counts(words, cancel=token):
            out.append(ev)
            if isinstance(ev, MergeEvent) and ev.rank == 3:
                token.cancel()
        assert isinstance(out[-1], Cancelled)
        assert not any(isinstance(e, Done) for e in out)


class TestExport:
    def test_hf_loads_and_encodes_identically(self, tmp_path) -> None:
        tk = require_module("tokenizers")
        import tokviz
        from tokviz.training.export import save_tokenizer_json

        lines = (ROOT / "resources" / "corpora" / "toy.txt").read_text(encoding="utf-8").splitlines()
        r = WordPieceTrainer(vocab_size=120).run(lines)
        path = save_tokenizer_json(r, tmp_path / "tokenizer.json")
        hf = tk.Tokenizer.from_file(str(path))
        ours = tokviz.load(path)
        probes = lines + ["quixotic zebra", "hugging pugs", "x"]
        for text in probes:
            h = hf.encode(text)
            o = ours.encode(text)
            assert o.ids == h.ids and o.tokens == h.tokens, text
        # whole-word [UNK]: a word with an unknown character is one [UNK], not a prefix + [UNK]
        enc = ours.encode("abé")
        assert enc.tokens == ["[UNK]"]
        assert json.loads(path.read_text(encoding="utf-8"))["model"]["type"] == "WordPiece"


class TestSlider:
    def test_steps_match_events(self) -> None:
        words = {"hugs": 5, "hug": 10, "pug": 5, "pun": 12, "bun": 4, "qu": 2}
        events = list(WordPieceTrainer(vocab_size=30).train_from_counts(words))
        r = events[-1].result
        merges = [e for e in events if isinstance(e, MergeEvent)]
        assert [r.merge_event(k) for k in range(r.num_merges)] == merges
        for k in range(r.num_merges + 1):
            for wi, w in enumerate(r.words):
                seg = r.segmentation_at(k, wi)
                assert "".join(t.removeprefix("##") for t in seg) == w
            assert r.corpus_tokens_at(k) == sum(len(s) * c for s, c in zip(r.segmentations_at(k), r.word_counts))

    def test_probe_with_first_k_merges(self) -> None:
        r = WordPieceTrainer(vocab_size=30).train_counts(QU)
        assert r.probe("qu ab", 0).tokens == ["q", "##u", "a", "##b"]
        assert r.probe("qu ab", 1).tokens == ["qu", "a", "##b"]
        assert r.probe("qu zz", r.num_merges).tokens == ["qu", "[UNK]"]
