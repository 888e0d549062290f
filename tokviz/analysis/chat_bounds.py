"""Per-operation bounds of the chat-template sandbox: sizes checked before work, a watchdog after.

`tokviz.analysis.chat_render` reproduces transformers' environment; this module is what makes
that environment safe to run on a template from a file, without changing what a normal
template renders. Three kinds of bound:

* **Before an operation** that can build more than a constant factor of its inputs (``'x' *
  n``, ``10 ** n``, ``center``, ``indent``, ``replace``, ``join``, ``wordwrap``, ``batch``,
  ``slice``, ``tojson(indent=)``, ``%`` and ``str.format`` widths, ``~`` of containers, ``{{ x }}``
  of a container ...), the size of its result is bounded from its arguments (`str_size` walks a
  container without building its text) and refused over `RenderLimits`: the allocation never
  starts, so no C-level operation can run long or exhaust memory.
* **After every filter, method call, operator and slice**, the result's size is checked and
  charged to a per-render allocation budget (``max_allocated``): a loop of operations that are
  each small cannot add up to gigabytes either.
* **A watchdog thread** raises `RenderInterrupted` in the rendering thread when the deadline
  passes (``PyThreadState_SetAsyncExc``), wherever the render is: template code, a jinja filter,
  ``textwrap``. It lands at the next bytecode boundary, which the size bounds keep close.

Call depth (recursive macros) and template nesting are bounded too, so no render or compile
reaches Python's recursion limit. Every refusal is `LimitExceeded` with a one-line message.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import re
import threading
import time
import types
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jinja2
import jinja2.compiler
import jinja2.exceptions
import jinja2.filters
import jinja2.nodes
import jinja2.runtime
import jinja2.sandbox
import jinja2.utils
import markupsafe
from jinja2.runtime import Undefined

__all__ = [
    "BoundedSandbox",
    "Guard",
    "LimitExceeded",
    "RenderInterrupted",
    "RenderLimits",
    "bounded_filters",
    "current_guard",
    "guarded",
    "json_size",
    "str_size",
    "template_depth",
    "watchdog",
]


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """What one render may use. ``seconds``: wall clock (compile included); ``max_chars``: the
    output, and any one string built; ``max_items``: any one list, tuple or dict built;
    ``max_int_bits``: any integer built (4,300 decimal digits, Python's own printing limit, is
    about 14,300 bits); ``max_allocated``: bytes of strings and containers the template's
    operations build in total; ``max_call_depth``: nested calls (recursive macros)."""

    seconds: float = 3.0
    max_chars: int = 4_000_000
    max_items: int = 1_000_000
    max_int_bits: int = 16_384
    max_allocated: int = 1 << 28
    max_call_depth: int = 64


#: the limits while a template compiles: jinja evaluates constant filter calls then
#: (``{{ 'x' | center(9999999) }}``); a refused one is simply evaluated at render time instead
COMPILE_LIMITS = RenderLimits(seconds=10.0, max_chars=1 << 16, max_items=1 << 14, max_allocated=1 << 24)
#: templates nest expressions and blocks about 15 deep; jinja's parser and Python's compiler
#: recurse per level, so a deeper template is refused before either can reach a recursion limit
MAX_TEMPLATE_DEPTH = 64
#: real chat templates are under 20 kB
MAX_TEMPLATE_CHARS = 1 << 20


class LimitExceeded(Exception):
    """A bound of `RenderLimits` refused an operation (the message says which)."""


class RenderInterrupted(BaseException):
    """Raised inside the rendering thread by the watchdog (a BaseException, so that no
    ``except Exception`` in jinja or a template helper can swallow it)."""


# ---------------------------------------------------------------------------- the guard
class Guard:
    """The running totals of one render (or compile) against its `RenderLimits`."""

    __slots__ = ("limits", "allocated", "depth")

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.allocated = 0
        self.depth = 0

    def chars(self, n: int, what: str) -> None:
        """Refuse building a string of ``n`` characters."""
        if n > self.limits.max_chars:
            raise LimitExceeded(f"{what} would build {n:,} characters (at most {self.limits.max_chars:,})")

    def items(self, n: int, what: str) -> None:
        if n > self.limits.max_items:
            raise LimitExceeded(f"{what} would build {n:,} items (at most {self.limits.max_items:,})")

    def int_bits(self, bits: float, what: str) -> None:
        if bits > self.limits.max_int_bits:
            raise LimitExceeded(f"{what} would build an integer of {bits:,.0f} bits (at most {self.limits.max_int_bits:,})")

    def produced(self, value: Any, what: str) -> Any:
        """Check a result's size, charge it to the allocation budget, return it."""
        if isinstance(value, str):
            n = len(value)
            self.chars(n, what)
            cost = n if value.isascii() else 4 * n
        elif isinstance(value, (list, tuple, dict, set, frozenset)):
            n = len(value)
            self.items(n, what)
            cost = 8 * n if not isinstance(value, dict) else 64 * n
        elif isinstance(value, (bytes, bytearray)):
            self.chars(len(value), what)
            cost = len(value)
        elif type(value) is int:
            self.int_bits(value.bit_length(), what)
            return value
        else:
            return value
        self.allocated += cost
        if self.allocated > self.limits.max_allocated:
            raise LimitExceeded(
                f"the template's operations built more than {self.limits.max_allocated:,} bytes in total"
            )
        return value

    @contextmanager
    def call(self, what: str) -> Iterator[None]:
        if self.depth >= self.limits.max_call_depth:
            raise LimitExceeded(f"calls nested more than {self.limits.max_call_depth} deep ({what}; a recursive macro?)")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


