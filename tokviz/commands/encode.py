"""``tokviz encode TOK [TEXT]``: the ids of a text (or, with ``--json``, every model-input field).

The text comes from the argument, ``--file`` (read byte-exact) or standard input. ``--pair``
adds a second sequence; ``--max-length`` / ``--stride`` / ``--truncation`` /
``--truncation-side`` truncate as HF tokenizers does (the cut windows are printed as
``overflowing``); ``--padding`` pads (``max_length``: to ``--max-length``; ``longest``: to the
encoding's own length, which matters for windows; ``multiple:K``: up to a multiple of K). The
settings apply on top of those the tokenizer file sets.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..analysis.inputs import InputSettings, configure
from ..engine.model_inputs import STRATEGIES, inputs_json
from ..engine.tokenizer import Tokenizer
from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer, read_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("encode", help="encode text and print ids (or JSON)")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("text", nargs="?", help="text to encode (default: standard input)")
    p.add_argument("--file", type=Path, help="read the text from this file (UTF-8)")
    p.add_argument("--pair", metavar="TEXT2", help="a second sequence (a question/context pair)")
    p.add_argument("--no-special", action="store_true", help="do not add special tokens (BOS/EOS/CLS...)")
    p.add_argument(
        "--allowed-special",
        default=None,
        help='"all" or comma-separated special-token literals to honour in the text',
    )
    p.add_argument("--max-length", metavar="N", help="truncate to N tokens (special tokens included)")
    p.add_argument("--stride", metavar="K", help="overlap of the overflowing windows, in tokens (default 0)")
    p.add_argument("--truncation", metavar="STRATEGY", help=f"one of {', '.join(STRATEGIES)} (default longest_first)")
    p.add_argument("--truncation-side", metavar="SIDE", help="right (cut the end, default) or left (cut the start)")
    p.add_argument("--padding", metavar="MODE", help="max_length, longest or multiple:K")
    p.add_argument("--padding-side", metavar="SIDE", help="right (default) or left")
    p.add_argument("--json", action="store_true", help="print every model-input field as JSON, windows included")
    add_load_options(p)
    p.set_defaults(func=run)


def _count(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit():
        raise ValueError(f"{option} expects a whole number >= 0, got {value!r}")
    return int(value)


def _side(value: str | None, option: str) -> str:
    if value is None:
        return "right"
    if value not in ("right", "left"):
        raise ValueError(f"{option} expects right or left, got {value!r}")
    return value


def configure_inputs(tok: Tokenizer, args: argparse.Namespace) -> None:
    """Apply the truncation and padding options to ``tok`` (ValueError: one line for the user)."""
    max_length, stride = _count(args.max_length, "--max-length"), _count(args.stride, "--stride")
    truncating = max_length is not None or args.truncation is not None or stride is not None or args.truncation_side
    strategy = args.truncation or "longest_first"
    if truncating:
        if max_length is None:
            raise ValueError("--stride, --truncation and --truncation-side need --max-length")
        if strategy not in STRATEGIES:
            raise ValueError(f"--truncation expects one of {', '.join(STRATEGIES)}, got {strategy!r}")
    padding, multiple = "off", 8
    if args.padding is None:
        if args.padding_side is not None:
            raise ValueError("--padding-side needs --padding")
    else:
        mode, _, k = args.padding.partition(":")
        if args.padding == "max_length" and max_length is None:
            raise ValueError("--padding max_length needs --max-length")
        if mode == "multiple" and k.isdigit() and int(k) > 0:
            padding, multiple = "multiple", int(k)
        elif args.padding in ("max_length", "longest"):
            padding = args.padding
        else:
            raise ValueError(f"--padding expects max_length, longest or multiple:K (K > 0), got {args.padding!r}")
    configure(tok, InputSettings(
        max_length=max_length, stride=stride or 0, strategy=strategy,
        truncation_side=_side(args.truncation_side, "--truncation-side"), padding=padding, multiple=multiple,
        padding_side=_side(args.padding_side, "--padding-side"),
    ))


def run(args: argparse.Namespace) -> int:
    text = read_text(args)
    tok = load_tokenizer(args)
    configure_inputs(tok, args)
    allowed: str | set[str] | None = None
    if args.allowed_special:
        allowed = "all" if args.allowed_special == "all" else set(args.allowed_special.split(","))
    enc = tok.encode(text, args.pair, add_special_tokens=not args.no_special, allowed_special=allowed)
    if args.json:
        print(dumps(inputs_json(enc)))
    else:
        print(" ".join(map(str, enc.ids)))
        for window in enc.overflowing:
            print(" ".join(map(str, window.ids)))
    return 0
