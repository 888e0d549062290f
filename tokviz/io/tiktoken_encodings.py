"""tiktoken's published encodings by name, and the model names that select them.

``get_encoding("o200k_harmony")`` and ``encoding_for_model("gpt-4o")`` give the tokenizer tiktoken
gives under those names: a rank file shipped with tokviz (`tokviz.io.embedded`) with the
encoding's pattern and special tokens. Several encodings share one rank file (``p50k_edit`` is
``p50k_base``'s ranks with the FIM specials, ``o200k_harmony`` is ``o200k_base``'s ranks with
the chat-format specials, ``gpt2`` is ``r50k_base``). Nothing is downloaded: a rank file that
tokviz does not ship (``p50k_base``'s) is given with ``ranks=``, else the call says which file
is missing.

>>> encoding_name_for_model("gpt-4o-2024-05-13")
'o200k_base'
>>> get_encoding("o200k_harmony").encode("<|start|>", allowed_special="all").ids
[200006]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..engine.caching import BoundedCache
from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer
from .files import read_bytes
from .tiktoken_ranks import (
    CL100K_PATTERN,
    ENDOFPROMPT,
    ENDOFTEXT,
    FIM_MIDDLE,
    FIM_PREFIX,
    FIM_SUFFIX,
    O200K_PATTERN,
    PRESETS,
    R50K_PATTERN,
    load_tiktoken_ranks,
    preset_for,
)

__all__ = ["PublishedEncoding", "ENCODINGS", "encoding_names", "get_encoding", "encoding_name_for_model",
           "encoding_for_model"]


@dataclass(frozen=True, slots=True)
class PublishedEncoding:
    """One of tiktoken's encoding names: its rank file (a `PRESETS` name), pattern and specials."""

    name: str
    ranks: str  # the published rank file, by its preset name
    pattern: str
    special_tokens: Mapping[str, int]
    explicit_n_vocab: int | None = None


def _harmony_specials() -> dict[str, int]:
    """o200k_harmony: o200k_base's specials, the chat-format ones, then ``<|reserved_N|>`` names
    for every other id up to 201087 (200018 keeps ``<|endofprompt|>`` and is also reserved)."""
    named = {199998: "<|startoftext|>", 199999: ENDOFTEXT, 200002: "<|return|>", 200003: "<|constrain|>",
             200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>",
             200012: "<|call|>"}
    out = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    out.update({named.get(i, f"<|reserved_{i}|>"): i for i in range(199998, 200013)})
    out.update({f"<|reserved_{i}|>": i for i in range(200013, 201088)})
    return out


