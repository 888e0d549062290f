"""Fuzz family "json": structure and type mutations of (small) real tokenizer.json bundles.

A case takes one bundle and applies one to three mutations anywhere in its tree: a value
replaced by random JSON or by a "near miss" of its own kind (an empty string, a huge integer, a
boolean for a number ...), a key deleted, a component's ``type`` changed, a component swapped
for a random one of the same family (every registered type, with random fields), or wrapped in
Sequences. Loading must succeed or raise `TokvizFormatError`; a tokenizer that loads must
encode and decode the probe texts (no wrong type may surface at encode time).
"""

from __future__ import annotations

import json
from typing import Any

from fuzz_bundles import JSON_BUNDLES, json_bundle, unigram_json_text
from fuzzkit import PROBE_TEXTS, check_encoding, fuzz_settings, run_case
from hypothesis import given, strategies as st

import tokviz
from tokviz.engine import decoders, models, normalizers, pre_tokenizers, processors
from tokviz.io.hf_json import load_hf_json

FAMILIES = {
    "normalizer": (normalizers.TYPES, "normalizers"),
    "pre_tokenizer": (pre_tokenizers.TYPES, "pretokenizers"),
    "model": (models.TYPES, None),
    "post_processor": (processors.TYPES, "processors"),
    "decoder": (decoders.TYPES, "decoders"),
}
ALL_TYPES = sorted({t for table, _ in FAMILIES.values() for t in table})

# field names the components read (and a few they do not), to give random components a chance
# of reaching every branch of their from_json
FIELD_NAMES = (
    "add_prefix_space", "behavior", "byte_fallback", "cleanup", "cls", "content", "continuing_subword_prefix",
    "decoders", "delimiter", "dropout", "end_of_word_suffix", "fuse_unk", "handle_chinese_chars",
    "ignore_merges", "individual_digits", "invert", "lowercase", "max_input_chars_per_word", "merges",
    "normalizers", "pad_token", "pair", "pattern", "precompiled_charsmap", "prefix", "prepend",
    "prepend_scheme", "pretokenizers", "processors", "replacement", "sep", "single", "special_tokens",
    "split", "start", "stop", "strip_accents", "strip_left", "strip_right", "suffix", "trim_offsets",
    "unk_id", "unk_token", "use_regex", "vocab", "word_delimiter_token", "clean_text", "type_id", "ids",
    "tokens", "id", "String", "Regex",
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", " ", "▁", "##", "</w>", "<unk>", "[UNK]", "Isolated", "always", "(", "\\p{L}+"])
)
json_values = st.recursive(
    json_scalars,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), c, max_size=4),
    max_leaves=10,
)


def near_misses(value: Any) -> st.SearchStrategy[Any]:
    """Values of a slightly wrong kind or range for ``value``."""
    if isinstance(value, bool):
        return st.sampled_from([0, 1, "true", None, [value], not value])
    if isinstance(value, int):
        return st.sampled_from([-1, 0, 2**31, 2**63, 10**30, True, 1.5, str(value), None])
    if isinstance(value, float):
        return st.sampled_from([float("nan"), float("inf"), -float("inf"), -1e308, 0, "1.0", None])
    if isinstance(value, str):
        return st.sampled_from(["", value * 50, value[:1], value + "\x00", "\udcff", [value], {value: 0}, 0, None])
    if isinstance(value, list):
        return st.sampled_from([[], [None], value[:1], value + value, {"0": value}, None, "list"])
    if isinstance(value, dict):
        return st.sampled_from([{}, [value], None, {"type": None}, {**value, "type": 7}])
    return json_values


def paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``obj`` (big vocab/merges containers contribute a sample of entries)."""
    out = [prefix]
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list):
        items = list(enumerate(obj))
    else:
        return out
    if len(items) > 12:
        step = max(1, len(items) // 12)
        items = items[::step]
    for k, v in items:
        out.extend(paths(v, (*prefix, k)))
    return out


def get(obj: Any, path: tuple) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def put(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    get(obj, path[:-1])[path[-1]] = value
    return obj


def random_component(family: str) -> st.SearchStrategy[dict[str, Any]]:
    table, _ = FAMILIES[family]
    return st.builds(
        lambda t, fields: {**fields, "type": t},
        st.sampled_from(sorted(table)),
        st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=5),
    )


@st.composite
def mutated_bundle(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from([*JSON_BUNDLES, "unigram"]))
    obj = json.loads(unigram_json_text()) if name == "unigram" else json_bundle(name)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(obj)))
        kind = draw(st.sampled_from(["random", "near", "delete", "type", "swap", "nest"]))
        target = get(obj, where)
        if kind == "random":
            obj = put(obj, where, draw(json_values))
        elif kind == "near":
            obj = put(obj, where, draw(near_misses(target)))
        elif kind == "delete" and where:
            parent = get(obj, where[:-1])
            del parent[where[-1]]
        elif kind == "type" and isinstance(target, dict):
            target["type"] = draw(st.sampled_from(ALL_TYPES) | json_scalars)
        elif kind == "swap":
            family = draw(st.sampled_from(sorted(FAMILIES)))
            obj = put(obj, (family,), draw(random_component(family)))
        elif kind == "nest":
            family = draw(st.sampled_from([f for f, (_, key) in FAMILIES.items() if key]))
            node = obj.get(family) if isinstance(obj, dict) else None
            for _ in range(draw(st.integers(1, 70))):
                node = {"type": "Sequence", FAMILIES[family][1]: [node]}
            obj = put(obj, (family,), node)
        if not isinstance(obj, dict):
            break
    return obj


def load_and_probe(obj: Any, via_bytes: bool, text: str) -> None:
    if via_bytes:
        tok = tokviz.load(json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    else:
        tok = load_hf_json(obj, source="fuzz/tokenizer.json")
    for t in (*PROBE_TEXTS, text):
        check_encoding(tok, t)


@fuzz_settings(60)
@given(obj=mutated_bundle(), via_bytes=st.booleans(), text=st.text(max_size=30))
def test_mutated_tokenizer_json(obj: Any, via_bytes: bool, text: str) -> None:
    run_case("json", lambda: load_and_probe(obj, via_bytes, text))


@fuzz_settings(40)
@given(
    name=st.sampled_from(JSON_BUNDLES),
    family=st.sampled_from(sorted(FAMILIES)),
    data=st.data(),
    text=st.text(max_size=30),
)
def test_random_component(name: str, family: str, data: st.DataObject, text: str) -> None:
    """Every registered type of every family, with random fields, in a real pipeline."""
    obj = json_bundle(name)
    obj[family] = data.draw(random_component(family))
    run_case("json", lambda: load_and_probe(obj, False, text))
