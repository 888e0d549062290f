"""Fuzz family "safetensors": embedding checkpoints with hostile headers and bytes.

A valid file (an embedding matrix and an output matrix, F32/F16/BF16/F64, with metadata) has
its header rewritten field by field (dtype, shape, data_offsets: wrong types, negative, huge,
NaN and Infinity written raw, entries that are not objects), its header length lied about, or
its bytes flipped and cut; the indexes of sharded checkpoints are fuzzed the same way. Each file
goes through `embedding_report` (and `--json`'s writer): a report or `TokvizFormatError` naming
the file, and JSON output that parses as strict JSON.
"""

from __future__ import annotations

import json
import struct
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from fuzzkit import fuzz_settings, run_case
from hypothesis import given, strategies as st

from tokviz.analysis.audit import audit_vocabulary
from tokviz.analysis.embeddings import embedding_report
from tokviz.engine.errors import TokvizFormatError
from tokviz.engine.models.wordlevel import WordLevel
from tokviz.engine.pre_tokenizers.whitespace import Whitespace
from tokviz.engine.tokenizer import Tokenizer
from tokviz.io.json_text import dumps

ROWS, DIM = 6, 3
DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


@lru_cache(maxsize=1)
def audit() -> Any:
    vocab = {w: i for i, w in enumerate(["aa", "bb", "cc", "dd", "ee", "ff"])}
    return audit_vocabulary(Tokenizer(WordLevel(vocab, unk_token="aa"), pre_tokenizer=Whitespace()))


def matrix(dtype: str, values: str) -> bytes:
    data = {"zeros": np.zeros((ROWS, DIM)), "nan": np.full((ROWS, DIM), np.nan), "inf": np.full((ROWS, DIM), np.inf),
            "ramp": np.arange(ROWS * DIM, dtype=np.float64).reshape(ROWS, DIM)}[values]
    if dtype == "BF16":
        return (data.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    return data.astype(DTYPES[dtype]).tobytes()


def valid_file(dtype: str, values: str, untied: bool) -> tuple[dict[str, Any], bytes]:
    names = ["model.embed_tokens.weight"] + (["lm_head.weight"] if untied else [])
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in names:
        raw = matrix(dtype, values)
        header[name] = {"dtype": dtype, "shape": [ROWS, DIM], "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    return header, b"".join(blobs)


FIELD_VALUES = (st.integers(-(2**70), 2**70) | st.floats() | st.none() | st.booleans() | st.text(max_size=6)
                | st.lists(st.integers(-5, 10**12), max_size=4) | st.sampled_from(["RAW_NAN", "RAW_INF"])
                # fresh containers: one shared {} from sampled_from, set as a field of itself, was a cycle
                | st.builds(list) | st.builds(dict))


@st.composite
def hostile_file(draw: st.DrawFn) -> bytes:
    header, data = valid_file(draw(st.sampled_from(["F32", "F16", "BF16", "F64"])),
                              draw(st.sampled_from(["zeros", "nan", "inf", "ramp"])), draw(st.booleans()))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        if not header:
            break
        name = draw(st.sampled_from(sorted(header)))
        kind = draw(st.sampled_from(["field", "entry", "drop", "add"]))
        if kind == "field" and isinstance(header[name], dict):
            header[name][draw(st.sampled_from(["dtype", "shape", "data_offsets", "extra"]))] = draw(FIELD_VALUES)
        elif kind == "entry":
            header[name] = draw(FIELD_VALUES)
        elif kind == "drop":
            del header[name]
        else:
            header[draw(st.text(max_size=8))] = {"dtype": draw(st.sampled_from(["F32", "U8", "F4", "Q"])),
                                                 "shape": draw(st.lists(st.integers(0, 9), max_size=3)),
                                                 "data_offsets": [0, draw(st.integers(0, 200))]}
    raw = json.dumps(header).replace('"RAW_NAN"', "NaN").replace('"RAW_INF"', "-Infinity").encode()
    n = len(raw)
    if draw(st.integers(0, 9)) == 0:
        n = draw(st.sampled_from([0, 1, n - 1, n + 1, 2**63, 2**64 - 1, 100_000_001]))
    out = bytearray(struct.pack("<Q", n) + raw + data)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        i = draw(st.integers(0, len(out) - 1))
        if draw(st.booleans()):
            out[i] ^= draw(st.integers(1, 255))
        else:
            del out[i:]
            break
    return bytes(out)


def report(path: Path, *, named: tuple[Path, ...] = ()) -> None:
    """The report of ``path``; an error must name ``path`` or one of ``named`` (the shard an
    index points at, when the fault is in that shard)."""
    try:
        rep = embedding_report(path, audit())
    except TokvizFormatError as exc:
        assert any(str(p) in str(exc) for p in (path, *named)), str(exc)  # every message names a file
        raise
    json.loads(dumps(rep.to_json()), parse_constant=lambda c: (_ for _ in ()).throw(AssertionError(c)))


@fuzz_settings(40)
@given(data=hostile_file())
def test_hostile_safetensors(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.safetensors"
        path.write_bytes(data)
        run_case("safetensors", lambda: report(path))


@fuzz_settings(20)
@given(weight_map=st.dictionaries(st.text(max_size=30), FIELD_VALUES | st.just("model.safetensors"), max_size=3)
       | FIELD_VALUES, data=hostile_file())
def test_hostile_index(weight_map: Any, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        shard = Path(folder) / "model.safetensors"
        shard.write_bytes(data)
        index = Path(folder) / "model.safetensors.index.json"
        index.write_text(json.dumps({"weight_map": weight_map}), encoding="utf-8")
        run_case("safetensors", lambda: report(index, named=(shard,)))
