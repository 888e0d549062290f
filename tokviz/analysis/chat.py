"""A chat as the model sees it: template render, ids, role spans, the sanitised variant, eleven lints.

`tokviz.analysis.chat_render` renders (transformers' environment); this module adds the
tokenizer: the special-token variables, the encode with ``add_special_tokens=False`` (the template
owns BOS), where each message's content landed, transformers' ``sanitize_control_tokens`` variant
(control literals in user strings encoded as text) and ten lints (docs/chat-templates-and-healing.md):

====================  ========================================================================
double-bos            the render holds the BOS literal and the tokenizer adds BOS again
generation-prompt     ``add_generation_prompt`` is never read, or changes nothing
control-in-user       a control literal inside user/tool content (plain vs sanitised ids)
non-deterministic     the template calls ``strftime_now``
raises                ``raise_exception`` fired for these messages (or with the other
                      generation-prompt setting)
extra-variables       names outside the standard set (e.g. ``enable_thinking``)
trailing-whitespace   the generation prompt ends in whitespace (an unstable prefix: see `analysis.healing`)
missing-end-of-turn   an assistant turn without an end-of-turn / EOS literal after it
literal-not-a-token   a ``<...>`` / ``[...]`` literal of the template that is not one token
renderer-divergence   ``tojson`` / loop controls / ``namespace`` / ``generation``: renderers differ
empty-special         the template reads ``bos_token`` / ``eos_token`` and it renders as ``''``
====================  ========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from weakref import WeakKeyDictionary

import jinja2.nodes

from ..engine.tokenizer import Tokenizer
from ..io.textfile import read_text_file
from .chat_render import (
    ChatTemplateError,
    RenderLimits,
    _environment,
    render_template,
    template_literal_text,
    template_variables,
)
from .facts import TokenizerFacts

__all__ = [
    "ChatLint",
    "ChatResult",
    "ContentSpan",
    "control_tokens",
    "encode_as_text",
    "lint_chat",
    "load_template",
    "raises_lint",
    "render_chat",
    "special_token_variables",
    "tokenizer_template",
    "tokenizer_templates",
    "pick_template",
]

# transformers' private-use markers around control literals found in user strings
_MARK_START, _MARK_END = "\U000f0000", "\U000f0001"
_SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_STANDARD = frozenset(
    {"messages", "tools", "documents", "add_generation_prompt", *_SPECIAL_NAMES,
     "raise_exception", "strftime_now", "dict", "namespace", "range", "lipsum", "cycler", "joiner"}
)
# literals in a template that look like control tokens: <|x|>, <x>, </x>, [X], [/X]
_CONTROL_LIKE = re.compile(r"<\|[^<>|\s]{1,40}\|>|</?[A-Za-z_][A-Za-z0-9_:.-]{0,40}>|\[/?[A-Z][A-Z_]{1,30}\]")
_END_HINT = re.compile(r"end|eot|eos|</s>|<\|im_end\|>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ContentSpan:
    """Where message ``index`` (``role``) put its content in the rendered text (code points)."""

    index: int
    role: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ChatLint:
    """One finding: ``id`` (see the module table), a sentence, and the evidence it rests on."""

    id: str
    message: str
    evidence: str = ""
    ids: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "message": self.message, "evidence": self.evidence, "ids": list(self.ids)}


@dataclass(frozen=True, slots=True)
class ChatResult:
    """A rendered chat and its analysis."""

    text: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    control: tuple[bool, ...]  # per token: a special / control literal
    spans: tuple[ContentSpan, ...]
    sanitized_ids: tuple[int, ...] | None
    sanitized_tokens: tuple[str, ...]
    sanitized_error: str | None
    lints: tuple[ChatLint, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "ids": list(self.ids),
            "lints": [{"id": lint.id, "message": lint.message} for lint in self.lints],
            "spans": [{"index": s.index, "role": s.role, "start": s.start, "end": s.end} for s in self.spans],
            "sanitized_ids": list(self.sanitized_ids) if self.sanitized_ids is not None else None,
            "sanitized_error": self.sanitized_error,
        }


# ---------------------------------------------------------------------------- template sources
def load_template(path: str) -> str:
    """A ``.jinja`` file's text, byte-exact (a template's whitespace is output)."""
    return read_text_file(path).text


def tokenizer_template(tok: Tokenizer) -> str | None:
    """The tokenizer's own template: tokenizer_config.json's ``chat_template``, or a GGUF file's
    ``tokenizer.chat_template`` when a loader kept it in the config's extras."""
    own = tok.config.chat_template
    if own is None:
        for key in ("chat_template", "tokenizer.chat_template"):
            value = tok.config.extra.get(key)
            if isinstance(value, str):
                return value
    return own


