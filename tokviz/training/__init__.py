"""Trainers (BPE, WordPiece, Unigram) as cancellable generators of events.

>>> from tokviz.training import BpeTrainer, Done
>>> events = list(BpeTrainer(vocab_size=6).train_from_counts({"abab": 3, "abac": 1}))
>>> isinstance(events[-1], Done), events[-1].result.merges[0]
(True, ('a', 'b'))

The GUI's Train tab reads: `MergeEvent` per merge (live list), `Progress`, `EMIteration` and
`PruneRound` (Unigram charts), then the result: `BpeResult` / `WordPieceResult` answer the merge
slider's queries for any step k (``segmentations_at``, ``pair_table_at``, ``corpus_tokens_at``,
``chart_series``, ``probe``) without retraining; every result has ``tokenizer_json()`` and
``tokenizer()`` (the engine pipeline) and saves with `save_tokenizer_json`.
"""

from __future__ import annotations

from .base import Trainer, run_to_result
from .bpe import BpeResult, BpeTrainer, PairRow
from .events import Cancelled, CancelToken, Done, EMIteration, Event, MergeEvent, Progress, PruneRound
from .export import save_tokenizer_json, tokenizer_json
from .unigram import UnigramResult, UnigramTrainer
from .wordpiece import WordPieceResult, WordPieceTrainer
from .words import (
    PipelineSpec,
    byte_level_spec,
    count_words,
    metaspace_spec,
    read_corpus_files,
    whitespace_spec,
)

__all__ = [
    "Trainer",
    "BpeTrainer",
    "BpeResult",
    "PairRow",
    "WordPieceTrainer",
    "WordPieceResult",
    "UnigramTrainer",
    "UnigramResult",
    "CancelToken",
    "Progress",
    "MergeEvent",
    "EMIteration",
    "PruneRound",
    "Done",
    "Cancelled",
    "Event",
    "PipelineSpec",
    "byte_level_spec",
    "whitespace_spec",
    "metaspace_spec",
    "count_words",
    "read_corpus_files",
    "run_to_result",
    "save_tokenizer_json",
    "tokenizer_json",
]
