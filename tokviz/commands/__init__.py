"""The subcommands of ``tokviz``, one module each; `tokviz.cli` builds the parser from them.

Each module has ``register(sub)``: it adds its parser to the argparse sub-parsers ``sub`` and sets
``func`` (a function ``(args) -> int``) as the parser default. The options several commands share
(how a tokenizer is named and loaded, how a text is read) live in `tokviz.commands._options`. The
heavy lifting lives in ``tokviz.analysis`` and ``tokviz.training`` (shared with the GUI), and so
does the text of a result; a command module only parses, calls and prints. Errors reach
``tokviz.cli.main``, which prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["MODULES", "register_all"]

#: command modules, in the order their commands are listed by ``tokviz --help``
MODULES: tuple[str, ...] = (
    "encode", "decode", "info", "train", "gui",
    "listing", "compare", "diff", "audit", "lint", "chat", "heal", "specials",
)


def register_all(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add every command's parser to ``sub``, in `MODULES` order."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