def tokenizer_templates(tok: Tokenizer) -> dict[str, str]:
    """Every template the tokenizer's files name, ``"default"`` first: a folder's named templates
    (tokenizer_config.json's list, additional_chat_templates/), else its one template."""
    named = tok.config.extra.get("chat_templates")
    if isinstance(named, dict) and named:
        return dict(named)
    own = tokenizer_template(tok)
    return {"default": own} if own is not None else {}


def pick_template(tok: Tokenizer, name: str | None = None, *, tools: Sequence[Any] | None = None) -> str | None:
    """The tokenizer's template to render with, chosen as transformers' ``get_chat_template``
    does: the one called ``name``; else ``"tool_use"`` when tools are given and it exists; else
    ``"default"`` (else the only one). An unknown ``name`` raises `ChatTemplateError`."""
    templates = tokenizer_templates(tok)
    if name is not None:
        if name not in templates:
            known = ", ".join(templates) or "none"
            raise ChatTemplateError(f"no chat template named {name!r} (this tokenizer has: {known})", kind="input")
        return templates[name]
    if tools is not None and "tool_use" in templates:
        return templates["tool_use"]
    if "default" in templates:
        return templates["default"]
    return next(iter(templates.values()), None)


def special_token_variables(tok: Tokenizer) -> dict[str, str]:
    """transformers' ``special_tokens_map`` as far as the tokenizer's config knows it."""
    cfg = tok.config
    fields = {"bos_token": cfg.bos_token, "eos_token": cfg.eos_token, "unk_token": cfg.unk_token,
              "pad_token": cfg.pad_token}
    out: dict[str, str] = {}
    for name in _SPECIAL_NAMES:
        value = fields.get(name)
        if value is None:
            value = cfg.extra.get(name) if isinstance(cfg.extra.get(name), str) else None
        if value is not None:
            out[name] = value
    return out


# ---------------------------------------------------------------------------- encoding
def encode_chat(tok: Tokenizer, text: str) -> Any:
    """The render encoded as transformers does: every added token honoured, no BOS/EOS added."""
    return tok.encode(text, add_special_tokens=False, allowed_special="all")


_PLAIN: WeakKeyDictionary[Tokenizer, Tokenizer] = WeakKeyDictionary()


def _without_added_tokens(tok: Tokenizer) -> Tokenizer:
    """The same pipeline with no added tokens (normalizer, pre-tokenizer, model only)."""
    plain = _PLAIN.get(tok)
    if plain is None:
        plain = Tokenizer(
            tok.model, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer, decoder=tok.decoder,
            special_policy=tok.special_policy, name=tok.name, source=tok.source, config=tok.config,
        )
        _PLAIN[tok] = plain
    return plain


def encode_as_text(tok: Tokenizer, text: str) -> list[int]:
    """``text`` with no added token matched, special or not (transformers'
    ``_encode_without_added_tokens``: normalizer, pre-tokenizer and model only)."""
    return _without_added_tokens(tok).encode_ids(text)


def control_tokens(tok: Tokenizer, template: str) -> tuple[str, ...]:
    """transformers' control tokens for sanitising: every special added token, plus the other
    added tokens that occur in the template's literal text (whitespace tokens excepted)."""
    literal = template_literal_text(template)
    return tuple(
        t.content for t in tok.added_tokens
        if t.content and (t.special or (t.content in literal and not t.content.isspace()))
    )


def _alternation(literals: Sequence[str]) -> str:
    return "|".join(re.escape(c) for c in sorted(literals, key=len, reverse=True)) or "(?!)"


def _mark(obj: Any, pattern: re.Pattern[str]) -> Any:
    """Wrap control literals in user strings with the markers (markers already there are dropped)."""
    if isinstance(obj, str):
        obj = obj.replace(_MARK_START, "").replace(_MARK_END, "")
        return pattern.sub(lambda m: _MARK_START + m.group() + _MARK_END, obj)
    if isinstance(obj, dict):
        return {k: _mark(v, pattern) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_mark(v, pattern) for v in obj]
    return obj


