"""Look up pipeline components by their tokenizer.json ``"type"`` tag.

Each family (normalizers, pre_tokenizers, models, processors, decoders) keeps a table from the
HF ``"type"`` name to ``"module:Class"``; classes are imported on first use so that adding a
component touches only its own module and one table line.

`build_component` is also where a component's errors get their path: a `TokvizFormatError`
raised inside ``from_json`` (with a path relative to the component, see `fields.Fields`) is
re-raised with the component's own path in front, so nested Sequences give
``decoder.decoders[1].suffix``. Nesting is bounded (`fields.MAX_NESTING`) with a clear error
instead of a RecursionError.
"""

from __future__ import annotations

import threading
from importlib import import_module
from typing import Any

from .errors import TokvizFormatError
from .fields import MAX_NESTING, describe, within

__all__ = ["build_component"]

_depth = threading.local()


def build_component(family: str, table: dict[str, str], obj: Any, *, where: str) -> Any:
    """Build one component from its JSON object (``{"type": ..., ...}``) via ``Class.from_json``."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise TokvizFormatError(f"expected a {family} object, got {describe(obj)}", where=where)
    type_name = obj.get("type")
    if not isinstance(type_name, str) or type_name not in table:
        known = ", ".join(sorted(table))
        shown = repr(type_name[:60]) if isinstance(type_name, str) else describe(type_name)
        raise TokvizFormatError(f"unknown {family} type {shown} (known: {known})", where=where)
    depth = getattr(_depth, "value", 0)
    if depth >= MAX_NESTING:
        raise TokvizFormatError(f"components nested more than {MAX_NESTING} deep", where=where)
    module_name, _, class_name = table[type_name].partition(":")
    cls = getattr(import_module(module_name), class_name)
    _depth.value = depth + 1
    try:
        return cls.from_json(obj)
    except TokvizFormatError as exc:
        raise within(exc, where) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # a from_json that let a wrong type through: still one clear line, never a traceback
        raise TokvizFormatError(f"bad {type_name} {family}: {exc}", where=where) from None
    finally:
        _depth.value = depth

