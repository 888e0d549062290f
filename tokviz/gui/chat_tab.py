"""The Chat tab: a conversation, its chat-template render over the tokens, the lints.

Left: the message editor (role, content; add, remove, reorder), the tools JSON, extra template
variables and the template in use (the tokenizer's own, or a ``.jinja`` file). Right: the render
as the model sees it, each token a shaded cell coloured by the role whose content it carries
(template text in grey, control tokens in the special colour), the sanitised variant beside it
(user literals encoded as text, as transformers' ``sanitize_control_tokens``), and the lints with
their evidence. Everything goes through `ChatViewModel`.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from .chat_viewmodel import ROLES, ChatView, ChatViewModel
from .display import counted
from .theme import mono_font
from .widgets.exact_edit import ExactTextEdit
from .widgets.form import header

__all__ = ["ChatTab", "ROLE_HUES", "tokens_html"]

# hue per role (degrees); template text between contents is grey
ROLE_HUES = {"system": 30.0, "user": 210.0, "assistant": 125.0, "tool": 280.0}


def _role_color(role: str | None, shade: int, dark: bool) -> QColor:
    if role is None:
        light = (0.20, 0.26) if dark else (0.93, 0.86)
        return QColor.fromHslF(0.0, 0.0, light[shade])
    hue = ROLE_HUES.get(role, 0.0) / 360.0
    if dark:
        return QColor.fromHslF(hue, 0.45, (0.24, 0.32)[shade])
    return QColor.fromHslF(hue, 0.75, (0.88, 0.79)[shade])


def _cell(piece: str) -> str:
    shown = piece.replace("\n", "↵\n").replace("\t", "→")
    return html.escape(shown) if shown else "∅"


def tokens_html(pieces: list[str], roles: list[str | None], control: list[bool], theme: Any,
                own: list[bool] | None = None) -> str:
    """HTML of token cells: role background (two shades so neighbours differ), control tokens
    in the special colours and bold; ``own`` marks tokens drawn as their own characters because
    the text under their offset is not theirs (underlined, in the bracket colour)."""
    dark = bool(getattr(theme, "dark", False))
    out = []
    prev_role: object = object()
    shade = 0
    owns = own if own is not None else [False] * len(pieces)
    for piece, role, is_control, is_own in zip(pieces, roles, control, owns):
        shade = 1 - shade if role == prev_role else 0
        prev_role = role
        if is_control:
            bg, fg = theme.special_bg.name(), theme.special_fg.name()
            out.append(f"<span style='background:{bg}; color:{fg}; font-weight:bold'>{_cell(piece)}</span>")
        else:
            bg = _role_color(role, shade, dark).name()
            mark = f"; color:{theme.bracket.name()}; text-decoration:underline" if is_own else ""
            out.append(f"<span style='background:{bg}{mark}'>{_cell(piece)}</span>")
    return "<div style='white-space: pre-wrap'>" + "".join(out) + "</div>"


def _roles_of_tokens(result: Any) -> list[str | None]:
    """The role of the content span each token starts in (None: template text)."""
    spans = result.spans
    roles: list[str | None] = []
    k = 0
    for start, _end in result.offsets:
        while k < len(spans) and spans[k].end <= start:
            k += 1
        roles.append(spans[k].role if k < len(spans) and spans[k].start <= start < spans[k].end else None)
    return roles


class ChatTab(QWidget):
    def __init__(self, inspect_vm: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lanes = getattr(inspect_vm, "_lanes", None)  # share the Inspect lanes: one "busy" for the app
        self.vm = ChatViewModel(self, inspect=inspect_vm, lanes=lanes)
        self.theme: Any = None
        self._loading = False
        self._row = -1  # the message shown in the editor (its edits go there)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._commit_content)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self._build_editor())
        split.addWidget(self._build_results())
        split.setStretchFactor(1, 3)
        split.setSizes([330, 900])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)
        self._wire()
        self._fill_list()
        self.list.setCurrentRow(0)
        self.vm.set_active(False)  # until shown: work follows the eye

    def showEvent(self, event) -> None:  # noqa: ANN001, N802
        super().showEvent(event)
        self.vm.set_active(True)

    def hideEvent(self, event) -> None:  # noqa: ANN001, N802
        super().hideEvent(event)
        self.vm.set_active(False)

    # ------------------------------------------------------------------ building
    def _build_editor(self) -> QWidget:
        """The left column: messages, the selected message's role and content, tools, options."""
        self.list = QListWidget()
        self.list.setToolTip("The conversation; select a message to edit it")
        self.list.currentRowChanged.connect(self._on_row)
        self.role = QComboBox()
        self.role.addItems(ROLES)
        self.role.setEditable(True)
        self.role.setToolTip("Role of the selected message (type another role if the template knows it)")
        self.role.currentTextChanged.connect(self._on_role)
        self.content = ExactTextEdit()  # the message exactly: CR, CRLF, NBSP, a BOM ... stay
        self.content.setFont(mono_font())
        self.content.setPlaceholderText("Message content")
        self.content.inserts_dropped_files = True
        self.content.edited.connect(lambda *_e: None if self._loading else self._timer.start())
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(6, 4, 6, 4)
        ll.addWidget(header("Messages", "role · content"))
        ll.addWidget(self.list, 2)
        row = QHBoxLayout()
        row.addWidget(QLabel("Role"))
        row.addWidget(self.role, 1)
        ll.addLayout(row)
        ll.addWidget(self.content, 2)
        ll.addLayout(self._build_message_buttons())
        self._build_options(ll)
        return left

    def _build_message_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        for text, tip, slot in (
            ("Add", "Add a message after the selected one (Ctrl+N)", self._add),
            ("Remove", "Remove the selected message", lambda: self.vm.remove_message(self.list.currentRow())),
            ("Up", "Move the selected message up", lambda: self._move(-1)),
            ("Down", "Move the selected message down", lambda: self._move(1)),
        ):
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            buttons.addWidget(b)
        return buttons

    def _build_options(self, ll: QVBoxLayout) -> None:
        """Tools, variables, the generation-prompt options and the template choice, into ``ll``."""
        self.tools = ExactTextEdit()  # JSON whose strings reach the prompt: kept exactly too
        self.tools.setFont(mono_font())
        self.tools.setPlaceholderText('[{"type": "function", "function": {"name": ..., "parameters": {...}}}]')
        self.tools.setMaximumHeight(90)
        self.tools.inserts_dropped_files = True
        self.tools.edited.connect(lambda *_e: self.vm.set_tools_json(self.tools.exact_text()))
        self.variables = QLineEdit()
        self.variables.setPlaceholderText('{"enable_thinking": false}')
        self.variables.setToolTip("Extra template variables as a JSON object")
        self.variables.editingFinished.connect(lambda: self.vm.set_variables_json(self.variables.text()))
        self.agp = QCheckBox("Add generation prompt")
        self.agp.setChecked(self.vm.add_generation_prompt)
        self.agp.toggled.connect(self.vm.set_add_generation_prompt)
        self.cont = QCheckBox("Continue final message")
        self.cont.setToolTip("Render so that the model continues the last message (excludes the generation prompt)")
        self.cont.toggled.connect(self._on_continue)
        self.template_label = QLabel()
        self.template_label.setWordWrap(True)
        self.template_label.setStyleSheet("color: gray")
        open_tpl = QPushButton("Open template…")
        open_tpl.setToolTip("Render with a .jinja file instead of the tokenizer's chat_template")
        open_tpl.clicked.connect(self._open_template)
        own_tpl = QPushButton("Tokenizer's")
        own_tpl.setToolTip("Back to the tokenizer's own chat_template")
        own_tpl.clicked.connect(lambda: self.vm.set_template(None))
        self.own_pick = QComboBox()  # the folder's named templates, shown when there are several
        self.own_pick.setToolTip("Which of the tokenizer's chat templates to render with")
        self.own_pick.activated.connect(lambda _i: self.vm.select_own_template(self.own_pick.currentText()))
        ll.addWidget(header("Tools", "JSON list of schemas"))
        ll.addWidget(self.tools)
        ll.addWidget(header("Variables", "JSON object"))
        ll.addWidget(self.variables)
        ll.addWidget(self.agp)
        ll.addWidget(self.cont)
        trow = QHBoxLayout()
        trow.addWidget(open_tpl)
        trow.addWidget(own_tpl)
        trow.addWidget(self.own_pick)
        ll.addLayout(trow)
        ll.addWidget(self.template_label)

    def _build_results(self) -> QWidget:
        """The right column: the rendered and sanitised prompts side by side, the lints below."""
        self.rendered = QTextBrowser()  # read-only views of the rendered prompt (token cells)
        self.rendered.setFont(mono_font())
        self.sanitized = QTextBrowser()
        self.sanitized.setFont(mono_font())
        self.render_head = header("Rendered", "as apply_chat_template · add_special_tokens=False")
        self.sanitized_head = header("Sanitised", "user literals encoded as text")
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.lints = QTextBrowser()  # one wrapped paragraph per lint: id, finding, evidence
        self.lint_ids: list[str] = []
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setVisible(False)
        pair = QSplitter(Qt.Orientation.Horizontal)
        for head, view in ((self.render_head, self.rendered), (self.sanitized_head, self.sanitized)):
            box = QWidget()
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            bl.addWidget(head)
            bl.addWidget(view, 1)
            pair.addWidget(box)
        lint_box = QWidget()
        lb = QVBoxLayout(lint_box)
        lb.setContentsMargins(0, 0, 0, 0)
        lb.addWidget(header("Lints", "what this template does with these messages"))
        lb.addWidget(self.lints, 1)
        right_split = QSplitter(Qt.Orientation.Vertical)
        right_split.addWidget(pair)
        right_split.addWidget(lint_box)
        right_split.setSizes([430, 250])
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(4, 4, 6, 4)
        rl.addWidget(self.legend)
        rl.addWidget(self.error)
        rl.addWidget(right_split, 1)
        return right

    def _wire(self) -> None:
        if self.vm.inspect is not None:
            for edit in (self.content, self.tools):
                edit.error_raised.connect(self.vm.inspect.error_raised)
        self.vm.messages_changed.connect(self._fill_list)
        self.vm.result_changed.connect(self._show)
        self.vm.render_failed.connect(self._show_error)
        self.vm.template_changed.connect(self.template_label.setText)
        self.vm.own_templates_changed.connect(self._fill_own_templates)
        self._fill_own_templates(self.vm.own_templates())

    # ------------------------------------------------------------------ editor
    def status_text(self) -> str:
        """One line for the status bar while this tab is shown."""
        n = counted(len(self.vm.messages), "message")
        view = self.vm.view
        if self.error.isVisible() or view is None:
            return f"Chat: {n} · not rendered" + (" (the template failed, see above)" if self.error.isVisible() else "")
        r = view.result
        return (f"Chat: {n} → {counted(len(r.ids), 'token')} ({sum(r.control):,} control) · "
                f"{view.tokenizer_name} · {view.template_source}")

    def is_busy(self) -> bool:
        return self.vm.is_busy()

    def set_theme(self, theme: Any) -> None:
        self.theme = theme
        err = theme.error_bg.name()
        self.error.setStyleSheet(f"background: {err}; padding: 4px; border-radius: 3px")
        self._legend()
        if self.vm.view is not None:
            self._show(self.vm.view)

    def _legend(self) -> None:
        if self.theme is None:
            return
        dark = self.theme.dark
        parts = [f"<span style='background:{_role_color(r, 0, dark).name()}'>&nbsp;{r}&nbsp;</span>" for r in ROLE_HUES]
        parts.append(f"<span style='background:{_role_color(None, 0, dark).name()}'>&nbsp;template text&nbsp;</span>")
        sp = f"background:{self.theme.special_bg.name()}; color:{self.theme.special_fg.name()}; font-weight:bold"
        parts.append(f"<span style='{sp}'>&nbsp;control token&nbsp;</span>")
        self.legend.setText(" ".join(parts))

    def _fill_list(self) -> None:
        row = self.list.currentRow()
        self._row = -1  # the list is rebuilt: the editor is reloaded from the view-model below
        self.list.blockSignals(True)
        self.list.clear()
        for m in self.vm.messages:
            content = m.get("content", "")
            preview = content if isinstance(content, str) else "[content blocks]"
            self.list.addItem(f"{m.get('role', '?')}: {preview[:60].replace(chr(10), ' ↵ ')}")
        self.list.blockSignals(False)
        if self.vm.messages:
            row = max(0, min(row, len(self.vm.messages) - 1))
            self.list.setCurrentRow(row)
            self._on_row(row)

    def _on_row(self, row: int) -> None:
        self._commit_content()
        self._row = row
        if not 0 <= row < len(self.vm.messages):
            return
        m = self.vm.messages[row]
        self._loading = True
        try:
            self.role.setCurrentText(str(m.get("role", "")))
            content = m.get("content", "")
            self.content.show_text(content if isinstance(content, str) else str(content))
        finally:
            self._loading = False

    def _on_role(self, role: str) -> None:
        row = self._row
        if self._loading or not 0 <= row < len(self.vm.messages) or not role:
            return
        self.vm.set_message(row, role=role)
        self._relabel(row)

    def _commit_content(self) -> None:
        self._timer.stop()
        row = self._row
        if self._loading or not 0 <= row < len(self.vm.messages):
            return
        text = self.content.exact_text()
        if self.vm.messages[row].get("content") != text:
            self.vm.set_message(row, content=text)
            self._relabel(row)

    def _relabel(self, row: int) -> None:
        m = self.vm.messages[row]
        item = self.list.item(row)
        if item is not None:
            item.setText(f"{m.get('role', '?')}: {str(m.get('content', ''))[:60].replace(chr(10), ' ↵ ')}")

    def _add(self) -> None:
        self._commit_content()
        last = self.vm.messages[-1]["role"] if self.vm.messages else "assistant"
        self.vm.add_message("assistant" if last == "user" else "user")
        self.list.setCurrentRow(len(self.vm.messages) - 1)

    def _move(self, delta: int) -> None:
        row = self.list.currentRow()
        self._commit_content()
        self.vm.move_message(row, delta)
        self.list.setCurrentRow(max(0, min(row + delta, len(self.vm.messages) - 1)))

    def _on_continue(self, on: bool) -> None:
        if on and self.agp.isChecked():
            self.agp.setChecked(False)  # transformers refuses both at once
        self.vm.set_continue_final_message(on)

    def _fill_own_templates(self, names: list[str]) -> None:
        self.own_pick.clear()
        self.own_pick.addItems(names)
        self.own_pick.setVisible(len(names) > 1)

    def _open_template(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open chat template", "", "Jinja templates (*.jinja *.j2 *.txt);;All files (*)")
        if path:
            self.vm.load_template_file(path)

    # ------------------------------------------------------------------ results
    def _show_error(self, message: str) -> None:
        self.error.setText(f"<b>Template error</b>: {html.escape(message)}")
        self.error.setVisible(True)
        # lint 5: the template raises for these messages
        self._show_lints([("raises", message, "the render stopped; the views above show the last good render")])

    def _show(self, view: ChatView) -> None:
        if self.theme is None:
            return
        self.error.setVisible(False)
        r = view.result
        roles = _roles_of_tokens(r)
        if len(view.rendered_pieces) == len(r.offsets):
            pieces, own = list(view.rendered_pieces), list(view.rendered_own)
        else:
            pieces, own = [r.text[s:e] for s, e in r.offsets], None
        self.rendered.setHtml(tokens_html(pieces, roles, list(r.control), self.theme, own))
        n_control = sum(r.control)
        self.render_head.setText(f"<b>Rendered</b>&nbsp;&nbsp;<span style='color:gray'>{counted(len(r.ids), 'token')} · "
                                 f"{n_control} control · {counted(len(r.text), 'char')} · add_special_tokens=False"
                                 + (f" · {counted(sum(own), 'token')} underlined: drawn as the token itself, not the "
                                    "text under its HF offset" if own and any(own) else "") + "</span>")
        if r.sanitized_ids is not None:
            self.sanitized.setHtml(tokens_html(list(view.sanitized_pieces), [None] * len(view.sanitized_pieces),
                                               list(view.sanitized_control), self.theme))
            diff = len(r.sanitized_ids) - len(r.ids)
            self.sanitized_head.setText(f"<b>Sanitised</b>&nbsp;&nbsp;<span style='color:gray'>{len(r.sanitized_ids):,}"
                                        f" tokens ({diff:+d}) · {sum(view.sanitized_control)} control · user literals "
                                        "as text</span>")
        else:
            self.sanitized.setPlainText(r.sanitized_error or "")
        self._show_lints([(lint.id, lint.message, lint.evidence) for lint in r.lints])

    def _show_lints(self, rows: list[tuple[str, str, str]]) -> None:
        self.lint_ids = [r[0] for r in rows]
        if not rows:
            self.lints.setHtml("<span style='color:gray'>no findings</span>")
            return
        mono = mono_font().family()
        parts = [f"<p style='margin:0 0 6px 0'><b>{html.escape(i)}</b>&nbsp; {html.escape(msg)}"
                 + (f"<br><span style='color:gray; font-family:\"{mono}\"'>{html.escape(ev)}</span>" if ev else "")
                 + "</p>" for i, msg, ev in rows]
        self.lints.setHtml("".join(parts))
