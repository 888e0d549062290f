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

Beyond transformers (safety only; a normal template renders the same): the environment is
`tokviz.analysis.chat_bounds.BoundedSandbox`, which bounds every operation (sizes checked before
anything is built, a watchdog for the deadline, call depth and template nesting), and the output
is limited as it streams. Errors are `ChatTemplateError` with the template line when jinja knows
it; its text is one line of bounded length (``message`` keeps the full text).
"""

from __future__ import annotations

import json
import threading
import time
import warnings
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

from ..io.json_text import MAX_JSON_DEPTH
from .chat_bounds import (
    COMPILE_LIMITS,
    MAX_TEMPLATE_CHARS,
    BoundedSandbox,
    LimitExceeded,
    RenderLimits,
    bounded_filters,
    current_guard,
    guarded,
    json_size,
)

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
        shown = str(message).replace("\r", "\\r").replace("\n", "\\n")
        if len(shown) > _SHOWN_CHARS:  # raise_exception(huge) or a whole render quoted in the message
            shown = f"{shown[:_SHOWN_CHARS]}... ({len(shown) - _SHOWN_CHARS:,} more characters)"
        super().__init__(f"chat template {_KIND_WORDS.get(kind, kind)}: {what}{shown}{where}")


_SHOWN_CHARS = 400


_KIND_WORDS = {
    "syntax": "does not parse",
    "raised": "raised",
    "runtime": "failed",
    "input": "cannot render these messages",
    "limit": "stopped",
}


@dataclass(frozen=True, slots=True)
class Rendered:
    """One render: the text and the ``{% generation %}`` spans (character offsets in ``text``)."""

    text: str
    generation_spans: tuple[tuple[int, int], ...] = field(default=())


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


class _SandboxEnv(BoundedSandbox):
    """transformers' environment (an ImmutableSandboxedEnvironment) with every operation
    bounded (`tokviz.analysis.chat_bounds`)."""


def _raise_exception(message: Any) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
    # transformers' override: jinja's own tojson escapes < > & ' for HTML, chat templates must not
    guard = current_guard()
    seps = tuple(separators) if isinstance(separators, (list, tuple)) and len(separators) == 2 else None
    if isinstance(indent, (int, str)) and not isinstance(indent, bool):
        guard.chars(len(indent) if isinstance(indent, str) else indent, "tojson")
    size = json_size(x, guard.limits.max_chars, indent=indent if isinstance(indent, (int, str)) else None,
                     separators=seps)  # type: ignore[arg-type]
    guard.chars(size * (6 if ensure_ascii else 1), "tojson")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    if isinstance(fmt, str):
        current_guard().chars(len(fmt) * 32, "strftime_now")  # %c is the longest expansion: 2 -> 24
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
    env.filters.update(bounded_filters({"tojson": _tojson}))
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
    if len(source) > MAX_TEMPLATE_CHARS:
        raise ChatTemplateError(
            f"the template has {len(source):,} characters (at most {MAX_TEMPLATE_CHARS:,}; real ones have under 20,000)",
            kind="limit",
        )
    try:
        with guarded(COMPILE_LIMITS), warnings.catch_warnings():
            # Python's compiler warns about the code jinja generates ("'int' object is not
            # subscriptable" for ``{{ 0[1:] }}``); the render raises that error if it happens
            warnings.simplefilter("ignore", SyntaxWarning)
            return _environment().from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise ChatTemplateError(exc.message or str(exc), kind="syntax", line=exc.lineno) from None
    except LimitExceeded as exc:
        raise ChatTemplateError(str(exc), kind="limit") from None
    except (SyntaxError, ValueError, OverflowError, MemoryError) as exc:
        # Python refusing the code jinja generated (too many nested parentheses) or a literal
        # (an integer of more than 4,300 digits)
        raise ChatTemplateError(f"{type(exc).__name__}: {exc}", kind="syntax") from None


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
def _plain(value: Any, where: str, depth: int = 0) -> Any:
    """A copy of ``value`` made of JSON types only (transformers rebuilds every input this way;
    here anything else is refused instead of becoming a placeholder string), at most
    `MAX_JSON_DEPTH` deep as the JSON readers allow."""
    if depth > MAX_JSON_DEPTH:
        raise ChatTemplateError(f"{where}: nested more than {MAX_JSON_DEPTH} levels deep", kind="input")
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
        return {_plain(k, where, depth + 1): _plain(v, where, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, where, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v, where, depth + 1) for v in value)
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


class _Run:
    """The state of one render: its limits and the generation spans waiting for a position."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.pending_generation: list[str] = []


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
            raise LimitExceeded(f"output longer than {run.limits.max_chars:,} characters")
    return Rendered("".join(parts), tuple(spans))


#: errors a template can raise by what it does with its values (an assertion: jinja's truncate)
_RUNTIME_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
                   MemoryError, AssertionError)


def _run_template(template: jinja2.Template, context: dict[str, Any], limits: RenderLimits) -> Rendered:
    run = _Run(limits)
    previous_run = _CURRENT.run
    _CURRENT.run = run
    try:
        with guarded(limits):
            return _generate(template, context, run)
    except LimitExceeded as exc:
        raise ChatTemplateError(str(exc), kind="limit") from None
    except jinja2.exceptions.TemplateError as exc:
        raised = type(exc) is jinja2.exceptions.TemplateError  # raise_exception's own class
        message = exc.message if exc.message is not None else str(exc)
        raise ChatTemplateError(
            message, kind="raised" if raised else "runtime", line=_template_line(exc.__traceback__)
        ) from None
    except _RUNTIME_ERRORS as exc:
        raise ChatTemplateError(
            str(exc), kind="runtime", line=_template_line(exc.__traceback__), error_type=type(exc).__name__
        ) from None
    finally:
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
