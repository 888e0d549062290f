"""Find tokenizer files already on this machine: the Hugging Face hub cache, the tiktoken cache,
Ollama's model store and LM Studio's models folder.

Read-only and offline: it lists files, reads a tiktoken cache entry (a few MB) to recognise it by
content (and Ollama's small JSON manifests, through the bounded JSON reader), and never downloads
or writes anything. Only regular files are listed or opened (a FIFO would block a reader
forever: `tokviz.io.files`); a manifest that is not a readable JSON object of the expected
shape is skipped with a warning, so a broken entry never fails the listing. GGUF model
files are only listed here; loading one maps its header, never its weights. The app shows what it finds next to the
embedded bundles; loading goes through `tokviz.load` like any other file.

>>> [d.name for d in discover(hf_hub=Path("/x"), tiktoken_dir=Path("/x"), ollama_dir=Path("/x"), lmstudio_dirs=())]
[]
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..engine.errors import TokvizFormatError
from .files import is_regular_file, open_regular, read_regular
from .json_text import loads

__all__ = ["Discovered", "discover", "hf_hub_dir", "tiktoken_cache_dir", "ollama_models_dir", "lmstudio_models_dirs",
           "find_discovered"]

# File names a hub snapshot may hold, best first; one entry per snapshot.
_HF_FILES = ("tokenizer.json", "tekken.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "vocab.json", "vocab.txt")
_TIKTOKEN_NAMES = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_MAX_SNAPSHOTS = 500


@dataclass(frozen=True, slots=True)
class Discovered:
    """A tokenizer file found locally: display name, path and where it was found."""

    name: str
    path: Path
    source: str  # "hf-cache", "tiktoken-cache", "ollama" or "lmstudio"


def hf_hub_dir() -> Path:
    """The hub cache directory the ``huggingface_hub`` library would use (env vars honoured)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    home = Path(os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "huggingface")
    return home.expanduser() / "hub"


def tiktoken_cache_dir() -> Path | None:
    """tiktoken's cache directory (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR`` or the temp dir),
    or None when ``TIKTOKEN_CACHE_DIR`` is set and empty: tiktoken then caches nothing."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value).expanduser() if value else None
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


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


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
            revisions = sorted(snaps.iterdir(), key=_mtime, reverse=True)
        except OSError:
            continue
        for rev in revisions[:1]:  # the newest snapshot is what the library would load
            for fname in _HF_FILES:
                for cand in (rev / fname, *sorted(rev.glob(f"*/{fname}"))):
                    if is_regular_file(cand):
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
        with open_regular(path) as f:
            head = f.read(256)
    except (OSError, TokvizFormatError):
        return False
    line = head.split(b"\n", 1)[0].split()
    return len(line) == 2 and line[1].isdigit() and all(c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" for c in line[0])


def _tiktoken_entries(cache: Path | None) -> list[Discovered]:
    # tiktoken names a cache entry by the SHA-1 of the URL it came from.
    known = {hashlib.sha1(_TIKTOKEN_URL.format(n).encode()).hexdigest(): n for n in _TIKTOKEN_NAMES}
    out: list[Discovered] = []
    if cache is None:
        return out
    try:
        files = sorted(p for p in cache.iterdir() if is_regular_file(p))
    except OSError:
        return out
    for f in files:
        if f.suffix or not _looks_like_ranks(f):
            continue
        name = known.get(f.name) or _recognised_name(f) or f"rank file {f.name[:8]}"
        out.append(Discovered(f"{name} (tiktoken cache)", f, "tiktoken-cache"))
    return out


# (path, size, mtime) -> the recognised name: every window lists the cache for its pickers, and a
# cache that tiktoken filled with entries for local files holds hundreds of multi-MB files.
_RECOGNISED: dict[tuple[str, int, int], str | None] = {}


def _recognised_name(path: Path) -> str | None:
    """The encoding a cache entry's content is (tiktoken names entries by the hash of the URL
    they came from, which says nothing when the URL was not one of the four known ones); read
    once per file version in a process."""
    from .tiktoken_ranks import recognise_ranks

    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in _RECOGNISED:
            guess = recognise_ranks(read_regular(path, limit=64 << 20))
            _RECOGNISED[key] = guess.name if guess is not None else None
    except (OSError, TokvizFormatError):
        return None
    return _RECOGNISED[key]


def ollama_models_dir() -> Path:
    """Ollama's model store: ``OLLAMA_MODELS``, else ``~/.ollama/models``."""
    env = os.environ.get("OLLAMA_MODELS")
    return Path(env).expanduser() if env else Path("~/.ollama/models").expanduser()