def _encode_piece(tok: Tokenizer, piece: str, as_text: bool, newline_ids: list[int]) -> list[int]:
    # transformers encodes a mid-chat piece after a newline and drops the newline's ids, so that a
    # SentencePiece-style prefix space is not added at the piece start
    def enc(s: str) -> list[int]:
        return encode_as_text(tok, s) if as_text else list(encode_chat(tok, s).ids)

    ids = enc("\n" + piece)
    if ids[: len(newline_ids)] == newline_ids:
        return ids[len(newline_ids):]
    return enc(piece)


def _encode_marked(tok: Tokenizer, chat: str) -> list[int]:
    """transformers' ``encode_marked_chat``: marked literals as text, the rest as usual."""
    every = [t.content for t in tok.added_tokens if t.content]
    markers = re.compile(f"{_MARK_START}({_alternation(every)}){_MARK_END}|[{_MARK_START}{_MARK_END}]")
    pieces = markers.split(chat)
    newline_ids = list(encode_chat(tok, "\n").ids)
    ids = list(encode_chat(tok, pieces[0]).ids)
    for i, piece in enumerate(pieces[1:], start=1):
        if not piece:
            continue
        as_text = i % 2 == 1
        piece_ids = _encode_piece(tok, piece, as_text, newline_ids)
        if as_text and tok.token_to_id(piece) in piece_ids:
            raise ValueError(f"Can't sanitize {piece!r}: the tokenizer produces it from plain text")
        ids += piece_ids
    return ids


# ---------------------------------------------------------------------------- render + analyse
def _content_spans(text: str, messages: Sequence[Mapping[str, Any]]) -> tuple[ContentSpan, ...]:
    """Each string content found in order in the render (as is, else stripped)."""
    spans = []
    pos = 0
    for i, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        if not isinstance(content, str) or not content.strip():
            continue
        for probe in (content, content.strip()):
            at = text.find(probe, pos)
            if at >= 0:
                spans.append(ContentSpan(i, str(m.get("role", "")), at, at + len(probe)))
                pos = at + len(probe)
                break
    return tuple(spans)


def render_chat(
    tok: Tokenizer,
    messages: Sequence[Any],
    *,
    template: str | None = None,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    variables: Mapping[str, Any] | None = None,
    limits: RenderLimits | None = None,
    lint: bool = True,
) -> ChatResult:
    """Render ``messages`` with ``template`` (default: the tokenizer's own) and analyse the result.

    Raises `ChatTemplateError` when the template does not parse or raises for these messages.
    """
    source = template if template is not None else tokenizer_template(tok)
    if source is None:
        raise ChatTemplateError("this tokenizer has no chat_template; give one (a .jinja file)", kind="input")
    user_vars = dict(variables or {})
    kw = dict(tools=tools, documents=documents, continue_final_message=continue_final_message, limits=limits)
    all_vars = {**special_token_variables(tok), **user_vars}
    rendered = render_template(source, messages, add_generation_prompt=add_generation_prompt, variables=all_vars, **kw)
    enc = encode_chat(tok, rendered.text)
    special = TokenizerFacts.of(tok).special_ids  # added special tokens and a .model's control pieces
    control = tuple(bool(m) or i in special for i, m in zip(enc.ids, enc.special_tokens_mask))
    sanitized_ids: tuple[int, ...] | None = None
    sanitized_error = None
    try:
        pattern = re.compile(_alternation(control_tokens(tok, source)))
        marked = render_template(
            source, _mark(list(messages), pattern), add_generation_prompt=add_generation_prompt,
            variables={**special_token_variables(tok), **_mark(user_vars, pattern)},
            **{**kw, "tools": _mark(tools, pattern), "documents": _mark(documents, pattern)},
        )
        sanitized_ids = tuple(_encode_marked(tok, marked.text))
    except (ChatTemplateError, ValueError) as exc:
        sanitized_error = str(exc)
    result = ChatResult(
        text=rendered.text,
        ids=tuple(enc.ids),
        tokens=tuple(enc.tokens),
        offsets=tuple(enc.offsets),
        control=control,
        spans=_content_spans(rendered.text, messages),
        sanitized_ids=sanitized_ids,
        sanitized_tokens=tuple(tok.id_to_token(i) or "" for i in sanitized_ids or ()),
        sanitized_error=sanitized_error,
    )
    if not lint:
        return result
    lints = lint_chat(tok, source, messages, result, tools=tools, documents=documents,
                      add_generation_prompt=add_generation_prompt, variables=all_vars, limits=limits)
    return replace(result, lints=tuple(lints))


