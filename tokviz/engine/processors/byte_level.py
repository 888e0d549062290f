"""The ByteLevel post-processor: HF's offset trimming for byte-level tokens (no tokens added).

With ``trim_offsets`` a token's offsets lose its leading and trailing spaces (``Ġ`` or any
Unicode White_Space character in the token string), so ``"Ġhello"`` points at ``hello`` only.
Byte offsets are left alone: they say which bytes the token holds.
"""

from __future__ import annotations

import regex

from ..byte_alphabet import ByteLevelOptions
from ..encoding import Encoding, column, with_columns
from ._common import ListProcessor

__all__ = ["ByteLevel", "trim_offsets", "space_counts"]

# Rust's char::is_whitespace is the Unicode White_Space property (not Python's str.isspace,
# which also accepts U+001C..U+001F).
_WHITE_SPACE = frozenset(chr(c) for c in range(0x3000 + 1) if regex.match(r"\p{White_Space}", chr(c)))
_SPACE_PROXY = "\u0120"  # Ġ: the byte-level proxy of b" "


def _is_space(c: str) -> bool:
    return c == _SPACE_PROXY or c in _WHITE_SPACE


def space_counts(token: str) -> tuple[int, int]:
    """Leading and trailing space characters (``Ġ`` or White_Space) of a token string."""
    leading = 0
    for c in token:
        if not _is_space(c):
            break
        leading += 1
    trailing = 0
    for c in reversed(token):
        if not _is_space(c):
            break
        trailing += 1
    return leading, trailing


def trim_offsets(encoding: Encoding, *, add_prefix_space: bool) -> Encoding:
    """HF ``process_offsets``: move offsets inside a token's leading/trailing spaces."""
    offsets = column(encoding, "offsets")
    new_offsets: list[tuple[int, int]] | None = None
    for i, token in enumerate(column(encoding, "tokens")):
        if not token or not (_is_space(token[0]) or _is_space(token[-1])):
            continue
        leading, trailing = space_counts(token)
        start, end = offsets[i]
        if leading > 0:
            # A first token (or one starting at 0, for pre-tokenized input) keeps the single
            # space that add_prefix_space put there; more than one means the user typed them.
            is_first = i == 0 or start == 0
            if is_first and add_prefix_space and leading == 1:
                leading = 0
            start = min(start + leading, end)
        if trailing > 0 and end >= trailing:
            end = max(end - trailing, start)
        if (start, end) != offsets[i]:
            if new_offsets is None:
                new_offsets = list(offsets)
            new_offsets[i] = (start, end)
    if new_offsets is None:
        return encoding
    return with_columns(encoding, offsets=new_offsets)


class ByteLevel(ByteLevelOptions, ListProcessor):
    """HF ``processors.ByteLevel``: trims offsets when ``trim_offsets``; adds no tokens."""

    type_name = "ByteLevel"

    def __init__(self, *, trim_offsets: bool = True, add_prefix_space: bool = True, use_regex: bool = True) -> None:
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space
        self.use_regex = use_regex  # kept for round-tripping; the processor does not split

    def added_tokens(self, is_pair: bool) -> int:
        return 0

    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        # HF applies the trimming whether or not special tokens are added
        if not self.trim_offsets:
            return encodings
        return [trim_offsets(e, add_prefix_space=self.add_prefix_space) for e in encodings]

