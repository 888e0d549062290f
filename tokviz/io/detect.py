"""Sniff a tokenizer file's format from its content and load it: ``load(path) -> Tokenizer``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["load"]


def load(path: str | Path | bytes, *, pattern: str | None = None, special_tokens: dict[str, int] | None = None) -> Any:
    raise NotImplementedError  # written in the engine core issue (loaders)
