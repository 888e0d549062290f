"""``tokviz lint``: the offset linter from the command line (see `tokviz.analysis.lint`).

``tokviz lint TOK --text T`` (or ``--file F``, read byte-exact) lints one text encoded as the
GUI's Inspect tab shows it, with the tokenizer's special tokens (``--no-special``: without, as
``encode --no-special``), so token numbers are the GUI's; both the text and the JSON output say
which. ``--corpus C`` (a file, folder or glob; JSON lines and Parquet by ``--field``) lints every
line, on the local cores or a Dask cluster (`tokviz.analysis.corpus_jobs.lint_corpus`), and
prints counts per check and the first ``--examples`` findings of each; ``--regression K`` prints
finding K as a ready regression test (tokenizer path, text, how it was encoded, expected spans).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..io import json_text
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("lint", help="find and explain offset mismatches (HF-compatible vs exact spans)")
    p.add_argument("tokenizer", help=TOKENIZER_HELP)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="text to lint")
    src.add_argument("--file", type=Path, help="UTF-8 file linted as one text (byte-exact)")
    src.add_argument("--corpus", help="a corpus (file, folder or glob) linted line by line (counts and examples)")
    p.add_argument("--exact", action="store_true", help="lint the exact spans instead of the HF-compatible ones")
    p.add_argument("--examples", type=int, default=5, help="examples kept per check with --corpus (default 5)")
    p.add_argument("--regression", type=int, default=None, metavar="K", help="print finding K as a regression test JSON")
    p.add_argument("--no-special", action="store_true", help="do not add special tokens (BOS/EOS/CLS...)")
    p.add_argument("--json", action="store_true", help="print the findings and counts as JSON")
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode=None)
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.lint import CHECKS, dumps, lint_encoding, regression_case
    from ..io.textfile import read_text_file

    tok = load_tokenizer(args)
    add = not args.no_special
    spans = "exact" if args.exact else "HF-compatible"
    specials = "special tokens added" if add else "no special tokens added"
    if args.corpus is not None:
        if args.examples < 0:
            raise ValueError("--examples must be 0 or more")
        result = _lint_corpus(args, tok, add)
        if args.json:
            print(dumps(result.to_json()))
        else:
            print(f"{result.lines} lines linted ({spans} spans, {specials})")
            for check, n in result.to_json()["counts"].items():
                print(f"  {check} {CHECKS[check]}: {n} finding{'' if n == 1 else 's'}")
        return 0
    text = read_text_file(args.file).text if args.file is not None else args.text
    enc = tok.encode(text, add_special_tokens=add)
    report = lint_encoding(tok, enc, exact=args.exact)
    if args.regression is not None:
        if not 0 <= args.regression < len(report.findings):
            raise ValueError(f"--regression {args.regression}: there are {len(report.findings)} findings")
        print(dumps(regression_case(args.tokenizer, enc, report.findings[args.regression], add_special_tokens=add)))
        return 0
    if args.json:
        print(json_text.dumps({"add_special_tokens": add, **report.to_json()}))
        return 0
    out = sys.stdout
    print(f"{len(enc.ids)} tokens ({spans} spans, {specials})", file=out)
    if not report.findings:
        print("no findings", file=out)
    for k, f in enumerate(report.findings):
        print(f"[{k}] {f.check} {f.severity:5} tokens {list(f.tokens)} span {f.span} exact {f.exact_span} {f.original!r}", file=out)
        print(f"      {f.reason}", file=out)
    return 0


def _lint_corpus(args: argparse.Namespace, tok, add: bool) -> object:  # noqa: ANN001 - Tokenizer -> CorpusLint
    from ..analysis.corpus_jobs import LINT_PIECE_BYTES, lint_corpus
    from .corpus_options import Progress, read_options, spec_of

    read = read_options(args, mode="lines", keep_newline=True, piece_bytes=LINT_PIECE_BYTES)
    return lint_corpus(tok, args.corpus, exact=args.exact, examples=args.examples, read=read, add_special_tokens=add,
                       spec=spec_of(args, args.tokenizer), scheduler=args.scheduler, workers=args.workers,
                       progress=Progress("lint", args))
