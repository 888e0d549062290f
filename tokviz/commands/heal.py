"""``tokviz heal``: the stable prefix and unstable suffix of a prompt, its completions (tiktoken's
``encode_with_unstable`` for byte-level BPE) and the token-healing previews."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.json_text import dumps

__all__ = ["add_text_options", "read_exact_text", "register", "run"]


def add_text_options(p: argparse.ArgumentParser) -> None:
    """--text / --file, the text options of heal and specials."""
    p.add_argument("--text", help="the text (default: standard input)")
    p.add_argument("--file", type=Path, help="read the text from this file (UTF-8, exact)")


def read_exact_text(args: argparse.Namespace) -> str:
    """--file read byte-exact (no newline translation), else --text or standard input."""
    from ..cli import read_text
    from ..io.textfile import read_text_file

    return read_text_file(args.file).text if args.file is not None else read_text(args)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ..cli import add_load_options

    p = sub.add_parser("heal", help="stable prefix / unstable suffix of a prompt and token-healing candidates")
    p.add_argument("tokenizer", type=Path)
    add_text_options(p)
    p.add_argument("--caret", type=int, default=None, help="code-point position of the caret (default: text end)")
    p.add_argument("--json", action="store_true")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.healing import analyze_caret
    from ..cli import load_tokenizer

    text = read_exact_text(args)
    if args.caret is not None and not 0 <= args.caret <= len(text):
        raise ValueError(f"--caret {args.caret} is outside the text (0..{len(text)})")
    tok = load_tokenizer(args)
    h = analyze_caret(tok, text, args.caret)
    if args.json:
        print(dumps(h.to_json()))
        return 0
    print(f"stable:   {' '.join(map(str, h.stable))}")
    print(f"unstable: {h.unstable!r} ({h.rule} rule{'' if h.verified is None else ', verified' if h.verified else ', unverified'})")
    print(f"completions: {len(h.completions):,} ({len(h.single_token_completions):,} single tokens)")
    for p in (h.rollback_one, h.rollback_covering):
        if p is not None:
            print(f"heal {p.mode}: roll back {p.k} token(s) {p.removed!r}: {p.candidate_count:,} candidates")
    for w in h.warnings:
        print("warning:", w)
    return 0
