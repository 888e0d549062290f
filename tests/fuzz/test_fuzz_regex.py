"""Fuzz family "regex": hostile patterns in every place a file can put a regex.

Patterns come from a small grammar that favours what makes backtracking explode (nested and
adjacent quantifiers, overlapping alternations, backreferences, lookarounds, verbose mode and
inline flags) plus raw random strings; each goes into a Split pre-tokenizer, a Replace normalizer
or a Replace decoder (after Fuse, so it sees whole strings) of a real pipeline, which then
encodes and decodes adversarial texts. Allowed: success, a pattern that does not compile
(`TokvizFormatError`) and `PatternTimeoutError`; the time guard catches a search that escapes
the timeout. (The fuzz conftest shortens the regex timeout; the regression tests use the real one.)
"""

from __future__ import annotations

from fuzz_bundles import json_bundle
from fuzzkit import check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

from tokviz.io.hf_json import load_hf_json

ATOMS = st.sampled_from(["a", "b", " ", ".", r"\s", r"\S", r"\w", r"\p{L}", r"[ab]", r"[^\s]", "(?:a|aa)", r"\1", "x?"])
QUANTIFIERS = st.sampled_from(["", "*", "+", "?", "{1,10}", "{2,}", " {1,10}", "*?", "++", "{0,3}"])
WRAPS = st.sampled_from(["({})", "(?:{})", "(?>{})", "(?={})", "(?<!a){}", "(?i){}", "(?x){}", "({}|{})", "{}{}"])


def _build(parts: list[str]) -> str:
    return "".join(parts)


regex_body = st.recursive(
    st.builds(lambda a, q: a + q, ATOMS, QUANTIFIERS),
    lambda inner: st.builds(lambda w, x, q: w.format(x, x) + q, WRAPS, inner, QUANTIFIERS)
    | st.lists(inner, min_size=2, max_size=3).map(_build),
    max_leaves=6,
)
patterns = (
    st.builds(lambda b, end: b + end, regex_body, st.sampled_from(["", "$", "b", "!", r"\b"]))
    | st.text(alphabet="ab()[]{}|*+?\\^$.:=!<>,0123 x", max_size=16)
    | st.sampled_from([r"(?x)(a{1,10}) {1,10}$", r"(a|aa)+$", r"(a*)*b", r"(\w+\s?)*$", r"a*a*a*a*a*c"])
)
texts = st.sampled_from(["a" * 40 + "!", "a" * 30 + "b" * 30, " " * 50 + "x", "ab " * 20, "aaaa aaaa\n" * 5, ""]) | st.text(
    alphabet="ab !\n", max_size=60)


def place(where: str, pattern: str) -> dict:
    if where == "split":
        obj = json_bundle("qwen3")
        obj["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": pattern}
    elif where == "normalizer":
        obj = json_bundle("mistral-7b-v0.1")
        obj["normalizer"] = {"type": "Replace", "pattern": {"Regex": pattern}, "content": "▁"}
    else:
        obj = json_bundle("mistral-7b-v0.1")
        obj["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Replace", "pattern": {"Regex": pattern}, "content": "-"}]}
    return obj


def load_and_probe(where: str, pattern: str, text: str) -> None:
    tok = load_hf_json(place(where, pattern), source="fuzz/tokenizer.json")
    check_encoding(tok, text)


@fuzz_settings(60)
@given(where=st.sampled_from(["split", "normalizer", "decoder"]), pattern=patterns, text=texts)
def test_hostile_pattern(where: str, pattern: str, text: str) -> None:
    run_case("regex", lambda: load_and_probe(where, pattern, text))
