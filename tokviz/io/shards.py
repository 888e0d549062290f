"""Corpus shards: a corpus cut into independent pieces of work, and the one reader of its records.

A corpus is one or more paths: files, folders (their regular files, recursively, sorted, hidden
ones skipped) or glob patterns (``data/**/*.jsonl.zst``). The format follows the name:

* ``*.jsonl`` / ``*.ndjson``: one JSON object per line; the document is its string ``field``
  (``text`` unless told); a line that is not an object with that string field is skipped and
  counted;
* ``*.parquet``: the string column ``field`` (needs pyarrow: ``pip install "tokviz[parquet]"``);
* anything else: UTF-8 text, read byte-exact, cut into documents by the mode: ``whole`` (the
  file), ``lines`` (split on LF, the LF not part of the line, empty lines skipped) or
  ``paragraphs`` (blank-line separated);
* ``.gz`` (stdlib) or ``.zst`` (zstandard: ``pip install "tokviz[zstd]"``) after any of these:
  decompressed as it streams.

**Shards.** `plan_shards` cuts the corpus into shards of about `shard_bytes_for` the corpus
size (1 to 64 MiB, from the corpus alone: never from the number of workers, so the same corpus
always gives the same shards): small files share a shard, a big uncompressed text file is split
into byte ranges cut at record boundaries (after a line's LF; after a paragraph's separator; in
``whole`` mode at a piece cut, below), a Parquet file by row groups. A compressed file is one
shard (it cannot be entered in the middle). Every record lies in one shard.

**Pieces: what ``whole`` means for a huge file.** No text longer than 2 MiB is handed to one
encode call, however the file is laid out (an encode keeps ~100 bytes per byte of text). A record
longer than `PIECE_BYTES` (1 MiB) is cut once in every MiB of it, counted from its start: after
the last LF in that MiB, else after its last space, else at its last character boundary; every
piece is then under 2 MiB. In ``whole`` mode the record is the file, so a file under 1 MiB is one
document and a bigger one is a run of documents of 1 to 2 MiB cut at line ends (prose and code
almost always have one in every MiB). A line (``lines``) or paragraph is cut the same way, from
its own start. Pieces are a property of the file's bytes alone, so the plan and the executor
never change them; the documents' ``piece`` numbers say where a record was cut.

**Records over the limit.** A JSON line or a Parquet value must be held whole to be parsed: one
longer than ``max_record`` (`MAX_RECORD_BYTES`, 64 MiB; ``--max-record-mb`` raises it) is
refused with the file and line (row); its text is then cut into pieces like any other record.
Memory per worker stays bounded by about two pieces and one record, whatever the input.

Line numbers inside a byte-range shard are counted from the shard's start (`Record.line`); the
reader reports each part's newline count (`PartStats`) and the reduce adds the lines of the parts
before it (`LineBases`), so reported lines are the file's.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import regex

from ..engine.errors import TokvizFormatError

__all__ = [
    "MAX_RECORD_BYTES",
    "PIECE_BYTES",
    "LineBases",
    "Part",
    "PartStats",
    "ReadOptions",
    "Record",
    "Shard",
    "ShardReader",
    "corpus_files",
    "iter_records",
    "plan_shards",
    "shard_bytes_for",
]

PIECE_BYTES = 1 << 20
MAX_RECORD_BYTES = 64 << 20
_BLOCK = 1 << 20
_MIN_SHARD = 1 << 20
_MAX_SHARD = 64 << 20
_SHARDS_WANTED = 64  # a corpus is cut into about this many shards (between the two sizes above)
_PARAGRAPH_SEP = regex.compile(rb"\n(?:[ \t\r\f\v]*\n)+")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_COMPRESSION = {".gz": "gzip", ".zst": "zstd"}
_MODES = ("whole", "lines", "paragraphs")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How records are read: the text mode, the JSON/Parquet field and the limits.

    ``mode`` is ``whole``, ``lines``, ``paragraphs`` or ``jsonl:FIELD`` (every file read as JSON
    lines, whatever its name). ``keep_newline``: a line keeps its LF (`tokviz lint --corpus`
    lints the file's exact text); empty lines are then records too.
    """

    mode: str = "whole"
    field: str = "text"
    max_record: int = MAX_RECORD_BYTES
    piece_bytes: int = PIECE_BYTES
    keep_newline: bool = False

    def __post_init__(self) -> None:
        if self.mode not in _MODES and not (self.mode.startswith("jsonl:") and len(self.mode) > 6):
            raise ValueError(
                f"unknown document mode {self.mode!r}: expected whole, lines, paragraphs or jsonl:FIELD"
            )
        if not self.field:
            raise ValueError("--field must not be empty")
        if self.max_record < 1:
            raise ValueError("--max-record-mb must be positive")
        if self.piece_bytes < 16:
            raise ValueError("piece_bytes must be at least 16")

    @property
    def text_mode(self) -> str:
        """The mode of text files (``lines`` when every file is read as JSON lines)."""
        return "lines" if self.mode.startswith("jsonl:") else self.mode

    @property
    def json_field(self) -> str:
        return self.mode[6:] if self.mode.startswith("jsonl:") else self.field

    def kind_of(self, path: str) -> tuple[str, str]:
        """(kind, compression) of a file: kind ``text``, ``jsonl`` or ``parquet``."""
        name = path.lower()
        compression = ""
        for suffix, comp in _COMPRESSION.items():
            if name.endswith(suffix):
                name, compression = name[: -len(suffix)], comp
                break
        if name.endswith(".parquet"):
            if compression:
                raise TokvizFormatError("a compressed Parquet file: Parquet compresses its own pages", source=path)
            return "parquet", ""
        if self.mode.startswith("jsonl:") or name.endswith(_JSONL_SUFFIXES):
            return "jsonl", compression
        return "text", compression