def lmstudio_models_dirs() -> list[Path]:
    """LM Studio's models folders: ``~/.lmstudio/models`` (current) and ``~/.cache/lm-studio/models`` (older)."""
    return [Path("~/.lmstudio/models").expanduser(), Path("~/.cache/lm-studio/models").expanduser()]


_OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
_OLLAMA_DEFAULT_PREFIX = ("registry.ollama.ai", "library")


def _ollama_name(parts: tuple[str, ...]) -> str:
    """``model:tag`` as ``ollama list`` shows it (registry and namespace shown unless default)."""
    *prefix, model, tag = parts
    if tuple(prefix) == _OLLAMA_DEFAULT_PREFIX:
        prefix = []
    elif prefix and prefix[0] == _OLLAMA_DEFAULT_PREFIX[0]:
        prefix = prefix[1:]
    return "/".join([*prefix, model]) + f":{tag}"


_DIGEST = re.compile(r"[a-z0-9]+:[0-9a-f]{16,128}")


def _ollama_manifest(f: Path, problems: list[str]) -> str | None:
    """The digest of the model layer of one manifest, or None (with a warning when the file is
    not a JSON object of the expected shape)."""
    try:
        manifest = loads(read_regular(f, limit=1 << 20), source=str(f))
    except TokvizFormatError as exc:
        problems.append(f"{exc}; skipped")
        return None
    layers = manifest.get("layers") if isinstance(manifest, dict) else None
    if not isinstance(layers, list):
        problems.append(f'{f}: not an Ollama manifest (no "layers" list); skipped')
        return None
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == _OLLAMA_MODEL_LAYER:
            digest = layer.get("digest")
            if isinstance(digest, str) and _DIGEST.fullmatch(digest):
                return digest
            problems.append(f"{f}: the model layer's digest {str(digest)[:80]!r} is not a digest; skipped")
            return None
    return None  # a manifest without a model layer (an adapter, a projector): nothing to list


def _ollama_entries(models: Path, problems: list[str]) -> list[Discovered]:
    """manifests/<registry>/<namespace>/<model>/<tag> (JSON) -> the GGUF blob of its model layer."""
    manifests = models / "manifests"
    out: list[Discovered] = []
    try:
        files = sorted(p for p in manifests.rglob("*") if not p.is_dir())
    except OSError:
        return out
    for f in files[:_MAX_SNAPSHOTS]:
        parts = f.relative_to(manifests).parts
        if len(parts) < 3:
            continue
        digest = _ollama_manifest(f, problems)
        if digest is not None:
            blob = models / "blobs" / digest.replace(":", "-", 1)
            if is_regular_file(blob):
                out.append(Discovered(_ollama_name(parts), blob, "ollama"))
    return out


def _lmstudio_entries(folders: list[Path]) -> list[Discovered]:
    """<publisher>/<repo>/<file>.gguf under LM Studio's models folder (vision projectors skipped)."""
    out: list[Discovered] = []
    for root in folders:
        try:
            files = sorted(root.glob("*/*/*.gguf"))
        except OSError:
            continue
        for f in files[:_MAX_SNAPSHOTS]:
            if f.name.lower().startswith("mmproj") or not is_regular_file(f):
                continue
            out.append(Discovered(f"{f.relative_to(root).as_posix()} (LM Studio)", f, "lmstudio"))
    return out


def discover(
    *,
    hf_hub: Path | None = None,
    tiktoken_dir: Path | None = None,
    ollama_dir: Path | None = None,
    lmstudio_dirs: list[Path] | tuple[Path, ...] | None = None,
    problems: list[str] | None = None,
) -> list[Discovered]:
    """Tokenizer files in the local caches and model stores (empty when there are none).

    Entries that cannot be listed (a broken Ollama manifest) are skipped; one line per such
    entry is appended to ``problems`` when it is given.
    """
    skipped: list[str] = problems if problems is not None else []
    return (
        _hf_entries(hf_hub or hf_hub_dir())
        + _tiktoken_entries(tiktoken_dir or tiktoken_cache_dir())
        + _ollama_entries(ollama_dir or ollama_models_dir(), skipped)
        + _lmstudio_entries(list(lmstudio_dirs) if lmstudio_dirs is not None else lmstudio_models_dirs())
    )


def find_discovered(name: str, found: list[Discovered] | None = None) -> Discovered | None:
    """The discovered entry called exactly ``name`` (an Ollama ``model:tag`` ...), if any."""
    for d in found if found is not None else discover():
        if d.name == name:
            return d
    return None
