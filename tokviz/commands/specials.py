"""``tokviz specials``: special-token literals in a text and what each API convention makes of them."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps
from .heal import add_text_options, read_exact_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ..cli import add_load_options

    p = sub.add_parser("specials", help="special literals in the text and the mode matrix (tiktoken/HF/SentencePiece)")
    p.add_argument("tokenizer", type=Path)
    add_text_options(p)
    p.add_argument("--json", action="store_true")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.specials import analyze_specials
    from ..cli import load_tokenizer

    text = read_exact_text(args)
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