@dataclass(frozen=True, slots=True)
class Part:
    """One file's share of a shard: a byte range of a text file (``end`` -1: to its end), a
    Parquet row group (``start``), or a whole compressed file. ``size``: its bytes on disk."""

    path: str
    kind: str
    compression: str
    start: int
    end: int
    size: int
    first_row: int = 0  # Parquet: rows in the row groups before this one


@dataclass(frozen=True, slots=True)
class Shard:
    """One unit of work: consecutive parts of the corpus, in corpus order."""

    index: int
    parts: tuple[Part, ...]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.parts)


@dataclass(frozen=True, slots=True)
class Record:
    """One document as read: its text, where it is, and which piece of its record it is.

    ``byte_offset``: of the piece in the (decompressed) file, or of its JSON line; None for
    Parquet. ``line``: 1-based line of the piece's first byte (row for Parquet), counted from the
    part's start (see `LineBases`). ``part``: index of its part in the shard.
    """

    text: str
    source: str
    byte_offset: int | None
    line: int
    piece: int = 0
    part: int = 0


@dataclass(slots=True)
class PartStats:
    """What reading one part counted: its LFs (for the line numbers of later parts), the records
    skipped (JSON lines without the string field) and the records cut into pieces."""

    newlines: int = 0
    skipped: int = 0
    split: int = 0


class LineBases:
    """The lines before each part of a file, from the parts' newline counts in corpus order.

    >>> lb = LineBases()
    >>> lb.base("a.txt", 0), lb.advance("a.txt", 0, 3), lb.base("a.txt", 100)
    (0, None, 3)
    """

    def __init__(self) -> None:
        self._lines: dict[str, int] = {}

    def base(self, path: str, start: int) -> int:
        """Lines before a part starting at byte ``start`` of ``path`` (0 for a file's first part)."""
        return self._lines.get(path, 0) if start > 0 else 0

    def advance(self, path: str, start: int, newlines: int) -> None:
        self._lines[path] = self.base(path, start) + newlines


# ---------------------------------------------------------------------- files
def corpus_files(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The files of a corpus: each path a file, a folder (its regular files, recursively, sorted,
    hidden ones skipped) or a glob pattern (sorted matches; ``**`` recurses). Missing: an error."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            out.extend(
                sorted(
                    f
                    for f in p.rglob("*")
                    if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
                )
            )
        elif p.exists():
            out.append(p)
        elif glob.has_magic(str(item)):
            matches = sorted(Path(m) for m in glob.glob(str(item), recursive=True) if Path(m).is_file())
            if not matches:
                raise TokvizFormatError("no file matches this pattern", source=str(item))
            out.extend(matches)
        else:
            raise TokvizFormatError("no such file or folder", source=str(p))
    return out


