"""``tokviz gui``: open the app (the default when ``tokviz`` gets no command), or render one
window to a PNG and exit (``--screenshot``). Qt is imported only when this command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("gui", help="open the app (or render a screenshot and exit)")
    p.add_argument("--screenshot", type=Path, help="render the window to this PNG and exit")
    p.add_argument("--tokenizer", type=Path)
    p.add_argument("--text")
    p.add_argument("--file", type=Path)
    p.add_argument("--tab", default=None)
    p.add_argument("--size", default=None, help="window size WxH")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..gui.app import run_app

    return run_app(args)
