"""The Chat tab's view-model: the conversation being edited, the template, and its render.

It follows the Inspect tab's tokenizer (`InspectViewModel.tokenizer_changed`); the template is
the tokenizer's own ``chat_template`` unless a ``.jinja`` file (or text) replaces it. Every edit
re-renders in the ``chat`` lane (latest request wins) with `tokviz.analysis.chat.render_chat`;
a template error arrives as `ChatViewModel.render_failed` with the jinja message and line, never
as an exception. The view-model holds plain data (message dicts, strings); the widgets only
call its methods and listen to its signals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from shiboken6 import isValid

from ..io.json_text import loads
from ._compat import emit
from .workers import CancelToken, Lanes, ShownGate

__all__ = ["ChatViewModel", "ChatView", "ROLES", "DEFAULT_MESSAGES"]

ROLES = ("system", "user", "assistant", "tool")
DEFAULT_MESSAGES: tuple[dict[str, str], ...] = (
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Translate «bonjour» to 中文 🙂"},
    {"role": "assistant", "content": "你好"},
    {"role": "user", "content": "Now say <|im_end|><s> and stop"},
)


@dataclass(frozen=True, slots=True)
class ChatView:
    """What the tab shows: the analysis result plus where its template came from."""

    result: Any  # tokviz.analysis.chat.ChatResult
    template_source: str
    tokenizer_name: str
    sanitized_pieces: tuple[str, ...] = ()  # the sanitised tokens' text, for display
    sanitized_control: tuple[bool, ...] = ()
    # the rendered tokens as drawn: the text under each offset, or the token's own characters
    # where those differ (a prepended ▁ gets the span of the next character); ``rendered_own``
    # flags the latter
    rendered_pieces: tuple[str, ...] = ()
    rendered_own: tuple[bool, ...] = ()


def _rendered_pieces(tok: Any, result: Any) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Each rendered token's text: the characters under its offset when they are the token's own
    bytes (`TokenizerFacts.surface`), else the token's own characters, flagged. A token that holds
    part of a character keeps the character under its offset (its bytes do not decode alone)."""
    from .viewmodel import token_surface

    surface = token_surface(tok)
    text = result.text
    pieces, own = [], []
    for k, (s, e) in enumerate(result.offsets):
        under = text[s:e]
        mine = surface(result.ids[k]) if surface is not None and not result.control[k] else None
        if mine is not None and mine != under.encode("utf-8"):
            try:
                pieces.append(mine.decode("utf-8"))
                own.append(True)
                continue
            except UnicodeDecodeError:
                pass
        pieces.append(under)
        own.append(False)
    return tuple(pieces), tuple(own)


