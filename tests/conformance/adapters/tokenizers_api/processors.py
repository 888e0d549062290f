"""``tokenizers.processors`` over tokviz's post-processors (built by ``post_processor_from_json``).
A template given as a string or a list of strings is written as tokenizer.json's piece objects
(``"$B:1"`` -> ``{"Sequence": {"id": "B", "type_id": 1}}``), which is the form tokviz reads."""

from __future__ import annotations

from typing import Any

from ._base import Component, SequenceOf


class PostProcessor(Component):
    family = "post_processor"

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._engine().added_tokens(is_pair)

    def process(self, encoding: Any, pair: Any = None, add_special_tokens: bool = True) -> Any:
        from . import Encoding

        engine = self._engine().process(encoding._enc, None if pair is None else pair._enc,
                                        add_special_tokens=add_special_tokens)
        return Encoding(engine)


class BertProcessing(PostProcessor):
    type_name = "BertProcessing"

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        super().__init__(sep=list(sep), cls=list(cls))


class RobertaProcessing(PostProcessor):
    type_name = "RobertaProcessing"

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int], trim_offsets: bool = True,
                 add_prefix_space: bool = True) -> None:
        super().__init__(sep=list(sep), cls=list(cls), trim_offsets=trim_offsets, add_prefix_space=add_prefix_space)


class ByteLevel(PostProcessor):
    type_name = "ByteLevel"

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True,
                 **_kwargs: Any) -> None:
        super().__init__(add_prefix_space=add_prefix_space, trim_offsets=trim_offsets, use_regex=use_regex)


def _piece(text: str) -> dict[str, Any]:
    """One template piece as HF's Python API writes it: ``name[:type_id]``, where a name of ``$``,
    ``$A`` or ``$B`` is a sequence and ``$<n>`` sequence A with type id n; anything else is a
    special token's id."""
    parts = text.split(":")
    type_id: int | None = None
    if len(parts) == 2 and parts[1].isdigit():
        type_id = int(parts[1])
    elif len(parts) != 1:
        raise ValueError(f"Cannot build Piece from string \"{text}\"")
    name = parts[0]
    if not name.startswith("$"):
        return {"SpecialToken": {"id": name, "type_id": type_id or 0}}
    rest = name[1:]
    if rest in ("", "A", "a", "B", "b"):
        return {"Sequence": {"id": "B" if rest in ("B", "b") else "A", "type_id": type_id or 0}}
    if rest.isdigit() and type_id is None:
        return {"Sequence": {"id": "A", "type_id": int(rest)}}
    raise ValueError(f"Cannot build Piece from string \"{text}\"")


def _template(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    parts = value.split() if isinstance(value, str) else list(value)
    return [_piece(p) for p in parts]


def _specials(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in value or ():
        if isinstance(item, dict):
            out[item["id"]] = {"id": item["id"], "ids": list(item["ids"]), "tokens": list(item["tokens"])}
        else:
            token, id_ = item
            out[token] = {"id": token, "ids": [id_], "tokens": [token]}
    return out


class TemplateProcessing(PostProcessor):
    type_name = "TemplateProcessing"

    def __init__(self, single: Any = None, pair: Any = None, special_tokens: Any = None) -> None:
        super().__init__(single=_template(single), pair=_template(pair), special_tokens=_specials(special_tokens))
        self._engine()  # tokviz checks the template


class Sequence(SequenceOf, PostProcessor):
    type_name = "Sequence"
    key = "processors"