class _State(threading.local):
    guard: Guard | None = None


_STATE = _State()


def current_guard() -> Guard:
    """The guard of the render running in this thread (a fresh default one outside a render)."""
    guard = _STATE.guard
    return guard if guard is not None else Guard(RenderLimits())


@contextmanager
def guarded(limits: RenderLimits) -> Iterator[Guard]:
    """Make a new `Guard` current in this thread and arm the watchdog with ``limits.seconds``.

    A `RenderInterrupted` from the watchdog becomes `LimitExceeded`; so does a RecursionError
    (recursion the bounds did not foresee still ends as a clean limit).
    """
    guard = Guard(limits)
    previous = _STATE.guard
    _STATE.guard = guard
    try:
        alarm = watchdog().arm(limits.seconds)
        try:
            try:
                yield guard
            finally:
                watchdog().disarm(alarm)
        except RenderInterrupted:
            raise LimitExceeded(f"took longer than {limits.seconds:g} s") from None
        except RecursionError:
            raise LimitExceeded("nested too deeply (Python's recursion limit)") from None
    finally:
        _STATE.guard = previous


# ---------------------------------------------------------------------------- sizes
_NAMESPACE_ATTRS = "_Namespace__attrs"


_LEAVES = frozenset({str, int, float, bool, type(None), bytes})


def _children(value: Any) -> Iterator[Any] | None:
    """The items whose repr makes up ``value``'s (None for a leaf)."""
    t = type(value)
    if t in _LEAVES:
        return None
    if t is list or t is tuple:
        return iter(value)
    if t is dict:
        return (x for kv in value.items() for x in kv)
    if isinstance(value, (list, tuple, set, frozenset, KeysView, ValuesView)):
        return iter(value)
    if isinstance(value, (dict, ItemsView)) or isinstance(value, Mapping):
        items = value if isinstance(value, ItemsView) else value.items()
        return (x for kv in items for x in kv)
    if isinstance(value, jinja2.utils.Namespace):
        return iter((object.__getattribute__(value, _NAMESPACE_ATTRS),))
    return None


def _leaf_size(value: Any, quoted: bool) -> int:
    if isinstance(value, str):
        return len(value) + (2 if quoted else 0)
    if value is None or isinstance(value, bool):
        return 5 if value is False else 4
    if isinstance(value, int):
        bits = value.bit_length()
        return len(str(value)) if bits < 64 else int(bits * 0.30103) + 2
    if isinstance(value, float):
        return len(repr(value))
    if isinstance(value, (bytes, bytearray)):
        return 4 * len(value) + 3
    if isinstance(value, Undefined):
        return 0 if not quoted else 16
    return 80  # jinja's own objects (macros, loop, cycler ...) print a short fixed repr


