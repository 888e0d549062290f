"""Training from corpus files through the executor seam: HF's ``Tokenizer.train(files)`` merges,
whatever the shards, and the same counts from JSON lines as from the text they hold."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support import corpus_text, require_module

from tokviz.io import shards
from tokviz.training.base import run_to_result
from tokviz.training.bpe import BpeTrainer
from tokviz.training.corpus import train_corpus


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    text = corpus_text("botchan.txt")[:200_000]
    cut = text.index("\n", 120_000) + 1
    (tmp_path / "a.txt").write_text(text[:cut], encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(text[cut:].replace("\n", "\r\n").encode())  # CRLF trains on its CRs
    return tmp_path


class TestFromFiles:
    def test_merges_equal_hf_train_files_with_many_shards(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        tk = require_module("tokenizers")
        from tokenizers import models, pre_tokenizers, trainers

        hf = tk.Tokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.train([str(folder / "a.txt"), str(folder / "b.txt")], trainers.BpeTrainer(
            vocab_size=1500, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        model = json.loads(hf.to_str())["model"]
        monkeypatch.setattr(shards, "_MIN_SHARD", 16 << 10)  # byte-range shards of 16 KiB
        assert len(shards.plan_shards(shards.corpus_files(folder), shards.ReadOptions(mode="lines"))) > 8
        res = run_to_result(train_corpus(BpeTrainer.byte_level(vocab_size=1500), folder, workers=1))
        assert res.model_merges == [tuple(m) for m in model["merges"]] and res.vocab == model["vocab"]

    def test_jsonl_field_counts_what_the_lines_hold(self, folder: Path, tmp_path: Path) -> None:
        lines = (folder / "a.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:500]
        j = tmp_path / "j" / "c.jsonl.gz"
        j.parent.mkdir()
        j.write_bytes(gzip.compress("".join(json.dumps({"text": t}) + "\n" for t in lines).encode()))
        t = tmp_path / "t" / "c.txt"
        t.parent.mkdir()
        t.write_text("".join(lines), encoding="utf-8")
        a = run_to_result(train_corpus(BpeTrainer.byte_level(vocab_size=600), j, workers=1))
        b = run_to_result(train_corpus(BpeTrainer.byte_level(vocab_size=600), t, workers=1))
        assert a.merges == b.merges and a.word_counts == b.word_counts

    def test_progress_then_the_trainers_events(self, folder: Path) -> None:
        events = list(train_corpus(BpeTrainer.byte_level(vocab_size=300), folder / "a.txt", workers=1))
        stages = [e.stage for e in events if hasattr(e, "stage")]
        assert stages[0] == "count words" and "merges" in stages
