"""``tokviz compare``: N tokenizers on one text or one corpus file (boundary F1, per-script cost,
vocabulary overlap), the scripting face of the Compare tab (`tokviz.analysis.compare`).

``--file`` (or ``--corpus``: a file, folder or glob of text, JSON lines or Parquet) is read once,
on the local cores or a Dask cluster (`tokviz.analysis.corpus.run_corpus`); ``--stats`` adds its
C9 statistics to the same pass.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..engine.errors import TokvizFormatError
from ..io.json_text import dumps
from ._options import add_load_options, load_tokenizer, special_tokens_option

__all__ = ["load_sides", "register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare", help="compare tokenizers on one text or corpus file (boundary F1, per script, overlap)"
    )
    p.add_argument("tokenizers", nargs="+", type=Path, metavar="TOK", help="tokenizer files (two or more)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to compare on")
    src.add_argument(
        "--file", "--corpus", dest="file",
        help="a corpus to compare on: a file, folder or glob of text, .jsonl or .parquet (.gz/.zst too)",
    )
    p.add_argument("--stats", action="store_true", help="add the corpus statistics (C9) of --file")
    p.add_argument("--strr", action="store_true", help="--stats also counts words kept as one token (slower)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode="whole")
    add_load_options(p)
    p.set_defaults(func=run)


def load_sides(args: argparse.Namespace) -> list:
    """One `Side` per tokenizer argument; a file that fails to load keeps its error and the row."""
    from ..analysis.compare import Side

    sides = []
    for path in args.tokenizers:
        one = argparse.Namespace(tokenizer=path, pattern=args.pattern, special_tokens=args.special_tokens)
        try:
            tok = load_tokenizer(one)
            sides.append(Side(tok.name or path.stem, str(path), tok))
        except (TokvizFormatError, OSError, ValueError) as exc:
            sides.append(Side(path.name, str(path), None, str(exc)))
    return sides


def run(args: argparse.Namespace) -> int:
    from ..analysis.corpus import compare_json, compare_report

    if len(args.tokenizers) < 2:
        raise ValueError("compare needs at least two tokenizers")
    if args.stats and args.file is None:
        raise ValueError("--stats needs --file")
    sides = load_sides(args)
    if all(s.tokenizer is None for s in sides):
        raise TokvizFormatError(sides[0].error or "cannot load", source="compare: no tokenizer loaded")
    if args.text is not None:
        if args.mode != "whole":
            raise ValueError("--mode applies to --file only")
        report = compare_report(sides, [args.text])
    else:  # one pass over the file on every core: the comparison and, with --stats, C9
        corpus = _corpus_run(args, sides)
        report = compare_json(sides, corpus)
        if args.stats:
            report["corpus"] = corpus.to_json()
    if args.json:
        print(dumps(report))
    else:
        print(format_report(report))
    return 0


def _corpus_run(args: argparse.Namespace, sides: list):
    from ..analysis.corpus import TokenizerSpec, run_corpus
    from .corpus_options import Progress, read_options

    specials = tuple(special_tokens_option(args.special_tokens).items()) if args.special_tokens else None
    specs = [TokenizerSpec(s.name, s.path, args.pattern, specials) for s in sides]
    read = read_options(args)
    show = Progress("compare", args)
    report = run_corpus(
        specs,
        args.file,
        mode=read.mode,
        field=read.field,
        max_record=read.max_record,
        workers=args.workers,
        scheduler=args.scheduler,
        strr=args.strr,
        lossless=args.stats,  # the decode check is a C9 figure: only --stats pays for it
        tokenizers=[s.tokenizer for s in sides],  # loaded here already (the in-process executor uses them)
        cuts=True,
        progress=show,
    )
    show.finish(report.seconds, report.executor)
    return report


def format_report(report: dict) -> str:  # type: ignore[type-arg]
    """The human-readable form: one line per tokenizer, then the collapsed char F1 matrix."""
    t = report["text"]
    lines = [f"text: {t['chars']:,} chars (code points), {t['bytes']:,} bytes (UTF-8), {t['words']:,} words"]
    names = []
    for row in report["tokenizers"]:
        names.append(row["name"])
        if "error" in row:
            lines.append(f"{row['name']:<24} error: {row['error']}")
            continue
        cpt = row["chars_per_token"]
        lines.append(
            f"{row['name']:<24} {row['tokens']:>8,} tokens  "
            f"{cpt if cpt is not None else 'n/a'} chars/token  {row['bytes_per_token']} bytes/token"
        )
    lines.append("boundary F1 (char cuts, whitespace collapsed):")
    for name, r in zip(names, report["boundary_f1"]["char_collapsed"]):
        cells = " ".join("   -  " if v is None else f"{v:6.3f}" for v in r)
        lines.append(f"  {name:<22} {cells}")
    return "\n".join(lines)
