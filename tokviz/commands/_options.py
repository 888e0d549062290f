"""The options and readers that several subcommands share: how a command names and loads its
tokenizer (``add_load_options`` / ``load_tokenizer``) and reads its text (``add_text_options`` /
``read_text``).

A command module imports these from here; nothing here knows about any one command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.tokenizer import Tokenizer

__all__ = [
    "TOKENIZER_HELP",
    "add_load_options",
    "add_text_options",
    "load_tokenizer",
    "read_text",
    "special_tokens_option",
]

#: the help of a command's TOKENIZER positional
TOKENIZER_HELP = (
    "tokenizer file (tokenizer.json, .tiktoken, .model, .gguf, vocab.txt ...) or a name from `tokviz list`"
)


def add_load_options(sp: argparse.ArgumentParser) -> None:
    """The --pattern / --special-tokens options every command that loads a tokenizer takes."""
    sp.add_argument(
        "--pattern",
        default=None,
        help="pre-tokenizer regex for a custom tiktoken rank file, or a preset name "
        "(r50k/gpt2, cl100k, o200k, llama3, llama4, qwen, whisper)",
    )
    sp.add_argument(
        "--special-tokens",
        default=None,
        help="JSON map of special tokens for a custom rank file, e.g. '{\"<|endoftext|>\": 50256}'",
    )


def add_text_options(p: argparse.ArgumentParser) -> None:
    """--text / --file, the text options of heal and specials."""
    p.add_argument("--text", help="the text (default: standard input)")
    p.add_argument("--file", type=Path, help="read the text from this file (UTF-8, exact)")


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer named by ``args.tokenizer`` with the load options of ``add_load_options``."""
    from .. import load

    specials = special_tokens_option(args.special_tokens)
    return load(args.tokenizer, pattern=args.pattern, special_tokens=specials)


def read_text(args: argparse.Namespace) -> str:
    """The text of ``--file`` (read byte-exact by `tokviz.io.textfile`), the --text argument, or stdin.

    Standard input is read as bytes and decoded the same way, so a CRLF or a BOM piped in stays.
    """
    if args.file is not None:
        from ..io.textfile import read_text_file

        return read_text_file(args.file).text
    if args.text is not None:
        return args.text
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (embedding, tests)
        return sys.stdin.read()
    from ..io.textfile import decode_text_bytes

    return decode_text_bytes(buffer.read(), source="<stdin>").text


def special_tokens_option(text: str | None) -> dict[str, int] | None:
    """The ``--special-tokens`` JSON map, read by the bounded JSON reader and checked."""
    if not text:
        return None
    from ..engine.errors import TokvizFormatError
    from ..io.json_text import loads

    specials = loads(text, source="--special-tokens")
    if not isinstance(specials, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in specials.items()
    ):
        raise TokvizFormatError('expected a JSON object {"literal": id, ...}', source="--special-tokens")
    return dict(specials)
