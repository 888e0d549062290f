"""`tokviz train` (progress, summary, bad corpora) and tokenizer.json export round trips."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import ROOT, corpus_text, require_module

from tokviz.cli import main
from tokviz.training.bpe import BpeTrainer
from tokviz.training.export import save_tokenizer_json

TOY = ROOT / "resources" / "corpora" / "toy.txt"


class TestCli:
    def test_byte_level_bpe(self, tmp_path, capsys) -> None:
        out = tmp_path / "tok.json"
        rc = main(["train", "--model", "bpe", "--byte-level", "--vocab-size", "300", str(TOY),
                   "--special", "<|endoftext|>", "-o", str(out)])
        assert rc == 0
        captured = capsys.readouterr()
        assert captured.out.count("\n") == 1 and "vocab 300" in captured.out and str(out) in captured.out
        assert captured.err  # progress went to stderr
        obj = json.loads(out.read_text(encoding="utf-8"))
        assert obj["model"]["type"] == "BPE" and len(obj["model"]["vocab"]) == 300
        assert obj["added_tokens"][0]["content"] == "<|endoftext|>" and obj["added_tokens"][0]["id"] == 0

    @pytest.mark.parametrize("model", ["bpe", "unigram"])
    def test_json_summary(self, model, tmp_path, capsys) -> None:
        out = tmp_path / "tok.json"
        assert main(["train", "--model", model, "--vocab-size", "120", str(TOY), "-o", str(out), "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        vocab = json.loads(out.read_text(encoding="utf-8"))["model"]["vocab"]
        assert summary["model"] == model and summary["files"] == [str(TOY)] and summary["output"] == str(out)
        assert summary["vocab_size"] == len(vocab) and summary["bytes"] == len(TOY.read_bytes())
        if model == "bpe":  # every merge made one new entry: vocab = alphabet + merges
            merges = json.loads(out.read_text(encoding="utf-8"))["model"]["merges"]
            assert summary["merges"] == len(merges)
        else:
            assert summary["merges"] is None

    @pytest.mark.parametrize("model", ["bpe", "wordpiece", "unigram"])
    def test_each_model_trains_and_loads(self, model, tmp_path) -> None:
        import tokviz

        out = tmp_path / f"{model}.json"
        assert main(["train", "--model", model, "--vocab-size", "90", str(TOY), "-o", str(out)]) == 0
        tok = tokviz.load(out)
        assert tok.encode("abab hug").ids

    @pytest.mark.parametrize(
        ("name", "content", "needle"),
        [
            pytest.param("binary.bin", b"\x00\x01\x02abc", "binary", id="binary"),
            pytest.param("latin1.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"), "not valid UTF-8 at byte 3", id="wrong-encoding"),  # "caf" = 3 bytes
            pytest.param("empty.txt", b"", "empty", id="empty"),
            pytest.param("blank.txt", b"  \n\n ", "empty", id="whitespace-only"),
        ],
    )
    def test_bad_corpus_one_line_exit_2(self, tmp_path, name, content, needle) -> None:
        bad = tmp_path / name
        bad.write_bytes(content)
        proc = subprocess.run(
            [sys.executable, "-m", "tokviz", "train", "--vocab-size", "100", str(bad), "-o", str(tmp_path / "o.json")],
            capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and name in lines[0]
        assert "Traceback" not in proc.stderr
        assert not (tmp_path / "o.json").exists()

    def test_missing_file(self, tmp_path, capsys) -> None:
        rc = main(["train", "--vocab-size", "100", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "o.json")])
        assert rc == 2
        assert "nope.txt" in capsys.readouterr().err

    def test_byte_level_only_for_bpe(self, tmp_path, capsys) -> None:
        rc = main(["train", "--model", "unigram", "--byte-level", "--vocab-size", "50", str(TOY), "-o", str(tmp_path / "o.json")])
        assert rc == 2


class TestExportRoundTrip:
    @pytest.mark.parametrize("add_prefix_space", [False, True], ids=["no-prefix-space", "prefix-space"])
    def test_byte_level_bpe_hf_equals_tokviz(self, tmp_path, add_prefix_space) -> None:
        tk = require_module("tokenizers")
        import tokviz

        lines = corpus_text("botchan.txt").splitlines()
        r = BpeTrainer.byte_level(vocab_size=1500, add_prefix_space=add_prefix_space, special_tokens=["<|endoftext|>"]).run(lines)
        path = save_tokenizer_json(r, tmp_path / "tokenizer.json")
        hf = tk.Tokenizer.from_file(str(path))
        ours = tokviz.load(path)
        assert ours.vocab_size == hf.get_vocab_size()
        probes = lines[:400] + corpus_text("wagahaiwa_nekodearu.txt").splitlines()[:50] + ["x<|endoftext|>y", ""]
        for text in probes:
            h, o = hf.encode(text), ours.encode(text)
            assert o.ids == h.ids, text
            assert [tuple(x) for x in o.offsets] == [tuple(x) for x in h.offsets], text
            assert ours.decode(o.ids, skip_special_tokens=True) == hf.decode(h.ids)

    def test_char_bpe_with_suffix_hf_equals_tokviz(self, tmp_path) -> None:
        tk = require_module("tokenizers")
        import tokviz
        from tokviz.training.words import PipelineSpec

        spec = PipelineSpec(
            pre_tokenizer={"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+"}, "behavior": "Removed", "invert": True},
            decoder={"type": "BPEDecoder", "suffix": "</w>"},
        )
        lines = corpus_text("botchan.txt").splitlines()[:2000]
        r = BpeTrainer(vocab_size=800, end_of_word_suffix="</w>", unk_token="[UNK]", special_tokens=["[UNK]"], spec=spec).run(lines)
        path = save_tokenizer_json(r, tmp_path / "tokenizer.json")
        hf = tk.Tokenizer.from_file(str(path))
        ours = tokviz.load(path)
        for text in lines[:300] + ["ünïcode wörds"]:
            assert ours.encode(text).ids == hf.encode(text).ids, text

    def test_loads_back_with_same_vocab(self, tmp_path) -> None:
        import tokviz

        r = BpeTrainer.byte_level(vocab_size=300).run(TOY.read_text(encoding="utf-8").splitlines())
        path = save_tokenizer_json(r, tmp_path / "t.json")
        tok = tokviz.load(path)
        assert tok.get_vocab() == r.vocab


def test_training_never_imports_qt() -> None:
    code = (
        "import sys, tokviz.training.bpe, tokviz.training.wordpiece, tokviz.training.unigram, "
        "tokviz.training.factory, tokviz.training.export; "
        "assert not any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules), 'Qt imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
