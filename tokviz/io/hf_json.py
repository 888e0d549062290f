"""Load an HF ``tokenizer.json`` (and its ``tokenizer_config.json``) into a `Tokenizer`.

Every section is built by its family's registry from the ``"type"`` tag (normalizer,
pre_tokenizer, model, post_processor, decoder); ``added_tokens`` become `AddedToken` values with
the ids HF itself would give them. A malformed file raises `TokvizFormatError` naming the file
and the JSON path where it broke (``tokenizer.json: model.merges[12]: ...``).

How HF assigns added-token ids on load (reproduced, because it decides the ids the engine
emits): the ``"id"`` written in the file is *not* used. Each token gets the id its content
already has (an earlier added token, else the model vocabulary), otherwise the next free id,
counting from the model's vocabulary size.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from ..engine.added_tokens import AddedToken
from ..engine.decoders import decoder_from_json
from ..engine.errors import TokvizFormatError
from ..engine.fields import id_error, is_id, within
from ..engine.model_inputs import PaddingParams, TruncationParams
from ..engine.models import Model, model_from_json
from ..engine.normalizers import normalizer_from_json
from ..engine.pre_tokenizers import pre_tokenizer_from_json
from ..engine.processors import post_processor_from_json
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from .json_text import CheckedObject, check_unicode, loads

__all__ = ["load_hf_json", "parse_json", "read_added_tokens", "read_tokenizer_config"]

_FLAGS = ("special", "single_word", "lstrip", "rstrip", "normalized")


def parse_json(data: bytes | str | dict[str, Any], *, source: str) -> dict[str, Any]:
    """The top-level JSON object of ``data`` (bytes, text or an already parsed dict)."""
    # an already parsed value is checked like the content of a file
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        obj = loads(data, source=source)
    else:
        obj = data
        if not isinstance(obj, CheckedObject):
            check_unicode(obj, source=source)
    if not isinstance(obj, dict):
        raise TokvizFormatError(f"expected a JSON object at the top level, got {type(obj).__name__}", source=source)
    return obj


def _section(builder: Callable[..., Any], obj: Any, *, section: str, source: str) -> Any:
    """Build one section, re-raising errors with the file name and a full JSON path."""
    try:
        return builder(obj, where=section)
    except TokvizFormatError as exc:
        # the registry already put the section in front of the component's path
        raise within(exc, None, source=source) from None


def read_added_tokens(items: Any, model: Model, *, source: str) -> list[AddedToken]:
    """``added_tokens`` entries -> `AddedToken` values with HF's id assignment (module docstring)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise TokvizFormatError(f"expected a list, got {type(items).__name__}", source=source, where="added_tokens")
    by_content: dict[str, AddedToken] = {}
    order: list[str] = []
    next_id = model.vocab_size
    for k, item in enumerate(items):
        where = f"added_tokens[{k}]"
        if not isinstance(item, dict):
            raise TokvizFormatError(f"expected an object, got {type(item).__name__}", source=source, where=where)
        content = item.get("content")
        if not isinstance(content, str):
            raise TokvizFormatError(f"content must be a string, got {content!r:.60}", source=source, where=f"{where}.content")
        file_id = item.get("id")
        if file_id is not None and not is_id(file_id):
            raise TokvizFormatError(id_error(file_id), source=source, where=f"{where}.id")
        flags: dict[str, bool] = {}
        for f in _FLAGS:
            v = item.get(f, f == "normalized" and not item.get("special", False))
            if not isinstance(v, bool):
                raise TokvizFormatError(f"{f} must be true or false, got {v!r}", source=source, where=f"{where}.{f}")
            flags[f] = v
        if not content:
            continue  # HF ignores empty added tokens
        if content in by_content:
            id_ = by_content[content].id
        else:
            model_id = model.token_to_id(content)
            if model_id is not None:
                id_ = model_id
            else:
                id_ = next_id
                next_id += 1
            order.append(content)
        by_content[content] = AddedToken(content, id_, **flags)
    return [by_content[c] for c in order]


