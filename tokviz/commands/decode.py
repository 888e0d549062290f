"""``tokviz decode TOK ID...``: the text of a list of ids (``--json``: the ids, their tokens and
the text).

An id outside the vocabulary is an error here (the engine skips unknown ids silently, as HF does;
on the command line that would hide a typo).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..engine.errors import TokvizFormatError
from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("decode", help="decode ids to text")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("ids", nargs="+", type=int, metavar="ID", help="token ids, e.g. 15339 1917")
    p.add_argument("--skip-special", action="store_true", help="drop special tokens")
    p.add_argument("--json", action="store_true", help='print {"ids", "tokens", "text"} as JSON')
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args)
    unknown = [i for i in args.ids if i < 0 or tok.id_to_token(i) is None]
    if unknown:
        raise TokvizFormatError(
            f"not in the vocabulary: {' '.join(map(str, unknown[:10]))}", source=f"ids for {args.tokenizer}"
        )
    text = tok.decode(args.ids, skip_special_tokens=args.skip_special)
    if args.json:
        out = {"ids": args.ids, "tokens": [tok.id_to_token(i) for i in args.ids], "text": text}
        print(dumps(out))
    else:
        print(text)
    return 0
