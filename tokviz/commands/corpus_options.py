"""The options every corpus job takes (compare --file, lint --corpus, diff --corpus, audit --corpus,
train --corpus), read into a `tokviz.io.shards.ReadOptions` and a `tokviz.io.executor.Executor`.

Not a command: the command modules add these options to their own parsers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["MIB", "Progress", "add_corpus_options", "executor_of", "read_options"]

MIB = 1 << 20


def add_corpus_options(p: argparse.ArgumentParser, *, mode: str | None = "whole") -> None:
    """--mode (when ``mode`` is not None: its default), --field, --max-record-mb, --workers,
    --scheduler and --progress."""
    if mode is not None:
        p.add_argument(
            "--mode", default=mode,
            help=f"documents of text files: whole, lines, paragraphs or jsonl:FIELD (default {mode}); "
            "a file over 1 MiB is cut into pieces at line ends in whole mode",
        )
    p.add_argument("--field", default="text", help="the string field of .jsonl and .parquet records (default text)")
    p.add_argument(
        "--max-record-mb", type=float, default=64.0, metavar="MB",
        help="refuse a JSON line or Parquet value over this size (default 64; each is held whole to be parsed)",
    )
    p.add_argument("--workers", type=int, default=None, help="local processes (default: every core; 1: this process)")
    p.add_argument(
        "--scheduler", default=None, metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for N local "
        "workers (default: $TOKVIZ_DASK_SCHEDULER when --workers is not given)",
    )
    p.add_argument(
        "--progress", action="store_true", help="report progress on stderr (the default when stderr is a terminal)"
    )


def read_options(
    args: argparse.Namespace, *, mode: str | None = None, keep_newline: bool = False, piece_bytes: int | None = None
) -> Any:  # noqa: ANN401 - ReadOptions
    """The `ReadOptions` of the parsed options (``mode``: for a command without --mode)."""
    from ..io.shards import PIECE_BYTES, ReadOptions

    if not args.max_record_mb > 0:
        raise ValueError(f"--max-record-mb must be positive, got {args.max_record_mb:g}")
    return ReadOptions(
        mode=mode or args.mode,
        field=args.field,
        max_record=int(args.max_record_mb * MIB),
        keep_newline=keep_newline,
        piece_bytes=piece_bytes or PIECE_BYTES,
    )


def spec_of(args: argparse.Namespace, tokenizer: Any) -> Any:  # noqa: ANN401 - TokenizerSpec
    """How a worker loads the tokenizer argument ``tokenizer`` (a path or an embedded name) with
    the command's --pattern / --special-tokens."""
    import json

    from ..analysis.corpus import TokenizerSpec
    from ..io.embedded import resolve_tokenizer

    specials = tuple(json.loads(args.special_tokens).items()) if args.special_tokens else None
    path = resolve_tokenizer(tokenizer)
    return TokenizerSpec(Path(path).name, str(path), args.pattern, specials)


def executor_of(args: argparse.Namespace, *, corpus_bytes: int, state: Any = None) -> Any:
    """The `Executor` of --scheduler / --workers (``state``: for the in-process one)."""
    from ..io.executor import executor_for

    return executor_for(scheduler=args.scheduler, workers=args.workers, corpus_bytes=corpus_bytes, state=state)


class Progress:
    """``NAME: 12.3 of 40.0 MB read (31 %), 52,310 documents`` on stderr, at most once a second,
    when ``--progress`` is given or stderr is a terminal (callable as ``progress(stage, done, total)``)."""

    def __init__(self, name: str, args: argparse.Namespace) -> None:
        self.name = name
        self.on = bool(getattr(args, "progress", False)) or sys.stderr.isatty()
        self.last = 0.0
        self.documents = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.on:
            return
        if stage == "documents":
            self.documents = done
            return
        if stage != "bytes":
            return
        now = time.monotonic()
        if now - self.last >= 1.0 or done >= total:
            self.last = now
            pct = 100 * done / total if total else 100.0
            print(
                f"{self.name}: {done / 1e6:,.1f} of {total / 1e6:,.1f} MB read ({pct:.0f} %), "
                f"{self.documents:,} documents",
                file=sys.stderr, flush=True,
            )

    def finish(self, seconds: float, label: str) -> None:
        if self.on:
            print(f"{self.name}: done in {seconds:.1f} s ({label})", file=sys.stderr)
