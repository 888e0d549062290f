"""Opening a file that may not be a regular file, without ever blocking on it.

``open()`` of a FIFO blocks until a writer appears, and a character device can be endless, so a
FIFO named ``tokenizer.json`` in a model folder (or in a cache that discovery lists) would hang
any reader. `open_regular` opens with ``O_NONBLOCK`` (which makes opening a FIFO return at
once), checks with ``fstat`` that what it opened is a regular file, and only then reads: the
check and the read are on the same descriptor, so nothing can be swapped in between.
Tokenizer files (`detect`), discovery and safetensors headers are read this way; text
(``--file``, ``--messages``) is not, since a pipe is a fine source of text (``<(cmd)``).

>>> is_regular_file(Path(__file__)), is_regular_file(Path(__file__).parent)
(True, False)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..engine.errors import TokvizFormatError

__all__ = ["is_regular_file", "open_regular", "read_regular"]


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
