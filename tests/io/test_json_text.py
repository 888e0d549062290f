"""The bounded JSON reader: `nesting_depth` against the depth of what ``json`` parses."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings, strategies as st
from support import bundle_bytes

from tokviz.io.json_text import nesting_depth


def _depth(value: Any) -> int:
    """The nesting depth of a parsed value, by hand: 0 for a scalar, 1 + its deepest child."""
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


# strings full of what the scan must see through: quotes, backslashes, brackets, escapes
_TRICKY = st.text(alphabet='ab"\\[]{}\n\u00e9\u4e16/', max_size=8)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY, inner, max_size=4),
    max_leaves=25,
)


class TestNestingDepth:
    def test_hand_examples(self) -> None:
        assert nesting_depth(b'{"a": [1, {"b": "]]]"}]}') == 3
        assert nesting_depth('"[[[" ') == 0
        assert nesting_depth(b'["\\\\", ["\\"[", []]]') == 3  # an escaped backslash, then an escaped quote
        assert nesting_depth(b"[]") == 1

    @settings(max_examples=400, deadline=None)
    @given(_VALUES, st.booleans())
    def test_depth_of_what_json_writes(self, value: Any, ascii_only: bool) -> None:
        text = json.dumps(value, ensure_ascii=ascii_only)
        assert nesting_depth(text) == nesting_depth(text.encode("utf-8")) == _depth(value)

    def test_real_tokenizer_file(self) -> None:
        data = bundle_bytes("bert-base-uncased/tokenizer.json")
        assert nesting_depth(data) == _depth(json.loads(data))
