"""The "mixed corpus" every bench script measures on: English, Japanese and Python source.

botchan.txt + wagahaiwa_nekodearu.txt from the shared corpora, plus about 1.5 MB of Python
source taken deterministically from the running interpreter's standard library (the ``stdlib``
directory from `sysconfig`), so the corpus exists on any machine without downloads: the
top-level ``*.py`` files in sorted name order until the budget is reached.

Run it to see what it contains::

    python bench/corpus.py
"""

from __future__ import annotations

import argparse
import os
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Corpus", "mixed_corpus", "shared_dir", "python_source"]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each part to keep")
    args = ap.parse_args()
    print(mixed_corpus(scale=args.scale).describe())


if __name__ == "__main__":
    main()
