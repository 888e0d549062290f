"""Find tokenizer files already on this machine: the Hugging Face hub cache and the tiktoken cache.

Read-only and offline: it lists files, reads at most a few bytes to recognise a tiktoken cache
entry, and never downloads or writes anything. The app shows what it finds next to the
embedded bundles; loading goes through `tokviz.load` like any other file.

>>> [d.name for d in discover(hf_hub=Path("/nonexistent"), tiktoken_dir=Path("/nonexistent"))]
[]
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Discovered", "discover", "hf_hub_dir", "tiktoken_cache_dir"]

# File names a hub snapshot may hold, best first; one entry per snapshot.
_HF_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "vocab.json", "vocab.txt")
_TIKTOKEN_NAMES = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_MAX_SNAPSHOTS = 500


@dataclass(frozen=True, slots=True)
class Discovered:
    """A tokenizer file found locally: display name, path and where it was found."""

    name: str
    path: Path
    source: str  # "hf-cache" or "tiktoken-cache"


def hf_hub_dir() -> Path:
    """The hub cache directory the ``huggingface_hub`` library would use (env vars honoured)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    home = Path(os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "huggingface")
    return home.expanduser() / "hub"


def tiktoken_cache_dir() -> Path:
    """tiktoken's cache directory (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR`` or the temp dir)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def hub_repo_id(path: Path) -> str | None:
    """The repo id of a file inside a hub cache snapshot (``models--org--name/snapshots/REV/...``).

    >>> hub_repo_id(Path("/c/hub/models--Qwen--Qwen3-8B/snapshots/0a1b/tokenizer.json"))
    'Qwen/Qwen3-8B'
    >>> hub_repo_id(Path("/data/qwen3/tokenizer.json")) is None
    True
    """
    parts = path.parts
    for i in range(len(parts) - 2):
        if parts[i].startswith(("models--", "datasets--", "spaces--")) and parts[i + 1] == "snapshots":
            return parts[i].split("--", 1)[1].replace("--", "/")
    return None


def _hf_entries(hub: Path) -> list[Discovered]:
    out: list[Discovered] = []
    try:
        repos = sorted(p for p in hub.iterdir() if p.is_dir() and p.name.startswith("models--"))
    except OSError:
        return out
    for repo in repos:
        repo_name = hub_repo_id(repo / "snapshots" / "x" / "f") or repo.name
        snaps = repo / "snapshots"
        try:
            revisions = sorted(snaps.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            continue
        for rev in revisions[:1]:  # the newest snapshot is what the library would load
            for fname in _HF_FILES:
                for cand in (rev / fname, *sorted(rev.glob(f"*/{fname}"))):
                    if cand.is_file():
                        sub = cand.parent.relative_to(rev).as_posix()
                        label = f"{repo_name}" + (f"/{sub}" if sub != "." else "") + f" ({fname})"
                        out.append(Discovered(label, cand, "hf-cache"))
                        break
                else:
                    continue
                break
        if len(out) >= _MAX_SNAPSHOTS:
            break
    return out


def _looks_like_ranks(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(256)
    except OSError:
        return False
    line = head.split(b"\n", 1)[0].split()
    return len(line) == 2 and line[1].isdigit() and all(c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" for c in line[0])


def _tiktoken_entries(cache: Path) -> list[Discovered]:
    # tiktoken names a cache entry by the SHA-1 of the URL it came from.
    known = {hashlib.sha1(_TIKTOKEN_URL.format(n).encode()).hexdigest(): n for n in _TIKTOKEN_NAMES}
    out: list[Discovered] = []
    try:
        files = sorted(p for p in cache.iterdir() if p.is_file())
    except OSError:
        return out
    for f in files:
        if f.suffix or not _looks_like_ranks(f):
            continue
        name = known.get(f.name, f"rank file {f.name[:8]}")
        out.append(Discovered(f"{name} (tiktoken cache)", f, "tiktoken-cache"))
    return out


def discover(*, hf_hub: Path | None = None, tiktoken_dir: Path | None = None) -> list[Discovered]:
    """Tokenizer files in the local caches (empty when there are none)."""
    return _hf_entries(hf_hub or hf_hub_dir()) + _tiktoken_entries(tiktoken_dir or tiktoken_cache_dir())
