"""``tokviz heal``: the stable prefix and unstable suffix of a prompt, its completions (tiktoken's
``encode_with_unstable`` for byte-level BPE) and the token-healing previews."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._options import add_load_options, add_text_options, load_tokenizer, read_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("heal", help="stable prefix / unstable suffix of a prompt and token-healing candidates")
    p.add_argument("tokenizer", type=Path)
    add_text_options(p)
    p.add_argument("--caret", type=int, default=None, help="code-point position of the caret (default: text end)")
    p.add_argument("--json", action="store_true")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.healing import analyze_caret

    text = read_text(args)
    if args.caret is not None and not 0 <= args.caret <= len(text):
        raise ValueError(f"--caret {args.caret} is outside the text (0..{len(text)})")
    tok = load_tokenizer(args)
    h = analyze_caret(tok, text, args.caret)
    if args.json:
        print(json.dumps(h.to_json(), ensure_ascii=False))
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
