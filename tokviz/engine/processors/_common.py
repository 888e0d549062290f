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

from ..columns import TokenColumns
from ..encoding import Encoding
from ..model_inputs import merge, set_sequence_id
from . import PostProcessor

__all__ = ["ListProcessor", "around", "merge_encodings", "special_encoding", "surround", "with_type_ids"]


def with_type_ids(enc: Encoding, type_id: int) -> Encoding:
    """``enc`` with its own tokens' type ids set (its windows keep theirs, as HF's ``set_type_ids``)."""
    return replace(enc, columns=enc.columns.with_type_id(type_id), overflowing=enc.overflowing,
                   sequence_ranges=enc.sequence_ranges)


def merge_encodings(encodings: Sequence[Encoding]) -> Encoding:
    """HF ``Encoding::merge`` (offsets not grown; windows combined): `tokviz.engine.model_inputs.merge`."""
    return merge(encodings)


def special_encoding(like: Encoding, tokens: Sequence[tuple[int, str, int]]) -> Encoding:
    """Processor tokens ``(id, token, type_id)`` as an encoding of their own (special, no word,
    offsets ``(0, 0)``), carrying ``like``'s text so that a merge starting with them keeps it."""
    return Encoding(like.text, TokenColumns.of_specials(tokens), like.stages, None, like.source)


def surround(
    enc: Encoding,
    before: Sequence[tuple[int, str, int]],
    after: Sequence[tuple[int, str, int]],
    *,
    type_id: int | None = None,
) -> Encoding:
    """Add processor tokens ``(id, token, type_id)`` around ``enc`` (its windows left alone).

    Processor tokens are special, have no word and the empty offsets ``(0, 0)`` (as HF);
    ``type_id`` (when given) overrides the type ids of the sequence's own tokens. The result has
    no sequence ranges (the caller sets them).
    """
    own = enc.columns if type_id is None else enc.columns.with_type_id(type_id)
    parts = ([TokenColumns.of_specials(before)] if before else []) + [own]
    parts += [TokenColumns.of_specials(after)] if after else []
    traces = None
    if enc.traces is not None:
        traces = [None] * len(before) + list(enc.traces) + [None] * len(after)
    return Encoding(enc.text, TokenColumns.concat(parts), enc.stages, traces, enc.source)


def around(
    enc: Encoding, before: Sequence[tuple[int, str, int]], after: Sequence[tuple[int, str, int]], *,
    sequence_id: int, type_id: int | None = None,
) -> Encoding:
    """`surround` for Bert/Roberta: ``enc`` and each of its windows wrapped alike, the sequence
    range covering the sequence's own tokens (HF's ``sequence_ranges`` without the specials)."""

    def one(e: Encoding) -> Encoding:
        wrapped = surround(e, before, after, type_id=type_id)
        return replace(wrapped, sequence_ranges=((sequence_id, len(before), len(before) + len(e)),))

    return replace(one(enc), overflowing=tuple(one(w) for w in enc.overflowing))


class ListProcessor(PostProcessor):
    """A post-processor written as HF's ``process_encodings`` over the list of sequences."""

    @abstractmethod
    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        """Process the first sequence (and the pair, when there is one)."""

    def process(self, encoding: Encoding, pair: Encoding | None = None, *, add_special_tokens: bool = True) -> Encoding:
        encodings = [encoding] if pair is None else [encoding, pair]
        # HF's default ``process``: each sequence (and each of its windows) becomes sequence i,
        # and the sequence's own type ids (not its windows') become i
        encodings = [with_type_ids(_numbered(e, i), i) for i, e in enumerate(encodings)]
        return merge(self.process_encodings(encodings, add_special_tokens=add_special_tokens))


def _numbered(enc: Encoding, i: int) -> Encoding:
    numbered = set_sequence_id(enc, i)
    if not enc.overflowing:
        return numbered
    return replace(numbered, overflowing=tuple(set_sequence_id(w, i) for w in enc.overflowing))
