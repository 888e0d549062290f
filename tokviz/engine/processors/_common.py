"""Shared plumbing of the post-processors: HF's ``process`` / ``process_encodings`` split.

HF runs every post-processor in two steps: ``process`` sets each input encoding's type ids to
its position (0 for the first sequence, 1 for the pair), calls ``process_encodings`` (which a
``Sequence`` chains), then merges the results into one encoding. `ListProcessor` reproduces
that, so `Sequence` can feed one processor's encodings to the next.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from itertools import chain, repeat

from ..encoding import COLUMNS, Encoding, column, with_columns
from . import PostProcessor

__all__ = ["ListProcessor", "merge_encodings", "with_type_ids", "surround"]


def with_type_ids(enc: Encoding, type_id: int) -> Encoding:
    return with_columns(enc, type_ids=(type_id,) * len(enc))


def merge_encodings(encodings: Sequence[Encoding]) -> Encoding:
    """Concatenate encodings (HF ``Encoding::merge`` without growing offsets)."""
    if len(encodings) == 1:
        return encodings[0]
    first = encodings[0]
    traces = None
    if any(e.traces is not None for e in encodings):
        traces = []
        for e in encodings:
            traces.extend(e.traces if e.traces is not None else [None] * len(e.ids))
    return with_columns(first, traces=traces, **{
        name: list(chain.from_iterable(column(e, name) for e in encodings)) for name in COLUMNS})


def surround(
    enc: Encoding,
    before: Sequence[tuple[int, str, int]],
    after: Sequence[tuple[int, str, int]],
    *,
    type_id: int | None = None,
) -> Encoding:
    """Add processor tokens ``(id, token, type_id)`` around ``enc``.

    Processor tokens are special, have no word and the empty offsets ``(0, 0)`` (as HF);
    ``type_id`` (when given) overrides the type ids of the sequence's own tokens.
    """
    n_before, n_after = len(before), len(after)
    n = len(enc)
    seq_types = column(enc, "type_ids") if type_id is None else (type_id,) * n
    traces = None
    if enc.traces is not None:
        traces = [None] * n_before + list(enc.traces) + [None] * n_after
    return with_columns(
        enc,
        ids=_around([b[0] for b in before], column(enc, "ids"), [a[0] for a in after]),
        tokens=_around([b[1] for b in before], column(enc, "tokens"), [a[1] for a in after]),
        offsets=_around([(0, 0)] * n_before, column(enc, "offsets"), [(0, 0)] * n_after),
        byte_offsets=_around([(0, 0)] * n_before, column(enc, "byte_offsets"), [(0, 0)] * n_after),
        special_tokens_mask=_around([1] * n_before, column(enc, "special_tokens_mask"), [1] * n_after),
        type_ids=_around([b[2] for b in before], seq_types, [a[2] for a in after]),
        word_ids=_around([None] * n_before, column(enc, "word_ids"), [None] * n_after),
        traces=traces,
    )


def _around(first: list, col: Sequence, last: list) -> Sequence:
    """``first + col + last``, a tuple when ``col`` is one (a compact encoding's column)."""
    if type(col) is tuple:
        return (*first, *col, *last)
    return first + list(col) + last


class ListProcessor(PostProcessor):
    """A post-processor written as HF's ``process_encodings`` over the list of sequences."""

    @abstractmethod
    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        """Process the first sequence (and the pair, when there is one)."""

    def process(self, encoding: Encoding, pair: Encoding | None = None, *, add_special_tokens: bool = True) -> Encoding:
        encodings = [encoding] if pair is None else [encoding, pair]
        # HF's default ``process``: every sequence's type ids become its index first
        encodings = [e if not any(column(e, "type_ids")) and i == 0 else with_type_ids(e, i) for i, e in enumerate(encodings)]
        return merge_encodings(self.process_encodings(encodings, add_special_tokens=add_special_tokens))