# ---------------------------------------------------------------------------- lints
def _bos_id(tok: Tokenizer) -> int | None:
    bos = tok.config.bos_token
    return tok.token_to_id(bos) if bos else None


def _lint_double_bos(tok: Tokenizer, result: ChatResult) -> list[ChatLint]:
    bos = tok.config.bos_token
    bos_id = _bos_id(tok)
    if not bos or bos_id is None or bos not in result.text:
        return []
    with_specials = tok.encode(result.text, add_special_tokens=True, allowed_special="all").ids
    if with_specials.count(bos_id) <= list(result.ids).count(bos_id):
        return []
    return [ChatLint(
        "double-bos",
        f"the render already holds {bos!r} and the tokenizer adds BOS: encoding it with add_special_tokens=True "
        f"gives {with_specials.count(bos_id)} BOS (use add_special_tokens=False, as apply_chat_template does)",
        evidence=f"add_special_tokens=True: {with_specials[:6]}  False: {list(result.ids[:6])}",
        ids=tuple(with_specials[:6]),
    )]


def _lint_generation_prompt(source: str, render_other: str | None, result: ChatResult, agp: bool) -> list[ChatLint]:
    if "add_generation_prompt" not in template_variables(source):
        return [ChatLint("generation-prompt", "the template never reads add_generation_prompt: the "
                         "assistant header is always or never written", evidence="undeclared variables: "
                         + ", ".join(sorted(template_variables(source))))]
    if render_other is not None and render_other == result.text:
        return [ChatLint("generation-prompt", f"add_generation_prompt={not agp} renders the same text "
                         "for these messages", evidence=repr(result.text[-60:]))]
    return []


def _lint_control_in_user(tok: Tokenizer, source: str, messages: Sequence[Any], result: ChatResult) -> list[ChatLint]:
    literals = control_tokens(tok, source)
    if not literals:
        return []
    pattern = re.compile(_alternation(literals))
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "tool"):
            continue
        content = m.get("content")
        found = sorted({x.group() for x in pattern.finditer(content)}) if isinstance(content, str) else []
        if found:
            plain = len(result.ids)
            clean = len(result.sanitized_ids) if result.sanitized_ids is not None else None
            out.append(ChatLint(
                "control-in-user",
                f"message {i} ({m['role']}) holds control literal(s) {', '.join(found)}: they become control "
                f"tokens ({plain} tokens; sanitised: {clean if clean is not None else result.sanitized_error})",
                evidence=content[:120],
                ids=tuple(tok.token_to_id(f) or -1 for f in found),
            ))
    return out


def _lint_end_of_turn(tok: Tokenizer, result: ChatResult) -> list[ChatLint]:
    eos = tok.config.eos_token
    enders = {t.content for t in tok.added_tokens if t.special and _END_HINT.search(t.content)}
    if eos:
        enders.add(eos)
    if not enders:
        return []
    out = []
    spans = result.spans
    for k, span in enumerate(spans):
        if span.role != "assistant":
            continue
        stop = spans[k + 1].start if k + 1 < len(spans) else len(result.text)
        after = result.text[span.end:stop]
        if not any(e in after for e in enders) and (k + 1 < len(spans) or after):
            out.append(ChatLint("missing-end-of-turn", f"assistant message {span.index} is not followed by an "
                                "end-of-turn literal (" + ", ".join(sorted(enders)) + ")", evidence=repr(after[:60])))
    return out


def _lint_literals(tok: Tokenizer, source: str) -> list[ChatLint]:
    out = []
    seen: set[str] = set()
    for lit in _CONTROL_LIKE.findall(template_literal_text(source)):
        if lit in seen:
            continue
        seen.add(lit)
        if tok.token_to_id(lit) is None:
            ids = encode_chat(tok, lit).ids
            out.append(ChatLint("literal-not-a-token", f"the template writes {lit!r}, which is not a token: "
                                f"it is encoded as text ({len(ids)} tokens)", evidence=lit, ids=tuple(ids)))
    return out


