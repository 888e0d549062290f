"""Subcommands of ``tokviz`` beyond encode/decode/info/train/gui, one module each.

Each module has ``register(sub)``: it adds its parser to the argparse sub-parsers ``sub`` and sets
``func`` (a function ``(args) -> int``) as the parser default. The heavy lifting lives in
``tokviz.analysis`` (shared with the GUI); a command module only parses, calls and prints
(``--json`` on every command). Errors reach ``tokviz.cli.main``, which prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["MODULES", "register_all"]

#: command modules, in the order their commands are listed by ``tokviz --help``
MODULES: tuple[str, ...] = ("listing", "compare", "diff", "audit", "lint", "chat", "heal", "specials")


def register_all(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
