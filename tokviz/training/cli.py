"""``tokviz train``: train BPE / WordPiece / Unigram on corpus files and write tokenizer.json.

A progress bar goes to stderr (drawn from the trainer's events), one summary line to stdout.
The words are counted on the executor of --workers / --scheduler (`tokviz.training.corpus`: a
CRLF file trains on its CRs, as HF's ``train(files)`` does). Unreadable corpus files (binary, not
UTF-8, empty) raise `TokvizFormatError`, which the main CLI turns into one line on stderr and
exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from .events import Cancelled, Done, MergeEvent, Progress, PruneRound, EMIteration

__all__ = ["run_train", "make_trainer"]


def make_trainer(
    model: str,
    *,
    vocab_size: int,
    byte_level: bool = False,
    min_frequency: int = 0,
    special_tokens: list[str] | None = None,
    record_history: bool = True,
) -> Any:
    """The trainer the CLI (and the GUI's Train tab) uses for ``model`` and the common options."""
    from ..engine.errors import TokvizFormatError

    specials = list(special_tokens or [])
    if vocab_size <= 0:
        raise TokvizFormatError(f"--vocab-size must be positive, got {vocab_size}")
    if model == "bpe":
        from .bpe import BpeTrainer
        from .words import whitespace_spec

        if byte_level:
            return BpeTrainer.byte_level(
                vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
                record_history=record_history,
            )
        return BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=specials,
            spec=whitespace_spec(), record_history=record_history,
        )
    if byte_level:
        raise TokvizFormatError(f"--byte-level applies to --model bpe only, not {model}")
    if model == "wordpiece":
        from .wordpiece import WordPieceTrainer

        return WordPieceTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency,
            special_tokens=specials or ["[UNK]"], record_history=record_history,
        )
    if model == "unigram":
        from .unigram import UnigramTrainer

        return UnigramTrainer(vocab_size=vocab_size, special_tokens=specials or ["<unk>"], min_frequency=min_frequency)
    raise TokvizFormatError(f"unknown model {model!r} (bpe, wordpiece, unigram)")


class _Bar:
    """A one-line progress bar on a terminal (plain lines when not a tty)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last = 0.0
        self.stage = ""

    def show(self, stage: str, fraction: float, message: str) -> None:
        now = time.monotonic()
        if stage == self.stage and now - self.last < 0.1 and fraction < 1.0:
            return
        self.last = now
        if not self.tty:
            if stage != self.stage or fraction >= 1.0:
                print(f"{stage}: {message}", file=self.stream, flush=True)
            self.stage = stage
            return
        self.stage = stage
        width = 30
        filled = int(width * max(0.0, min(1.0, fraction)))
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r{stage:>14} [{bar}] {fraction * 100:5.1f}% {message[:40]:<40}", end="", file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=self.stream, flush=True)


def run_train(args: argparse.Namespace) -> int:
    from .export import save_tokenizer_json

    from ..commands.corpus_options import read_options
    from .corpus import train_corpus, training_read_options

    paths = [*map(str, args.corpus), *args.corpus_more]
    if not paths:
        raise ValueError("train needs a corpus: files, folders or --corpus GLOB")
    given = read_options(args, mode="lines")
    read = training_read_options(field=given.field, max_record=given.max_record)
    trainer = make_trainer(
        args.model,
        vocab_size=args.vocab_size,
        byte_level=args.byte_level,
        min_frequency=args.min_frequency,
        special_tokens=list(args.special or []),
        record_history=False,
    )
    bar = _Bar(sys.stderr)
    start = time.perf_counter()
    result = None
    merges = 0
    try:
        for ev in train_corpus(trainer, paths, read=read, scheduler=args.scheduler, workers=args.workers):
            if isinstance(ev, Progress):
                bar.show(ev.stage, ev.fraction, ev.message)
            elif isinstance(ev, MergeEvent):
                merges += 1
            elif isinstance(ev, EMIteration):
                bar.show("em", 0.5, f"round {ev.round} it {ev.iteration}: {ev.vocab_size} pieces")
            elif isinstance(ev, PruneRound):
                bar.show("prune", 0.5, f"{ev.vocab_before} -> {ev.vocab_after} pieces")
            elif isinstance(ev, Done):
                result = ev.result
            elif isinstance(ev, Cancelled):
                break
    finally:
        bar.close()
    if result is None:
        print("tokviz: error: training did not finish", file=sys.stderr)
        return 2
    out = save_tokenizer_json(result, args.output)
    elapsed = time.perf_counter() - start
    vocab = len(result.vocab)
    from ..io.shards import corpus_files

    files = corpus_files(paths)
    nbytes = sum(f.stat().st_size for f in files)
    extra = f", {merges} merges" if args.model != "unigram" else ""
    print(
        f"trained {args.model} on {len(files)} file(s), {nbytes:,} bytes: "
        f"vocab {vocab}{extra} in {elapsed:.1f} s -> {out}"
    )
    return 0
