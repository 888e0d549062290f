"""How a tokenizer's bytes are found and read: the file a folder holds (`resolve_path`), a
file's bytes with one clear error (`read_file`), gzip undone (`read_bytes`), and never a block
on a file that is not regular (`open_regular`, `read_regular`, `is_regular_file`).

`tokviz.io.detect` decides what the bytes are; this module only finds and reads them, so every
loader (and the GUI's rank-file check) can read a file the way `load` does without importing
`detect`.

``open()`` of a FIFO blocks until a writer appears, and a character device can be endless, so a
FIFO named ``tokenizer.json`` in a model folder (or in a cache that discovery lists) would hang
any reader. `open_regular` opens with ``O_NONBLOCK`` (which makes opening a FIFO return at
once), checks with ``fstat`` that what it opened is a regular file, and only then reads: the
check and the read are on the same descriptor, so nothing can be swapped in between.
Tokenizer files, discovery and safetensors headers are read this way; text (``--file``,
``--messages``) is not, since a pipe is a fine source of text (``<(cmd)``).

>>> is_regular_file(Path(__file__)), is_regular_file(Path(__file__).parent)
(True, False)
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from ..engine.errors import TokvizFormatError

__all__ = [
    "DIR_CANDIDATES",
    "GZIP_MAGIC",
    "is_regular_file",
    "open_regular",
    "read_bytes",
    "read_file",
    "read_regular",
    "resolve_path",
    "sibling",
]

GZIP_MAGIC = b"\x1f\x8b"

#: what a folder may hold, in order of preference (the first found wins; each possibly ``.gz``);
#: then a rank JSON (js-tiktoken, claude.json) found by its content (`_rank_json_in`)
DIR_CANDIDATES = (
    "tokenizer.json", "tekken.json", "tokenizer.model", "vocab.json", "*.tiktoken", "vocab.txt", "*.gguf",
    "bpe_simple_vocab*.txt",
)


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
    """The bytes of file ``p``; a missing or unreadable file, or one that is not a regular file
    (a FIFO would block the read forever), is a `TokvizFormatError` naming it."""
    return read_regular(p)


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
        if "*" in name:
            found = sorted([*folder.glob(name), *folder.glob(name + ".gz")])
            if found:
                return found[0]
            continue
        found_one = sibling(folder, name)
        if found_one is not None:
            if name == "vocab.json" and sibling(folder, "merges.txt") is None:
                continue
            return found_one
    rank_json = _rank_json_in(folder)
    if rank_json is not None:
        return rank_json
    wanted = ", ".join(n for n in DIR_CANDIDATES)
    raise TokvizFormatError(
        f"no tokenizer file in this folder (looked for {wanted}, also .gz, and a js-tiktoken rank JSON)",
        source=str(folder),
    )


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` is (a link to) a regular file; never opens it."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: Path, *, source: str | None = None) -> BinaryIO:
    """``path`` opened for binary reading; `TokvizFormatError` naming ``source`` (the path by
    default) when it is missing, unreadable, or anything but a regular file."""
    where = source if source is not None else str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=where) from None
    except IsADirectoryError:
        raise TokvizFormatError("is a directory", source=where) from None
    except (OSError, ValueError) as exc:
        raise TokvizFormatError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", source=where) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TokvizFormatError(f"is {_kind(mode)}, not a file tokviz can read", source=where)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, *, source: str | None = None, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (`open_regular`); with ``limit``, a file larger
    than that is refused instead of read."""
    with open_regular(path, source=source) as f:
        if limit is not None:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise TokvizFormatError(
                    f"{size:,} bytes, more than the {limit:,} expected here",
                    source=source if source is not None else str(path),
                )
        try:
            return f.read()
        except OSError as exc:
            raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=source or str(path)) from None


def _rank_json_in(folder: Path) -> Path | None:
    """The first ``*.json`` / ``*.js`` / ``*.cjs`` (or ``.gz``) of ``folder`` whose first 4 KiB
    hold a ``bpe_ranks`` key: a js-tiktoken rank file such as claude.json."""
    names = sorted(p for ext in ("json", "js", "cjs") for p in (*folder.glob(f"*.{ext}"), *folder.glob(f"*.{ext}.gz")))
    for p in names:
        if not is_regular_file(p):
            continue
        try:
            with (gzip.open(p, "rb") if p.name.endswith(".gz") else p.open("rb")) as f:
                head = f.read(4096)
        except (OSError, EOFError, zlib.error):
            continue
        if b'"bpe_ranks"' in head:
            return p
    return None
