"""Fuzz family "spm": SentencePiece ``.model`` fields and the precompiled charsmap.

Pieces of SentencePiece's own test model are rewritten (bytes that are not UTF-8, empty or
duplicated pieces, NaN/infinite scores, unknown types, missing or doubled UNKNOWN, byte pieces
with and without byte_fallback, user-defined pieces), the trainer/normalizer options are drawn
(model type, special ids, whitespace flags), and the charsmap is absent, real, corrupted unit by
unit, random, or a "diamond" of random depth.
"""

from __future__ import annotations

import struct

from fuzz_bundles import base_model_pieces, diamond_charsmap, model_file, small_charsmap
from fuzzkit import PROBE_TEXTS, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

import tokviz

PIECE_TYPES = st.sampled_from([1, 1, 1, 2, 3, 4, 5, 6]) | st.integers(-3, 9) | st.none()
SCORES = st.floats(width=32, allow_nan=True, allow_infinity=True) | st.none()


@st.composite
def pieces(draw: st.DrawFn, byte_fallback: bool) -> list[tuple[bytes, float | None, int | None]]:
    out = base_model_pieces()
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(out) - 1))
        piece, score, type_ = out[i]
        kind = draw(st.sampled_from(["bytes", "score", "type", "dup", "drop", "byte", "user"]))
        if kind == "bytes":
            piece = draw(st.sampled_from([b"", b"\xff", b"\xe2\x96", b"\xed\xa0\x80", b"\x00", "▁▁▁".encode()])
                         | st.binary(max_size=8))
        elif kind == "score":
            score = draw(SCORES)
        elif kind == "type":
            type_ = draw(PIECE_TYPES)
        elif kind == "dup":
            j = draw(st.integers(0, len(out) - 1))
            piece = out[j][0]
        elif kind == "drop":
            del out[i]
            continue
        elif kind == "byte":
            piece, type_ = f"<0x{draw(st.integers(0, 255)):02X}>".encode(), 6
        else:
            piece, type_ = draw(st.text(min_size=1, max_size=4)).encode("utf-8", "surrogatepass"), 4
        out[i] = (piece, score, type_)
    if byte_fallback if draw(st.integers(0, 9)) else not byte_fallback:  # usually: all 256 byte pieces iff byte_fallback
        out += [(f"<0x{b:02X}>".encode(), 0.0, 6) for b in range(256)]
    return out


@st.composite
def charsmap(draw: st.DrawFn) -> bytes | None:
    kind = draw(st.sampled_from(["none", "real", "corrupt", "random", "diamond", "header"]))
    if kind == "none":
        return None
    if kind == "real":
        return small_charsmap()
    if kind == "diamond":
        return diamond_charsmap(draw(st.integers(1, 40)))
    if kind == "header":
        return struct.pack("<I", draw(st.integers(0, 2**32 - 1))) + draw(st.binary(max_size=64))
    if kind == "random":
        n = draw(st.integers(1, 64))
        units = draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n))
        return struct.pack("<I", 4 * n) + struct.pack(f"<{n}I", *units) + draw(st.binary(max_size=32))
    blob = bytearray(small_charsmap())
    n_units = struct.unpack_from("<I", blob)[0] // 4
    for _ in range(draw(st.integers(1, 8))):
        pos = 4 + 4 * draw(st.integers(0, n_units - 1))
        unit = struct.unpack_from("<I", blob, pos)[0]
        unit ^= 1 << draw(st.integers(0, 31)) if draw(st.booleans()) else draw(st.integers(0, 2**32 - 1))
        struct.pack_into("<I", blob, pos, unit)
    return bytes(blob)


@st.composite
def model(draw: st.DrawFn) -> bytes:
    byte_fallback = draw(st.booleans())
    trainer = {
        "model_type": draw(st.sampled_from([1, 1, 1, 1, 2, 2, 2, 2, 3, 4])),  # WORD, CHAR: unsupported
        "byte_fallback": byte_fallback,
        "treat_whitespace_as_suffix": draw(st.booleans()),
        "unk_id": draw(st.integers(-2, 400)),
        "bos_id": draw(st.integers(-2, 400)),
        "eos_id": draw(st.integers(-2, 400)),
        "pad_id": draw(st.integers(-2, 400)),
        "unk_surface": draw(st.sampled_from([" \u2047 ", "", "<unk>", "\x00"])),
    }
    normalizer = {
        "add_dummy_prefix": draw(st.booleans()),
        "remove_extra_whitespaces": draw(st.booleans()),
        "escape_whitespaces": draw(st.booleans()),
        "name": draw(st.sampled_from(["nmt_nfkc", "identity", "fuzz", ""])),
    }
    cm = draw(charsmap())
    if cm is not None:
        normalizer["precompiled_charsmap"] = cm
    return model_file(draw(pieces(byte_fallback)), trainer=trainer, normalizer=normalizer)


def load_and_probe(data: bytes, text: str) -> None:
    tok = tokviz.load(data)
    for t in (*PROBE_TEXTS, "ﬁ ｶﾞ ①…™\u3000x", "ab" * 20, text):
        check_encoding(tok, t)


@fuzz_settings(60)
@given(data=model(), text=st.text(max_size=30))
def test_mutated_model_file(data: bytes, text: str) -> None:
    run_case("spm", lambda: load_and_probe(data, text))
