"""``tokviz encode TOK [TEXT]``: the ids of a text (or, with ``--json``, its ids, tokens and offsets).

The text comes from the argument, ``--file`` (read byte-exact) or standard input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer, read_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("encode", help="encode text and print ids (or JSON)")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("text", nargs="?", help="text to encode (default: standard input)")
    p.add_argument("--file", type=Path, help="read the text from this file (UTF-8)")
    p.add_argument("--no-special", action="store_true", help="do not add special tokens (BOS/EOS/CLS...)")
    p.add_argument(
        "--allowed-special",
        default=None,
        help='"all" or comma-separated special-token literals to honour in the text',
    )
    p.add_argument("--json", action="store_true", help='print {"ids", "tokens", "offsets"} as JSON')
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = read_text(args)
    tok = load_tokenizer(args)
    allowed: str | set[str] | None = None
    if args.allowed_special:
        allowed = "all" if args.allowed_special == "all" else set(args.allowed_special.split(","))
    enc = tok.encode(text, add_special_tokens=not args.no_special, allowed_special=allowed)
    if args.json:
        out = {"ids": enc.ids, "tokens": enc.tokens, "offsets": [list(o) for o in enc.offsets]}
        print(dumps(out))
    else:
        print(" ".join(map(str, enc.ids)))
    return 0
