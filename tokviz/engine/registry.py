"""Look up pipeline components by their tokenizer.json ``"type"`` tag.

Each family (normalizers, pre_tokenizers, models, processors, decoders) keeps a table from the
HF ``"type"`` name to ``"module:Class"``; classes are imported on first use so that adding a
component touches only its own module and one table line.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .errors import TokvizFormatError

__all__ = ["build_component"]


def build_component(family: str, table: dict[str, str], obj: Any, *, where: str) -> Any:
    """Build one component from its JSON object (``{"type": ..., ...}``) via ``Class.from_json``."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise TokvizFormatError(f"expected a {family} object, got {type(obj).__name__}", where=where)
    type_name = obj.get("type")
    if type_name not in table:
        known = ", ".join(sorted(table))
        raise TokvizFormatError(f"unknown {family} type {type_name!r} (known: {known})", where=where)
    module_name, _, class_name = table[type_name].partition(":")
    cls = getattr(import_module(module_name), class_name)
    try:
        return cls.from_json(obj)
    except TokvizFormatError as exc:
        if exc.where is None:
            raise TokvizFormatError(str(exc), where=where) from None
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise TokvizFormatError(f"bad {type_name} {family}: {exc}", where=where) from None