def _walk(value: Any, budget: int, *, quoted: bool, per_item: int, per_level: int) -> int:
    """An estimate of the printed size of ``value``, more than ``budget`` as soon as it is over.

    Iterative, and each distinct container is sized once per depth (a list holding the same
    list a million times costs a million additions, not a million walks), so the cost is the
    number of distinct containers and items, whatever size they print to. A cycle (possible
    through a namespace) counts as over budget: printing it would never end either.
    """
    children = _children(value)
    if children is None:
        return _leaf_size(value, quoted)
    flat = _flat_size(value, 1, per_item, per_level)
    if flat is not None:
        return flat
    memo: dict[tuple[int, int], int] = {}
    open_ids: set[int] = {id(value)}
    # frames: [container, its items, its depth, its size so far, whether an item was seen]
    stack: list[list[Any]] = [[value, children, 1, 2, False]]
    while stack:
        frame = stack[-1]
        item = next(frame[1], _END)
        if item is _END:
            stack.pop()
            size = frame[3] + per_level * (frame[2] - 1)
            memo[(id(frame[0]), frame[2])] = size
            open_ids.discard(id(frame[0]))
            if not stack:
                return size
            stack[-1][3] += size
            if stack[-1][3] > budget:
                return stack[-1][3]
            continue
        frame[3] += per_level * frame[2] + (per_item if frame[4] else 0)
        frame[4] = True
        sub = _children(item)
        if sub is None:
            frame[3] += _leaf_size(item, True)
        else:
            known = memo.get((id(item), frame[2] + 1))
            if known is None:
                known = _flat_size(item, frame[2] + 1, per_item, per_level)
            if known is not None:
                frame[3] += known
            elif id(item) in open_ids:
                return budget + 1
            else:
                open_ids.add(id(item))
                stack.append([item, sub, frame[2] + 1, 2, False])
        if frame[3] > budget:
            return frame[3]
    return budget + 1  # unreachable: the outer frame returns


_END = object()
_NUMBERS = frozenset({int, float, bool, type(None)})


def _flat_size(value: Any, depth: int, per_item: int, per_level: int) -> int | None:
    """The size of a list, tuple or dict of strings or of numbers, summed in C (None for any
    other container: the walk sizes it item by item)."""
    t = type(value)
    if t is dict:
        parts: tuple[Any, ...] = (value.keys(), value.values())
    elif t is list or t is tuple:
        parts = (value,)
    else:
        return None
    n = 0
    total = 0
    for part in parts:
        kinds = set(map(type, part))
        if kinds <= {str}:
            total += sum(map(len, part)) + 2 * len(part)
        elif kinds <= _NUMBERS:
            try:
                total += sum(map(len, map(repr, part)))
            except ValueError:  # an int too long to print: the walk estimates it
                return None
        else:
            return None
        n += len(part)
    return 2 + total + max(n - 1, 0) * per_item + n * per_level * depth + per_level * (depth - 1)


def str_size(value: Any, budget: int) -> int:
    """About ``len(str(value))``, computed without building it (exact for a string; for a
    container within a small factor: string reprs may escape). Stops counting past ``budget``.

    >>> str_size(["ab", 1, {"k": None}], 100), len(str(["ab", 1, {"k": None}]))
    (22, 22)
    """
    if isinstance(value, str):
        return len(value)
    return _walk(value, budget, quoted=False, per_item=2, per_level=0)


def json_size(value: Any, budget: int, *, indent: int | str | None = None,
              separators: tuple[str, str] | None = None) -> int:
    """About ``len(json.dumps(value, indent=indent, separators=separators))``, like `str_size`."""
    item_sep, key_sep = separators if separators is not None else ((", " if indent is None else ","), ": ")
    # one separator per item (a dict's keys and values are both items: the larger of the two)
    per_item = max(len(str(item_sep)), len(str(key_sep))) + (indent is not None)
    if indent is None:
        per_level = 0
    elif isinstance(indent, int):
        per_level = max(indent, 0)
    else:
        per_level = len(str(indent))
    return _walk(value, budget, quoted=True, per_item=per_item, per_level=per_level)


