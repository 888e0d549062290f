"""Chat templates rendered the way transformers' ``apply_chat_template`` renders them.

This module is the renderer only (no tokenizer): the jinja2 environment, the input normalisation
and ``continue_final_message``; `tokviz.analysis.chat` encodes the render, colours the roles and
lints. What is reproduced (transformers 5.24, ``utils/chat_template_utils.py``):

* ``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the loopcontrols
  extension and a ``{% generation %}`` tag (it records the character spans it wraps);
* the filter ``tojson`` = ``json.dumps(x, ensure_ascii=False, indent=None, separators=None,
  sort_keys=False)`` (jinja's own escapes ``<>&'``), the globals ``raise_exception`` (raises
  ``TemplateError(message)``), ``strftime_now`` (local time), a ``dict`` that only constructs,
  and a ``namespace`` that refuses ``_``-prefixed names;
* messages: keys whose value is None dropped, every input rebuilt from plain JSON types, the
  reasoning aliases (``reasoning_content`` / ``thinking`` / ``reasoning``);
* ``continue_final_message`` with its tag and its errors; it excludes ``add_generation_prompt``.

Beyond transformers (safety only; a normal template renders the same): a deadline and an output
limit, checked by a line tracer on the template's own code and between output chunks, and
``*`` refused when it would build a huge string or list. Errors are `ChatTemplateError` with the
template line when jinja knows it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = [
    "CONTINUE_TAG",
    "ChatTemplateError",
    "RenderLimits",
    "Rendered",
    "compile_template",
    "normalize_messages",
    "render_template",
    "template_literal_text",
    "template_variables",
]

#: what transformers appends to the final message for ``continue_final_message`` (then cuts at)
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
_TEMPLATE_FILE = "<template>"  # co_filename of the code jinja compiles from a string


class ChatTemplateError(ValueError):
    """A template that does not parse, raises, or exceeds a limit.

    ``message`` is the bare message (what transformers' exception says); ``kind`` is one of
    "syntax", "raised" (``raise_exception``), "runtime" (an error inside the template, e.g. an
    undefined name), "input" (the messages do not fit, e.g. ``continue_final_message``) or
    "limit"; ``line`` is the 1-based template line when known.
    """

    def __init__(self, message: str, *, kind: str, line: int | None = None, error_type: str | None = None) -> None:
        self.message = message
        self.kind = kind
        self.line = line
        self.error_type = error_type  # the Python exception class of a runtime error
        where = f" (template line {line})" if line is not None else ""
        what = f"{error_type}: " if error_type else ""
        super().__init__(f"chat template {_KIND_WORDS.get(kind, kind)}: {what}{message}{where}")


_KIND_WORDS = {
    "syntax": "does not parse",
    "raised": "raised",
    "runtime": "failed",
    "input": "cannot render these messages",
    "limit": "stopped",
}


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """Stops a looping or exploding template: wall-clock seconds and characters of output."""

    seconds: float = 3.0
    max_chars: int = 4_000_000


@dataclass(frozen=True, slots=True)
class Rendered:
    """One render: the text and the ``{% generation %}`` spans (character offsets in ``text``)."""

    text: str
    generation_spans: tuple[tuple[int, int], ...] = field(default=())


class _LimitExceeded(Exception):
    pass


# ---------------------------------------------------------------------------- the environment
class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body and records where it went.

    transformers' AssistantTracker does the same for ``return_assistant_tokens_mask``; the
    spans here come from the output written so far (see `_Run`).
    """

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation", []), [], [], body).set_lineno(lineno)

    def _generation(self, caller: Any) -> str:
        out = caller()
        run = _CURRENT.run
        if run is not None:
            run.pending_generation.append(out)
        return out


class _SandboxEnv(ImmutableSandboxedEnvironment):
    """transformers' environment plus size checks: ``*`` and calls of built-in methods with a
    huge int (``'x' * 10**12``, ``'x'.ljust(10**12)``) would exhaust memory before any limit."""

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja's signature
        if type(__obj).__name__ == "builtin_function_or_method":
            limit = _CURRENT_LIMIT()
            for a in (*args, *kwargs.values()):
                if type(a) is int and a > limit:
                    raise _LimitExceeded(f"{getattr(__obj, '__name__', 'a call')}() with {a:,}")
        return super().call(__context, __obj, *args, **kwargs)

    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _CURRENT_LIMIT():
                    raise _LimitExceeded(f"'*' would build {len(seq) * n:,} items")
            return left * right
        if operator == "**" and isinstance(right, int) and isinstance(left, int) and abs(right) > 4096:
            raise _LimitExceeded(f"'**' with exponent {right}")
        return super().call_binop(context, operator, left, right)


def _raise_exception(message: Any) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
    # transformers' override: jinja's own tojson escapes < > & ' for HTML, chat templates must not
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _TemplateDict:
    """``dict(...)`` and ``dict.fromkeys(...)`` and nothing else (no way to the type object)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


def _check_namespace_name(name: object) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
            "Please rename the attribute."
        )


class _TemplateNamespace(jinja2.utils.Namespace):
    """jinja's ``namespace`` refusing ``_``-prefixed attributes (the message is transformers')."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - jinja's own signature trick
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_namespace_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_namespace_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


