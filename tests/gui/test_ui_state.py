"""The UI never lies: the picker shows the active tokenizer, names are human, Recent keeps every
opened path, the Train tab's corpus is the file as it is, and a launch without Qt says why."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, SHARED, bundle_bytes, require, require_module

from tokviz.gui.catalog import path_label


def _r50k_copy(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "r50k_base.tiktoken.gz"
    p.write_bytes(gzip.compress(bundle_bytes("gpt2/r50k_base.tiktoken")))
    return p


class TestPicker:
    def test_failed_load_puts_the_picker_back_and_shows_the_error(self, window, qtbot, tmp_path) -> None:  # noqa: ANN001
        good = _r50k_copy(tmp_path / "good")
        window.load_tokenizer(good)
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == good and not window.vm.is_busy(), timeout=20000)
        assert window.picker.currentData() == str(good)
        bad = tmp_path / "broken" / "tokenizer.json"
        bad.parent.mkdir()
        bad.write_bytes(b"{ not json")
        window.load_tokenizer(bad)
        assert window.picker.currentData() == str(bad)  # while it loads
        qtbot.waitUntil(lambda: window.error_bar.isVisible() and not window.vm.is_busy(), timeout=20000)
        assert "tokenizer.json" in window.error_bar.message
        assert window.vm.tokenizer_path == good  # the old tokenizer stays active ...
        assert window.picker.currentData() == str(good)  # ... and the picker says so
        assert "loading" not in window.tok_info.text()
        assert window.tok_info.text() == "BPE · 50,257 entries"  # r50k: 50,256 ranks + <|endoftext|>

    def test_cancelled_load_puts_the_picker_back(self, window, qtbot, tmp_path) -> None:  # noqa: ANN001
        before = window.picker.currentData()
        window.load_tokenizer(_r50k_copy(tmp_path / "slow"))
        window.vm.cancel()
        assert window.picker.currentData() == before
        assert "loading" not in window.tok_info.text()

    def test_open_in_inspect_from_train_updates_the_picker(self, window, qtbot) -> None:  # noqa: ANN001
        from tokviz.gui.train_viewmodel import TrainConfig
        from tokviz.resources import resource_path

        tab = window.train_tab
        tab._auto_started = True
        tab.vm.load_corpus_files([resource_path("corpora", "toy.txt")])
        with qtbot.waitSignal(tab.vm.training_finished, timeout=60000):
            tab.vm.train(TrainConfig(algorithm="bpe-byte", vocab_size=280))
        qtbot.waitUntil(lambda: not tab.vm.step_busy(), timeout=20000)
        with qtbot.waitSignal(window.vm.tokenizer_changed, timeout=5000):
            tab.open_in_inspect()
        name = window.vm.tokenizer_name
        assert "trained" in name
        assert window.picker.currentText().startswith(name)
        # one "tokviz", at the end: Qt appends the display name only to titles not ending with it
        assert window.windowTitle() == f"{name} — tokviz"
        assert "BPE" in window.tok_info.text()

    def test_recent_keeps_paths_under_a_folder_named_bundles(self, window, qtbot, settings, tmp_path) -> None:  # noqa: ANN001
        p = _r50k_copy(tmp_path / "bundles" / "gpt2")
        window.load_tokenizer(p)
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == p and not window.vm.is_busy(), timeout=20000)
        assert settings.value("recent") in ([str(p)], str(p))
        assert [a.text() for a in window.recent_menu.actions()] == [str(p)]

    def test_embedded_bundles_are_not_recent(self, window, qtbot, settings) -> None:  # noqa: ANN001
        embedded = next(e for e in window._entries if e.group == "Embedded")
        window.load_tokenizer(embedded.path)
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == embedded.path and not window.vm.is_busy(), timeout=30000)
        assert not settings.value("recent")
        assert window.picker.currentText() == embedded.name


class TestNames:
    def test_hub_cache_entries_by_repo_id(self, tmp_path) -> None:  # noqa: ANN001
        from tokviz.io.discovery import discover

        snap = tmp_path / "hub" / "models--google-bert--bert-base-uncased" / "snapshots" / "86b5e0934494bd15c9632b12f734a8a67f723594"
        snap.mkdir(parents=True)
        (snap / "tokenizer.json").write_text("{}", encoding="utf-8")
        found = [d for d in discover(hf_hub=tmp_path / "hub", tiktoken_dir=tmp_path / "none") if d.source == "hf-cache"]
        assert [d.name for d in found] == ["google-bert/bert-base-uncased (tokenizer.json)"]
        assert path_label(snap / "tokenizer.json") == "google-bert/bert-base-uncased (tokenizer.json)"

    def test_generic_file_names_carry_their_folder(self, tmp_path) -> None:  # noqa: ANN001
        assert path_label(tmp_path / "qwen3" / "tokenizer.json") == "qwen3 (tokenizer.json)"
        assert path_label(tmp_path / "m" / "o200k.tiktoken") == "o200k.tiktoken"

    def test_opened_file_is_listed_by_folder_not_as_tokenizer_json(self, window, qtbot, tmp_path) -> None:  # noqa: ANN001
        d = tmp_path / "my-model"
        d.mkdir()
        (d / "tokenizer.json").write_bytes(gzip.decompress((ROOT / "resources" / "bundles" / "bert-base-uncased" / "tokenizer.json.gz").read_bytes()))
        window.load_tokenizer(d / "tokenizer.json")
        qtbot.waitUntil(lambda: window.vm.tokenizer_path == d / "tokenizer.json" and not window.vm.is_busy(), timeout=30000)
        assert window.picker.currentText() == "my-model (tokenizer.json)  [file]"
        assert window.tok_info.text() == "WordPiece · 30,522 entries"


class TestTrainCorpus:
    def test_corpus_file_is_kept_exactly_and_edits_keep_it(self, qtbot, window, tmp_path) -> None:  # noqa: ANN001
        tab = window.train_tab
        tab._auto_started = True
        p = tmp_path / "c.txt"
        p.write_bytes("\ufeffab ab\r\ncd\u00a0x\r\n".encode())
        tab.vm.load_corpus_files([p])
        assert tab.vm.corpus == "\ufeffab ab\r\ncd\u00a0x\r\n"
        assert tab.corpus_edit.exact_text() == tab.vm.corpus
        assert tab.vm.corpus_lines == ["\ufeffab ab\r\n", "cd\u00a0x\r\n"]
        edit = tab.corpus_edit
        cur = edit.textCursor()
        cur.setPosition(1)
        edit.setTextCursor(cur)
        edit.insert_exact("z")
        assert tab.vm.corpus == "\ufeffzab ab\r\ncd\u00a0x\r\n"


class TestUnknownInTrain:
    def test_probe_styles_the_trained_unknown_token(self, qtbot, window) -> None:  # noqa: ANN001
        from tokviz.gui.train_viewmodel import TrainConfig
        from tokviz.gui.widgets.span_view import FLAG_UNKNOWN
        from tokviz.resources import resource_path

        tab = window.train_tab
        tab._auto_started = True
        tab.vm.load_corpus_files([resource_path("corpora", "toy.txt")])
        with qtbot.waitSignal(tab.vm.probe_changed, timeout=60000, check_params_cb=lambda r: r.encoding is not None):
            tab.vm.set_probe("hug \u2603")  # the snowman is not in the toy corpus: WordPiece gives [UNK]
            tab.vm.train(TrainConfig(algorithm="wordpiece", vocab_size=120))
        qtbot.waitUntil(lambda: not tab.vm.step_busy() and tab.probe_view.count() > 0, timeout=20000)
        enc = tab.probe_view._enc
        unk = enc.tokens.index("[UNK]")
        assert enc.text[slice(*enc.offsets[unk])] == "\u2603"
        assert [bool(tab.probe_view.item_flags(i) & FLAG_UNKNOWN) for i in range(len(enc.ids))] == [
            i == unk for i in range(len(enc.ids))]


@pytest.fixture(scope="module")
def hf_merges() -> list[list[str]]:
    """The merges HF's BpeTrainer learns on botchan.txt (computed once for `TestBotchanTraining`)."""
    require(SHARED is not None, "shared corpora not found")
    tk = require_module("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    tok = tk.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=TestBotchanTraining.VOCAB, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train([str(SHARED / "corpora" / "botchan.txt")], trainer)
    merges = json.loads(tok.to_str())["model"]["merges"]
    assert ["č", "Ċ"] in merges  # CRLF is a merge: HF trained on the CRs
    return [list(m) for m in merges]


class TestBotchanTraining:
    """Byte-level BPE on botchan.txt as given (BOM, CRLF) equals HF BpeTrainer's ``train(files)``."""

    VOCAB = 600

    def test_tokviz_train_matches(self, hf_merges, tmp_path, capsys) -> None:  # noqa: ANN001
        from tokviz.cli import main

        out = tmp_path / "tok.json"
        code = main(["train", "--model", "bpe", "--byte-level", "--vocab-size", str(self.VOCAB), "-o", str(out),
                     str(SHARED / "corpora" / "botchan.txt")])
        assert code == 0, capsys.readouterr().err
        ours = [m.split(" ") if isinstance(m, str) else list(m) for m in json.loads(out.read_text(encoding="utf-8"))["model"]["merges"]]
        assert ours == hf_merges

    def test_corpus_streams_with_progress(self) -> None:
        from tokviz.training.words import read_corpus_files

        path = SHARED / "corpora" / "botchan.txt"
        seen: list[tuple[int, int]] = []
        lines = read_corpus_files([path, path], progress=lambda d, t: seen.append((d, t)))
        size = path.stat().st_size
        assert seen[-1] == (2 * size, 2 * size) and len(seen) >= 2
        assert "".join(lines) == path.read_bytes().decode("utf-8") * 2

    def test_train_tab_matches(self, hf_merges, qtbot, window) -> None:  # noqa: ANN001
        from tokviz.gui.train_viewmodel import TrainConfig

        tab = window.train_tab
        tab._auto_started = True
        tab.vm.load_corpus_files([SHARED / "corpora" / "botchan.txt"])
        with qtbot.waitSignal(tab.vm.training_finished, timeout=120000) as blocker:
            tab.vm.train(TrainConfig(algorithm="bpe-byte", vocab_size=self.VOCAB))
        run = blocker.args[0]
        assert [list(m) for m in run.result.merges] == hf_merges


class TestLaunch:
    def _run(self, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
        return subprocess.run([sys.executable, "-m", "tokviz"], cwd=ROOT, env={**base, **env}, capture_output=True,
                              text=True, timeout=120)

    def test_no_display_is_one_line_and_exit_2(self) -> None:
        r = self._run({})
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert "no display" in lines[0] and "--screenshot" in lines[0] and "QT_QPA_PLATFORM=offscreen" in lines[0]

    def test_unreachable_display_is_one_line_and_exit_2(self) -> None:
        r = self._run({"DISPLAY": ":97"})  # no X server there: Qt would abort (134)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "QT_QPA_PLATFORM=offscreen" in lines[0], r.stderr

    def test_gui_file_is_read_exactly(self, tmp_path) -> None:  # noqa: ANN001
        import argparse

        from tokviz.gui.app import initial_text

        p = tmp_path / "crlf.txt"
        p.write_bytes(b"\xef\xbb\xbfa\r\nb\rc")
        assert initial_text(argparse.Namespace(file=p, text=None)) == "\ufeffa\r\nb\rc"
