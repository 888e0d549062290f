"""The tokenizer picker's entries: embedded bundles, locally discovered files, recent files.

No Qt here; the main window turns entries into combo-box items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..io.discovery import discover, hub_repo_id
from ..io.embedded import embedded_tokenizers
from ..resources import resource_path

__all__ = [
    "Entry", "embedded_bundles", "local_entries", "DEFAULT_BUNDLE", "sample_text", "path_label", "info_label",
    "format_tag", "load_error",
]

#: the bundle the app opens first
DEFAULT_BUNDLE = "cl100k_base/cl100k_base.tiktoken.gz"


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    path: Path
    group: str  # "Embedded", "Local cache", "Recent"


def embedded_bundles() -> list[Entry]:
    """The embedded tokenizers (`tokviz.io.embedded.EMBEDDED`) whose files are present, by title."""
    return [Entry(e.title, p, "Embedded") for e, p in embedded_tokenizers()]


def local_entries() -> list[Entry]:
    return [Entry(d.name, d.path, "Local cache") for d in discover()]


_listing: tuple[Entry, ...] | None = None


def listing(*, refresh: bool = False) -> list[Entry]:
    """The embedded and local-cache tokenizers, discovered once per process and shared by the
    window's picker and Compare's catalog (``refresh`` looks again)."""
    global _listing
    if _listing is None or refresh:
        entries = embedded_bundles()
        try:
            entries += local_entries()
        except OSError:
            pass
        _listing = tuple(entries)
    return list(_listing)


# File names that say nothing about the tokenizer: the folder (or the hub repo) names it instead.
_GENERIC_NAMES = {
    "tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "vocab.json", "vocab.txt",
    "merges.txt", "tokenizer_config.json", "vocab.bpe",
}


def path_label(path: Path) -> str:
    """A human name for a tokenizer file: embedded bundles by their name, hub-cache files by repo id,
    generic file names (``tokenizer.json``) with their folder.

    >>> path_label(Path("/x/hub/models--google-bert--bert-base-cased/snapshots/ab12/tokenizer.json"))
    'google-bert/bert-base-cased (tokenizer.json)'
    >>> path_label(Path("/data/qwen3/tokenizer.json.gz"))
    'qwen3 (tokenizer.json.gz)'
    >>> path_label(Path("/data/my.tiktoken"))
    'my.tiktoken'
    """
    for e in embedded_bundles():
        if e.path == path:
            return e.name
    repo = hub_repo_id(path)
    if repo is not None:
        return f"{repo} ({path.name})"
    base = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    if base in _GENERIC_NAMES and path.parent.name:
        return f"{path.parent.name} ({path.name})"
    return path.name


def format_tag(path: Path | str) -> str:
    """The file format in a few characters, to tell apart two tokenizers of the same name.

    >>> format_tag("/m/tokenizer.json.gz"), format_tag("/m/tokenizer.model"), format_tag("/m/vocab.txt")
    ('json', '.model', 'vocab.txt')
    """
    name = Path(path).name
    base = name[: -len(".gz")] if name.endswith(".gz") else name
    if base.endswith(".json"):
        return "json"
    if base in ("vocab.txt", "merges.txt", "vocab.bpe") or "." not in base:
        return base
    return base[base.rindex(".") :]


def load_error(path: Path | str, message: str) -> str:
    """The message of a failed tokenizer load, naming the file once (reader errors mostly start
    with the file already).

    >>> load_error("/m/a.gguf", "/m/a.gguf: tokenizer.ggml.model: 'x' is not supported")
    "Could not open the tokenizer: /m/a.gguf: tokenizer.ggml.model: 'x' is not supported"
    >>> load_error("/m/a.gguf", "truncated")
    'Could not open /m/a.gguf: truncated'
    """
    p = str(path)
    if p in message or Path(p).name in message:
        return f"Could not open the tokenizer: {message}"
    return f"Could not open {p}: {message}"


def info_label(info: dict) -> str:  # type: ignore[type-arg]
    """Model and vocabulary size from ``Tokenizer.info()``: ``"BPE · 151,669 entries"``."""
    parts = []
    model = info.get("model") or info.get("model_type")
    if model:
        parts.append(str(model))
    for key in ("total_entries", "vocab_size", "vocab"):
        if isinstance(info.get(key), int):
            parts.append(f"{info[key]:,} entries")
            break
    return " · ".join(parts)


def sample_text() -> str:
    from ..engine.errors import TokvizFormatError
    from ..io.textfile import read_text_file

    try:  # the sample as it is in the file (the one exact reader: no newline translation)
        return read_text_file(resource_path("samples", "mixed.txt")).text
    except TokvizFormatError:
        return "Hello, world! 你好，世界 🙂"
