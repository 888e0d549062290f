"""The ``tokviz`` command: encode, decode, info, train, gui.

No arguments opens the app. Errors in input files print one line and exit with status 2 (an internal
error prints one line too, with status 3; TOKVIZ_DEBUG=1 shows its traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "build_parser", "format_info"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokviz", description="Tokenizer visualizer and debugger.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command")

    enc = sub.add_parser("encode", help="encode text and print ids (or JSON)")
    enc.add_argument(
        "tokenizer",
        type=Path,
        help="tokenizer file (tokenizer.json, .tiktoken, .model, .gguf, vocab.txt ...) or a name from `tokviz list`",
    )
    enc.add_argument("text", nargs="?", help="text to encode (default: standard input)")
    enc.add_argument("--file", type=Path, help="read the text from this file (UTF-8)")
    enc.add_argument("--no-special", action="store_true", help="do not add special tokens (BOS/EOS/CLS...)")
    enc.add_argument(
        "--allowed-special",
        default=None,
        help='"all" or comma-separated special-token literals to honour in the text',
    )
    enc.add_argument("--json", action="store_true", help='print {"ids", "tokens", "offsets"} as JSON')
    add_load_options(enc)

    dec = sub.add_parser("decode", help="decode ids to text")
    dec.add_argument("tokenizer", type=Path)
    dec.add_argument("ids", nargs="+", type=int)
    dec.add_argument("--skip-special", action="store_true", help="drop special tokens")
    add_load_options(dec)

    info = sub.add_parser("info", help="print the model, pipeline and vocabulary counts")
    info.add_argument("tokenizer", type=Path)
    info.add_argument("--json", action="store_true")
    add_load_options(info)

    tr = sub.add_parser("train", help="train a tokenizer on corpus files")
    tr.add_argument("corpus", nargs="*", type=Path, help="corpus files or folders (or --corpus)")
    tr.add_argument("--corpus", dest="corpus_more", action="append", default=[], metavar="GLOB",
                    help="a corpus file, folder or glob (repeatable): .txt, .jsonl, .parquet, .gz/.zst")
    tr.add_argument("--model", choices=["bpe", "wordpiece", "unigram"], default="bpe")
    tr.add_argument("--vocab-size", type=int, required=True)
    tr.add_argument("--byte-level", action="store_true", help="byte-level BPE (GPT-2 alphabet and pattern)")
    tr.add_argument("--min-frequency", type=int, default=0)
    # one token per --special (repeatable), so that it never swallows the corpus paths after it
    tr.add_argument("--special", action="append", default=[], metavar="TOKEN", help="special token (repeat for more)")
    tr.add_argument("-o", "--output", type=Path, required=True)
    from .commands.corpus_options import add_corpus_options

    add_corpus_options(tr, mode=None)

    gui = sub.add_parser("gui", help="open the app (or render a screenshot and exit)")
    gui.add_argument("--screenshot", type=Path, help="render the window to this PNG and exit")
    gui.add_argument("--tokenizer", type=Path)
    gui.add_argument("--text")
    gui.add_argument("--file", type=Path)
    gui.add_argument("--tab", default=None)
    gui.add_argument("--size", default=None, help="window size WxH")

    from .commands import register_all

    register_all(sub)
    return p


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


def load_tokenizer(args: argparse.Namespace):  # noqa: ANN201
    """The tokenizer named by ``args.tokenizer`` with the load options of ``add_load_options``."""
    from . import load
    from .engine.errors import TokvizFormatError

    specials = None
    if args.special_tokens:
        try:
            specials = json.loads(args.special_tokens)
        except json.JSONDecodeError as exc:
            raise TokvizFormatError(f"not valid JSON: {exc.msg}", source="--special-tokens") from None
        if not isinstance(specials, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in specials.items()
        ):
            raise TokvizFormatError('expected a JSON object {"literal": id, ...}', source="--special-tokens")
    from .io.embedded import resolve_tokenizer

    return load(resolve_tokenizer(args.tokenizer), pattern=args.pattern, special_tokens=specials)


def read_text(args: argparse.Namespace) -> str:
    """The text of ``--file`` (read byte-exact by `tokviz.io.textfile`), the --text argument, or stdin.

    Standard input is read as bytes and decoded the same way, so a CRLF or a BOM piped in stays.
    """
    if args.file is not None:
        from .io.textfile import read_text_file

        return read_text_file(args.file).text
    if args.text is not None:
        return args.text
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (embedding, tests)
        return sys.stdin.read()
    from .io.textfile import decode_text_bytes

    return decode_text_bytes(buffer.read(), source="<stdin>").text


def _cmd_encode(args: argparse.Namespace) -> int:
    text = read_text(args)
    tok = load_tokenizer(args)
    allowed: str | set[str] | None = None
    if args.allowed_special:
        allowed = "all" if args.allowed_special == "all" else set(args.allowed_special.split(","))
    enc = tok.encode(text, add_special_tokens=not args.no_special, allowed_special=allowed)
    if args.json:
        out = {"ids": enc.ids, "tokens": enc.tokens, "offsets": [list(o) for o in enc.offsets]}
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(" ".join(map(str, enc.ids)))
    return 0


def _cmd_decode(args: argparse.Namespace) -> int:
    from .engine.errors import TokvizFormatError

    tok = load_tokenizer(args)
    # The engine skips unknown ids silently, as HF does; on the command line that hides typos.
    unknown = [i for i in args.ids if i < 0 or tok.id_to_token(i) is None]
    if unknown:
        raise TokvizFormatError(
            f"not in the vocabulary: {' '.join(map(str, unknown[:10]))}", source=f"ids for {args.tokenizer}"
        )
    print(tok.decode(args.ids, skip_special_tokens=args.skip_special))
    return 0


# The five vocabulary numbers the seed warns never to mix, with the words `info` prints for them.
_COUNTS = (
    ("normal_entries", "normal (mergeable) entries"),
    ("added_entries", "special/added entries"),
    ("total_entries", "total entries"),
    ("id_space", "max id + 1"),
    ("embedding_rows", "embedding rows"),
)


def format_info(info: dict) -> str:  # type: ignore[type-arg]
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


def _cmd_info(args: argparse.Namespace) -> int:
    from .engine import backend
    from .io.detect import format_details

    tok = load_tokenizer(args)
    info = {**tok.info(), "backend": backend()}
    info["format_details"] = format_details(tok)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2, default=str))
    else:
        print(format_info(info))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from .training.cli import run_train

    return run_train(args)


def _cmd_gui(args: argparse.Namespace) -> int:
    from .gui.app import run_app

    return run_app(args)


def main(argv: Sequence[str] | None = None) -> int:
    from .engine.errors import TokvizFormatError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__

        print(__version__)
        return 0
    if args.command is None:
        args = parser.parse_args(["gui", *([] if argv is None else argv)])
    commands = {
        "encode": _cmd_encode,
        "decode": _cmd_decode,
        "info": _cmd_info,
        "train": _cmd_train,
        "gui": _cmd_gui,
    }
    # Token strings can be any character; never die on a terminal that cannot show one.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        handler = getattr(args, "func", None) or commands[args.command]
        return handler(args)
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
