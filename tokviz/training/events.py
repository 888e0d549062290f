"""Events the trainers yield, and the cancel token that stops them.

Every trainer is a generator: ``for event in trainer.train(texts): ...``. The GUI forwards the
events from a worker thread (progress bar, live merge list, EM charts); the CLI draws a progress
bar from them; tests read them. The last event is always `Done` (with the result) or
`Cancelled`. Stopping iteration early (``gen.close()``) is also a clean cancel: trainers keep
all state local to the generator, so nothing is left half-updated.

>>> token = CancelToken()
>>> token.cancelled
False
>>> token.cancel(); token.cancelled
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from ..engine.cancel import CancelToken

__all__ = [
    "CancelToken",
    "Progress",
    "MergeEvent",
    "EMIteration",
    "PruneRound",
    "Done",
    "Cancelled",
    "Event",
]




@dataclass(frozen=True, slots=True)
class Progress:
    """``stage`` is e.g. "count words", "count pairs", "merges", "em", "prune"; ``fraction`` in [0, 1]."""

    stage: str
    fraction: float
    message: str = ""


@dataclass(frozen=True, slots=True)
class MergeEvent:
    """One merge of BPE or WordPiece training.

    ``rank`` counts every merge step from 0. ``count`` is the pair's corpus frequency when it was
    chosen (BPE) and ``score`` its WordPiece score (None for BPE). ``words_touched`` is how many
    distinct corpus words contained the pair; ``occurrences`` how many corpus tokens disappeared.
    ``duplicate`` marks an HF quirk reproduced on purpose: a merge whose result string already
    existed (e.g. "ab"+"c" after "a"+"bc") reuses the token id and does not grow the vocabulary.
    """

    rank: int
    left: str
    right: str
    left_id: int
    right_id: int
    new_token: str
    new_id: int
    count: int
    words_touched: int
    occurrences: int
    vocab_size: int
    score: float | None = None
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class EMIteration:
    """One EM iteration of Unigram training (``round`` = pruning round it belongs to)."""

    round: int
    iteration: int
    log_likelihood: float  # corpus log-likelihood (natural log) under the model before the M-step
    vocab_size: int
    corpus_tokens: float  # expected number of tokens (sum of expected counts)


@dataclass(frozen=True, slots=True)
class PruneRound:
    """One Unigram pruning round: the pieces removed with their likelihood loss (largest kept first)."""

    round: int
    vocab_before: int
    vocab_after: int
    removed: tuple[tuple[str, float], ...]
    log_likelihood: float


@dataclass(frozen=True, slots=True)
class Done:
    result: Any


@dataclass(frozen=True, slots=True)
class Cancelled:
    stage: str


Event = Union[Progress, MergeEvent, EMIteration, PruneRound, Done, Cancelled]