# ---------------------------------------------------------------------------- format strings
# printf-style: %[(key)][flags][width][.precision][length]type
_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<conv>.?)", re.S)
_DIGITS = re.compile(r"\d+")


def percent_size(fmt: str, values: Any, budget: int) -> int:
    """An upper bound of ``len(fmt % values)`` (widths, precisions and the values printed)."""
    if isinstance(values, tuple):
        positional, mapping = list(values), None
    elif isinstance(values, Mapping):
        positional, mapping = [values], values
    else:
        positional, mapping = [values], None
    total = len(fmt)
    at = 0

    def take() -> Any:
        nonlocal at
        v = positional[at] if at < len(positional) else None
        at += 1
        return v

    for m in _PERCENT.finditer(fmt):
        if m.group("conv") == "%":
            continue
        for part in (m.group("width"), m.group("prec")):
            if part == "*":
                star = take()
                total += abs(star) if isinstance(star, int) else 0
            elif part:
                total += int(part)
        key = m.group("key")
        if key is not None and mapping is not None:
            v = mapping.get(key)
        else:
            v = take()
        total += 4 * str_size(v, budget) + 32 if m.group("conv") in ("r", "a") else str_size(v, budget) + 32
        if total > budget:
            return total
    return total


def format_spec_size(spec: str) -> int:
    """The widths and precisions a ``str.format`` field spec can add (every digit run, so a
    digit used as the fill character counts too: an upper bound)."""
    return sum(int(d) for d in _DIGITS.findall(spec)) if spec else 0


# ---------------------------------------------------------------------------- template depth
def template_depth(ast: jinja2.nodes.Node) -> int:
    """The deepest nesting of nodes in a parsed template (iterative)."""
    deepest = 0
    stack = [(ast, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.iter_child_nodes())
    return deepest


# ---------------------------------------------------------------------------- the watchdog
@dataclass(eq=False, slots=True)
class _Alarm:
    thread_id: int
    deadline: float
    state: str = "armed"  # "armed", "fired" or "done"


@dataclass(eq=False)
class _Watchdog:
    """One daemon thread for every render: when an armed deadline passes it raises
    `RenderInterrupted` in that alarm's thread. `disarm` clears an exception that was set but
    not yet raised, so none can land after the render."""

    _cond: threading.Condition = field(default_factory=threading.Condition)
    _alarms: set[_Alarm] = field(default_factory=set)
    _thread: threading.Thread | None = None

    def arm(self, seconds: float) -> _Alarm:
        alarm = _Alarm(threading.get_ident(), time.monotonic() + seconds)
        with self._cond:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="tokviz-chat-watchdog", daemon=True)
                self._thread.start()
            self._alarms.add(alarm)
            self._cond.notify()
        return alarm

    def disarm(self, alarm: _Alarm) -> None:
        with self._cond:
            self._alarms.discard(alarm)
            fired = alarm.state == "fired"
            alarm.state = "done"
        if fired:  # set, and maybe not raised yet: clear it (NULL clears a pending exception)
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(alarm.thread_id), None)

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for alarm in [a for a in self._alarms if a.deadline <= now]:
                    self._alarms.discard(alarm)
                    alarm.state = "fired"
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(
                        ctypes.c_ulong(alarm.thread_id), ctypes.py_object(RenderInterrupted)
                    )
                nearest = min((a.deadline for a in self._alarms), default=None)
                self._cond.wait(None if nearest is None else max(nearest - now, 0.001))


_WATCHDOG: list[_Watchdog] = []


def watchdog() -> _Watchdog:
    """The process's watchdog (a new one in a forked child, whose thread did not survive)."""
    if not _WATCHDOG:
        _WATCHDOG.append(_Watchdog())
    return _WATCHDOG[0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG.clear)


def int_pow_bits(base: int, exponent: int) -> float:
    """The bit length of ``base ** exponent`` (a non-negative exponent), without computing it."""
    b = abs(base)
    return 0.0 if b <= 1 else exponent * math.log2(b)


