"""The one reader of user text files: UTF-8, byte-exact, never a newline translation.

Every text input (``tokviz encode --file``, File > Open text, ``tokviz gui --file``, corpus files
for training, Compare and lint) goes through here, so that the text tokviz encodes is the text in
the file, code point for code point: CR, CRLF, a leading BOM (kept as U+FEFF), NUL and every other
control stay as they are. Invalid UTF-8 is an error naming the file and the byte offset, unless the
caller asks explicitly for U+FFFD replacement (``errors="replace"``), in which case the result
says how many bytes were replaced.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = p.write_bytes(b"\\xef\\xbb\\xbfa\\r\\nb")
>>> t = read_text_file(p)
>>> t.text, t.bom
('\\ufeffa\\r\\nb', True)
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..engine.errors import TokvizFormatError

__all__ = ["TextFile", "read_text_file", "decode_text_bytes", "iter_text_blocks"]

_BOM = b"\xef\xbb\xbf"
#: bytes read per step by the streaming reader
BLOCK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class TextFile:
    """The text of a file and what the reader noticed about it."""

    path: str
    text: str
    size_bytes: int
    bom: bool  # the file starts with a UTF-8 BOM (kept in ``text`` as U+FEFF)
    replaced: int  # invalid sequences replaced by U+FFFD (only with errors="replace"; else 0)
    crlf: int  # number of CRLF pairs (for the status bar: "CRLF line ends kept")
    lone_cr: int  # CRs not followed by LF


def _invalid(path: str, data: bytes, exc: UnicodeDecodeError, base: int = 0) -> TokvizFormatError:
    start = base + exc.start
    bad = data[exc.start : exc.start + 4].hex(" ")
    return TokvizFormatError(
        f"not valid UTF-8 at byte {start} (0x{start:x}): {exc.reason} [{bad}]"
        " (open it with U+FFFD replacement to see it anyway)",
        source=path,
    )


def decode_text_bytes(
    data: bytes, *, source: str = "<bytes>", errors: Literal["strict", "replace"] = "strict"
) -> TextFile:
    """Decode ``data`` as UTF-8 exactly (BOM kept as U+FEFF, no newline translation)."""
    try:
        text = data.decode("utf-8", errors="strict")
        replaced = 0
    except UnicodeDecodeError as exc:
        if errors != "replace":
            raise _invalid(source, data, exc) from None
        text = data.decode("utf-8", errors="replace")
        # every invalid sequence became one U+FFFD; U+FFFD already in the file are not counted
        replaced = text.count("\ufffd") - data.count("\ufffd".encode())
    crlf = text.count("\r\n")
    return TextFile(
        path=source,
        text=text,
        size_bytes=len(data),
        bom=data.startswith(_BOM),
        replaced=replaced,
        crlf=crlf,
        lone_cr=text.count("\r") - crlf,
    )


def read_text_file(path: str | os.PathLike[str], *, errors: Literal["strict", "replace"] = "strict") -> TextFile:
    """Read a whole UTF-8 file exactly. Errors name the file (missing, unreadable, invalid UTF-8)."""
    p = str(path)
    try:
        data = Path(p).read_bytes()
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=p) from None
    except IsADirectoryError:
        raise TokvizFormatError("is a folder, not a text file", source=p) from None
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=p) from None
    return decode_text_bytes(data, source=p, errors=errors)


def iter_text_blocks(
    path: str | os.PathLike[str],
    *,
    block_bytes: int = BLOCK_BYTES,
    errors: Literal["strict", "replace"] = "strict",
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[str]:
    """Stream a large UTF-8 file as text blocks (never splitting a code point), byte-exact.

    ``progress(done_bytes, total_bytes)`` is called after each block. Joining the blocks gives
    exactly ``read_text_file(path).text``. Invalid UTF-8 raises with the absolute byte offset.
    """
    p = str(path)
    try:
        total = os.path.getsize(p)
        fh = open(p, "rb")  # noqa: SIM115 - closed in the finally below
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=p) from None
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=p) from None
    decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)
    done = 0
    try:
        while True:
            block = fh.read(block_bytes)
            final = not block
            pending = len(decoder.getstate()[0])  # bytes of a code point split by the last block
            try:
                text = decoder.decode(block, final=final)
            except UnicodeDecodeError as exc:
                # exc.start is relative to (pending bytes of the previous block + this block)
                raise _invalid(p, exc.object, exc, base=done - pending) from None
            done += len(block)
            if text:
                yield text
            if progress is not None:
                progress(done, total)
            if final:
                return
    finally:
        fh.close()
