"""The GGUF container read in one bounded pass: header, typed metadata, tensor descriptions.

`gguf` builds tokenizers from the ``tokenizer.*`` keys; this module only reads the file. A GGUF
file is the magic ``GGUF``, a version, the tensor and key counts, then each key (a string), its
value type and value (scalars, strings, arrays of either, arrays nested a few levels), then one
description per tensor (name, dimensions, type, data offset). The weights that follow are never
touched: the file is memory-mapped and only the header pages are read.

Every count is checked against the bytes left before anything is allocated for it, so a damaged
length is an error naming the key, never an allocation without bound; any other damage (a value
type that does not exist, a string cut off by the end of the file) is a `TokvizFormatError`
naming the file and the key where it was found.

``stop`` lets a caller refuse a file from one key without reading the rest: it is called after
each key with the key and its value and may raise (a model type the caller cannot build is
refused before a 260,000-entry token list is decoded).

Why not the ``gguf`` package's ``GGUFReader``: it makes a numpy view per value, hundreds of
thousands of them for a large vocabulary; one pass with ``struct`` over the mapping and
``numpy.frombuffer`` for numeric arrays avoids that (`bench/bench_gguf.py` times both). String arrays stay a Python loop: their lengths are sequential.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.errors import TokvizFormatError

__all__ = ["GGUF_MAGIC", "GGUFValue", "GGUFMetadata", "TYPE_NAMES", "read_gguf_metadata"]

GGUF_MAGIC = b"GGUF"

#: GGUF value types by number (gguf.h's ``gguf_type``)
TYPE_NAMES = {
    0: "UINT8", 1: "INT8", 2: "UINT16", 3: "INT16", 4: "UINT32", 5: "INT32", 6: "FLOAT32",
    7: "BOOL", 8: "STRING", 9: "ARRAY", 10: "UINT64", 11: "INT64", 12: "FLOAT64",
}
_STRING, _ARRAY = 8, 9
_SCALAR_FORMAT = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_NUMPY_DTYPE = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "u1", 10: "u8", 11: "i8", 12: "f8"}
_MAX_ARRAY_NESTING = 8


@dataclass(frozen=True, slots=True)
class GGUFValue:
    """One metadata value: its GGUF type, the item type of an array, and the Python value
    (int / float / bool / str for scalars, a list for arrays; strings stay ``bytes`` inside
    arrays until a caller decodes them, so a bad entry can be named by its index)."""

    type: int
    item_type: int | None
    value: Any


@dataclass(frozen=True, slots=True)
class GGUFMetadata:
    """What the header of a GGUF file holds."""

    version: int
    fields: dict[str, GGUFValue]
    tensor_shapes: dict[str, tuple[int, ...]]  # ggml's ne order: [n_embd, n_vocab] for token_embd


class _Cursor:
    """A position in the mapped file with bounded reads; errors name ``where``."""

    __slots__ = ("m", "size", "pos", "bo", "source")

    def __init__(self, m: mmap.mmap, source: str, bo: str) -> None:
        self.m, self.size, self.pos, self.bo, self.source = m, len(m), 0, bo, source

    def fail(self, message: str, where: str) -> TokvizFormatError:
        return TokvizFormatError(message, source=self.source, where=where)

    def take(self, fmt: str, where: str) -> Any:
        n = struct.calcsize(fmt)
        if self.pos + n > self.size:
            raise self.fail("truncated GGUF file (it ends inside this entry)", where)
        (v,) = struct.unpack_from(self.bo + fmt, self.m, self.pos)
        self.pos += n
        return v

    def need(self, count: int, each: int, what: str, where: str) -> None:
        if count * each > self.size - self.pos:
            raise self.fail(
                f"truncated or damaged GGUF file: {what} count {count:,} does not fit in the"
                f" {self.size - self.pos:,} bytes left",
                where,
            )

    def raw_string(self, where: str) -> bytes:
        n = self.take("Q", where)
        self.need(n, 1, "string byte", where)
        self.pos += n
        return self.m[self.pos - n : self.pos]

    def string(self, where: str) -> str:
        raw = self.raw_string(where)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"string is not valid UTF-8 (byte {exc.start})", where) from None


def _string_items(cur: _Cursor, count: int, where: str) -> list[bytes]:
    """``count`` strings in a row (the token list: hundreds of thousands), kept as bytes."""
    m, size, pos = cur.m, cur.size, cur.pos
    unpack = struct.Struct(cur.bo + "Q").unpack_from
    out: list[bytes] = []
    append = out.append
    for _ in range(count):
        if pos + 8 > size:
            cur.pos = pos
            raise cur.fail("truncated GGUF file (it ends inside this entry)", where)
        (n,) = unpack(m, pos)
        pos += 8
        if n > size - pos:
            cur.pos = pos
            cur.need(n, 1, "string byte", where)
        append(m[pos : pos + n])
        pos += n
    cur.pos = pos
    return out


def _value(cur: _Cursor, vtype: int, where: str, depth: int = 0) -> GGUFValue:
    if vtype in _SCALAR_FORMAT:
        return GGUFValue(vtype, None, cur.take(_SCALAR_FORMAT[vtype], where))
    if vtype == _STRING:
        return GGUFValue(vtype, None, cur.string(where))
    if vtype != _ARRAY:
        raise cur.fail(f"unknown GGUF value type ({vtype})", where)
    if depth >= _MAX_ARRAY_NESTING:
        raise cur.fail("arrays nested too deep", where)
    itype, count = cur.take("I", where), cur.take("Q", where)
    if itype in _SCALAR_FORMAT:
        import numpy as np

        each = struct.calcsize(_SCALAR_FORMAT[itype])
        cur.need(count, each, "array item", where)
        arr = np.frombuffer(cur.m, dtype=np.dtype(_NUMPY_DTYPE[itype]).newbyteorder(cur.bo), count=count, offset=cur.pos)
        cur.pos += count * each
        items = arr.astype(bool).tolist() if itype == 7 else arr.tolist()
        return GGUFValue(vtype, itype, items)
    if itype == _STRING:
        cur.need(count, 8, "array item", where)
        return GGUFValue(vtype, itype, _string_items(cur, count, where))
    if itype == _ARRAY:
        cur.need(count, 12, "array item", where)
        return GGUFValue(vtype, itype, [_value(cur, _ARRAY, where, depth + 1).value for _ in range(count)])
    raise cur.fail(f"unknown GGUF value type ({itype})", where)


def _open(path: Path, source: str) -> mmap.mmap:
    try:
        with path.open("rb") as f:
            head = f.read(24)
            if head[:4] != GGUF_MAGIC:
                raise TokvizFormatError("not a GGUF file (wrong magic)", source=source)
            if len(head) < 24:  # magic, version, tensor count, key count
                raise TokvizFormatError("truncated GGUF header", source=source, where="header")
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=source) from None


def read_gguf_metadata(
    path: str | Path, *, source: str | None = None, stop: Callable[[str, GGUFValue], None] | None = None
) -> GGUFMetadata:
    """Read the metadata and tensor descriptions of a GGUF file (the weights are never read).

    ``stop(key, value)`` runs after each key and may raise to refuse the file at once.
    """
    p = Path(path)
    source = source or str(p)
    m = _open(p, source)
    try:
        (version,) = struct.unpack_from("<I", m, 4)
        bo = ">" if version & 0xFFFF == 0 and version else "<"  # a big-endian file
        if bo == ">":
            (version,) = struct.unpack_from(">I", m, 4)
        cur = _Cursor(m, source, bo)
        cur.pos = 8
        n_tensors, n_kv = cur.take("Q", "header"), cur.take("Q", "header")
        cur.need(n_kv, 12, "metadata key", "header")
        cur.need(n_tensors, 24, "tensor", "header")
        fields: dict[str, GGUFValue] = {}
        key = ""
        for _ in range(n_kv):
            key = cur.string(f"the key after {key!r}" if key else "the first key")
            value = _value(cur, cur.take("I", f"key {key!r}"), f"key {key!r}")
            fields[key] = value
            if stop is not None:
                stop(key, value)
        shapes = _tensor_shapes(cur, n_tensors)
        return GGUFMetadata(version=version, fields=fields, tensor_shapes=shapes)
    finally:
        m.close()


def _tensor_shapes(cur: _Cursor, n_tensors: int) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for k in range(n_tensors):
        where = f"tensor {k}"
        name = cur.string(where)
        n_dims = cur.take("I", f"tensor {name!r}")
        if n_dims > 8:  # GGML_MAX_DIMS is 4; a larger count is damage
            raise cur.fail(f"tensor with {n_dims} dimensions", f"tensor {name!r}")
        dims = tuple(cur.take("Q", f"tensor {name!r}") for _ in range(n_dims))
        cur.take("I", f"tensor {name!r}")  # ggml type
        cur.take("Q", f"tensor {name!r}")  # data offset
        shapes[name] = dims
    return shapes
