"""The ``tokviz`` command line: ``main()`` and the parser. The subcommands live in
`tokviz.commands`, one module each.

No arguments opens the app. Errors in input files print one line and exit with status 2 (an internal
error prints one line too, with status 3; TOKVIZ_DEBUG=1 shows its traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The ``tokviz`` parser with every subcommand of `tokviz.commands`."""
    from .commands import register_all

    p = argparse.ArgumentParser(prog="tokviz", description="Tokenizer visualizer and debugger.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    register_all(p.add_subparsers(dest="command"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``tokviz`` command line; the exit status: 0, 2 for bad input, 3 for a bug."""
    from .engine.errors import TokvizFormatError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__

        print(__version__)
        return 0
    if args.command is None:
        args = parser.parse_args(["gui", *([] if argv is None else argv)])
    # Token strings can be any character; never die on a terminal that cannot show one.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return args.func(args)
    except TokvizFormatError as exc:
        print(f"tokviz: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        # ValueError: text the engine refuses (lone surrogates), an unknown --allowed-special
        # literal; OSError: stdin/stdout trouble. One line, no traceback.
        print(f"tokviz: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug must still read as one line, never a traceback
        if os.environ.get("TOKVIZ_DEBUG"):
            raise
        print(f"tokviz: internal error: {type(exc).__name__}: {exc} (set TOKVIZ_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
