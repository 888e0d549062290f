"""Fuzz family "corpus": corpus records, jsonl lines above all, and the documents read from them.

A corpus file is drawn line by line: JSON objects with and without the field, with values of
every JSON type, NaN and Infinity, deep nesting, long strings, broken JSON, invalid UTF-8, a
BOM, CRLF and lone CR line ends, blank lines, no final newline. It is read in every mode
(``whole``, ``lines``, ``paragraphs``, ``jsonl:FIELD``) with a small block size so records
straddle blocks; the documents must be strings at increasing offsets, or the read must stop
with `TokvizFormatError` naming the file. A tokenizer then encodes what was read.
"""

from __future__ import annotations

import json
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any
from unittest import mock

from fuzzkit import check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st
from support import bundle_path

import tokviz
from tokviz.analysis.corpus import iter_documents
from tokviz.engine.errors import TokvizFormatError
from tokviz.io import shards

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                    max_leaves=10)
RECORD = (st.fixed_dictionaries({"text": st.text(max_size=80) | JSON}, optional={"meta": JSON}).map(json.dumps)
          | JSON.map(json.dumps)
          | st.sampled_from(['{"text": NaN}', '{"text": Infinity}', '{"text": "a\\ud800"}', '{"text": "x"',
                             '{"text": "' + "y" * 5000 + '"}', '{"text": ' + "[" * 3000 + "]" * 3000 + "}",
                             '[' * 100_000, "", "   ", "not json", '{"text": 1e999}', '{"text": ' + "9" * 5000 + "}"]))
ENDS = st.sampled_from([b"\n", b"\n", b"\r\n", b"\r", b"\n\n"])
MODES = st.sampled_from(["whole", "lines", "paragraphs", "jsonl:text", "jsonl:meta"])


@st.composite
def corpus(draw: st.DrawFn) -> bytes:
    out = bytearray(draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf"])))
    for _ in range(draw(st.integers(0, 8))):
        out += draw(RECORD).encode("utf-8", "surrogatepass")
        out += draw(ENDS)
    if draw(st.integers(0, 5)) == 0 and out:
        i = draw(st.integers(0, len(out) - 1))
        out[i] = draw(st.sampled_from([0xFF, 0xC3, 0x80, 0x00]))
    return bytes(out)


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    return tokviz.load(bundle_path("qwen3/tokenizer.json"))


def read(path: Path, mode: str, block: int) -> None:
    offsets = []
    try:
        with mock.patch.object(shards, "_BLOCK", block):  # small blocks: records straddle them
            docs = list(iter_documents(path, mode))
        for doc in docs:
            assert isinstance(doc.text, str)
            offsets.append(doc.byte_offset)
            check_encoding(tokenizer(), doc.text[:200])
    except TokvizFormatError as exc:
        assert str(path) in str(exc), str(exc)
        raise
    assert offsets == sorted(offsets), offsets


@fuzz_settings(30)
@given(data=corpus(), mode=MODES, block=st.sampled_from([7, 64, 1 << 16]))
def test_corpus_records(data: bytes, mode: str, block: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("c.jsonl" if mode.startswith("jsonl") else "c.txt")
        path.write_bytes(data)
        tokenizer()  # loaded once, outside the time guard
        run_case("corpus", lambda: read(path, mode, block))