# ---------------------------------------------------------------------------- filters
def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any) -> Any:
    return args[i] if len(args) > i else kwargs.get(name, default)


def _text_of(guard: Guard, value: Any, what: str) -> str:
    """``str(value)`` once its size is known to be within the limit."""
    if isinstance(value, str):
        return value
    guard.chars(str_size(value, guard.limits.max_chars), what)
    return str(value)


_LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")  # what str.splitlines splits at


def _pre_center(guard: Guard, args: tuple, kwargs: dict) -> None:
    width = _arg(args, kwargs, 1, "width", 80)
    size = str_size(args[0], guard.limits.max_chars)
    guard.chars(max(size, width) if isinstance(width, int) else size, "center")


def _pre_indent(guard: Guard, args: tuple, kwargs: dict) -> None:
    s = _text_of(guard, args[0], "indent")
    width = _arg(args, kwargs, 1, "width", 4)
    indent = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    guard.chars(indent, "indent")
    lines = len(_LINE_BREAKS.findall(s)) + 2
    guard.chars(len(s) + lines * (indent + 1), "indent")


def _pre_format(guard: Guard, args: tuple, kwargs: dict) -> None:
    fmt = _text_of(guard, args[0], "format")
    guard.chars(percent_size(fmt, kwargs or tuple(args[1:]), guard.limits.max_chars), "format")


def _pre_replace(guard: Guard, args: tuple, kwargs: dict) -> None:
    s, old, new = (_text_of(guard, _arg(args, kwargs, i, n, ""), "replace") for i, n in ((0, "s"), (1, "old"), (2, "new")))
    count = _arg(args, kwargs, 3, "count", None)
    guard.chars(replace_size(s, old, new, count), "replace")


def replace_size(s: str, old: str, new: str, count: Any = None) -> int:
    """``len(s.replace(old, new, count))`` without building it."""
    n = s.count(old) if old else len(s) + 1
    if isinstance(count, int) and count >= 0:
        n = min(n, count)
    return len(s) + n * (len(new) - len(old))


def _pre_batch(guard: Guard, args: tuple, kwargs: dict) -> None:
    linecount = _arg(args, kwargs, 1, "linecount", 0)
    if _arg(args, kwargs, 2, "fill_with", None) is not None and isinstance(linecount, int):
        guard.items(linecount, "batch")


def _pre_round(guard: Guard, args: tuple, kwargs: dict) -> None:
    """``round(x, precision)``: the ``ceil``/``floor`` methods compute ``10 ** precision`` and an
    integer rounded to ``-precision`` digits ``10 ** -precision``, in C and beyond the deadline."""
    precision = _arg(args, kwargs, 1, "precision", 0)
    if isinstance(precision, int):
        guard.int_bits(abs(precision) * math.log2(10), "round")


def _pre_slice(guard: Guard, args: tuple, kwargs: dict) -> None:
    slices = _arg(args, kwargs, 1, "slices", 0)
    if isinstance(slices, int):
        guard.items(slices, "slice")


_WORD_GAPS = re.compile(r"\s+")


def _pre_urlize(guard: Guard, args: tuple, kwargs: dict) -> None:
    s = _text_of(guard, args[0], "urlize")
    extra = sum(len(str(_arg(args, kwargs, i, n, "") or "")) for i, n in ((3, "target"), (4, "rel")))
    words = len(_WORD_GAPS.findall(s)) + 1
    guard.chars(3 * len(s) + words * (extra + 64), "urlize")


def _pre_stringify(name: str) -> Any:
    def check(guard: Guard, args: tuple, kwargs: dict) -> None:
        if args and not isinstance(args[0], str):
            guard.chars(str_size(args[0], guard.limits.max_chars), name)

    return check


_PRE_CHECKS: dict[str, Any] = {
    "center": _pre_center,
    "indent": _pre_indent,
    "format": _pre_format,
    "replace": _pre_replace,
    "batch": _pre_batch,
    "slice": _pre_slice,
    "round": _pre_round,
    "urlize": _pre_urlize,
}
_STRINGIFYING = ("capitalize", "e", "escape", "forceescape", "lower", "pprint", "safe", "string", "striptags",
                 "title", "trim", "truncate", "upper", "urlencode", "wordcount", "xmlattr")
