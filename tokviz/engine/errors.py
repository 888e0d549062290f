"""The error tokviz raises for input it cannot use (files, configs, text)."""

from __future__ import annotations

__all__ = ["TokvizFormatError"]


class TokvizFormatError(ValueError):
    """A file or config is malformed, truncated or of the wrong format.

    The message says which file, where it broke, and what was expected, e.g.
    ``tokenizer.json: model.merges[12]: expected "a b" or ["a", "b"], got 42``.
    """

    def __init__(self, message: str, *, source: str | None = None, where: str | None = None) -> None:
        self.source = source
        self.where = where
        parts = [p for p in (source, where) if p]
        super().__init__(": ".join([*parts, message]))
