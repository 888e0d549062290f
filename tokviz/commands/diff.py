"""``tokviz diff OLD NEW``: what changed between two tokenizers (entries, merges, specials,
pipeline), and with ``--corpus`` the vocabulary-extension regression check.
The logic is `tokviz.analysis.vocab_diff`; this module parses, calls and prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._options import add_load_options, load_tokenizer

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("diff", help="vocabulary / merges / specials / pipeline diff of two tokenizers")
    p.add_argument("old", type=Path, help="the old tokenizer file")
    p.add_argument("new", type=Path, help="the new tokenizer file")
    p.add_argument(
        "--corpus", type=Path, help="re-encode this file (or folder) with both: the regression check"
    )
    p.add_argument(
        "--mode", default="lines", help="documents of --corpus: whole, lines, paragraphs or jsonl:FIELD"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")

    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.corpus import iter_documents
    from ..analysis.vocab_diff import format_diff, regression_check, vocab_diff

    def load(path: Path):  # noqa: ANN202
        return load_tokenizer(
            argparse.Namespace(tokenizer=path, pattern=args.pattern, special_tokens=args.special_tokens)
        )

    old, new = load(args.old), load(args.new)
    d = vocab_diff(old, new, old_name=str(args.old), new_name=str(args.new))
    out = d.to_json()
    if args.corpus is not None:
        docs = (doc.text for doc in iter_documents(args.corpus, args.mode))
        out["regression"] = {
            "corpus": str(args.corpus),
            "mode": args.mode,
            **regression_check(old, new, docs).to_json(),
        }
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(format_diff(out))
    return 0