def _encodings() -> dict[str, PublishedEncoding]:
    cl100k = {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276}
    table = [
        PublishedEncoding("gpt2", "r50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}, 50257),
        PublishedEncoding("r50k_base", "r50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}, 50257),
        PublishedEncoding("p50k_base", "p50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}, 50281),
        PublishedEncoding("p50k_edit", "p50k_base", R50K_PATTERN,
                          {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
        PublishedEncoding("cl100k_base", "cl100k_base", CL100K_PATTERN, cl100k),
        PublishedEncoding("o200k_base", "o200k_base", O200K_PATTERN, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
        PublishedEncoding("o200k_harmony", "o200k_base", O200K_PATTERN, _harmony_specials()),
    ]
    return {e.name: PublishedEncoding(e.name, e.ranks, e.pattern, MappingProxyType(dict(e.special_tokens)),
                                      e.explicit_n_vocab) for e in table}


ENCODINGS: Mapping[str, PublishedEncoding] = MappingProxyType(_encodings())

# tiktoken/model.py's tables: exact model names, then name prefixes (first match wins)
_BY_ENCODING = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": ("gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
                    "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"),
    "p50k_base": ("text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
                  "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex"),
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": ("text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001", "davinci", "curie",
                  "babbage", "ada", *(f"text-similarity-{m}-001" for m in ("davinci", "curie", "babbage", "ada")),
                  *(f"text-search-{m}-doc-001" for m in ("davinci", "curie", "babbage", "ada")),
                  "code-search-babbage-code-001", "code-search-ada-code-001"),
    "gpt2": ("gpt2", "gpt-2"),
}
MODEL_TO_ENCODING: Mapping[str, str] = MappingProxyType(
    {model: enc for enc, models in _BY_ENCODING.items() for model in models}
)
MODEL_PREFIX_TO_ENCODING: tuple[tuple[str, str], ...] = (
    *((p, "o200k_base") for p in ("o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-",
                                  "gpt-4o-")),
    ("gpt-4-", "cl100k_base"), ("gpt-3.5-turbo-", "cl100k_base"), ("gpt-35-turbo-", "cl100k_base"),
    ("gpt-oss-", "o200k_harmony"),
    ("ft:gpt-4o", "o200k_base"),
    *((f"ft:{m}", "cl100k_base") for m in ("gpt-4", "gpt-3.5-turbo", "davinci-002", "babbage-002")),
)


def encoding_names() -> list[str]:
    """The encoding names `get_encoding` knows (tiktoken's ``list_encoding_names``)."""
    return list(ENCODINGS)


def encoding_name_for_model(model_name: str) -> str:
    """tiktoken ``encoding_name_for_model``: the encoding of a model name (exact, else by prefix).
    Raises KeyError for a name no table maps."""
    found = MODEL_TO_ENCODING.get(model_name)
    if found is None:
        found = next((enc for prefix, enc in MODEL_PREFIX_TO_ENCODING if model_name.startswith(prefix)), None)
    if found is None:
        raise KeyError(f"no tiktoken encoding is known for model {model_name!r}; name one with "
                       f"get_encoding() ({', '.join(ENCODINGS)})")
    return found


def encoding_for_model(model_name: str, *, ranks: str | os.PathLike[str] | bytes | None = None) -> Tokenizer:
    """tiktoken ``encoding_for_model``: `get_encoding` of the model's encoding."""
    return get_encoding(encoding_name_for_model(model_name), ranks=ranks)


def get_encoding(name: str, *, ranks: str | os.PathLike[str] | bytes | None = None) -> Tokenizer:
    """tiktoken ``get_encoding``: the published encoding ``name`` (`encoding_names`). Its rank file
    is the one tokviz ships, or ``ranks`` (a path or the bytes of the file, checked by content
    hash) for one it does not ship. As in tiktoken, one name gives one shared tokenizer (when
    ``ranks`` is not given)."""
    if ranks is None and (kept := _LOADED.get(name)) is not None:
        return kept
    enc = ENCODINGS.get(name)
    if enc is None:
        raise ValueError(f"unknown tiktoken encoding {name!r}; known: {', '.join(ENCODINGS)}")
    source, data = _rank_file(enc, ranks)
    found = preset_for(data)
    if found is None or found.name != enc.ranks:
        raise TokvizFormatError(f"{name} needs {enc.ranks}'s rank file (sha256 {_sha(enc.ranks)}); this is "
                                + (f"{found.name}'s" if found is not None else "another file"), source=source)
    tok = load_tiktoken_ranks(data, source=source, pattern=enc.pattern, special_tokens=enc.special_tokens)
    n_vocab = tok.vocab_size
    if enc.explicit_n_vocab is not None and n_vocab != enc.explicit_n_vocab:
        raise TokvizFormatError(f"expected {enc.explicit_n_vocab} ids in {name}, got {n_vocab}", source=source)
    tok.name = name
    if ranks is None:
        _LOADED.put(name, tok)
    return tok


#: Encodings `get_encoding` loaded, by name (as tiktoken keeps them): a process-wide cache, so
#: `tokviz.engine.caching.clear_shared_caches` (and `Tokenizer.clear_caches`) let them go.
_LOADED: BoundedCache = BoundedCache(16, shared=True)


def _sha(preset_name: str) -> str:
    return next(p.sha256 for p in PRESETS.values() if p.name == preset_name)


def _rank_file(enc: PublishedEncoding, ranks: str | os.PathLike[str] | bytes | None) -> tuple[str, bytes]:
    """The (decompressed) rank file of ``enc`` and where it came from."""
    if isinstance(ranks, (bytes, bytearray, memoryview)):
        return "<bytes>", read_bytes(bytes(ranks), source="<bytes>")
    if ranks is not None:
        p = Path(ranks)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise TokvizFormatError(f"cannot read the rank file: {exc.strerror or exc}", source=str(p)) from None
        return str(p), read_bytes(raw, source=str(p))
    from .embedded import embedded_path

    shipped = embedded_path(enc.ranks)
    if shipped is None:
        raise FileNotFoundError(
            f"{enc.name} needs {enc.ranks}.tiktoken (sha256 {_sha(enc.ranks)}), which tokviz does not ship; "
            f"give the file: get_encoding({enc.name!r}, ranks='path/to/{enc.ranks}.tiktoken')"
        )
    return str(shipped), read_bytes(shipped.read_bytes(), source=str(shipped))
