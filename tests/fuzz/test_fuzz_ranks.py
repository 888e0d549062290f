"""Fuzz family "ranks": line-level corruption of a tiktoken rank file (``<base64> <rank>``).

Lines of the first 400 r50k ranks are rewritten: garbage or empty base64, ranks that are
negative, huge, not numbers or repeated, extra fields, tabs, CRLF, blank lines, a duplicated or
dropped line; the pattern is sometimes a hostile one and special tokens are sometimes added.
"""

from __future__ import annotations

import base64

from fuzz_bundles import rank_file
from fuzzkit import PROBE_TEXTS, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

from tokviz.io.tiktoken_ranks import CL100K_PATTERN, R50K_PATTERN, load_tiktoken_ranks

PATTERNS = [R50K_PATTERN, CL100K_PATTERN, r"\s+|\S+", r"(a+)+$", r"(?x)(a{1,10}) {1,10}$", "(", "", r"\p{Zzz}"]


def bad_line(draw: st.DrawFn, line: bytes) -> bytes:
    token, _, rank = line.rstrip(b"\r\n").partition(b" ")
    kind = draw(st.sampled_from(["token", "rank", "fields", "space", "empty", "raw"]))
    if kind == "token":
        token = draw(st.sampled_from([b"", b"!!!!", b"QQ", b"QQ==QQ==", b"\xff\xfe", base64.b64encode(b"\x00" * 300)])
                     | st.binary(max_size=12).map(base64.b64encode))
    elif kind == "rank":
        rank = draw(st.sampled_from([b"-1", b"99999999999999999999999", b"1e3", b"", b"0x10", b"\xd9\xa3", b"7", b"+3"])
                    | st.integers(-5, 2**40).map(lambda n: str(n).encode()))
    elif kind == "fields":
        return token + b" " + rank + b" extra\n"
    elif kind == "space":
        return token + draw(st.sampled_from([b"\t", b"  ", b"\r", b" \x00 "])) + rank + draw(st.sampled_from([b"\n", b"\r\n", b""]))
    elif kind == "empty":
        return draw(st.sampled_from([b"\n", b"\r\n", b" \n", b""]))
    else:
        return draw(st.binary(max_size=20)) + b"\n"
    return token + b" " + rank + b"\n"


@st.composite
def mutated_ranks(draw: st.DrawFn) -> bytes:
    lines = rank_file().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 5))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["bad", "bad", "dup", "drop", "swap"]))
        if op == "bad":
            lines[i] = bad_line(draw, lines[i])
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "drop":
            del lines[i]
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        if not lines:
            break
    return b"".join(lines)


def load_and_probe(data: bytes, pattern: str, specials: dict[str, int] | None, text: str) -> None:
    tok = load_tiktoken_ranks(data, source="fuzz.tiktoken", pattern=pattern, special_tokens=specials)
    for t in (*PROBE_TEXTS, text):
        check_encoding(tok, t)


@fuzz_settings(60)
@given(
    data=mutated_ranks(),
    pattern=st.sampled_from(PATTERNS),
    specials=st.none() | st.dictionaries(st.sampled_from(["<|endoftext|>", "<s>", "", "a"]),
                                         st.integers(-2, 1000), max_size=2),
    text=st.text(max_size=30),
)
def test_mutated_rank_file(data: bytes, pattern: str, specials: dict[str, int] | None, text: str) -> None:
    run_case("ranks", lambda: load_and_probe(data, pattern, specials, text))
