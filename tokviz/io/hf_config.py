"""The configuration files beside a tokenizer in a Hugging Face model folder.

A folder such as a hub snapshot holds, next to ``tokenizer.json`` (or ``tokenizer.model``,
``vocab.json`` + ``merges.txt``, ``vocab.txt``):

=================================  ============================================================
``tokenizer_config.json``          ``bos_token`` ... ``mask_token`` (a string or an AddedToken
                                   object), ``add_bos_token``/``add_eos_token``,
                                   ``chat_template`` (a string, or a list of ``{"name",
                                   "template"}``), ``model_max_length``, ``tokenizer_class`` ...
``special_tokens_map.json``        the same ``*_token`` entries
``chat_template.jinja``            the default chat template (transformers >= 4.43 saves it here)
``additional_chat_templates/``     named templates, one ``<name>.jinja`` each
``chat_template.json``             ``{"chat_template": ...}``: the processor's (multimodal) template
=================================  ============================================================

Precedence is transformers' (5.x, ``PreTrainedTokenizerBase._from_pretrained``):
special_tokens_map.json overrides tokenizer_config.json's ``*_token`` entries, but only when
tokenizer_config.json has no ``added_tokens_decoder`` (it is then not read at all);
chat_template.jinja and additional_chat_templates/ replace tokenizer_config.json's template
entries; chat_template.json, which only transformers' processors read, comes after the .jinja
files and before tokenizer_config.json. `FolderConfig.sources` records which file gave each
value, for ``tokviz info``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer

__all__ = ["FolderConfig", "read_folder_config", "apply_folder_config", "config_details", "TOKEN_KEYS"]

#: the special-token entries transformers reads (``SPECIAL_TOKENS_ATTRIBUTES``)
TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_KEEP = ("model_max_length", "tokenizer_class", "clean_up_tokenization_spaces", "add_prefix_space", "legacy")
TEMPLATE_DIR = "additional_chat_templates"


@dataclass(frozen=True, slots=True)
class FolderConfig:
    """What the configuration files of one folder say (see the module docstring)."""

    tokens: dict[str, str] = field(default_factory=dict)  # "bos_token" -> its content
    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    templates: dict[str, str] = field(default_factory=dict)  # name -> template; "default" first
    extra: dict[str, Any] = field(default_factory=dict)  # model_max_length, tokenizer_class ...
    sources: dict[str, str] = field(default_factory=dict)  # what -> the file (relative) it came from
    ignored: tuple[str, ...] = ()  # files present but not used, with the reason

    @property
    def default_template(self) -> str | None:
        return self.templates.get("default") if "default" in self.templates else next(iter(self.templates.values()), None)


def _token_str(value: Any, source: str, where: str) -> str | None:
    """A ``*_token`` entry: a string or an AddedToken object ``{"content": ...}`` (null: none)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    raise TokvizFormatError(f"expected a string or {{\"content\": ...}}, got {str(value)[:60]}", source=source, where=where)


def _json_object(path: Path) -> dict[str, Any]:
    from .json_text import loads

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    obj = loads(data, source=str(path))
    if not isinstance(obj, dict):
        raise TokvizFormatError(f"expected a JSON object, got {type(obj).__name__}", source=str(path))
    return obj


def _text(path: Path) -> str:
    from .textfile import read_text_file

    return read_text_file(str(path)).text