def describe_paths(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> str:
    """The corpus as reports name it: its path, or its paths separated by spaces."""
    if isinstance(paths, (str, os.PathLike)):
        return str(paths)
    return " ".join(str(p) for p in paths)


def shard_bytes_for(total: int) -> int:
    """The shard size of a corpus of ``total`` bytes: about 1/64 of it, 1 to 64 MiB, in whole MiB.

    >>> shard_bytes_for(5 << 20) == 1 << 20, shard_bytes_for(100 << 30) == 64 << 20
    (True, True)
    """
    mib = math.ceil(total / _SHARDS_WANTED / _MIN_SHARD)
    return max(_MIN_SHARD, min(_MAX_SHARD, mib * _MIN_SHARD))


def plan_shards(
    files: Sequence[Path], opts: ReadOptions, *, shard_bytes: int | None = None
) -> list[Shard]:
    """The shards of ``files`` (see the module docstring); ``shard_bytes`` overrides the size."""
    sizes = [_file_size(f) for f in files]
    target = shard_bytes or shard_bytes_for(sum(sizes))
    parts: list[Part] = []
    for f, size in zip(files, sizes):
        kind, comp = opts.kind_of(str(f))
        if kind == "parquet":
            parts.extend(_parquet_parts(str(f)))
        elif comp or size <= target:
            parts.append(Part(str(f), kind, comp, 0, -1, size))
        else:
            cuts = _byte_range_cuts(str(f), size, target, kind, opts)
            parts.extend(Part(str(f), kind, "", a, b, b - a) for a, b in zip([0, *cuts], [*cuts, size]))
    return _group(parts, target)


def _group(parts: list[Part], target: int) -> list[Shard]:
    """Consecutive parts gathered into shards of at most ``target`` bytes (a bigger part alone)."""
    shards: list[Shard] = []
    current: list[Part] = []
    size = 0
    for part in parts:
        if current and size + part.size > target:
            shards.append(Shard(len(shards), tuple(current)))
            current, size = [], 0
        current.append(part)
        size += part.size
    if current:
        shards.append(Shard(len(shards), tuple(current)))
    return shards


def _file_size(f: Path) -> int:
    try:
        return f.stat().st_size
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=str(f)) from None


def _byte_range_cuts(path: str, size: int, target: int, kind: str, opts: ReadOptions) -> list[int]:
    """Cut positions of a big uncompressed file near every ``target`` bytes, at record boundaries."""
    mode = "lines" if kind == "jsonl" else opts.text_mode
    if mode == "whole":  # (cuts fall on piece cuts: a whole number of pieces per shard)
        target = max(1, target // opts.piece_bytes) * opts.piece_bytes
    cuts: list[int] = []
    with _open_raw(path) as fh:
        for k in range(1, (size - 1) // target + 1):
            if mode == "whole":
                cut = _piece_cut_in_file(fh, k * target - opts.piece_bytes, k * target)
            else:
                cut = _next_boundary(fh, k * target, size, paragraphs=mode == "paragraphs")
            if cut is None or cut >= size:
                break
            if not cuts or cut > cuts[-1]:
                cuts.append(cut)
    return cuts


def _next_boundary(fh: BinaryIO, at: int, size: int, *, paragraphs: bool) -> int | None:
    """The first record boundary at or after ``at``: after an LF at ``at - 1`` or later (lines),
    or at the end of the first paragraph separator ending there or later."""
    pos = max(0, at - 1)
    window = b""
    base = pos
    while base + len(window) < size:
        fh.seek(base + len(window))
        block = fh.read(_BLOCK)
        if not block:
            break
        window += block
        if not paragraphs:
            i = window.find(b"\n")
            if i >= 0:
                return base + i + 1
            base += len(window)
            window = b""
            continue
        for m in _PARAGRAPH_SEP.finditer(window):
            if m.end() == len(window) and base + len(window) < size:
                break  # the separator may go on in the next block
            if base + m.end() >= at:
                return base + m.end()
        keep = window.rfind(b"\n")  # a separator starts at an LF: keep the tail from the last one
        if keep < 0:
            base, window = base + len(window), b""
        else:
            base, window = base + keep, window[keep:]
    return None


def _piece_cut_in_file(fh: BinaryIO, cell_start: int, cell_end: int) -> int:
    """`_piece_cut` of the cell [cell_start, cell_end) of a file, read from its end by windows."""
    step = 64 << 10
    space = -1
    hi = cell_end
    while hi > cell_start:
        lo = max(cell_start, hi - step)
        fh.seek(lo)
        data = fh.read(hi - lo)
        i = data.rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        if space < 0 and (j := data.rfind(b" ")) >= 0:
            space = lo + j + 1
        hi = lo
    if space >= 0:
        return space
    lo = max(cell_start, cell_end - 3)
    fh.seek(lo)
    return lo + _char_boundary(fh.read(cell_end + 1 - lo), cell_end - lo, cell_start - lo)


def _piece_cut(data: bytes, cell_start: int, cell_end: int) -> int:
    """Where a record is cut in the cell [cell_start, cell_end) of ``data`` (``data[cell_end]``
    exists): after the cell's last LF, else after its last space, else at the character boundary
    at or before the cell's end (never at the cell's start)."""
    i = data.rfind(b"\n", cell_start, cell_end)
    if i < 0:
        i = data.rfind(b" ", cell_start, cell_end)
    if i >= 0:
        return i + 1
    return _char_boundary(data, cell_end, cell_start)


def _char_boundary(data: bytes, p: int, floor: int) -> int:
    """``p`` moved back over UTF-8 continuation bytes (to a character's lead byte: at most 3)."""
    end = p
    while p > floor + 1 and p > end - 3 and 0x80 <= data[p] < 0xC0:
        p -= 1
    return p


def _parquet_parts(path: str) -> list[Part]:
    pf = _parquet_file(path)
    meta = pf.metadata
    parts = []
    first = 0
    for rg in range(meta.num_row_groups):
        g = meta.row_group(rg)
        parts.append(Part(path, "parquet", "", rg, rg + 1, max(1, g.total_byte_size), first))
        first += g.num_rows
    return parts


def _parquet_file(path: str) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TokvizFormatError(
            'reading Parquet needs pyarrow: pip install "tokviz[parquet]"', source=path
        ) from None
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise TokvizFormatError(f"not a readable Parquet file: {exc}", source=path) from None


# ---------------------------------------------------------------------- reading
def _open_raw(path: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=path) from None
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=path) from None


def _open_stream(path: str, compression: str) -> BinaryIO:
    raw = _open_raw(path)
    if not compression:
        return raw
    if compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    try:
        from compression import zstd  # type: ignore[import-not-found] # Python 3.14+

        return zstd.ZstdFile(raw)  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raw.close()
        raise TokvizFormatError(
            'reading .zst needs zstandard: pip install "tokviz[zstd]"', source=path
        ) from None
    return zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)  # type: ignore[no-any-return]


