"""``tokviz gui``: open the app (the default when ``tokviz`` gets no command), or render one
window to a PNG and exit (``--screenshot``). Qt is imported only when this command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._options import TOKENIZER_HELP

__all__ = ["TABS", "register", "run"]

#: the main window's tabs, in order (tests/gui checks them against `MainWindow`)
TABS: tuple[str, ...] = ("inspect", "compare", "vocabulary", "chat", "train", "lattice")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("gui", help="open the app (or render a screenshot and exit)")
    p.add_argument("--screenshot", type=Path, help="render the window to this PNG and exit")
    p.add_argument("--tokenizer", type=Path,
                   help=TOKENIZER_HELP + " to open (in Compare too with --tab compare)")
    p.add_argument("--text", help="the text to open")
    p.add_argument("--file", type=Path, help="open the text of this file (read byte-exact)")
    p.add_argument("--tab", default=None, type=str.lower, choices=TABS, help="the tab to show")
    p.add_argument("--size", default=None, help="window size WxH")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..gui.app import run_app

    return run_app(args)
