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

from ..encoding import Encoding
from . import PostProcessor

__all__ = ["ListProcessor", "merge_encodings", "with_type_ids", "surround"]


def with_type_ids(enc: Encoding, type_id: int) -> Encoding:
    return replace(enc, type_ids=[type_id] * len(enc.ids))


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
    return Encoding(
        text=first.text,
        ids=[i for e in encodings for i in e.ids],
        tokens=[t for e in encodings for t in e.tokens],
        offsets=[o for e in encodings for o in e.offsets],
        byte_offsets=[o for e in encodings for o in e.byte_offsets],
        special_tokens_mask=[m for e in encodings for m in e.special_tokens_mask],
        type_ids=[t for e in encodings for t in e.type_ids],
        word_ids=[w for e in encodings for w in e.word_ids],
        stages=first.stages,
        traces=traces,
    )


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
    seq_types = enc.type_ids if type_id is None else [type_id] * len(enc.ids)
    traces = None
    if enc.traces is not None:
        traces = [None] * n_before + list(enc.traces) + [None] * n_after
    return Encoding(
        text=enc.text,
        ids=[b[0] for b in before] + enc.ids + [a[0] for a in after],
        tokens=[b[1] for b in before] + enc.tokens + [a[1] for a in after],
        offsets=[(0, 0)] * n_before + enc.offsets + [(0, 0)] * n_after,
        byte_offsets=[(0, 0)] * n_before + enc.byte_offsets + [(0, 0)] * n_after,
        special_tokens_mask=[1] * n_before + enc.special_tokens_mask + [1] * n_after,
        type_ids=[b[2] for b in before] + seq_types + [a[2] for a in after],
        word_ids=[None] * n_before + enc.word_ids + [None] * n_after,
        stages=enc.stages,
        traces=traces,
    )


class ListProcessor(PostProcessor):
    """A post-processor written as HF's ``process_encodings`` over the list of sequences."""

    @abstractmethod
    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        """Process the first sequence (and the pair, when there is one)."""

    def process(self, encoding: Encoding, pair: Encoding | None = None, *, add_special_tokens: bool = True) -> Encoding:
        encodings = [encoding] if pair is None else [encoding, pair]
        # HF's default ``process``: every sequence's type ids become its index first
        encodings = [e if not any(e.type_ids) and i == 0 else with_type_ids(e, i) for i, e in enumerate(encodings)]
        return merge_encodings(self.process_encodings(encodings, add_special_tokens=add_special_tokens))