_PRE_CHECKS.update({name: _pre_stringify(name) for name in _STRINGIFYING})


@jinja2.pass_eval_context
def _join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
    """jinja's ``join`` with the size of the result known before it is built."""
    guard = current_guard()
    items = list(value)
    if attribute is not None:
        items = list(map(jinja2.filters.make_attrgetter(eval_ctx.environment, attribute), items))
    budget = guard.limits.max_chars
    total = max(len(items) - 1, 0) * str_size(d, budget)
    for item in items:
        total += str_size(item, budget)
        guard.chars(total, "join")
    return jinja2.filters.sync_do_join(eval_ctx, items, d)


@jinja2.pass_environment
def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """jinja's ``sum``; sequences are added one ``+`` at a time through the bounded operator
    (the builtin would copy quadratically in C, beyond any check)."""
    if attribute is not None:
        iterable = map(jinja2.filters.make_attrgetter(environment, attribute), iterable)
    items = list(iterable)
    if isinstance(start, (str, bytes, bytearray)):
        return sum(items, start)  # the builtin's own TypeError
    if not isinstance(start, (list, tuple)) and not any(isinstance(x, (str, list, tuple, bytes)) for x in items):
        return sum(items, start)
    total = start
    for item in items:
        total = environment.call_binop(None, "+", total, item)
    return total


@jinja2.pass_environment
def _wordwrap(environment: Any, s: str, width: int = 79, break_long_words: bool = True,
              wrapstring: str | None = None, break_on_hyphens: bool = True) -> str:
    """jinja's ``wordwrap`` (paragraphs wrapped one by one, joined with ``wrapstring``) with the
    joined size checked before the joins."""
    import textwrap

    if wrapstring is None:
        wrapstring = environment.newline_sequence
    paragraphs = [
        textwrap.wrap(line, width=width, expand_tabs=False, replace_whitespace=False,
                      break_long_words=break_long_words, break_on_hyphens=break_on_hyphens)
        for line in s.splitlines()
    ]
    joints = sum(max(len(p) - 1, 0) for p in paragraphs) + max(len(paragraphs) - 1, 0)
    size = sum(len(line) for p in paragraphs for line in p) + joints * len(wrapstring)
    current_guard().chars(size, "wordwrap")
    return wrapstring.join([wrapstring.join(p) for p in paragraphs])


_REPLACED = {"join": _join, "sum": _sum, "wordwrap": _wordwrap}


def _bounded(name: str, func: Any) -> Any:
    """``func`` (a jinja filter) with its pre-check, its result checked, and an assertion in the
    filter (``truncate`` asserts its arguments) raised as a template error."""
    pre = _PRE_CHECKS.get(name)
    lead = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0
    what = f"the {name!r} filter"

    def bounded(*args: Any, **kwargs: Any) -> Any:
        guard = current_guard()
        if pre is not None and len(args) > lead:
            pre(guard, args[lead:], kwargs)
        try:
            result = func(*args, **kwargs)
        except AssertionError as exc:
            raise jinja2.exceptions.FilterArgumentError(str(exc)) from None
        return guard.produced(result, what)

    bounded.__dict__.update(getattr(func, "__dict__", {}))  # jinja_pass_arg, jinja_async_variant
    bounded.__name__ = bounded.__qualname__ = getattr(func, "__name__", name)
    bounded.__doc__ = func.__doc__
    return bounded


def bounded_filters(filters: Mapping[str, Any]) -> dict[str, Any]:
    """Every filter of ``filters`` bounded (``join``, ``sum``, ``wordwrap`` replaced by
    bounded equivalents of jinja's own)."""
    return {name: _bounded(name, _REPLACED.get(name, func)) for name, func in filters.items()}


def bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002 - jinja's names
    """jinja's ``lipsum`` global with its size known first (words are at most 14 characters)."""
    if isinstance(n, int) and isinstance(max, int):
        current_guard().chars(n * (max + 1) * 16, "lipsum")
    return current_guard().produced(jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max), "lipsum")


