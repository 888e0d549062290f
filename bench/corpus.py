"""The corpora the bench scripts measure on: the tuning mix, a held-out mix, or files of your own.

``mixed_corpus`` (the mix the engine was tuned on): English, Japanese and Python source.

botchan.txt + wagahaiwa_nekodearu.txt from the shared corpora, plus about 1.5 MB of Python
source taken deterministically from the running interpreter's standard library (the ``stdlib``
directory from `sysconfig`), so the corpus exists on any machine without downloads: the
top-level ``*.py`` files in sorted name order until the budget is reached.

``heldout_corpus`` (a second mix, never tuned on): English technical prose (the stdlib's
``pydoc_data/topics.py``), Python packages that are not top-level modules (``email``,
``asyncio``), generated C / JavaScript / JSON source, the two shared corpora with their sentences
shuffled and their numbers, case and spacing varied, and generated Chinese and Korean text. All of
it is deterministic (a seeded ``random.Random``) on one Python.

``files_corpus(path)``: every file under ``path`` (or the one file) as one document each.

Run it to see what a mix contains::

    python bench/corpus.py [--mix heldout | --corpus PATH]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Corpus", "mixed_corpus", "heldout_corpus", "files_corpus", "corpus_from_args", "add_corpus_args",
    "shared_dir", "python_source",
]

PYTHON_BUDGET = 1_500_000  # bytes of Python source


@dataclass(frozen=True, slots=True)
class Corpus:
    """The corpus as named parts (documents) and as one text."""

    parts: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.parts)

    def describe(self) -> str:
        rows = [f"{name}: {len(t):,} chars, {len(t.encode('utf-8')):,} bytes" for name, t in self.parts]
        total = self.text
        rows.append(f"total: {len(total):,} chars, {len(total.encode('utf-8')):,} bytes")
        return "\n".join(rows)


def shared_dir() -> Path:
    """../shared (or $TOKVIZ_SHARED), where the bundles and corpora are."""
    env = os.environ.get("TOKVIZ_SHARED")
    here = Path(__file__).resolve().parents[1]
    for c in ([Path(env)] if env else []) + [
        here.parent / "shared",
        here.parent.parent / "shared",
        Path("/work/shared"),
    ]:
        if (c / "corpora").is_dir():
            return c
    raise SystemExit(
        "shared corpora not found: set TOKVIZ_SHARED to the folder holding corpora/ and bundles/"
    )


def python_source(budget: int = PYTHON_BUDGET) -> str:
    """About ``budget`` bytes of the stdlib's own Python files, always the same on one Python."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[str] = []
    size = 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        chunks.append(text)
        size += len(text.encode("utf-8"))
        if size >= budget:
            break
    return "".join(chunks)


