"""``tokviz specials``: special-token literals in a text and what each API convention makes of them."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, add_text_options, load_tokenizer, read_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("specials", help="special literals in the text and the mode matrix (tiktoken/HF/SentencePiece)")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    add_text_options(p)
    p.add_argument("--json", action="store_true", help="print the literals found and the mode matrix as JSON")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.specials import analyze_specials

    text = read_text(args)
    report = analyze_specials(load_tokenizer(args), text)
    if args.json:
        print(dumps(report.to_json()))
        return 0
    for h in report.hits:
        print(f"{h.start:>6}  {h.literal!r:24} id={h.id} {h.kind}")
    for m in report.modes:
        mark = "*" if m.native else " "
        body = m.error if m.ids is None else f"{m.count} tokens: {' '.join(map(str, m.ids[:40]))}"
        print(f"{mark} {m.mode:17} {body}")
    if report.differing:
        print("differ between modes:", ", ".join(report.differing))
    if report.double_bos:
        print("double BOS in:", ", ".join(report.double_bos))
    return 0
