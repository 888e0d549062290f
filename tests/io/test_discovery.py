"""Read-only discovery of tokenizer files in the local Hugging Face hub cache and tiktoken cache."""

from __future__ import annotations

import hashlib
import os
import time

from tokviz.io.discovery import discover, hf_hub_dir, tiktoken_cache_dir


def _snapshot(hub, repo: str, rev: str, files: dict[str, str]):  # noqa: ANN001, ANN202
    d = hub / f"models--{repo.replace('/', '--')}" / "snapshots" / rev
    d.mkdir(parents=True)
    for name, content in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(content, encoding="utf-8")
    return d


class TestDiscover:
    def test_hub_snapshots_one_entry_each_best_file_first(self, tmp_path) -> None:  # noqa: ANN001
        hub = tmp_path / "hub"
        _snapshot(hub, "org/model-a", "aaa", {"tokenizer.json": "{}", "vocab.json": "{}"})
        _snapshot(hub, "org/sp-model", "bbb", {"tokenizer.model": "x"})
        (hub / "datasets--org--data").mkdir(parents=True)  # not a model: ignored
        found = discover(hf_hub=hub, tiktoken_dir=tmp_path / "none")
        assert [(d.name, d.path.name, d.source) for d in found] == [
            ("org/model-a (tokenizer.json)", "tokenizer.json", "hf-cache"),
            ("org/sp-model (tokenizer.model)", "tokenizer.model", "hf-cache"),
        ]

    def test_newest_snapshot_wins(self, tmp_path) -> None:  # noqa: ANN001
        hub = tmp_path / "hub"
        old = _snapshot(hub, "org/m", "old", {"tokenizer.json": "{}"})
        new = _snapshot(hub, "org/m", "new", {"tokenizer.json": "{}"})
        past = time.time() - 1000
        os.utime(old, (past, past))
        found = discover(hf_hub=hub, tiktoken_dir=tmp_path / "none")
        assert [d.path.parent for d in found] == [new]

    def test_tiktoken_cache_recognised_by_content_and_named_by_url_hash(self, tmp_path) -> None:  # noqa: ANN001
        cache = tmp_path / "data-gym-cache"
        cache.mkdir()
        url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_text("IQ== 0\nIg== 1\n", encoding="utf-8")
        (cache / ("0" * 40)).write_text("IQ== 0\n", encoding="utf-8")
        (cache / "notes.txt").write_text("IQ== 0\n", encoding="utf-8")  # has a suffix: not a cache entry
        (cache / ("1" * 40)).write_bytes(b"\x89PNG\r\n")  # not a rank file
        names = [d.name for d in discover(hf_hub=tmp_path / "none", tiktoken_dir=cache)]
        assert sorted(names) == ["cl100k_base (tiktoken cache)", "rank file 00000000 (tiktoken cache)"]

    def test_missing_dirs_are_empty(self, tmp_path) -> None:  # noqa: ANN001
        assert discover(hf_hub=tmp_path / "a", tiktoken_dir=tmp_path / "b") == []

    def test_env_vars_are_honoured(self, tmp_path, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hubx"))
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
        assert hf_hub_dir() == tmp_path / "hubx"
        assert tiktoken_cache_dir() == tmp_path / "tk"
        monkeypatch.delenv("HF_HUB_CACHE")
        monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
        assert hf_hub_dir() == tmp_path / "hfhome" / "hub"