@lru_cache(maxsize=1)
def _environment() -> _SandboxEnv:
    env = _SandboxEnv(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


@lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template (cached); a syntax error becomes `ChatTemplateError` with its line.

    >>> compile_template("{% if true %}\\n  A\\n{% endif %}B").render()
    '  A\\nB'
    """
    if not isinstance(source, str):
        raise ChatTemplateError(f"a chat template is a string, got {type(source).__name__}", kind="input")
    try:
        return _environment().from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise ChatTemplateError(exc.message or str(exc), kind="syntax", line=exc.lineno) from None


@lru_cache(maxsize=64)
def template_variables(source: str) -> frozenset[str]:
    """Undeclared variables of the template (``jinja2.meta.find_undeclared_variables``)."""
    compile_template(source)
    return frozenset(jinja2.meta.find_undeclared_variables(_environment().parse(source)))


@lru_cache(maxsize=64)
def template_literal_text(source: str) -> str:
    """The template's literal text and string constants joined by NUL (transformers' control-token
    search text: an added token found here counts as a control token)."""
    compile_template(source)
    ast = _environment().parse(source)
    literals = {n.data for n in ast.find_all(jinja2.nodes.TemplateData)}
    literals |= {n.value for n in ast.find_all(jinja2.nodes.Const) if isinstance(n.value, str)}
    return "\0".join(sorted(literals))  # sorted: the same lint order on every run


# ---------------------------------------------------------------------------- inputs
def _plain(value: Any, where: str) -> Any:
    """A copy of ``value`` made of JSON types only (transformers rebuilds every input this way;
    here anything else is refused instead of becoming a placeholder string)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k, where): _plain(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, where) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v, where) for v in value)
    raise ChatTemplateError(f"{where}: {type(value).__name__} is not a JSON value", kind="input")


def normalize_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """transformers' message normalisation: dicts only, None-valued keys dropped, plain copies.

    >>> normalize_messages([{"role": "user", "content": "hi", "tool_calls": None}])
    [{'role': 'user', 'content': 'hi'}]
    """
    if isinstance(messages, Mapping) or not isinstance(messages, Sequence) or isinstance(messages, str):
        raise ChatTemplateError("messages must be a list of {role, content} objects", kind="input")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise ChatTemplateError(
                f"Chat messages should be dicts, dataclasses or pydantic models, but got {m!r}.", kind="input"
            )
        out.append({k: _plain(v, f"messages[{i}]") for k, v in m.items() if v is not None})
    return out


