"""Fuzz family "file": truncations, byte flips, insertions, deletions and gzip of whole files.

The seeds are small real-derived files of every format the sniffer knows (tokenizer.json of
each bundle, a tiktoken rank file, a SentencePiece .model, a vocab.txt). Each mutated file goes
through `tokviz.load` on its bytes, so the sniffing itself is fuzzed too (a flipped byte can
turn a .model into "text" or a JSON file into a vocab.txt).
"""

from __future__ import annotations

import gzip

from fuzz_bundles import all_json_bundles, model_bytes, rank_file, vocab_txt
from fuzzkit import PROBE_TEXTS, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

import tokviz
from tokviz.io.tiktoken_ranks import R50K_PATTERN


def seeds() -> list[tuple[str, bytes]]:
    return [
        *((f"json{i}", t.encode("utf-8")) for i, t in enumerate(all_json_bundles())),
        ("ranks", rank_file()),
        ("model", model_bytes()),
        ("vocab", vocab_txt()),
    ]


@st.composite
def mutated_file(draw: st.DrawFn) -> tuple[str, bytes]:
    name, data = draw(st.sampled_from(seeds()))
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        if not buf:
            break
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "duplicate", "gzip"]))
        i = draw(st.integers(0, len(buf) - 1))
        if kind == "truncate":
            del buf[i:]
        elif kind == "flip":
            buf[i] ^= draw(st.integers(1, 255))
        elif kind == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=16) | st.sampled_from([b"[", b"{", b'"', b"\\", b"\n", b"\xff"]))
        elif kind == "delete":
            del buf[i : i + draw(st.integers(1, 64))]
        elif kind == "duplicate":
            j = min(len(buf), i + draw(st.integers(1, 200)))
            buf[j:j] = buf[i:j]
        elif kind == "gzip":
            buf = bytearray(gzip.compress(bytes(buf), mtime=0))  # no timestamp: hypothesis replays cases
            if draw(st.booleans()):  # a cut gzip stream
                del buf[draw(st.integers(0, len(buf) - 1)) :]
    return name, bytes(buf)


def load_and_probe(name: str, data: bytes, text: str) -> None:
    tok = tokviz.load(data, pattern=R50K_PATTERN) if name == "ranks" else tokviz.load(data)
    for t in (*PROBE_TEXTS, text):
        check_encoding(tok, t)


@fuzz_settings(60)
@given(case=mutated_file(), text=st.text(max_size=30))
def test_mutated_file(case: tuple[str, bytes], text: str) -> None:
    name, data = case
    run_case("file", lambda: load_and_probe(name, data, text))