# ---------------------------------------------------------------------------- methods
def _self_text(obj: Any) -> str | bytes | None:
    owner = getattr(obj, "__self__", None)
    return owner if isinstance(owner, (str, bytes)) else None


def _check_width(guard: Guard, owner: Any, args: tuple, kwargs: dict, name: str) -> tuple | None:
    width = args[0] if args else 0
    if isinstance(width, int):
        guard.chars(max(len(owner), width), name)
    return None


def _check_expandtabs(guard: Guard, owner: Any, args: tuple, kwargs: dict, name: str) -> tuple | None:
    size = _arg(args, kwargs, 0, "tabsize", 8)
    if isinstance(size, int):
        tab = "\t" if isinstance(owner, str) else b"\t"
        guard.chars(len(owner) + owner.count(tab) * max(size, 0), name)
    return None


def _check_replace(guard: Guard, owner: Any, args: tuple, kwargs: dict, name: str) -> tuple | None:
    if len(args) >= 2 and type(args[0]) is type(owner) and type(args[1]) is type(owner):
        guard.chars(replace_size(owner, args[0], args[1], _arg(args, kwargs, 2, "count", -1)), name)
    return None


def _check_join(guard: Guard, owner: Any, args: tuple, kwargs: dict, name: str) -> tuple | None:
    if not args:
        return None
    items = list(args[0])
    total = max(len(items) - 1, 0) * len(owner)
    for item in items:
        total += len(item) if isinstance(item, (str, bytes)) else 0
        guard.chars(total, name)
    return (items, *args[1:])


def _check_translate(guard: Guard, owner: Any, args: tuple, kwargs: dict, name: str) -> tuple | None:
    table = args[0] if args else None
    if isinstance(owner, str) and isinstance(table, Mapping):
        longest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
        guard.chars(len(owner) * max(longest, 1), name)
    return None


_METHOD_CHECKS = {
    "center": _check_width, "ljust": _check_width, "rjust": _check_width, "zfill": _check_width,
    "expandtabs": _check_expandtabs, "replace": _check_replace, "join": _check_join, "translate": _check_translate,
}


class _BoundedFormatter(jinja2.sandbox.SandboxedFormatter):
    """``str.format`` in the sandbox with every field's size known before it is formatted."""

    _total = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._total = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def _charge(self, size: int) -> None:
        self._total += size
        current_guard().chars(self._total, "str.format")

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a"):
            current_guard().chars(4 * str_size(value, current_guard().limits.max_chars), "str.format")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        self._charge(2 * str_size(value, current_guard().limits.max_chars) + format_spec_size(format_spec) + 32)
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, jinja2.sandbox.SandboxedEscapeFormatter):
    pass


# ---------------------------------------------------------------------------- the environment
class _CodeGenerator(jinja2.compiler.CodeGenerator):
    """jinja's code generator with ``~`` going through `BoundedSandbox.concat_values` and slices
    (which jinja compiles to a bare subscript) through `BoundedSandbox.sliced`."""

    @jinja2.compiler.optimizeconst
    def visit_Getitem(self, node: jinja2.nodes.Getitem, frame: Any) -> None:
        if not isinstance(node.arg, jinja2.nodes.Slice):
            return super().visit_Getitem(node, frame)
        self.write("environment.sliced(")
        super().visit_Getitem(node, frame)
        self.write(")")
        return None

    @jinja2.compiler.optimizeconst
    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Any) -> None:
        # the same choice of joiner as jinja's own visit_Concat, made inside concat_values
        if frame.eval_ctx.volatile:
            markup = "context.eval_ctx.volatile"
        else:
            markup = "True" if frame.eval_ctx.autoescape else "False"
        self.write("environment.concat_values((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write(f"), {markup})")


def _bounded_output(value: Any) -> Any:
    """The ``finalize`` of ``{{ value }}``: printing a container is bounded before ``str()``."""
    if not isinstance(value, str):
        guard = current_guard()
        guard.chars(str_size(value, guard.limits.max_chars), "printing a value")
    return value


class BoundedSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """jinja's immutable sandbox with every operation bounded as this module describes.

    A template renders exactly as in `ImmutableSandboxedEnvironment` unless a bound refuses.
    """

    intercepted_binops = frozenset(["*", "**", "+", "%"])
    code_generator_class = _CodeGenerator

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=_bounded_output, **options)
        self.filters = bounded_filters(self.filters)
        self.globals["lipsum"] = bounded_lipsum

    # ------------------------------------------------------------- parse
    def _parse(self, source: str, name: str | None, filename: str | None) -> jinja2.nodes.Template:
        try:
            ast = super()._parse(source, name, filename)
        except RecursionError:
            raise LimitExceeded("the template nests too deeply to parse") from None
        depth = template_depth(ast)
        if depth > MAX_TEMPLATE_DEPTH:
            raise LimitExceeded(f"the template nests {depth} levels deep (at most {MAX_TEMPLATE_DEPTH})")
        return ast

    # ------------------------------------------------------------- operators
    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        guard = current_guard()
        what = f"'{operator}'"
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int):
                    (guard.chars if isinstance(seq, (str, bytes)) else guard.items)(len(seq) * n, what)
            if type(left) is int and type(right) is int:
                guard.int_bits(left.bit_length() + right.bit_length(), what)
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                guard.int_bits(int_pow_bits(left, right), what)
        elif operator == "+":
            if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
                guard.chars(len(left) + len(right), what)
            elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                guard.items(len(left) + len(right), what)
        elif operator == "%" and isinstance(left, str):
            guard.chars(percent_size(left, right, guard.limits.max_chars), what)
        return guard.produced(self.binop_table[operator](left, right), what)

    def concat_values(self, values: tuple[Any, ...], markup: bool) -> str:
        """``a ~ b ~ ...`` (jinja's markup_join or str_join, chosen as jinja chooses)."""
        guard = current_guard()
        total = 0
        for v in values:
            total += str_size(v, guard.limits.max_chars)
            guard.chars(total, "'~'")
        joined = jinja2.runtime.markup_join(values) if markup else jinja2.runtime.str_join(values)
        return guard.produced(joined, "'~'")

    def concat(self, parts: Any) -> str:  # type: ignore[override] - environment.concat of compiled code
        """The output of a block, macro or ``{% set %}`` body, sized before it is joined."""
        parts = list(parts)
        guard = current_guard()
        guard.chars(sum(len(p) for p in parts if isinstance(p, str)), "a block's output")
        return guard.produced("".join(parts), "a block's output")

    def sliced(self, value: Any) -> Any:
        """``obj[a:b]``, checked after the copy (which is no larger than ``obj``)."""
        return current_guard().produced(value, "a slice")

    # ------------------------------------------------------------- calls
    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja's signature
        guard = current_guard()
        name = getattr(__obj, "__name__", None) or type(__obj).__name__
        owner = _self_text(__obj)
        if owner is not None and name in _METHOD_CHECKS:
            args = _METHOD_CHECKS[name](guard, owner, args, kwargs, f"{name}()") or args
        if type(__obj).__name__ == "builtin_function_or_method":
            for a in (*args, *kwargs.values()):
                if type(a) is int and a > guard.limits.max_chars:
                    raise LimitExceeded(f"{name}() with {a:,}")
        with guard.call(f"{name}()"):
            result = super().call(__context, __obj, *args, **kwargs)
        return guard.produced(result, f"{name}()")

    def wrap_str_format(self, value: Any) -> Any:
        """jinja's sandboxed ``str.format`` / ``format_map``, through `_BoundedFormatter`."""
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in (
            "format", "format_map"
        ):
            return None
        f_self = value.__self__
        if not isinstance(f_self, str):
            return None
        str_type = type(f_self)
        is_format_map = value.__name__ == "format_map"
        if isinstance(f_self, markupsafe.Markup):
            formatter: _BoundedFormatter = _BoundedEscapeFormatter(self, escape=f_self.escape)
        else:
            formatter = _BoundedFormatter(self)

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_format_map:
                if kwargs:
                    raise TypeError("format_map() takes no keyword arguments")
                if len(args) != 1:
                    raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
                kwargs, args = args[0], ()
            return str_type(formatter.vformat(f_self, args, kwargs))

        return functools.update_wrapper(wrapper, value)
