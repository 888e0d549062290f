"""``tokviz heal``: the stable prefix and unstable suffix of a prompt, its completions (tiktoken's
``encode_with_unstable`` for byte-level BPE) and the token-healing previews."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, add_text_options, load_tokenizer, read_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("heal", help="stable prefix / unstable suffix of a prompt and token-healing candidates")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    add_text_options(p)
    p.add_argument("--caret", type=int, default=None, help="code-point position of the caret (default: text end)")
    p.add_argument("--json", action="store_true", help="print the split, completions (ids) and previews as JSON")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.healing import analyze_caret, format_healing

    text = read_text(args)
    if args.caret is not None and not 0 <= args.caret <= len(text):
        raise ValueError(f"--caret {args.caret} is outside the text (0..{len(text)})")
    tok = load_tokenizer(args)
    h = analyze_caret(tok, text, args.caret)
    if args.json:
        print(dumps(h.to_json()))
    else:
        print(format_healing(h, tok))
    return 0
