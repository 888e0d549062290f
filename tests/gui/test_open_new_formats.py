"""File > Open (Ctrl+O) on the formats added in round 2: a tekken.json, a js-tiktoken rank JSON,
a CLIP merges file and a folder with a chat template, each through the window's own dialog path
(the file dialog answers with the file)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

import tokviz


def _tekken(d: Path) -> Path:
    vocab = [bytes([i]) for i in range(256)] + [b"ab"]
    obj = {"config": {"pattern": r"\p{L}+|\s+|[^\s\p{L}]+", "default_vocab_size": 3 + len(vocab),
                      "default_num_special_tokens": 3, "version": "v7"},
           "vocab": [{"rank": i, "token_bytes": base64.b64encode(b).decode(), "token_str": None} for i, b in enumerate(vocab)],
           "special_tokens": [{"rank": i, "token_str": t, "is_control": True} for i, t in enumerate(["<unk>", "<s>", "</s>"])]}
    (d / "tekken.json").write_text(json.dumps(obj))
    return d / "tekken.json"


def _rank_json(d: Path) -> Path:
    ranks = "! 0 " + " ".join(base64.b64encode(bytes([i])).decode() for i in range(256))
    obj = {"pat_str": r"\S+|\s+", "special_tokens": {"<|x|>": 256}, "bpe_ranks": ranks}
    (d / "ranks.js").write_text("export default " + json.dumps(obj) + ";")
    return d / "ranks.js"


def _clip(d: Path) -> Path:
    (d / "bpe_simple_vocab_tiny.txt.gz").write_bytes(gzip.compress(b'"bpe_simple_vocab_tiny.txt#version: 0.2\nh e\n'))
    return d / "bpe_simple_vocab_tiny.txt.gz"


@pytest.mark.parametrize("make", [_tekken, _rank_json, _clip], ids=["tekken", "rank-json", "clip"])
def test_ctrl_o_opens_it(window, qtbot, tmp_path, monkeypatch, make) -> None:  # noqa: ANN001
    import tokviz.gui.main_window as mw

    path = make(tmp_path)
    monkeypatch.setattr(mw.QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.vm.tokenizer_name == path.name and not window.vm.is_busy(), timeout=20000)
    want = tokviz.load(path).encode(window.vm.text).ids
    qtbot.waitUntil(lambda: window.vm.update is not None and list(window.vm.update.encoding.ids) == want, timeout=20000)
    assert not window.error_bar.isVisible()
