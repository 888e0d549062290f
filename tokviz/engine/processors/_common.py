"""Shared plumbing of the post-processors: HF's ``process`` / ``process_encodings`` split.

HF runs every post-processor in two steps: ``process`` sets each input encoding's type ids to
its position (0 for the first sequence, 1 for the pair), calls ``process_encodings`` (which a
``Sequence`` chains), then merges the results into one encoding. `ListProcessor` reproduces
that, so `Sequence` can feed one processor's encodings to the next.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain

from ..columns import TokenColumns
from ..encoding import Encoding
from . import PostProcessor

__all__ = ["ListProcessor", "merge_encodings", "surround", "with_type_ids"]


def with_type_ids(enc: Encoding, type_id: int) -> Encoding:
    return replace(enc, columns=enc.columns.with_type_id(type_id))


def merge_encodings(encodings: Sequence[Encoding]) -> Encoding:
    """Concatenate encodings (HF ``Encoding::merge`` without growing offsets)."""
    if len(encodings) == 1:
        return encodings[0]
    traces = None
    if any(e.traces is not None for e in encodings):
        traces = list(chain.from_iterable(e.traces if e.traces is not None else [None] * len(e) for e in encodings))
    return replace(encodings[0], columns=TokenColumns.concat([e.columns for e in encodings]), traces=traces)


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
    own = enc.columns if type_id is None else enc.columns.with_type_id(type_id)
    parts = ([TokenColumns.of_specials(before)] if before else []) + [own]
    parts += [TokenColumns.of_specials(after)] if after else []
    traces = None
    if enc.traces is not None:
        traces = [None] * len(before) + list(enc.traces) + [None] * len(after)
    return replace(enc, columns=TokenColumns.concat(parts), traces=traces)


class ListProcessor(PostProcessor):
    """A post-processor written as HF's ``process_encodings`` over the list of sequences."""

    @abstractmethod
    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        """Process the first sequence (and the pair, when there is one)."""

    def process(self, encoding: Encoding, pair: Encoding | None = None, *, add_special_tokens: bool = True) -> Encoding:
        encodings = [encoding] if pair is None else [encoding, pair]
        # HF's default ``process``: every sequence's type ids become its index first
        encodings = [e if i == 0 and not _any_type(e) else with_type_ids(e, i) for i, e in enumerate(encodings)]
        return merge_encodings(self.process_encodings(encodings, add_special_tokens=add_special_tokens))


def _any_type(enc: Encoding) -> bool:
    types = enc.columns.type_ids
    return types is not None and any(types)
