"""Training on corpus files at any scale: the word counting runs on the executor seam, the merges here.

`train_corpus` counts the words of every shard of a corpus (files, folders, globs; text, JSON lines,
Parquet, .gz/.zst: `tokviz.io.shards`) on an executor (`tokviz.io.executor`: this process, the local
pool, a Dask cluster), sums the shards' counts in corpus order, and trains on the sum here: the
counts, and so the merges, are the same whichever executor counted (the merges are HF's, see
`tokviz.training.bpe`). The texts are what HF's ``Tokenizer.train(files)`` feeds its trainer: each
line of a text file with its LF (a CRLF file trains on its CRs), each JSON line's or Parquet row's
``field``; a line over 1 MiB is cut into pieces (`tokviz.io.shards`), where HF would keep it whole.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.cancel import CancelToken
from ..engine.errors import TokvizFormatError
from ..io.executor import CorpusCancelled, Executor, ShardJob, executor_for, run_shards
from ..io.shards import ReadOptions, ShardReader, corpus_files, plan_shards
from .events import Cancelled, Event, Progress
from .words import PipelineSpec, add_words

__all__ = ["WordCountJob", "train_corpus", "training_read_options"]

_BINARY_WINDOW = 65536  # NUL bytes in a text file's first bytes: not a text corpus


def training_read_options(*, field: str = "text", max_record: int | None = None) -> ReadOptions:
    """How a trainer reads a corpus: lines with their LF, JSON/Parquet ``field``."""
    kw = {} if max_record is None else {"max_record": max_record}
    return ReadOptions(mode="lines", keep_newline=True, field=field, **kw)


@dataclass(slots=True)
class _ShardWords:
    """One shard's word counts (in order of first appearance), its texts, and the files in it
    that hold any text that is not white space."""

    words: Counter[str]
    texts: int
    with_text: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class WordCountJob(ShardJob):
    """The words of each shard through the trainer's pipeline (`PipelineSpec.pipeline`)."""

    spec: PipelineSpec
    read: ReadOptions

    def key(self) -> tuple[object, ...]:
        return ("words", self.spec.key())

    def prepare(self) -> Any:  # noqa: ANN401 - a Tokenizer
        return self.spec.pipeline()

    def map(self, state: Any, records: ShardReader, cancel: CancelToken | None) -> _ShardWords:  # noqa: ANN401
        distinct: Counter[str] = Counter()
        out = _ShardWords(Counter(), 0)
        parts = records.shard.parts
        for rec in records:
            if parts[rec.part].kind == "text" and rec.byte_offset < _BINARY_WINDOW and "\x00" in rec.text:  # type: ignore[operator]
                raise TokvizFormatError("corpus file looks binary (NUL bytes); expected UTF-8 text", source=rec.source)
            distinct[rec.text] += 1
            out.texts += 1
            if rec.source not in out.with_text and not rec.text.isspace():
                out.with_text.add(rec.source)
            if out.texts % 2000 == 0 and cancel is not None and cancel.cancelled:
                raise CorpusCancelled()
        add_words(distinct, state, out.words)
        return out


def train_corpus(
    trainer: Any,  # noqa: ANN401 - a Trainer
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    read: ReadOptions | None = None,
    executor: Executor | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    cancel: CancelToken | None = None,
) -> Iterator[Event]:
    """The events of training ``trainer`` on the corpus at ``paths``: ``Progress("count words",
    ...)`` as shards are counted (in MB and texts), then the trainer's own events (the last is
    Done or Cancelled). An empty corpus file, or one that looks binary, raises
    `TokvizFormatError` naming it."""
    read = read or training_read_options()
    files = corpus_files(paths)
    shards = plan_shards(files, read)
    total = sum(s.size for s in shards) or 1
    job = WordCountJob(trainer.spec, read)
    own = executor is None
    if executor is None:
        executor = executor_for(scheduler=scheduler, workers=workers, corpus_bytes=total)
    counts: Counter[str] = Counter()
    with_text: set[str] = set()
    done = texts = 0
    try:
        for out, _ in run_shards(job, shards, executor, cancel=cancel):
            counts.update(out.partial.words)
            with_text |= out.partial.with_text
            done += shards[out.index].size
            texts += out.partial.texts
            if out.index < len(shards) - 1:  # (the last once the files are checked)
                yield Progress("count words", done / total, f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB, {texts:,} texts")
    except CorpusCancelled:
        yield Cancelled("count words")
        return
    finally:
        if own:
            executor.close()
    for f in files:
        if str(f) not in with_text:
            raise TokvizFormatError("corpus file is empty", source=str(f))
    yield Progress("count words", 1.0, f"{total / 1e6:,.1f} MB, {texts:,} texts, {len(counts):,} distinct words")
    yield from trainer.train_from_counts(counts, cancel=cancel)