def mixed_corpus(*, python_budget: int = PYTHON_BUDGET, scale: float = 1.0) -> Corpus:
    """botchan + wagahaiwa + stdlib Python; ``scale`` < 1 keeps that fraction of each part."""
    corpora = shared_dir() / "corpora"
    parts = [
        ("botchan", (corpora / "botchan.txt").read_text(encoding="utf-8")),
        ("wagahaiwa", (corpora / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")),
        ("python-stdlib", python_source(python_budget)),
    ]
    if scale < 1.0:
        parts = [(n, t[: int(len(t) * scale)]) for n, t in parts]
    return Corpus(tuple(parts))


_IDENTS = (
    "buffer", "count", "index", "value", "result", "node", "parent", "child", "offset", "length",
    "token", "state", "config", "handler", "request", "response", "cache", "entry", "items", "key",
    "width", "height", "error", "status", "path", "name", "data", "size", "flags", "mode", "user",
)
_TYPES = ("int", "size_t", "uint32_t", "char *", "const char *", "double", "struct node *", "bool")


def _ident(rng: random.Random) -> str:
    a, b = rng.choice(_IDENTS), rng.choice(_IDENTS)
    return rng.choice((a, f"{a}_{b}", a + b.capitalize(), f"{a}{rng.randrange(10)}"))


def generated_code(budget: int, *, seed: int = 28) -> str:
    """C functions, JavaScript classes and JSON records, built from a seeded generator."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < budget:
        kind = rng.randrange(3)
        if kind == 0:
            args = ", ".join(f"{rng.choice(_TYPES)} {_ident(rng)}" for _ in range(rng.randrange(1, 4)))
            body = "".join(
                f"    if ({_ident(rng)} {rng.choice(('<', '>=', '!=', '=='))} {rng.randrange(-9, 4096)}) {{\n"
                f"        {_ident(rng)} += {_ident(rng)}[{rng.randrange(64)}] * 0x{rng.randrange(1 << 16):04x};\n"
                f"    }}\n"
                for _ in range(rng.randrange(1, 6))
            )
            block = f"static {rng.choice(_TYPES)} {_ident(rng)}({args})\n{{\n{body}    return 0;\n}}\n\n"
        elif kind == 1:
            methods = "".join(
                f"  {_ident(rng)}({_ident(rng)}) {{\n    const {_ident(rng)} = this.{_ident(rng)}"
                f".map((x) => x * {rng.random():.3f});\n    return `${{{_ident(rng)}}}/{rng.randrange(999)}`;\n  }}\n"
                for _ in range(rng.randrange(1, 5))
            )
            block = f"export class {_ident(rng).capitalize()} {{\n{methods}}}\n\n"
        else:
            fields = ",\n".join(
                f'  "{_ident(rng)}": ' + rng.choice((
                    str(rng.randrange(10**6)), f"{rng.uniform(-1e3, 1e3):.6g}", "null", "true",
                    f'"{rng.choice(_IDENTS)}-{rng.randrange(10**4):04d}"',
                ))
                for _ in range(rng.randrange(2, 8))
            )
            block = "{\n" + fields + "\n}\n"
        out.append(block)
        size += len(block)
    return "".join(out)


def _shuffled_sentences(text: str, rng: random.Random, *, budget: int, cjk: bool) -> str:
    pieces = [p for p in re.split(r"(?<=[。！？])" if cjk else r"(?<=[.!?])\s+", text) if p.strip()]
    rng.shuffle(pieces)
    out: list[str] = []
    size = 0
    for i, piece in enumerate(pieces):
        if not cjk and i % 7 == 3:
            piece = piece.upper()
        if i % 5 == 1:
            piece = f"{rng.randrange(1, 2100)}{'年' if cjk else ', '}{piece}"
        out.append(piece + rng.choice(("\n", "\n\n", "  ", "\t")) if not cjk or i % 9 == 8 else piece)
        size += len(piece.encode("utf-8"))
        if size >= budget:
            break
    return (" " if not cjk else "").join(out)


def generated_cjk(han_source: str, budget: int, *, seed: int = 28) -> str:
    """Chinese-like text (words of 1-3 ideographs from ``han_source``) and Korean syllables."""
    rng = random.Random(seed)
    # drawn by frequency (every occurrence in the source), so common ideographs dominate as in text
    han = [c for c in han_source if "\u4e00" <= c <= "\u9fff"] or ["字"]
    leads, vowels, tails = (0, 2, 3, 5, 6, 7, 9, 11, 12, 18), (0, 4, 8, 13, 18, 20), (0, 0, 0, 4, 8, 16, 21, 1)
    out: list[str] = []
    size = 0
    while size < budget:
        if rng.randrange(3):
            words = ["".join(rng.choice(han) for _ in range(rng.randrange(1, 4))) for _ in range(rng.randrange(4, 16))]
            line = "".join(w + (rng.choice("，、") if rng.random() < 0.15 else "") for w in words)
            line += rng.choice("。！？") + ("\n" if rng.random() < 0.3 else "")
        else:
            words = [
                "".join(
                    chr(0xAC00 + (rng.choice(leads) * 21 + rng.choice(vowels)) * 28 + rng.choice(tails))
                    for _ in range(rng.randrange(1, 5))
                )
                for _ in range(rng.randrange(3, 12))
            ]
            line = " ".join(words) + rng.choice((". ", "? ", "다.\n"))
        out.append(line)
        size += len(line.encode("utf-8"))
    return "".join(out)


def heldout_corpus(*, scale: float = 1.0) -> Corpus:
    """The held-out mix (about 3 MB): see the module docstring."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    corpora = shared_dir() / "corpora"
    rng = random.Random(28)
    botchan = (corpora / "botchan.txt").read_text(encoding="utf-8")
    neko = (corpora / "wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")
    packages = "".join(
        p.read_text(encoding="utf-8") for d in ("email", "asyncio") for p in sorted((stdlib / d).rglob("*.py"))
    )
    parts = [
        ("pydoc-topics", (stdlib / "pydoc_data" / "topics.py").read_text(encoding="utf-8")[:500_000]),
        ("py-packages", packages[:500_000]),
        ("generated-code", generated_code(500_000)),
        ("prose-shuffled", _shuffled_sentences(botchan, rng, budget=250_000, cjk=False)),
        ("ja-shuffled", _shuffled_sentences(neko, rng, budget=500_000, cjk=True)),
        ("zh-ko-generated", generated_cjk(neko, 500_000)),
    ]
    if scale < 1.0:
        parts = [(n, t[: int(len(t) * scale)]) for n, t in parts]
    return Corpus(tuple(parts))


def files_corpus(path: Path, *, scale: float = 1.0) -> Corpus:
    """Every regular file under ``path`` (sorted), or ``path`` itself, one document each (UTF-8)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    parts = []
    for f in files:
        try:
            text = f.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SystemExit(f"{f}: not readable as UTF-8 text ({exc})") from None
        parts.append((f.name, text[: int(len(text) * scale)] if scale < 1.0 else text))
    if not parts:
        raise SystemExit(f"{path}: no files")
    return Corpus(tuple(parts))


def add_corpus_args(ap: argparse.ArgumentParser) -> None:
    """The ``--mix`` / ``--corpus`` / ``--scale`` options every encode bench takes."""
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each corpus part (default: all)")
    ap.add_argument("--mix", choices=("tuning", "heldout"), default="tuning",
                    help="built-in mix: the one tuned on (default) or the held-out one")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="a file or folder of UTF-8 files to measure on instead of a built-in mix")


def corpus_from_args(args: argparse.Namespace) -> Corpus:
    if args.corpus is not None:
        return files_corpus(args.corpus, scale=args.scale)
    if args.mix == "heldout":
        return heldout_corpus(scale=args.scale)
    return mixed_corpus(scale=args.scale)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_args(ap)
    print(corpus_from_args(ap.parse_args()).describe())


if __name__ == "__main__":
    main()
