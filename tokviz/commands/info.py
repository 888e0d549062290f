"""``tokviz info TOK``: the model, the pipeline and the five vocabulary counts of a tokenizer
(`Tokenizer.info`), the engine's kernels and what the file format adds (`format_details`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..io.json_text import dumps
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer

__all__ = ["format_info", "register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("info", help="print the model, pipeline and vocabulary counts")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("--json", action="store_true", help="print every field of the report as one JSON object")
    add_load_options(p)
    p.set_defaults(func=run)


# The five vocabulary numbers never to mix, with the words `info` prints for them.
_COUNTS = (
    ("normal_entries", "normal (mergeable) entries"),
    ("added_entries", "special/added entries"),
    ("total_entries", "total entries"),
    ("id_space", "max id + 1"),
    ("embedding_rows", "embedding rows"),
)


def format_info(info: dict[str, Any]) -> str:
    """The human-readable ``tokviz info`` report of `Tokenizer.info()`."""
    lines = [
        f"{'name':<28}{info.get('name') or '-'}",
        f"{'source':<28}{info.get('source') or '-'}",
        f"{'model':<28}{info.get('model')}",
        "pipeline",
    ]
    for stage, desc in (info.get("pipeline") or {}).items():
        lines.append(f"  {stage:<26}{desc if desc is not None else '-'}")
    lines.append(f"{'special tokens':<28}{_policy(info.get('special_policy'))}")
    for key, label in _COUNTS:
        value = info.get(key)
        if key == "added_entries" and value is not None and info.get("special_entries") is not None:
            shown = f"{value:,} ({info['special_entries']:,} special)"
        else:
            shown = "unknown" if value is None else f"{value:,}"
        lines.append(f"{label:<28}{shown}")
    if "backend" in info:
        lines.append(f"{'engine kernels':<28}{info['backend']}")
    details = info.get("format_details") or {}
    if details:
        lines.append("file format")
        for label, value in details.items():
            shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
            lines.append(f"  {label:<26}{shown}")
    return "\n".join(lines)


def _policy(policy: object) -> str:
    if policy == "tiktoken":
        return "tiktoken (literals in text are plain text unless --allowed-special)"
    if policy == "hf":
        return "hf (literals in text become their ids)"
    return str(policy)


def run(args: argparse.Namespace) -> int:
    from ..engine import backend
    from ..io.detect import format_details

    tok = load_tokenizer(args)
    info = {**tok.info(), "backend": backend()}
    info["format_details"] = format_details(tok)
    if args.json:
        print(dumps(info, indent=2, default=str))
    else:
        print(format_info(info))
    return 0