def _blocks(part: Part) -> Iterator[bytes]:
    """The part's (decompressed) bytes, from ``start`` to ``end``, by blocks."""
    fh = _open_stream(part.path, part.compression)
    try:
        if part.start:
            fh.seek(part.start)
        left = part.end - part.start if part.end >= 0 else -1
        while left:
            try:
                block = fh.read(_BLOCK if left < 0 else min(_BLOCK, left))
            except (OSError, EOFError, ValueError) as exc:
                what = "gzip" if part.compression == "gzip" else "zstd" if part.compression else "file"
                raise TokvizFormatError(f"cannot read the {what} stream: {exc}", source=part.path) from None
            if not block:
                return
            if left > 0:
                left -= len(block)
            yield block
    finally:
        fh.close()


class ShardReader:
    """The records of one shard, in order, with what reading counted (`stats`, one per part).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = p.write_bytes(b"a b\\n\\nc\\n")
    >>> opts = ReadOptions(mode="lines")
    >>> [(r.text, r.line) for r in ShardReader(plan_shards([p], opts)[0], opts)]
    [('a b', 1), ('c', 3)]
    """

    def __init__(self, shard: Shard, opts: ReadOptions) -> None:
        self.shard = shard
        self.opts = opts
        self.stats: list[PartStats] = [PartStats() for _ in shard.parts]
        self.records = 0  # records yielded so far

    def __iter__(self) -> Iterator[Record]:
        for k, part in enumerate(self.shard.parts):
            stats = self.stats[k]
            if part.kind == "parquet":
                records = _parquet_records(part, k, self.opts, stats)
            elif part.kind == "jsonl":
                records = _jsonl_records(part, k, self.opts, stats)
            else:
                records = _text_records(part, k, self.opts, stats)
            for rec in records:
                self.records += 1
                yield rec


def iter_records(files: Sequence[Path], opts: ReadOptions) -> Iterator[tuple[Record, int]]:
    """Every record of ``files`` in corpus order, with lines counted from each file's start, and
    the on-disk bytes read so far (a sequential reader: the executors read shard by shard)."""
    bases = LineBases()
    done = 0
    for shard in plan_shards(files, opts):
        reader = ShardReader(shard, opts)
        parts = shard.parts
        pending = 0
        for rec in reader:
            while pending < rec.part:  # the parts before this record's are read: their lines are known
                bases.advance(parts[pending].path, parts[pending].start, reader.stats[pending].newlines)
                done += parts[pending].size
                pending += 1
            line = rec.line + bases.base(parts[rec.part].path, parts[rec.part].start)
            yield Record(rec.text, rec.source, rec.byte_offset, line, rec.piece, rec.part), done
        for k in range(pending, len(parts)):
            bases.advance(parts[k].path, parts[k].start, reader.stats[k].newlines)
            done += parts[k].size