def _names_used(source: str) -> set[str]:
    """Every name the template loads, globals included (``find_undeclared_variables`` omits globals)."""
    return {n.name for n in _environment().parse(source).find_all(jinja2.nodes.Name) if n.ctx == "load"}


def _lint_divergence(source: str) -> list[ChatLint]:
    ast = _environment().parse(source)
    used = []
    if any(f.name == "tojson" for f in ast.find_all(jinja2.nodes.Filter)):
        used.append("tojson (transformers: json.dumps without HTML escapes)")
    if any(True for _ in ast.find_all((jinja2.nodes.Break, jinja2.nodes.Continue))):
        used.append("break/continue (loopcontrols)")
    if "namespace" in _names_used(source):
        used.append("namespace")
    if re.search(r"\{%-?\s*generation\s*-?%\}", source):
        used.append("{% generation %}")
    if not used:
        return []
    return [ChatLint("renderer-divergence", "other renderers (plain jinja, TokenScope, minja) may render this "
                     "differently: the template uses " + ", ".join(used), evidence=", ".join(used))]


def lint_chat(
    tok: Tokenizer,
    source: str,
    messages: Sequence[Any],
    result: ChatResult,
    *,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    add_generation_prompt: bool = False,
    variables: Mapping[str, Any] | None = None,
    limits: RenderLimits | None = None,
) -> list[ChatLint]:
    """The eleven lints of the module table for one render (``result``) of ``messages``."""
    names = template_variables(source)
    lints: list[ChatLint] = []
    lints += _lint_double_bos(tok, result)
    other: str | None = None
    with_prompt = result.text if add_generation_prompt else None
    try:
        other = render_template(source, messages, tools=tools, documents=documents,
                                add_generation_prompt=not add_generation_prompt, variables=variables, limits=limits).text
        if not add_generation_prompt:
            with_prompt = other
    except ChatTemplateError as exc:
        if exc.kind == "raised":
            lints.append(ChatLint("raises", f"with add_generation_prompt={not add_generation_prompt} the template "
                                  f"raises: {exc.message}", evidence=str(exc)))
    lints += _lint_generation_prompt(source, other, result, add_generation_prompt)
    lints += _lint_control_in_user(tok, source, messages, result)
    if "strftime_now" in _names_used(source):
        lints.append(ChatLint("non-deterministic", "the template calls strftime_now: the render depends on the "
                              "date (tokens change from day to day)", evidence="strftime_now"))
    assigned = {n.name for n in _environment().parse(source).find_all(jinja2.nodes.Name) if n.ctx == "store"}
    extra = sorted(names - _STANDARD - assigned)
    if extra:
        lints.append(ChatLint("extra-variables", "the template reads variables beyond the standard set: "
                              + ", ".join(extra) + " (give them as template variables: --var NAME=JSON, or the Variables box)", evidence=", ".join(extra)))
    if with_prompt is not None and with_prompt[-1:].isspace():
        tail = with_prompt[len(with_prompt.rstrip()):]
        lints.append(ChatLint("trailing-whitespace", f"the generation prompt ends in whitespace {tail!r}: the "
                              "model's first token cannot merge with it (prefix instability)", evidence=repr(with_prompt[-40:])))
    lints += _lint_end_of_turn(tok, result)
    lints += _lint_literals(tok, source)
    lints += _lint_divergence(source)
    lints += _lint_empty_special(names, variables or {})
    return lints


def _lint_empty_special(names: frozenset[str], variables: Mapping[str, Any]) -> list[ChatLint]:
    """``{{ bos_token }}`` with no BOS known renders as ``''`` (transformers gives ``''`` too): the
    prompt then lacks the token the model was trained to see (a folder without its
    tokenizer_config.json / special_tokens_map.json, say)."""
    out = []
    for name in ("bos_token", "eos_token"):
        if name in names and not variables.get(name):
            out.append(ChatLint(
                "empty-special",
                f"the template writes {{{{ {name} }}}}, but this tokenizer has no {name}: it renders as '' "
                "(load the folder with its tokenizer_config.json / special_tokens_map.json, or give "
                f"--var {name}='\"...\"')",
                evidence=name,
            ))
    return out


def raises_lint(exc: ChatTemplateError) -> ChatLint:
    """Lint 5 for a render that failed outright (the GUI shows it in place of a result)."""
    return ChatLint("raises", exc.message, evidence=str(exc))
