"""Fuzz family "discovery": hostile local caches and model stores.

Each case builds a tree in a temporary folder: Hugging Face hub snapshots, a tiktoken cache,
an Ollama store and an LM Studio folder, whose entries are regular files with random content,
FIFOs, sockets, dangling and looping symlinks, folders where files belong, and Ollama manifests
that are random JSON (deep, wrong types, lying digests, path escapes) or not JSON at all.
`discover` must return (it runs in a thread that must finish: a FIFO opened for reading never
returns) a list of regular files only, with the broken entries described in ``problems``.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

from fuzzkit import fuzz_settings, run_case
from hypothesis import given, strategies as st

from tokviz.io.discovery import discover
from tokviz.io.files import is_regular_file

KINDS = st.sampled_from(["file", "file", "file", "fifo", "socket", "dangling", "loop", "dir", "empty"])
CONTENT = st.sampled_from([b"", b"IQ== 0\n", b"GGUF", b"{}", b"\xff\xfe", b"[" * 5000, b"x" * 300]) | st.binary(max_size=64)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=3),
                    max_leaves=12)
LAYER = st.fixed_dictionaries({"mediaType": st.sampled_from(["application/vnd.ollama.image.model", "x"]),
                               "digest": st.sampled_from(["sha256:" + "a" * 64, "sha256:../../../etc/passwd",
                                                          "sha256:" + "a" * 64 + "/x", "", "sha256:\x00"]) | JSON})
MANIFEST = (st.fixed_dictionaries({"layers": st.lists(LAYER, max_size=3) | JSON}).map(json.dumps).map(str.encode)
            | JSON.map(json.dumps).map(str.encode) | st.just(b"[" * 100_000) | CONTENT)


def make(path: Path, kind: str, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_bytes(content)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        try:
            s.bind(str(path))
        except OSError:  # a path too long for a socket address: a FIFO instead
            os.mkfifo(path)
        finally:
            s.close()
    elif kind == "dangling":
        path.symlink_to(path.parent / "missing")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path.write_bytes(b"")


@st.composite
def store(draw: st.DrawFn) -> list[tuple[str, str, bytes]]:
    entries = []
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.sampled_from([
            "hub/models--org--name/snapshots/r1/tokenizer.json", "hub/models--org--name/snapshots/r2/sub/vocab.txt",
            "hub/models--x/snapshots/r/tokenizer.model", "hub/models--a--b/snapshots",
            "tiktoken/9b5ad71b2ce5302211f9c61530b329a4922fc6a4", "tiktoken/abc",
            "ollama/manifests/registry.ollama.ai/library/m/latest", "ollama/manifests/r/n/m/t",
            "ollama/manifests/a", "ollama/blobs/sha256-" + "a" * 64,
            "lms/pub/repo/model.gguf", "lms/pub/repo/mmproj.gguf",
        ]))
        manifest = "manifests/" in where
        entries.append((where, draw(KINDS), draw(MANIFEST if manifest else CONTENT)))
    return entries


def run_discovery(root: Path) -> list[Any]:
    problems: list[str] = []
    box: list[Any] = []
    worker = threading.Thread(daemon=True, target=lambda: box.append(discover(
        hf_hub=root / "hub", tiktoken_dir=root / "tiktoken", ollama_dir=root / "ollama",
        lmstudio_dirs=[root / "lms"], problems=problems)))
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "discovery blocked"
    assert box, "discovery raised"  # an exception in the thread leaves the box empty
    for d in box[0]:
        assert is_regular_file(d.path), d
    for line in problems:
        assert "\n" not in line and len(line) < 2000, line
    return box[0]


@fuzz_settings(40)
@given(entries=store())
def test_hostile_stores(entries: list[tuple[str, str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for where, kind, content in entries:
            path = root / where
            if path.exists() or path.is_symlink():
                continue
            try:
                make(path, kind, content)
            except (FileExistsError, NotADirectoryError):
                continue  # a file where a later entry wanted a folder
        run_case("discovery", lambda: run_discovery(root))
