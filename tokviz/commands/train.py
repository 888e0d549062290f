"""``tokviz train``: train BPE / WordPiece / Unigram on corpus files and write tokenizer.json.

A progress bar goes to stderr (drawn from the trainer's events), one summary line to stdout
(``--json``: the summary as one JSON object).
The words are counted on the executor of --workers / --scheduler (`tokviz.training.corpus`:
files, folders, globs of text, JSON lines, Parquet; a CRLF file trains on its CRs, as HF's
``train(files)`` does). Unreadable corpus files (binary, not UTF-8, empty) raise
`TokvizFormatError`, which `tokviz.cli.main` turns into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from ..io.json_text import dumps

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("train", help="train a tokenizer on corpus files")
    p.add_argument("corpus", nargs="*", type=Path, help="corpus files or folders (read byte-exact; or --corpus)")
    p.add_argument("--corpus", dest="corpus_more", action="append", default=[], metavar="GLOB",
                   help="a corpus file, folder or glob (repeatable): .txt, .jsonl, .parquet, .gz/.zst")
    p.add_argument("--model", choices=["bpe", "wordpiece", "unigram"], default="bpe",
                   help="the model to train (default: bpe)")
    p.add_argument("--vocab-size", type=int, required=True,
                   help="the vocabulary size to reach, special tokens included")
    p.add_argument("--byte-level", action="store_true", help="byte-level BPE (GPT-2 alphabet and pattern)")
    p.add_argument("--min-frequency", type=int, default=0,
                   help="the least count of a pair to merge (BPE, WordPiece) or of a seed piece (Unigram)")
    # one token per --special (repeatable), so that it never swallows the corpus paths after it
    p.add_argument("--special", action="append", default=[], metavar="TOKEN", help="special token (repeat for more)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the tokenizer.json to write")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode=None)
    p.set_defaults(func=run)


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


def run(args: argparse.Namespace) -> int:
    from ..io.shards import corpus_files
    from ..training.corpus import train_corpus, training_read_options
    from ..training.events import Cancelled, Done, EMIteration, MergeEvent, Progress, PruneRound
    from ..training.export import save_tokenizer_json
    from ..training.factory import make_trainer
    from .corpus_options import read_options

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
    files = corpus_files(paths)
    nbytes = sum(f.stat().st_size for f in files)  # (on disk: a compressed file's compressed size)
    if args.json:
        summary = {
            "model": args.model, "files": [str(p) for p in files], "bytes": nbytes, "vocab_size": vocab,
            "merges": merges if args.model != "unigram" else None, "seconds": round(elapsed, 3), "output": str(out),
        }
        print(dumps(summary))
        return 0
    extra = f", {merges} merges" if args.model != "unigram" else ""
    print(
        f"trained {args.model} on {len(files)} file(s), {nbytes:,} bytes: "
        f"vocab {vocab}{extra} in {elapsed:.1f} s -> {out}"
    )
    return 0