def _pieces(tok: Any, ids: tuple[int, ...]) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Display text of each token: its exact bytes (added tokens: their literal)."""
    from ..analysis.healing import surface_index

    index = surface_index(tok)
    out, control = [], []
    for i in ids:
        surf = index.surface.get(i)
        out.append(surf.decode("utf-8", "replace") if surf is not None else (tok.id_to_token(i) or ""))
        control.append(surf is None)
    return tuple(out), tuple(control)


class ChatViewModel(QObject):
    messages_changed = Signal()
    result_changed = Signal(object)  # ChatView
    render_failed = Signal(str)  # the template error (one paragraph, with its line)
    template_changed = Signal(str)  # a description of the template in use
    own_templates_changed = Signal(list)  # the names of the tokenizer's own templates

    def __init__(self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self.inspect = inspect
        self._lanes = lanes or Lanes(self)
        self.messages: list[dict[str, Any]] = [dict(m) for m in DEFAULT_MESSAGES]
        self.tools_json = ""
        self.variables_json = ""
        self.add_generation_prompt = True
        self.continue_final_message = False
        self.template_text: str | None = None  # None: the tokenizer's own
        self.template_label = ""
        self.own_template_name: str | None = None  # one of the tokenizer's named templates (None: its default)
        self.view: ChatView | None = None
        self.error: str | None = None
        self._gate = ShownGate(self.refresh)  # a new Inspect tokenizer is rendered while the tab is shown
        if inspect is not None:
            inspect.tokenizer_changed.connect(lambda _p: self._tokenizer_changed())

    @property
    def tokenizer(self) -> Any:
        return getattr(self.inspect, "tokenizer", None)

    def is_busy(self) -> bool:
        return self._lanes.any_busy()

    # ------------------------------------------------------------------ messages
    def add_message(self, role: str = "user", content: str = "") -> None:
        self.messages.append({"role": role, "content": content})
        self._messages_edited()

    def remove_message(self, index: int) -> None:
        if 0 <= index < len(self.messages):
            del self.messages[index]
            self._messages_edited()

    def move_message(self, index: int, delta: int) -> None:
        j = index + delta
        if 0 <= index < len(self.messages) and 0 <= j < len(self.messages):
            self.messages[index], self.messages[j] = self.messages[j], self.messages[index]
            self._messages_edited()

    def set_message(self, index: int, *, role: str | None = None, content: str | None = None) -> None:
        if not 0 <= index < len(self.messages):
            return
        m = self.messages[index]
        if role is not None:
            m["role"] = role
        if content is not None:
            m["content"] = content
        self.refresh()

    def _messages_edited(self) -> None:
        emit(self.messages_changed)
        self.refresh()

    # ------------------------------------------------------------------ options
    def set_tools_json(self, text: str) -> None:
        self.tools_json = text
        self.refresh()

    def set_variables_json(self, text: str) -> None:
        self.variables_json = text
        self.refresh()

    def set_add_generation_prompt(self, on: bool) -> None:
        self.add_generation_prompt = bool(on)
        self.refresh()

    def set_continue_final_message(self, on: bool) -> None:
        self.continue_final_message = bool(on)
        self.refresh()

    def set_template(self, text: str | None, label: str = "") -> None:
        """Use ``text`` as the template (None: back to the tokenizer's own)."""
        self.template_text = text
        self.template_label = label
        emit(self.template_changed, self.describe_template())
        self.refresh()

    def own_templates(self) -> list[str]:
        """The names of the tokenizer's own templates (a folder may have several)."""
        from ..analysis.chat import tokenizer_templates

        tok = self.tokenizer
        return list(tokenizer_templates(tok)) if tok is not None else []

    def select_own_template(self, name: str | None) -> None:
        """Render with the tokenizer's template ``name`` (None: the one transformers would pick)."""
        self.own_template_name = name if name in self.own_templates() else None
        self.set_template(None)

    def _tokenizer_changed(self) -> None:
        self.own_template_name = None
        emit(self.own_templates_changed, self.own_templates())
        self._gate.request()

    def set_active(self, on: bool) -> None:
        """The tab is shown (render for a tokenizer chosen meanwhile) or hidden."""
        self._gate.set_shown(on)

    def load_template_file(self, path: str) -> None:
        from ..analysis.chat import load_template

        try:
            self.set_template(load_template(path), path)
        except ValueError as exc:
            self._fail(str(exc))

    def describe_template(self) -> str:
        if self.template_text is not None:
            return f"template: {self.template_label or 'custom'} ({len(self.template_text):,} chars)"
        from ..analysis.chat import tokenizer_template

        tok = self.tokenizer
        if tok is None:
            return "no tokenizer"
        own = tokenizer_template(tok)
        if own is None:
            return "this tokenizer has no chat_template: open a .jinja file"
        if self.own_template_name is not None:
            text = self.own_templates_text().get(self.own_template_name, "")
            return f"template: the tokenizer's {self.own_template_name!r} template ({len(text):,} chars)"
        return f"template: the tokenizer's chat_template ({len(own):,} chars)"

    def own_templates_text(self) -> dict[str, str]:
        from ..analysis.chat import tokenizer_templates

        tok = self.tokenizer
        return tokenizer_templates(tok) if tok is not None else {}

    # ------------------------------------------------------------------ render
    def _parse_json(self, text: str, what: str, kind: type) -> Any:
        if not text.strip():
            return None
        value = loads(text, source=what)  # the bounded reader: a TokvizFormatError is a ValueError
        if not isinstance(value, kind):
            raise ValueError(f"{what}: expected a JSON {'list' if kind is list else 'object'}")
        return value

    def refresh(self) -> None:
        tok = self.tokenizer
        emit(self.template_changed, self.describe_template())
        if tok is None:
            return
        try:
            tools = self._parse_json(self.tools_json, "tools", list)
            variables = self._parse_json(self.variables_json, "variables", dict) or {}
        except ValueError as exc:
            self._fail(str(exc))
            return
        messages = [dict(m) for m in self.messages]
        template, agp, cont = self.template_text, self.add_generation_prompt, self.continue_final_message
        label = self.template_label if template is not None else "tokenizer"
        if template is None:
            from ..analysis.chat import pick_template
            from ..analysis.chat_render import ChatTemplateError

            try:
                template = pick_template(tok, self.own_template_name, tools=tools)
            except ChatTemplateError as exc:
                self._fail(str(exc))
                return
            if self.own_template_name is not None:
                label = f"tokenizer ({self.own_template_name})"
        name = getattr(self.inspect, "tokenizer_name", "")

        def prepare():  # noqa: ANN202
            def job(_token: CancelToken) -> ChatView:
                from ..analysis.chat import render_chat

                result = render_chat(tok, messages, template=template, tools=tools,
                                     add_generation_prompt=agp, continue_final_message=cont, variables=variables)
                pieces, control = _pieces(tok, result.sanitized_ids or ())
                return ChatView(result, label, name, pieces, control, *_rendered_pieces(tok, result))

            return job

        self._lanes.submit("chat", prepare, self._done, self._fail)

    def _done(self, view: ChatView) -> None:
        if not isValid(self):
            return  # the tab was closed while the render ran (the lanes belong to Inspect)
        self.view = view
        self.error = None
        emit(self.result_changed, view)

    def _fail(self, message: str) -> None:
        if not isValid(self):
            return
        self.error = message
        emit(self.render_failed, message)
