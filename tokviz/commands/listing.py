"""``tokviz list``: the tokenizers tokviz can open by name.

The embedded ones (``tokviz encode cl100k "text"``), then what is already on this machine: the
Hugging Face hub cache, the tiktoken cache, Ollama's model store (``model:tag``) and LM Studio's
models folder. Every listed name works as the tokenizer argument of the other commands.
"""

from __future__ import annotations

import argparse
import sys

from ..io.discovery import discover
from ..io.embedded import embedded_tokenizers
from ..io.json_text import dumps

__all__ = ["register", "run"]

_GROUPS = {"hf-cache": "Hugging Face cache", "tiktoken-cache": "tiktoken cache", "ollama": "Ollama",
           "lmstudio": "LM Studio"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("list", help="list the embedded tokenizers and those found on this machine")
    p.add_argument("--embedded", action="store_true", help="only the embedded tokenizers")
    p.add_argument("--json", action="store_true", help="print [{name, group, path, title}] as JSON")
    p.set_defaults(func=run)


def rows(*, embedded_only: bool = False, problems: list[str] | None = None) -> list[dict[str, str]]:
    """One row per tokenizer: ``name`` (what the commands accept), ``group``, ``path``, ``title``
    (entries discovery had to skip are described in ``problems``)."""
    out = [
        {"name": e.name, "group": "embedded", "path": str(p), "title": e.title}
        for e, p in embedded_tokenizers()
    ]
    if not embedded_only:
        out += [{"name": d.name, "group": _GROUPS.get(d.source, d.source), "path": str(d.path), "title": ""}
                for d in discover(problems=problems)]
    return out


def run(args: argparse.Namespace) -> int:
    problems: list[str] = []
    table = rows(embedded_only=args.embedded, problems=problems)
    for line in problems:
        print(f"tokviz: warning: {line}", file=sys.stderr)
    if args.json:
        print(dumps(table, indent=2))
        return 0
    width = max([len(r["name"]) for r in table] + [4])
    group = None
    for r in table:
        if r["group"] != group:
            group = r["group"]
            print(f"{group}:")
        print(f"  {r['name']:<{width}}  {r['title'] or r['path']}")
    return 0