class _RecordTooLong(Exception):
    """A record in progress went past the cutter's ``limit`` (``offset``: where it starts)."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


class _Cutter:
    """Records of a byte stream between separators, each cut into pieces (module docstring).

    The buffer starts at ``piece_start`` (absolute offset), the start of the piece in progress;
    ``rec`` is the start of the record in progress and ``cell`` the next cell of it to cut in;
    ``scan`` where the search for the next separator resumes; ``line`` the (part-local) line of
    ``piece_start``. ``limit``: a record longer than this raises `_RecordTooLong`.
    """

    __slots__ = (
        "buf",
        "cell",
        "how",
        "keep_newline",
        "limit",
        "line",
        "out",
        "piece_no",
        "piece_start",
        "rec",
        "scan",
        "size",
    )

    def __init__(self, how: str, size: int, *, keep_newline: bool = False, limit: int = 0, start: int = 0) -> None:
        self.how = how  # "lines" | "paragraphs" | "whole"
        self.size = size
        self.keep_newline = keep_newline and how == "lines"
        self.limit = limit
        self.buf = b""
        self.piece_start = self.rec = self.scan = start
        # a byte range of a file in whole mode starts at one of the file's cuts: its cells count
        # from the file's start (the next one is the cell after the cut's)
        self.cell = -(-start // size) if how == "whole" else 0
        self.rec = 0 if how == "whole" else start
        self.piece_no = self.cell
        self.line = 1
        self.out: list[tuple[int, int, int, bytes]] = []  # (offset, line, piece, bytes)

    def feed(self, block: bytes | None) -> list[tuple[int, int, int, bytes]]:
        """Add a block (None: the end of the stream); the pieces of records finished so far."""
        final = block is None
        if block:
            self.buf += block
        while self.how != "whole":
            sep = self._separator(final)
            if sep is None:
                break
            s, e = sep
            end = e if self.keep_newline else s
            if self.limit and end - self.rec > self.limit:
                raise _RecordTooLong(self.rec)
            self._cells(end)
            self._emit(end)
            self._skip(e)
            self.rec, self.cell, self.piece_no = e, 0, 0
        end = self.piece_start + len(self.buf)
        known = end if final or self.how != "paragraphs" else max(self.piece_start, self.scan)
        if self.limit and known - self.rec > self.limit:
            raise _RecordTooLong(self.rec)
        self._cells(known)
        if final:
            self._emit(end)
        out, self.out = self.out, []
        return out

    def _separator(self, final: bool) -> tuple[int, int] | None:
        """The next separator (absolute start, end), or None (``scan`` moves to where to resume)."""
        base = self.piece_start
        buf = self.buf
        if self.how == "lines":
            i = buf.find(b"\n", self.scan - base)
            if i < 0:
                self.scan = base + len(buf)
                return None
            return base + i, base + i + 1
        m = _PARAGRAPH_SEP.search(buf, self.scan - base)
        if m is None or (m.end() == len(buf) and not final):
            # (a separator at the end of the data so far may go on; one may start at the last LF)
            last = buf.rfind(b"\n", self.scan - base)
            self.scan = base + (m.start() if m is not None else last if last >= 0 else len(buf))
            return None
        return base + m.start(), base + m.end()

    def _cells(self, known: int) -> None:
        """Cut the record in progress in every cell that it is known to go past (before ``known``)."""
        size = self.size
        while True:
            cell_end = self.rec + (self.cell + 1) * size
            if cell_end >= known:
                return
            base = self.piece_start
            cut = base + _piece_cut(self.buf, cell_end - size - base, cell_end - base)
            self._emit(cut)
            self.cell += 1

    def _emit(self, end: int) -> None:
        """The piece [piece_start, end) is finished (empty ones are not records)."""
        n = end - self.piece_start
        if n > 0:
            data = self.buf[:n]
            self.out.append((self.piece_start, self.line, self.piece_no, data))
            self.line += data.count(b"\n")
            self.buf = self.buf[n:]
            self.piece_start = end
        self.piece_no += 1

    def _skip(self, end: int) -> None:
        """Drop a separator [piece_start, end)."""
        n = end - self.piece_start
        self.line += self.buf.count(b"\n", 0, n)
        self.buf = self.buf[n:]
        self.piece_start = self.scan = end


def _decode(data: bytes, offset: int, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = offset + exc.start
        bad = data[exc.start : exc.start + 4].hex(" ")
        raise TokvizFormatError(f"not valid UTF-8 at byte {at} (0x{at:x}): {exc.reason} [{bad}]", source=source) from None


def split_text(text: str, size: int = PIECE_BYTES) -> list[str]:
    """A record's text cut into pieces (the module docstring's rule; one piece when short).

    >>> split_text("aaaa bbbb cccc", 8)
    ['aaaa ', 'bbbb cccc']
    """
    data = text.encode("utf-8")
    if len(data) <= size:
        return [text] if text else []
    cutter = _Cutter("whole", size)
    return [piece.decode("utf-8") for _, _, _, piece in cutter.feed(data) + cutter.feed(None)]


def _text_records(part: Part, k: int, opts: ReadOptions, stats: PartStats) -> Iterator[Record]:
    cutter = _Cutter(opts.text_mode, opts.piece_bytes, keep_newline=opts.keep_newline, start=part.start)
    for block in _with_end(_blocks(part)):
        for offset, line, piece, data in cutter.feed(block):
            stats.split += piece == 1  # (a record's second piece is read exactly once)
            yield Record(_decode(data, offset, part.path), part.path, offset, line, piece, k)
    stats.newlines = cutter.line - 1


def _with_end(blocks: Iterator[bytes]) -> Iterator[bytes | None]:
    yield from blocks
    yield None


def _jsonl_records(part: Part, k: int, opts: ReadOptions, stats: PartStats) -> Iterator[Record]:
    name = opts.json_field
    cutter = _Cutter("lines", opts.max_record + 1, limit=opts.max_record, start=part.start)
    for block in _with_end(_blocks(part)):
        try:
            lines = cutter.feed(block)
        except _RecordTooLong as exc:
            raise _too_long(part, exc.offset, opts) from None
        for offset, line, _, data in lines:
            if not data.strip():
                continue
            obj = _json_line(data, part, line, offset)
            value = obj.get(name) if isinstance(obj, dict) else None
            if not isinstance(value, str):
                stats.skipped += 1
                continue
            pieces = split_text(value, opts.piece_bytes)
            stats.split += len(pieces) > 1
            for n, text in enumerate(pieces):
                yield Record(text, part.path, offset, line, n, k)
    stats.newlines = cutter.line - 1


def _json_line(data: bytes, part: Part, line: int, offset: int) -> Any:
    """The JSON value of one line, through the one bounded reader (`tokviz.io.json_text.loads`)."""
    from .json_text import loads

    return loads(_decode(data, offset, part.path), source=part.path, where=f"line {_line_hint(part, line)}")


def _line_hint(part: Part, line: int) -> str:
    """A part-local line as the file's line (exact for a file's first part)."""
    return str(line) if part.start == 0 else f"{line} after byte {part.start}"


def _too_long(part: Part, offset: int, opts: ReadOptions) -> TokvizFormatError:
    mib = opts.max_record / (1 << 20)
    return TokvizFormatError(
        f"byte {offset}: a JSON line over {mib:g} MiB (the record limit: a JSON line is held whole "
        "to be parsed; --max-record-mb raises it)",
        source=part.path,
    )


def _parquet_records(part: Part, k: int, opts: ReadOptions, stats: PartStats) -> Iterator[Record]:
    pf = _parquet_file(part.path)
    name = opts.field if not opts.mode.startswith("jsonl:") else opts.json_field
    names = pf.schema_arrow.names
    if name not in names:
        raise TokvizFormatError(f"no column {name!r} (columns: {', '.join(names)}); --field names it", source=part.path)
    row = part.first_row
    for batch in pf.iter_batches(batch_size=256, row_groups=[part.start], columns=[name]):
        for value in batch.column(0).to_pylist():
            row += 1
            if not isinstance(value, str):
                stats.skipped += 1
                continue
            if len(value) > opts.max_record or len(value.encode("utf-8")) > opts.max_record:
                mib = opts.max_record / (1 << 20)
                raise TokvizFormatError(
                    f"row {row}: a value over {mib:g} MiB (the record limit; --max-record-mb raises it)",
                    source=part.path,
                )
            pieces = split_text(value, opts.piece_bytes)
            stats.split += len(pieces) > 1
            for n, text in enumerate(pieces):
                yield Record(text, part.path, None, row, n, k)
