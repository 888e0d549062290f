"""tokviz.io.shards: shard plans never change the records; pieces follow the documented rule.

The oracle is a plain reference reader written from the module docstring: split the whole file
into records at once, then cut each record by the rule, without streaming or shards.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tokviz.engine.errors import TokvizFormatError
from tokviz.io import shards
from tokviz.io.shards import ReadOptions, ShardReader, corpus_files, iter_records, plan_shards, split_text

_SEP = re.compile(rb"\n(?:[ \t\r\f\v]*\n)+")


def _ref_cut(rec: bytes, size: int) -> list[tuple[int, bytes]]:
    """(offset in the record, piece) by the rule: one cut in every ``size`` bytes after the first."""
    cuts = [0]
    j = 0
    while (j + 1) * size < len(rec):
        cell = rec[j * size : (j + 1) * size]
        i = cell.rfind(b"\n")
        if i < 0:
            i = cell.rfind(b" ")
        if i >= 0:
            cut = j * size + i + 1
        else:
            cut = (j + 1) * size
            while cut > (j + 1) * size - 3 and cut > j * size + 1 and 0x80 <= rec[cut] < 0xC0:
                cut -= 1
        cuts.append(cut)
        j += 1
    cuts.append(len(rec))
    return [(a, rec[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]


def _ref_records(data: bytes, mode: str, *, keep_newline: bool = False) -> list[tuple[int, bytes]]:
    if mode == "whole":
        return [(0, data)] if data else []
    if mode == "lines":
        out, pos = [], 0
        for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
            rec = line + b"\n" if keep_newline and pos + len(line) < len(data) else line
            out.append((pos, rec))
            pos += len(line) + 1
        return [r for r in out if r[1]]
    out, pos = [], 0
    for m in _SEP.finditer(data):
        out.append((pos, data[pos : m.start()]))
        pos = m.end()
    out.append((pos, data[pos:]))
    return [r for r in out if r[1]]


def _reference(data: bytes, mode: str, size: int, *, keep_newline: bool = False) -> list[tuple[str, int, int, int]]:
    out = []
    for start, rec in _ref_records(data, mode, keep_newline=keep_newline):
        for n, (off, piece) in enumerate(_ref_cut(rec, size)):
            line = data[: start + off].count(b"\n") + 1
            out.append((piece.decode("utf-8"), start + off, line, n))
    return out


def _read(path: Path, opts: ReadOptions, shard_bytes: int | None = None) -> list[tuple[str, int, int, int]]:
    got = []
    bases = shards.LineBases()
    for shard in plan_shards([path], opts, shard_bytes=shard_bytes):
        reader = ShardReader(shard, opts)
        recs = list(reader)
        for r in recs:
            part = shard.parts[r.part]
            got.append((r.text, r.byte_offset, r.line + bases.base(part.path, part.start), r.piece))
        for part, stats in zip(shard.parts, reader.stats):
            bases.advance(part.path, part.start, stats.newlines)
    return got


_ALPHABET = [b"a", b"b", b" ", b"\n", b"\n", b"\t", b"\r", "é".encode(), "東".encode(), "😀".encode()]


class TestPieces:
    @settings(max_examples=150, deadline=None)
    @given(
        chunks=st.lists(st.sampled_from(_ALPHABET), max_size=400),
        mode=st.sampled_from(["whole", "lines", "paragraphs"]),
        block=st.sampled_from([3, 7, 64]),
        shard=st.sampled_from([None, 32, 48]),
    )
    def test_any_plan_and_block_size_reads_the_reference(
        self, tmp_path_factory: pytest.TempPathFactory, chunks: list[bytes], mode: str, block: int, shard: int | None
    ) -> None:
        data = b"".join(chunks)
        path = tmp_path_factory.mktemp("c") / "c.txt"
        path.write_bytes(data)
        opts = ReadOptions(mode=mode, piece_bytes=16)
        old = shards._BLOCK
        shards._BLOCK = block
        try:
            got = _read(path, opts, shard)
        finally:
            shards._BLOCK = old
        assert got == _reference(data, mode, 16)

    def test_keep_newline_lines(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes(b"a\r\n\nbc")
        opts = ReadOptions(mode="lines", keep_newline=True)
        assert [(r.text, r.line) for r in ShardReader(plan_shards([p], opts)[0], opts)] == [
            ("a\r\n", 1), ("\n", 2), ("bc", 3)
        ]

    def test_split_text(self) -> None:
        # cells of 4 bytes: "ab c|d ef|gh": cut after the space of each cell
        assert split_text("ab cd efgh", 4) == ["ab ", "cd ", "efgh"]
        assert split_text("", 4) == []
        assert "".join(split_text("😀" * 9, 8)) == "😀" * 9  # cut at character boundaries only

    def test_trailing_paragraph_separator_is_no_text(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes(b"one\n\ntwo\n \n\n")
        opts = ReadOptions(mode="paragraphs")
        assert [r.text for r in ShardReader(plan_shards([p], opts)[0], opts)] == ["one", "two"]


class TestFormats:
    def test_jsonl_gzip_and_skipped(self, tmp_path: Path) -> None:
        rows = [{"text": "héllo"}, {"other": 1}, [1], {"text": "world"}]
        p = tmp_path / "c.jsonl.gz"
        p.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + b"\n"))
        opts = ReadOptions(mode="lines")
        (shard,) = plan_shards([p], opts)
        reader = ShardReader(shard, opts)
        assert [(r.text, r.line) for r in reader] == [("héllo", 1), ("world", 4)]
        assert reader.stats[0].skipped == 2

    def test_zstd(self, tmp_path: Path) -> None:
        zstandard = pytest.importorskip("zstandard")
        p = tmp_path / "c.txt.zst"
        p.write_bytes(zstandard.ZstdCompressor().compress(b"x y\nz\n"))
        opts = ReadOptions(mode="lines")
        assert [r.text for r in ShardReader(plan_shards([p], opts)[0], opts)] == ["x y", "z"]

    def test_parquet_row_groups(self, tmp_path: Path) -> None:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        p = tmp_path / "c.parquet"
        table = pa.table({"text": ["a", None, "b", "c", "d"], "id": [1, 2, 3, 4, 5]})
        pq.write_table(table, p, row_group_size=2)
        opts = ReadOptions(field="text")
        plan = plan_shards([p], opts, shard_bytes=1)
        assert len(plan) == 3  # one shard per row group here
        got = [(r.text, r.line, r.byte_offset) for s in plan for r in ShardReader(s, opts)]
        assert got == [("a", 1, None), ("b", 3, None), ("c", 4, None), ("d", 5, None)]
        with pytest.raises(TokvizFormatError, match="no column 'body'"):
            list(ShardReader(plan[0], ReadOptions(field="body")))

    def test_jsonl_line_over_the_limit_is_refused(self, tmp_path: Path) -> None:
        p = tmp_path / "c.jsonl"
        p.write_bytes(b'{"text": "ok"}\n{"text": "' + b"x" * 5000 + b'"}\n')
        opts = ReadOptions(max_record=1000)
        with pytest.raises(TokvizFormatError, match=r"byte 15: a JSON line over .*--max-record-mb"):
            list(ShardReader(plan_shards([p], opts)[0], opts))

    def test_invalid_utf8_names_the_absolute_byte(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes(b"abc\n" * 100 + b"\xff\n")
        opts = ReadOptions(mode="lines")
        with pytest.raises(TokvizFormatError, match="byte 400"):
            for s in plan_shards([p], opts, shard_bytes=64):
                list(ShardReader(s, opts))

    def test_globs_folders_and_missing(self, tmp_path: Path) -> None:
        (tmp_path / "d").mkdir()
        for name in ("b.txt", "a.txt", ".hidden"):
            (tmp_path / "d" / name).write_text("x")
        assert [f.name for f in corpus_files(tmp_path / "d")] == ["a.txt", "b.txt"]
        assert [f.name for f in corpus_files(str(tmp_path / "d" / "*.txt"))] == ["a.txt", "b.txt"]
        with pytest.raises(TokvizFormatError, match="no file matches"):
            corpus_files(str(tmp_path / "*.none"))
        with pytest.raises(TokvizFormatError, match="no such file"):
            corpus_files(tmp_path / "missing.txt")

    def test_iter_records_lines_are_the_files(self, tmp_path: Path) -> None:
        p = tmp_path / "c.txt"
        p.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 3001)))
        opts = ReadOptions(mode="lines")
        assert len(plan_shards([p], opts, shard_bytes=4096)) > 3
        old = shards._MIN_SHARD
        shards._MIN_SHARD = 4096
        try:
            recs = [r for r, _ in iter_records([p], opts)]
        finally:
            shards._MIN_SHARD = old
        assert all(r.text == f"line {r.line}" for r in recs) and len(recs) == 3000
