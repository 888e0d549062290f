"""JSON in and out: the one bounded reader (``loads``) and the one writer of ``--json`` output (``dumps``).

Python's ``json`` recurses once per nesting level, so a file 2,000 arrays deep raises
RecursionError (or, in a thread with a small stack, worse). `nesting_depth` measures the depth
first with a linear scan of bulk bytes operations (escapes dropped, the text split on quotes so
that string contents fall out, then a running sum over the brackets that are left), and `loads`
refuses anything deeper than `MAX_JSON_DEPTH` before ``json`` sees it: no recursion limit is
reachable from a file. Real tokenizer files nest 5 or 6 deep.

Every JSON tokviz reads goes through `loads`: the loaders (`hf_json`, `gpt2_files`, `detect`),
the command-line options (``--messages``, ``--tools``, ``--var``, ``--special-tokens``), corpus
jsonl lines, safetensors headers and indexes, Ollama manifests. ``NaN`` and ``Infinity`` are
refused as HF's serde_json refuses them: they are not JSON.

`dumps` writes what ``--json`` prints: always valid JSON (RFC 8259), so a non-finite float
(a NaN embedding norm) is written as ``null``, never as a bare ``NaN``.

>>> nesting_depth(b'{"a": [1, {"b": "]]]"}]}')
3
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from ..engine.errors import TokvizFormatError

__all__ = ["MAX_JSON_DEPTH", "CheckedObject", "check_unicode", "dumps", "loads", "nesting_depth", "try_loads"]

MAX_JSON_DEPTH = 128

_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_ESCAPE = re.compile(rb"\\.", re.S)
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
# a \uD800-\uDFFF escape: the only way a lone surrogate gets into parsed JSON text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class CheckedObject(dict):  # type: ignore[type-arg]
    """A top-level JSON object that `loads` parsed and checked (so it is not checked again)."""

    __slots__ = ()


def check_unicode(value: Any, *, source: str) -> None:
    """Refuse strings holding a lone surrogate (``"\udcff"`` in JSON): they are not Unicode
    text, HF's serde_json refuses them too, and they would fail later, at encode time."""
    try:
        json.dumps(value, ensure_ascii=False, check_circular=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start]
        before = exc.object[max(0, exc.start - 40) : exc.start]
        raise TokvizFormatError(
            f"a string holds the lone surrogate U+{ord(bad):04X} (after {before!r}); JSON text must be valid Unicode",
            source=source,
        ) from None
    except RecursionError:
        raise TokvizFormatError("JSON nested too deeply", source=source) from None
    except (TypeError, ValueError):
        pass  # not JSON data at all: the loaders say what they expected


def nesting_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in ``data`` (0 for a scalar). Linear time; on
    malformed JSON (an unterminated string) the result may be too high, never too low."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    # Only quotes and brackets matter, once every escape (a backslash and the byte after it,
    # read left to right as a JSON lexer does) is gone. Two adjacent quotes can go too (an empty
    # string, or the end of one string and the start of the next: nothing lies between them);
    # the few quotes left split the rest into outside/inside/outside... pieces, and the inside
    # ones (string contents) are dropped.
    skeleton = _ESCAPE.sub(b"", raw).translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    outside = b"".join(skeleton.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, outside)), default=0)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | str, *, source: str, where: str | None = None) -> Any:
    """The JSON value of ``data``; `TokvizFormatError` naming ``source`` (and the line and column)
    for invalid UTF-8, malformed or truncated JSON, ``NaN``/``Infinity``, or nesting deeper than
    `MAX_JSON_DEPTH`. ``where`` (``"line 17"`` of a jsonl file) prefixes the position.

    >>> loads('{"a": [1, 2]}', source="x.json")
    {'a': [1, 2]}
    >>> loads("[" * 200, source="--var x")
    Traceback (most recent call last):
    ...
    tokviz.engine.errors.TokvizFormatError: --var x: JSON nested 200 levels deep (at most 128 allowed; real tokenizer files nest about 6 deep)
    """
    raw = data if isinstance(data, (bytes, bytearray, memoryview)) else None
    if raw is not None:
        try:
            data = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TokvizFormatError(f"not valid UTF-8 (byte {exc.start})", source=source, where=where) from None
    depth = nesting_depth(data if raw is None else raw)  # (the bytes as given: no encode back)
    if depth > MAX_JSON_DEPTH:
        raise TokvizFormatError(
            f"JSON nested {depth} levels deep (at most {MAX_JSON_DEPTH} allowed; real tokenizer files nest "
            "about 6 deep)",
            source=source,
            where=where,
        )
    try:
        value = json.loads(data, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        what = "not valid JSON (truncated JSON)" if exc.pos >= len(data.rstrip()) else "not valid JSON (malformed JSON)"
        at = f"{where} column {exc.colno}" if where else f"line {exc.lineno} column {exc.colno}"
        raise TokvizFormatError(f"{what}: {exc.msg}", source=source, where=at) from None
    except ValueError as exc:  # NaN / Infinity, or an integer of more than 4300 digits
        raise TokvizFormatError(f"malformed JSON: {exc}", source=source, where=where) from None
    except RecursionError:  # unreachable after the depth check; kept so no traceback can escape
        raise TokvizFormatError("JSON nested too deeply", source=source, where=where) from None
    if _SURROGATE_ESCAPE.search(data):
        check_unicode(value, source=source)
    return CheckedObject(value) if type(value) is dict else value


def try_loads(data: bytes | str) -> Any:
    """The JSON value of ``data``, or None when it is not valid (bounded) JSON (for sniffing)."""
    try:
        return loads(data, source="")
    except TokvizFormatError:
        return None


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (containers rebuilt as needed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(value: Any, *, indent: int | None = None, default: Any = None) -> str:
    """``value`` as JSON text for ``--json`` output: non-ASCII kept, and always valid JSON:
    a NaN or infinite float becomes ``null`` (JSON has no such numbers; JavaScript writes
    null for them too).

    >>> dumps({"norm": float("nan"), "ok": [1.5, float("-inf")], "name": "é"})
    '{"norm": null, "ok": [1.5, null], "name": "é"}'
    """
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=default, allow_nan=False)
    except ValueError:  # "Out of range float values are not JSON compliant"
        return json.dumps(_finite(value), ensure_ascii=False, indent=indent, default=default, allow_nan=False)
