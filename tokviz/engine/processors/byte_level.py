"""The ByteLevel post-processor: HF's offset trimming for byte-level tokens (no tokens added).

With ``trim_offsets`` a token's offsets lose its leading and trailing spaces (``Ġ`` or any
Unicode White_Space character in the token string), so ``"Ġhello"`` points at ``hello`` only.
Byte offsets are left alone: they say which bytes the token holds.
"""

from __future__ import annotations

from dataclasses import replace

from ..byte_alphabet import ByteLevelOptions
from ..columns import int_column
from ..encoding import Encoding
from ..exact import SPACES, space_counts
from ..model_inputs import set_sequence_id
from ._common import ListProcessor

__all__ = ["ByteLevel", "space_counts", "trim_offsets", "trim_windows"]


def trim_offsets(encoding: Encoding, *, add_prefix_space: bool) -> Encoding:
    """HF ``process_offsets``: move offsets inside a token's leading/trailing spaces (``Ġ`` or any
    Unicode White_Space character in the token string; `tokviz.engine.exact.space_counts`)."""
    cols = encoding.columns
    tokens = cols.tokens
    # (the tokens that start or end with a space, found by C-level passes over the strings)
    spaced = [i for i, t in enumerate(tokens) if t and (t[0] in SPACES or t[-1] in SPACES)]
    if not spaced:
        return encoding
    starts, ends = int_column(cols.starts), int_column(cols.ends)
    changed = False
    for i in spaced:
        leading, trailing = space_counts(tokens[i])
        start, end = starts[i], ends[i]
        if leading > 0:
            # A first token (or one starting at 0, for pre-tokenized input) keeps the single
            # space that add_prefix_space put there; more than one means the user typed them.
            is_first = i == 0 or start == 0
            if is_first and add_prefix_space and leading == 1:
                leading = 0
            start = min(start + leading, end)
        if trailing > 0 and end >= trailing:
            end = max(end - trailing, start)
        if start != starts[i] or end != ends[i]:
            starts[i], ends[i] = start, end
            changed = True
    if not changed:
        return encoding
    return replace(encoding, columns=cols.with_offsets(starts, ends))


def trim_windows(encoding: Encoding, *, add_prefix_space: bool) -> Encoding:
    """`trim_offsets` on ``encoding`` and on each of its overflowing windows (as HF)."""
    trimmed = trim_offsets(encoding, add_prefix_space=add_prefix_space)
    if not encoding.overflowing:
        return trimmed
    windows = tuple(trim_offsets(w, add_prefix_space=add_prefix_space) for w in encoding.overflowing)
    return replace(trimmed, overflowing=windows)


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
        # HF applies the trimming whether or not special tokens are added, then numbers the sequences
        if self.trim_offsets:
            encodings = [trim_windows(e, add_prefix_space=self.add_prefix_space) for e in encodings]
        return [set_sequence_id(e, i) for i, e in enumerate(encodings)]

