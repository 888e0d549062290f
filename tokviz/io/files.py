"""How a tokenizer's bytes are found and read: the file a folder holds (`resolve_path`), a
file's bytes with one clear error (`read_file`), gzip undone (`read_bytes`).

`tokviz.io.detect` decides what the bytes are; this module only finds and reads them, so every
loader (and the GUI's rank-file check) can read a file the way `load` does without importing
`detect`.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from ..engine.errors import TokvizFormatError

__all__ = ["DIR_CANDIDATES", "GZIP_MAGIC", "read_bytes", "read_file", "resolve_path", "sibling"]

GZIP_MAGIC = b"\x1f\x8b"

#: what a folder may hold, in order of preference (the first found wins; each possibly ``.gz``)
DIR_CANDIDATES = ("tokenizer.json", "tokenizer.model", "vocab.json", "*.tiktoken", "vocab.txt", "*.gguf")


def resolve_path(path: Path) -> Path:
    """The file `load` reads for ``path``: the path itself, or the tokenizer file a folder holds."""
    return _pick_in_folder(path) if path.is_dir() else path


def read_bytes(data: bytes, *, source: str) -> bytes:
    """The content of a file's bytes: gunzipped when they start with the gzip magic.

    >>> read_bytes(gzip.compress(b"IQ== 0\\n"), source="ranks.tiktoken.gz")
    b'IQ== 0\\n'
    >>> read_bytes(b"plain", source="vocab.txt")
    b'plain'
    """
    if data[:2] != GZIP_MAGIC:
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError, zlib.error) as exc:
        raise TokvizFormatError(f"truncated or corrupt gzip data ({exc})", source=source) from None


def read_file(p: Path) -> bytes:
    """The bytes of file ``p``; a missing or unreadable file is a `TokvizFormatError` naming it."""
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=str(p)) from None
    except IsADirectoryError:
        raise TokvizFormatError("is a directory", source=str(p)) from None
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=str(p)) from None


def sibling(folder: Path | None, name: str) -> Path | None:
    """``folder/name`` or ``folder/name.gz`` when it is a file."""
    if folder is None:
        return None
    for candidate in (folder / name, folder / (name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def _pick_in_folder(folder: Path) -> Path:
    for name in DIR_CANDIDATES:
        if name.startswith("*"):
            found = sorted([*folder.glob(name), *folder.glob(name + ".gz")])
            if found:
                return found[0]
            continue
        found_one = sibling(folder, name)
        if found_one is not None:
            if name == "vocab.json" and sibling(folder, "merges.txt") is None:
                continue
            return found_one
    wanted = ", ".join(n for n in DIR_CANDIDATES)
    raise TokvizFormatError(
        f"no tokenizer file in this folder (looked for {wanted}, also .gz)", source=str(folder)
    )