def _config_templates(value: Any, source: str) -> dict[str, str]:
    """tokenizer_config.json's ``chat_template``: a string, or ``[{"name", "template"}, ...]``."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list):
        out: dict[str, str] = {}
        for k, item in enumerate(value):
            if not (isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("template"), str)):
                raise TokvizFormatError(
                    f"expected {{\"name\": ..., \"template\": ...}}, got {str(item)[:60]}", source=source,
                    where=f"chat_template[{k}]",
                )
            out[item["name"]] = item["template"]
        return out
    raise TokvizFormatError(f"chat_template must be a string or a list, got {type(value).__name__}", source=source,
                            where="chat_template")


def _flag(obj: dict[str, Any], name: str, source: str) -> bool | None:
    v = obj.get(name)
    if v is not None and not isinstance(v, bool):
        raise TokvizFormatError(f"{name} must be true or false, got {v!r}", source=source, where=name)
    return v


def _ordered(templates: dict[str, str]) -> dict[str, str]:
    return dict(sorted(templates.items(), key=lambda kv: kv[0] != "default"))


def read_folder_config(folder: Path) -> FolderConfig | None:
    """The configuration files of ``folder``, or None when it has none of them."""
    cfg_path = folder / "tokenizer_config.json"
    map_path = folder / "special_tokens_map.json"
    jinja_path = folder / "chat_template.jinja"
    json_path = folder / "chat_template.json"
    named = sorted((folder / TEMPLATE_DIR).glob("*.jinja")) if (folder / TEMPLATE_DIR).is_dir() else []
    if not any(p.is_file() for p in (cfg_path, map_path, jinja_path, json_path)) and not named:
        return None
    tokens: dict[str, str] = {}
    sources: dict[str, str] = {}
    ignored: list[str] = []
    cfg: dict[str, Any] = _json_object(cfg_path) if cfg_path.is_file() else {}
    for key in TOKEN_KEYS:
        v = _token_str(cfg.get(key), str(cfg_path), key)
        if v is not None:
            tokens[key], sources[key] = v, cfg_path.name
    if map_path.is_file():
        if "added_tokens_decoder" in cfg:
            ignored.append(f"{map_path.name} (tokenizer_config.json has added_tokens_decoder, so transformers skips it)")
        else:
            smap = _json_object(map_path)
            for key in TOKEN_KEYS:
                v = _token_str(smap.get(key), str(map_path), key)
                if v is not None:
                    tokens[key], sources[key] = v, map_path.name
    templates, origin = _templates(folder, cfg, cfg_path, jinja_path, json_path, named, ignored)
    for name, where in origin.items():
        sources[f"chat template {name!r}"] = where
    add_bos, add_eos = _flag(cfg, "add_bos_token", str(cfg_path)), _flag(cfg, "add_eos_token", str(cfg_path))
    for key, v in (("add_bos_token", add_bos), ("add_eos_token", add_eos)):
        if v is not None:
            sources[key] = cfg_path.name
    extra = {k: cfg[k] for k in _KEEP if k in cfg}
    for k in extra:
        sources[k] = cfg_path.name
    return FolderConfig(tokens, add_bos, add_eos, _ordered(templates), extra, sources, tuple(ignored))


def _templates(
    folder: Path, cfg: dict[str, Any], cfg_path: Path, jinja_path: Path, json_path: Path, named: list[Path],
    ignored: list[str],
) -> tuple[dict[str, str], dict[str, str]]:
    """The chat templates by name and the file each came from (module docstring's precedence)."""
    templates: dict[str, str] = {}
    origin: dict[str, str] = {}
    if jinja_path.is_file():
        templates["default"], origin["default"] = _text(jinja_path), jinja_path.name
    for p in named:
        name = p.name.removesuffix(".jinja")
        templates[name], origin[name] = _text(p), f"{TEMPLATE_DIR}/{p.name}"
    if json_path.is_file():
        if templates:
            ignored.append(f"{json_path.name} (the .jinja template files come first)")
        else:
            value = _json_object(json_path).get("chat_template")
            if not isinstance(value, str):
                raise TokvizFormatError("expected {\"chat_template\": \"...\"}", source=str(json_path), where="chat_template")
            templates["default"], origin["default"] = value, json_path.name
    own = _config_templates(cfg.get("chat_template"), str(cfg_path))
    if own and templates:
        ignored.append(f"{cfg_path.name}'s chat_template (template files replace it, as in transformers)")
    elif own:
        templates = own
        origin = {name: cfg_path.name for name in own}
    return templates, origin


def apply_folder_config(tok: Tokenizer, fc: FolderConfig) -> Tokenizer:
    """``tok`` with the folder's configuration in its `TokenizerConfig` (a value the folder does
    not give keeps what the tokenizer file said)."""
    c = tok.config
    extra: dict[str, Any] = {**c.extra, **fc.extra}
    for key in ("sep_token", "cls_token", "mask_token"):
        if key in fc.tokens:
            extra[key] = fc.tokens[key]
    if fc.templates:
        extra["chat_templates"] = dict(fc.templates)
    extra["config_sources"] = dict(fc.sources)
    if fc.ignored:
        extra["config_ignored"] = list(fc.ignored)
    tok.config = replace(
        c,
        bos_token=fc.tokens.get("bos_token", c.bos_token),
        eos_token=fc.tokens.get("eos_token", c.eos_token),
        pad_token=fc.tokens.get("pad_token", c.pad_token),
        unk_token=fc.tokens.get("unk_token", c.unk_token),
        add_bos_token=fc.add_bos_token if fc.add_bos_token is not None else c.add_bos_token,
        add_eos_token=fc.add_eos_token if fc.add_eos_token is not None else c.add_eos_token,
        chat_template=fc.default_template if fc.templates else c.chat_template,
        extra=extra,
    )
    return tok


def config_details(extra: Mapping[str, Any], config: Any) -> dict[str, str]:
    """``tokviz info``'s lines for a folder's configuration: each value and the file it came from."""
    sources: Mapping[str, str] = extra.get("config_sources") or {}
    out: dict[str, str] = {}
    for key in TOKEN_KEYS:
        if key in sources:
            value = getattr(config, key, None) if key in ("bos_token", "eos_token", "pad_token", "unk_token") else extra.get(key)
            out[key] = f"{value!r} ({sources[key]})"
    for key in ("add_bos_token", "add_eos_token"):
        if key in sources:
            out[key] = f"{getattr(config, key)} ({sources[key]})"
    templates: Mapping[str, str] = extra.get("chat_templates") or {}
    for name, text in templates.items():
        out[f"chat template {name!r}"] = f"{len(text):,} chars ({sources.get(f'chat template {name!r}', '?')})"
    for key in ("model_max_length", "tokenizer_class"):
        if key in sources:
            out[key] = f"{extra.get(key)} ({sources[key]})"
    if extra.get("config_ignored"):
        out["not used"] = "; ".join(extra["config_ignored"])
    return out
