"""Fuzz family "gguf": GGUF files with hostile tokenizer metadata, and their bytes mutated.

Files are written with the ``gguf`` package's own writer: a random ``tokenizer.ggml.model``
(llama, gpt2, bert, t5 and unknown ones), tokens (empty, duplicated, single characters only,
byte tokens, long), types and scores (out of range, NaN, infinite), merges (well formed or
not), pre-tokenizer names, special ids and flags; then the bytes may be cut, flipped, or have
a length field lie. Each file loads through `tokviz.load` (the sniffer included) and every
tokenizer that loads encodes and decodes the probe texts.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fuzzkit import PROBE_TEXTS, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

import tokviz

gguf = pytest.importorskip("gguf")

MODELS = st.sampled_from(["llama", "llama", "gpt2", "gpt2", "bert", "t5", "rwkv", "none", "", "x"])
TOKEN = (st.sampled_from(["<unk>", "<s>", "</s>", "▁", "▁a", "a", "b", "ab", "Ġ", "Ġa", "[UNK]", "[CLS]", "##a",
                          "<0x41>", "<0x0A>", "", " ", "\n"])
         | st.text(min_size=0, max_size=4) | st.text(alphabet="ab", min_size=40, max_size=200))
PRES = st.sampled_from(["default", "gpt-2", "llama3", "qwen2", "deepseek-llm", "tekken", "unknown-pre"]) | st.none()


@st.composite
def metadata(draw: st.DrawFn) -> dict[str, Any]:
    tokens = draw(st.lists(TOKEN, min_size=0, max_size=24))
    n = len(tokens)
    size = lambda: st.sampled_from([n, n, n, max(n - 1, 0), n + 1])  # noqa: E731 - arrays may lie about their length
    return {
        "model": draw(MODELS),
        "tokens": tokens,
        "types": draw(st.none() | size().flatmap(lambda k: st.lists(st.integers(-3, 9), min_size=k, max_size=k))),
        "scores": draw(st.none() | size().flatmap(lambda k: st.lists(st.floats(width=32), min_size=k, max_size=k))),
        "merges": draw(st.none() | st.lists(st.sampled_from(["a b", "Ġ a", "ab", "a  b", " ", "a b c"])
                                            | st.text(max_size=5), max_size=10)),
        "pre": draw(PRES),
        "ids": draw(st.dictionaries(st.sampled_from(["bos", "eos", "unknown", "padding", "seperator"]),
                                    st.integers(0, 2**32 - 1) | st.integers(0, 30), max_size=3)),
        "flags": draw(st.dictionaries(st.sampled_from(["add_bos_token", "add_eos_token", "add_space_prefix",
                                                       "remove_extra_whitespaces"]), st.booleans(), max_size=3)),
    }


def write(path: Path, meta: dict[str, Any]) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    if meta["model"] is not None:
        w.add_tokenizer_model(meta["model"])
    if meta["pre"] is not None:
        w.add_tokenizer_pre(meta["pre"])
    if meta["tokens"]:
        w.add_token_list(meta["tokens"])
    if meta["types"]:
        w.add_array("tokenizer.ggml.token_type", meta["types"])
    if meta["scores"]:
        w.add_token_scores(meta["scores"])
    if meta["merges"]:
        w.add_token_merges(meta["merges"])
    for role, value in meta["ids"].items():
        w.add_uint32(f"tokenizer.ggml.{role}_token_id", value)
    for flag, value in meta["flags"].items():
        w.add_bool(f"tokenizer.ggml.{flag}", value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, int, int]:
    return (draw(st.sampled_from(["none", "none", "none", "cut", "flip", "lie"])), draw(st.integers(0, 10**6)),
            draw(st.integers(1, 255)))


def mutate(data: bytes, kind: str, at: int, value: int) -> bytes:
    if kind == "none" or not data:
        return data
    i = at % len(data)
    if kind == "cut":
        return data[:i]
    if kind == "flip":
        return data[:i] + bytes([data[i] ^ value]) + data[i + 1 :]
    # a length field that lies: every 8-byte little-endian field could be one
    i -= i % 8
    return data[:i] + struct.pack("<Q", 2**63 - value) + data[i + 8 :]


def load_and_probe(path: Path, text: str) -> None:
    tok = tokviz.load(path)
    for t in (*PROBE_TEXTS, text):
        check_encoding(tok, t)


@fuzz_settings(30)
@given(meta=metadata(), change=mutation(), text=st.text(max_size=30))
def test_hostile_gguf(meta: dict[str, Any], change: tuple[str, int, int], text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.gguf"
        write(path, meta)
        path.write_bytes(mutate(path.read_bytes(), *change))
        run_case("gguf", lambda: load_and_probe(path, text))