def _alias_reasoning(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # transformers fills `reasoning_content` (and `thinking`, read by gpt-oss templates) from whichever is set
    out = []
    for m in chat:
        reasoning = next((m[k] for k in _REASONING_FIELDS if m.get(k) is not None), None)
        if reasoning is not None:
            m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


def _tag_final_message(chat: list[dict[str, Any]], source: str, key: str) -> str:
    """Append `CONTINUE_TAG` to the final message (transformers' rules and messages); returns
    the text that must appear in the render."""
    if not chat:
        raise ChatTemplateError("continue_final_message is set but the conversation is empty!", kind="input")
    final = chat[-1].get(key)
    if final is None:
        raise ChatTemplateError(
            f'continue_final_message is set but the final message has no "{key}" to continue!', kind="input"
        )
    fields = [key]
    if key in _REASONING_FIELDS:
        fields = [f for f in _REASONING_FIELDS if chat[-1].get(f) == final]
    if not any(f in source for f in fields):
        raise ChatTemplateError(
            f'continue_final_message is set to "{key}" but this is not an accepted field in the chat_template',
            kind="input",
        )
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                text = block["text"]
                block["text"] = text + CONTINUE_TAG
                return text
        raise ChatTemplateError(
            "continue_final_message is set but we could not find any text to continue in the final message!",
            kind="input",
        )
    for f in fields:
        chat[-1][f] = chat[-1][f] + CONTINUE_TAG
    return final


def _cut_at_tag(rendered: str, final: str) -> str:
    tag = CONTINUE_TAG.strip()
    if final.strip() not in rendered or tag not in rendered:
        raise ChatTemplateError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            f"Final message to continue: {final.strip()}\nRendered chat:\n{rendered}",
            kind="input",
        )
    loc = rendered.rindex(tag)
    if rendered[loc : loc + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return rendered[:loc]
    return rendered[:loc].rstrip()  # the template trimmed the tag's space: trim the message end too


# ---------------------------------------------------------------------------- the run
class _State(threading.local):
    run: Any = None


_CURRENT = _State()  # per thread: the GUI renders in workers while the CLI or tests render too


def _CURRENT_LIMIT() -> int:  # noqa: N802 - read by the environment during a run
    run = _CURRENT.run
    return run.limits.max_chars if run is not None else RenderLimits().max_chars


class _Run:
    """The state of one render: deadline, output so far, generation spans waiting for a position."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.pending_generation: list[str] = []
        self.tick = 0

    def tracer(self, frame: Any, event: str, arg: Any) -> Any:
        # Global tracer: trace lines only in the template's own code (macros and blocks included)
        if event == "call" and frame.f_code.co_filename == _TEMPLATE_FILE:
            return self._local
        return None

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        self.tick += 1
        if self.tick & 255 == 0 and time.monotonic() > self.deadline:
            raise _LimitExceeded(f"took longer than {self.limits.seconds:g} s")
        return self._local


def _template_line(tb: Any) -> int | None:
    """The template line of the innermost template frame (jinja rewrites the traceback of an
    error inside a template so that those frames carry template line numbers)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _TEMPLATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _generate(template: jinja2.Template, context: dict[str, Any], run: _Run) -> Rendered:
    parts: list[str] = []
    size = 0
    spans: list[tuple[int, int]] = []
    gen: Iterator[str] = template.generate(**context)
    for chunk in gen:
        if run.pending_generation:
            # a {% generation %} body is always the tail of the chunk that carries it
            for body in run.pending_generation:
                at = size + chunk.rfind(body) if body else size + len(chunk)
                spans.append((at, at + len(body)))
            run.pending_generation.clear()
        parts.append(chunk)
        size += len(chunk)
        if size > run.limits.max_chars:
            raise _LimitExceeded(f"output longer than {run.limits.max_chars:,} characters")
        if time.monotonic() > run.deadline:
            raise _LimitExceeded(f"took longer than {run.limits.seconds:g} s")
    return Rendered("".join(parts), tuple(spans))


def _run_template(template: jinja2.Template, context: dict[str, Any], limits: RenderLimits) -> Rendered:
    run = _Run(limits)
    previous_run = _CURRENT.run
    previous_trace = sys.gettrace()
    _CURRENT.run = run
    sys.settrace(run.tracer)
    try:
        return _generate(template, context, run)
    except _LimitExceeded as exc:
        raise ChatTemplateError(str(exc), kind="limit") from None
    except jinja2.exceptions.TemplateError as exc:
        raised = type(exc) is jinja2.exceptions.TemplateError  # raise_exception's own class
        message = exc.message if exc.message is not None else str(exc)
        raise ChatTemplateError(
            message, kind="raised" if raised else "runtime", line=_template_line(exc.__traceback__)
        ) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
            RecursionError, MemoryError) as exc:
        raise ChatTemplateError(
            str(exc), kind="runtime", line=_template_line(exc.__traceback__), error_type=type(exc).__name__
        ) from None
    finally:
        sys.settrace(previous_trace)
        _CURRENT.run = previous_run


_RESERVED = frozenset({"messages", "tools", "documents", "add_generation_prompt"})


def render_template(
    source: str,
    messages: Sequence[Any],
    *,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    variables: Mapping[str, Any] | None = None,
    limits: RenderLimits | None = None,
) -> Rendered:
    """Render ``source`` like transformers' ``render_jinja_template`` for one conversation.

    ``variables`` are the template kwargs: the special-token strings (``bos_token`` ...) and
    extras such as ``enable_thinking`` (transformers passes ``{**special_tokens_map, **kwargs}``).

    >>> render_template("{{ bos_token }}{% for m in messages %}{{ m.content | tojson }}{% endfor %}",
    ...                 [{"role": "user", "content": "<b>&"}], variables={"bos_token": "<s>"}).text
    '<s>"<b>&"'
    """
    template = compile_template(source)
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when "
            "you want the model to continue the final message, and add_generation_prompt when you want to add a "
            "header that will prompt it to start a new assistant message instead.",
            kind="input",
        )
    extra = dict(variables or {})
    clash = _RESERVED & extra.keys()
    if clash:
        raise ChatTemplateError(f"variable {sorted(clash)[0]!r} is set by the renderer itself", kind="input")
    chat = _alias_reasoning(normalize_messages(messages))
    final = None
    if continue_final_message:
        key = continue_final_message if isinstance(continue_final_message, str) else "content"
        final = _tag_final_message(chat, source, key)
    context = {
        "messages": chat,
        "tools": _plain(list(tools), "tools") if tools is not None else None,
        "documents": _plain(list(documents), "documents") if documents is not None else None,
        "add_generation_prompt": add_generation_prompt,
        **_plain(extra, "variables"),
    }
    if documents is not None and not all(isinstance(d, dict) for d in context["documents"]):
        raise ChatTemplateError("Documents should be a list of dicts with 'title' and 'text' keys!", kind="input")
    out = _run_template(template, context, limits or RenderLimits())
    if final is not None:
        return Rendered(_cut_at_tag(out.text, final), ())
    return out
