"""What every trainer shares: count words through the pipeline spec, then train on the counts.

A trainer subclass sets ``self.spec`` (how corpus text becomes words) and implements
`Trainer.train_from_counts`; `train` (events), `train_counts` and `run` (results) come from here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .events import Cancelled, CancelToken, Done, Event
from .words import PipelineSpec, count_words

__all__ = ["Trainer", "run_to_result"]


def run_to_result(events: Iterable[Event]) -> Any:
    """Drain a trainer's events and return the result (raise if it was cancelled)."""
    result = None
    for ev in events:
        if isinstance(ev, Done):
            result = ev.result
        elif isinstance(ev, Cancelled):
            raise RuntimeError(f"training cancelled during {ev.stage}")
    if result is None:
        raise RuntimeError("trainer ended without a result")
    return result


class Trainer(ABC):
    """Base of the BPE, WordPiece and Unigram trainers."""

    spec: PipelineSpec

    def train(
        self, texts: Iterable[str], *, total: int | None = None, cancel: CancelToken | None = None
    ) -> Iterator[Event]:
        """Events of a training run over ``texts`` (lines or documents); the last is Done or Cancelled."""
        if total is None and isinstance(texts, Sequence):
            total = len(texts)
        counts: Counter[str] = Counter()
        yield from count_words(texts, self.spec, total=total, cancel=cancel, counts=counts)
        if cancel is not None and cancel.cancelled:
            yield Cancelled("count words")
            return
        yield from self.train_from_counts(counts, cancel=cancel)

    @abstractmethod
    def train_from_counts(self, counts: Mapping[str, int], *, cancel: CancelToken | None = None) -> Iterator[Event]:
        """Events of training on already pre-tokenized word counts."""

    def train_counts(self, counts: Mapping[str, int]) -> Any:
        """Train on word counts and return the result (no events)."""
        return run_to_result(self.train_from_counts(counts))

    def run(self, texts: Iterable[str]) -> Any:
        """Train on ``texts`` and return the result (no events)."""
        return run_to_result(self.train(texts))
