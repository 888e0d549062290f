"""Typed access to the fields of a tokenizer-file JSON object, with errors that name the path.

Every component's ``from_json`` reads its fields through `Fields`, so a field of the wrong JSON
type or out of range stops the load with a `TokvizFormatError` whose ``where`` is the field's
path relative to the component (``suffix``, ``decoders[1]``); the registry and the loaders put
the outer path and the file name in front (`within`), giving
``tokenizer.json: decoder.decoders[1].suffix: expected a string, got a list``. Nothing of the
wrong type ever reaches an encode or decode routine.

Unlike `patterns.pattern_from_json` (the ``{"String"|"Regex": ...}`` shape of one field), this
module knows nothing of any component: it checks JSON kinds, ranges and choices.

>>> Fields({"suffix": ["x"]}).str("suffix", "</w>")
Traceback (most recent call last):
...
tokviz.engine.errors.TokvizFormatError: suffix: expected a string, got a list
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from .errors import TokvizFormatError

__all__ = ["Fields", "MAX_ID", "MAX_NESTING", "REQUIRED", "describe", "fail", "id_error", "is_id", "join_where", "within"]

#: How deep a component may nest inside another (Sequence in Sequence ...). Real files nest 3 deep.
MAX_NESTING = 64

#: The largest token id any loader accepts, on both backends: the native core keeps ids in 32-bit
#: signed slots and packs a pair of them into one 64-bit key, so a larger id would collide.
MAX_ID = 2**31 - 1

_MISSING: Any = object()
#: The default of a getter whose field must be present.
REQUIRED: Any = _MISSING


def describe(value: Any) -> str:
    """The JSON kind of a value, with its article: ``"a list"``, ``"an object"``, ``"null"``.

    >>> describe([1]), describe({}), describe(None), describe(True), describe(2.5)
    ('a list', 'an object', 'null', 'a boolean', 'a number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def join_where(outer: str | None, inner: str | None) -> str | None:
    """``decoder`` + ``decoders[1].suffix`` -> ``decoder.decoders[1].suffix`` (``[`` joins bare)."""
    if not outer:
        return inner
    if not inner:
        return outer
    return f"{outer}{inner}" if inner.startswith("[") else f"{outer}.{inner}"


def is_id(value: Any) -> bool:
    """Whether ``value`` is a token id every backend can hold: an int (not a bool) in 0..MAX_ID."""
    return type(value) is int and 0 <= value <= MAX_ID


def id_error(value: Any) -> str:
    """The message for a value that is not a token id (`is_id`)."""
    if type(value) is int and value > MAX_ID:
        return f"id {value!r:.40} is above the largest supported id 2**31-1"
    return f"expected a non-negative integer, got {value!r:.40}"


def fail(message: str, where: str | None = None) -> NoReturn:
    raise TokvizFormatError(message, where=where)


def within(exc: TokvizFormatError, outer: str | None, *, source: str | None = None) -> TokvizFormatError:
    """A copy of ``exc`` whose path has ``outer`` in front (and ``source`` when it had none).

    The message is kept without the old ``source: where:`` prefix, so the result reads
    ``source: outer.inner: message`` exactly once. Subclasses (`PatternTimeoutError`) keep
    their class: callers re-raise ``within(...)`` and the error stays catchable by its kind.
    """
    message = str(exc)
    prefix = ": ".join(p for p in (exc.source, exc.where) if p)
    if prefix and message.startswith(prefix + ": "):
        message = message[len(prefix) + 2 :]
    new = TokvizFormatError.__new__(type(exc))
    new.__dict__.update(exc.__dict__)
    TokvizFormatError.__init__(new, message, source=exc.source or source, where=join_where(outer, exc.where))
    return new


class Fields:
    """The fields of one JSON object, read with their expected kinds.

    ``where`` is the object's own path (usually ``None``: the registry adds it). Each getter
    takes the key and an optional default used when the key is absent; ``null`` counts as
    absent only where the getter says ``optional`` (HF writes ``null`` for unset options).

    >>> f = Fields({"start": 1, "content": " "})
    >>> f.int("start", 0, minimum=0), f.char("content", " "), f.bool("cleanup", True)
    (1, ' ', True)
    """

    __slots__ = ("obj", "where")

    def __init__(self, obj: Any, where: str | None = None, *, what: str = "an object") -> None:
        if not isinstance(obj, dict):
            fail(f"expected {what}, got {describe(obj)}", where)
        self.obj: dict[str, Any] = obj
        self.where = where

    def path(self, key: str | int) -> str:
        inner = f"[{key}]" if isinstance(key, int) else key
        return join_where(self.where, inner) or inner

    def fail(self, key: str | int, message: str) -> NoReturn:
        fail(message, self.path(key))

    def _get(self, key: str, default: Any, optional: bool) -> tuple[Any, bool]:
        """(value, given): ``given`` is False when the default applies."""
        value = self.obj.get(key, _MISSING)
        if value is _MISSING or (value is None and optional):
            if default is _MISSING and not optional:
                self.fail(key, "missing (required)")
            return (None if default is _MISSING else default), False
        return value, True

    def _expect(self, key: str, value: Any, ok: bool, what: str) -> None:
        if not ok:
            self.fail(key, f"expected {what}, got {describe(value)}")

    def has(self, key: str) -> bool:
        return self.obj.get(key) is not None

    def raw(self, key: str, default: Any = None) -> Any:
        return self.obj.get(key, default)

    def str(self, key: str, default: Any = _MISSING, *, optional: bool = False, nonempty: bool = False) -> Any:
        value, given = self._get(key, default, optional)
        if given:
            self._expect(key, value, isinstance(value, str), "a string")
            if nonempty and not value:
                self.fail(key, "expected a non-empty string, got an empty one")
        return value

    def char(self, key: str, default: Any = _MISSING) -> str:
        """A string of exactly one character (Metaspace replacement, Strip content)."""
        value, given = self._get(key, default, False)
        if given:
            self._expect(key, value, isinstance(value, str), "a one-character string")
            if len(value) != 1:
                self.fail(key, f"expected a one-character string, got {value[:20]!r}")
        return value

    def bool(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value, given = self._get(key, default, optional)
        if given:
            self._expect(key, value, isinstance(value, bool), "true or false")
        return value

    def int(self, key: str, default: Any = _MISSING, *, optional: bool = False,
            minimum: int | None = None, maximum: int | None = None) -> Any:
        return self._numeric(key, default, optional, minimum, maximum, integer=True)

    def number(self, key: str, default: Any = _MISSING, *, optional: bool = False,
               minimum: float | None = None, maximum: float | None = None) -> Any:
        """A JSON number (not NaN) as a float."""
        return self._numeric(key, default, optional, minimum, maximum, integer=False)

    def _numeric(self, key: str, default: Any, optional: bool, minimum: float | None, maximum: float | None,
                 *, integer: bool) -> Any:
        value, given = self._get(key, default, optional)
        if not given:
            return value
        kinds = int if integer else (int, float)
        ok = isinstance(value, kinds) and not isinstance(value, bool) and value == value  # NaN != NaN
        self._expect(key, value, ok, "an integer" if integer else "a number")
        check_range(value, minimum, maximum, self.path(key))
        return value if integer else float(value)

    def choice(self, key: str, choices: Iterable[str], default: Any = _MISSING) -> Any:
        options = tuple(choices)
        value, given = self._get(key, default, False)
        if given and (not isinstance(value, str) or value not in options):
            shown = f"{value[:40]!r}" if isinstance(value, str) else describe(value)
            self.fail(key, f"expected one of {', '.join(options)}, got {shown}")
        return value

    def list(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value, given = self._get(key, default, optional)
        if given:
            self._expect(key, value, isinstance(value, list), "a list")
        return value

    def object(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value, given = self._get(key, default, optional)
        if given:
            self._expect(key, value, isinstance(value, dict), "an object")
        return value

    def str_list(self, key: str, default: Any = _MISSING, *, optional: bool = False) -> Any:
        value = self.list(key, default, optional=optional)
        if value is not None:
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    fail(f"expected a string, got {describe(item)}", join_where(self.path(key), f"[{i}]"))
        return value


def check_range(value: float, minimum: float | None, maximum: float | None, where: str | None) -> None:
    if minimum is not None and value < minimum:
        fail(f"expected at least {minimum}, got {value}", where)
    if maximum is not None and value > maximum:
        fail(f"expected at most {maximum}, got {value}", where)
