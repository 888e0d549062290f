"""Read-only discovery of tokenizer files in the local Hugging Face hub cache and tiktoken cache."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from tokviz.io.discovery import discover, find_discovered, hf_hub_dir, ollama_models_dir, tiktoken_cache_dir


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
        assert discover(hf_hub=tmp_path / "a", tiktoken_dir=tmp_path / "b", ollama_dir=tmp_path / "c", lmstudio_dirs=[tmp_path / "d"]) == []

    def test_env_vars_are_honoured(self, tmp_path, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hubx"))
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
        assert hf_hub_dir() == tmp_path / "hubx"
        assert tiktoken_cache_dir() == tmp_path / "tk"
        monkeypatch.delenv("HF_HUB_CACHE")
        monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
        assert hf_hub_dir() == tmp_path / "hfhome" / "hub"

    def test_empty_tiktoken_cache_dir_means_no_cache(self, tmp_path, monkeypatch) -> None:  # noqa: ANN001
        # tiktoken's load.read_file_cached reads TIKTOKEN_CACHE_DIR="" as "cache nothing"
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
        monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path))
        (tmp_path / ("0" * 40)).write_text("IQ== 0\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        assert tiktoken_cache_dir() is None
        assert discover(hf_hub=tmp_path / "none", ollama_dir=tmp_path / "none", lmstudio_dirs=[]) == []


def _ollama_store(root, name_parts: tuple[str, ...], blob: bytes) -> None:  # noqa: ANN001
    digest = hashlib.sha256(blob).hexdigest()
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / f"sha256-{digest}").write_bytes(blob)
    manifest = root / "manifests" / Path(*name_parts)
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "schemaVersion": 2,
        "layers": [
            {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64},
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
        ],
    }), encoding="utf-8")


class TestModelStores:
    def _discover(self, tmp_path, **kw):  # noqa: ANN001, ANN202
        base = {"hf_hub": tmp_path / "none", "tiktoken_dir": tmp_path / "none",
                "ollama_dir": tmp_path / "none", "lmstudio_dirs": []}
        base.update(kw)
        return discover(**base)

    def test_ollama_manifests_to_blobs_named_like_ollama_list(self, tmp_path) -> None:  # noqa: ANN001
        store = tmp_path / "ollama"
        _ollama_store(store, ("registry.ollama.ai", "library", "qwen2", "0.5b"), b"GGUF one")
        _ollama_store(store, ("registry.ollama.ai", "someone", "tiny", "latest"), b"GGUF two")
        _ollama_store(store, ("hf.co", "org", "repo-GGUF", "Q4_K_M"), b"GGUF three")
        (store / "manifests" / "registry.ollama.ai" / "library" / "broken").mkdir(parents=True)
        (store / "manifests" / "registry.ollama.ai" / "library" / "broken" / "x").write_text("{not json")
        found = self._discover(tmp_path, ollama_dir=store)
        assert sorted((d.name, d.path.read_bytes(), d.source) for d in found) == [
            ("hf.co/org/repo-GGUF:Q4_K_M", b"GGUF three", "ollama"),
            ("qwen2:0.5b", b"GGUF one", "ollama"),
            ("someone/tiny:latest", b"GGUF two", "ollama"),
        ]

    def test_ollama_env_var(self, tmp_path, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "store"))
        assert ollama_models_dir() == tmp_path / "store"
        monkeypatch.delenv("OLLAMA_MODELS")
        assert ollama_models_dir() == Path("~/.ollama/models").expanduser()

    def test_lmstudio_publisher_repo_file(self, tmp_path) -> None:  # noqa: ANN001
        root = tmp_path / "models"
        (root / "lmstudio-community" / "Qwen-GGUF").mkdir(parents=True)
        (root / "lmstudio-community" / "Qwen-GGUF" / "qwen-q4.gguf").write_bytes(b"GGUF")
        (root / "lmstudio-community" / "Qwen-GGUF" / "mmproj-qwen.gguf").write_bytes(b"GGUF")
        found = self._discover(tmp_path, lmstudio_dirs=[root])
        assert [(d.name, d.source) for d in found] == [("lmstudio-community/Qwen-GGUF/qwen-q4.gguf (LM Studio)", "lmstudio")]
        assert find_discovered("lmstudio-community/Qwen-GGUF/qwen-q4.gguf (LM Studio)", found) == found[0]