def _token_str(v: Any) -> str | None:
    """tokenizer_config.json writes special tokens as a string or ``{"content": ...}``."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get("content"), str):
        return v["content"]
    return None


def read_tokenizer_config(obj: dict[str, Any], *, source: str) -> TokenizerConfig:
    """The fields of tokenizer_config.json the app uses (the rest is kept in ``extra``)."""
    chat = obj.get("chat_template")
    if isinstance(chat, list):  # [{"name": "default", "template": "..."}, ...]
        named = {c.get("name"): c.get("template") for c in chat if isinstance(c, dict)}
        chat = named.get("default") or next((t for t in named.values() if isinstance(t, str)), None)
    if chat is not None and not isinstance(chat, str):
        raise TokvizFormatError(f"chat_template must be a string, got {type(chat).__name__}", source=source, where="chat_template")

    def flag(name: str) -> bool | None:
        v = obj.get(name)
        if v is None:
            return None
        if not isinstance(v, bool):
            raise TokvizFormatError(f"{name} must be true or false, got {v!r}", source=source, where=name)
        return v

    keep = ("model_max_length", "tokenizer_class", "clean_up_tokenization_spaces", "add_prefix_space", "legacy")
    return TokenizerConfig(
        bos_token=_token_str(obj.get("bos_token")),
        eos_token=_token_str(obj.get("eos_token")),
        pad_token=_token_str(obj.get("pad_token")),
        unk_token=_token_str(obj.get("unk_token")),
        add_bos_token=flag("add_bos_token"),
        add_eos_token=flag("add_eos_token"),
        chat_template=chat,
        extra={k: obj[k] for k in keep if k in obj},
    )


def load_hf_json(
    data: bytes | str | dict[str, Any],
    *,
    source: str,
    config_json: dict[str, Any] | None = None,
    config: bytes | str | dict[str, Any] | None = None,
    config_source: str | None = None,
) -> Tokenizer:
    """Build the pipeline of a tokenizer.json.

    ``config_json`` / ``config`` is tokenizer_config.json (parsed, or its bytes) when one sits
    beside the file.

    >>> tok = load_hf_json(open("tokenizer.json", "rb").read(), source="tokenizer.json")  # doctest: +SKIP
    """
    obj = parse_json(data, source=source)
    version = obj.get("version", "1.0")
    if version != "1.0":
        raise TokvizFormatError(f"unknown tokenizer.json version {version!r} (expected \"1.0\")", source=source, where="version")
    if "model" not in obj:
        raise TokvizFormatError("no \"model\" section: this is not a tokenizer.json", source=source)
    model = _section(model_from_json, obj["model"], section="model", source=source)
    normalizer = _section(normalizer_from_json, obj.get("normalizer"), section="normalizer", source=source)
    pre_tokenizer = _section(pre_tokenizer_from_json, obj.get("pre_tokenizer"), section="pre_tokenizer", source=source)
    post_processor = _section(post_processor_from_json, obj.get("post_processor"), section="post_processor", source=source)
    decoder = _section(decoder_from_json, obj.get("decoder"), section="decoder", source=source)
    added = read_added_tokens(obj.get("added_tokens"), model, source=source)

    cfg_obj = config_json if config_json is not None else config
    tk_config = TokenizerConfig()
    if cfg_obj is not None:
        csrc = config_source or "tokenizer_config.json"
        tk_config = read_tokenizer_config(parse_json(cfg_obj, source=csrc), source=csrc)
    extra = dict(tk_config.extra)
    extra["format"] = "tokenizer.json"
    for key in ("truncation", "padding"):
        if obj.get(key) is not None:
            extra[key] = obj[key]  # also applied: encode() truncates and pads as HF (see _apply_inputs)
    tk_config = TokenizerConfig(
        bos_token=tk_config.bos_token,
        eos_token=tk_config.eos_token,
        pad_token=tk_config.pad_token,
        unk_token=tk_config.unk_token,
        add_bos_token=tk_config.add_bos_token,
        add_eos_token=tk_config.add_eos_token,
        chat_template=tk_config.chat_template,
        embedding_rows=tk_config.embedding_rows,
        extra=extra,
    )
    path = PurePath(source)
    name = path.parent.name if path.name.startswith("tokenizer") and path.parent.name else path.stem
    try:
        tok = Tokenizer(
            model,
            normalizer=normalizer,
            pre_tokenizer=pre_tokenizer,
            post_processor=post_processor,
            decoder=decoder,
            added_tokens=added,
            name=name,
            source=source,
            config=tk_config,
        )
    except (ValueError, TypeError) as exc:
        if isinstance(exc, TokvizFormatError):
            raise
        raise TokvizFormatError(f"cannot assemble the pipeline: {exc}", source=source) from None
    _apply_inputs(tok, obj, source)
    return tok


def _apply_inputs(tok: Tokenizer, obj: dict[str, Any], source: str) -> None:
    """The file's ``"truncation"`` and ``"padding"`` settings, as HF applies them on encode."""
    for key in ("truncation", "padding"):
        section = obj.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            raise TokvizFormatError(f"expected an object or null, got {type(section).__name__}", source=source, where=key)
        try:
            if key == "truncation":
                t = TruncationParams.from_json(section)
                tok.enable_truncation(t.max_length, t.stride, t.strategy, t.direction)
            else:
                p = PaddingParams.from_json(section)
                tok.enable_padding(p.direction, p.pad_id, p.pad_type_id, p.pad_token, p.length, p.pad_to_multiple_of)
        except (ValueError, TypeError, AttributeError) as exc:
            raise TokvizFormatError(str(exc), source=source, where=key) from None
