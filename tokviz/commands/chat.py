"""``tokviz chat``: render a conversation with a chat template as transformers does, print the
text, the ids (encoded with add_special_tokens=False) and the template lints."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..engine.errors import TokvizFormatError
from ..io.json_text import dumps, loads
from ._options import TOKENIZER_HELP, add_load_options, load_tokenizer

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("chat", help="render messages with the chat template; print text, ids and lints")
    p.add_argument("tokenizer", type=Path, help=TOKENIZER_HELP)
    p.add_argument("--messages", type=Path, required=True,
                   help='JSON file: a list of {"role", "content"} or {"messages": [...], "tools": [...]}')
    p.add_argument("--template", type=Path, help="a .jinja file (default: the tokenizer's chat_template)")
    p.add_argument("--template-name", metavar="NAME",
                   help="one of the folder's named templates (tokenizer_config.json's list or additional_chat_templates/); "
                        "default: 'tool_use' with --tools when there is one, else 'default'")
    p.add_argument("--tools", type=Path, help="JSON file with a list of tool schemas")
    p.add_argument("--add-generation-prompt", action="store_true",
                   help="end with the template's prompt for the assistant's reply")
    p.add_argument("--continue-final-message", action="store_true",
                   help="leave the last message open, for the model to continue it")
    p.add_argument("--var", action="append", default=[], metavar="NAME=JSON",
                   help="an extra template variable, e.g. enable_thinking=false (repeatable)")
    p.add_argument("--json", action="store_true", help='print {"text", "ids", "lints"} as JSON')
    add_load_options(p)
    p.set_defaults(func=run)


def _read_json(path: Path) -> Any:
    from ..io.textfile import read_text_file

    return loads(read_text_file(path).text, source=str(path))


def _variables(specs: list[str]) -> dict[str, Any]:
    out = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.isidentifier():
            raise TokvizFormatError(f"expected NAME=JSON, got {spec!r}", source="--var")
        try:
            out[name] = loads(value, source=f"--var {name}")
        except TokvizFormatError as exc:
            raise TokvizFormatError(f"{exc} (a string needs quotes: {name}='\"...\"')") from None
    return out


def _messages(path: Path) -> tuple[list[Any], list[Any] | None]:
    data = _read_json(path)
    tools = None
    if isinstance(data, dict):
        tools = data.get("tools")
        data = data.get("messages")
    if not isinstance(data, list):
        raise TokvizFormatError('expected a list of messages (or {"messages": [...]})', source=str(path))
    if tools is not None and not isinstance(tools, list):
        raise TokvizFormatError('"tools" must be a list', source=str(path))
    return data, tools


def run(args: argparse.Namespace) -> int:
    from ..analysis.chat import load_template, pick_template, render_chat
    from ..analysis.chat_render import ChatTemplateError

    messages, tools = _messages(args.messages)
    if args.tools is not None:
        tools = _read_json(args.tools)
        if not isinstance(tools, list):
            raise TokvizFormatError("expected a JSON list of tool schemas", source=str(args.tools))
    tok = load_tokenizer(args)
    try:
        if args.template is not None:
            template = load_template(str(args.template))
        else:
            template = pick_template(tok, args.template_name, tools=tools)
        result = render_chat(tok, messages, template=template, tools=tools,
                             add_generation_prompt=args.add_generation_prompt,
                             continue_final_message=args.continue_final_message, variables=_variables(args.var))
    except ChatTemplateError as exc:
        raise ValueError(str(exc).replace("\n", "\\n")) from None  # cli.main prints one line, exit 2
    if args.json:
        print(dumps(result.to_json()))
        return 0
    print(result.text)
    print("ids:", " ".join(map(str, result.ids)))
    for lint in result.lints:
        print(f"lint {lint.id}: {lint.message}")
    return 0
