"""``tokviz diff OLD NEW``: what changed between two tokenizers (entries, merges, specials,
pipeline), and with ``--corpus`` the vocabulary-extension regression check.
The logic is `tokviz.analysis.vocab_diff`; this module parses, calls and prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps
from ._options import add_load_options, load_tokenizer

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("diff", help="vocabulary / merges / specials / pipeline diff of two tokenizers")
    p.add_argument("old", type=Path, help="the old tokenizer file")
    p.add_argument("new", type=Path, help="the new tokenizer file")
    p.add_argument(
        "--corpus", help="re-encode this corpus (file, folder or glob) with both: the regression check"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    from .corpus_options import add_corpus_options

    add_corpus_options(p, mode="lines")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.vocab_diff import format_diff, vocab_diff

    def load(path: Path):  # noqa: ANN202
        return load_tokenizer(
            argparse.Namespace(tokenizer=path, pattern=args.pattern, special_tokens=args.special_tokens)
        )

    old, new = load(args.old), load(args.new)
    d = vocab_diff(old, new, old_name=str(args.old), new_name=str(args.new))
    out = d.to_json()
    if args.corpus is not None:
        out["regression"] = {"corpus": str(args.corpus), "mode": args.mode, **_regression(args, old, new).to_json()}
    if args.json:
        print(dumps(out))
    else:
        print(format_diff(out))
    return 0


def _regression(args: argparse.Namespace, old, new):  # noqa: ANN001, ANN202 - RegressionReport
    """The regression check over the corpus, on the executor of --workers / --scheduler."""
    from ..analysis.corpus_jobs import regression_corpus
    from .corpus_options import Progress, read_options, spec_of

    specs = (spec_of(args, args.old), spec_of(args, args.new))
    return regression_corpus(old, new, args.corpus, specs=specs, read=read_options(args), scheduler=args.scheduler,
                             workers=args.workers, progress=Progress("diff", args))
