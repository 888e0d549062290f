"""Mistral's ``tekken.json`` (Mistral NeMo, Pixtral, Ministral, Mistral Large 2 ...): byte-level
BPE in tiktoken's rank form, with the special tokens in front of the vocabulary.

The file (``mistral-common``'s ``Tekkenizer``) holds ``config`` (the pre-tokenizer ``pattern``,
``default_vocab_size``, ``default_num_special_tokens``, ``version``), ``vocab`` (entries
``{"rank", "token_bytes" (base64), "token_str"}`` in rank order, the first 256 being the single
bytes) and, from v7 on, ``special_tokens`` (``{"rank", "token_str", "is_control"}``). What
mistral-common does with it, reproduced here:

* ids ``0 .. num_special - 1`` are the special tokens: the file's list, or for files up to v7
  without one the 20 tokens mistral-common has always used (``<unk>``, ``<s>``, ``</s>``,
  ``[INST]`` ...), padded with ``<SPECIAL_{id}>`` fillers to ``default_num_special_tokens``;
* rank ``r`` of the vocabulary is id ``r + num_special``; only the first
  ``default_vocab_size - num_special`` ranks are used (``num_vocab_tokens`` may be larger);
* text is encoded by tiktoken with no special tokens at all: a literal ``[INST]`` in the text is
  ordinary text (here: specials only through ``allowed_special``, never by default);
  ``add_special_tokens=True`` puts ``<s>`` first (``encode(s, bos=True, eos=False)``);
* decoding keeps special tokens as their strings (mistral-common's ``SpecialTokenPolicy.KEEP``)
  unless ``skip_special_tokens=True`` (``IGNORE``, mistral-common's default); ``RAISE`` has no
  counterpart in a decode that returns text.

The pipeline is the rank-file one (`tiktoken_ranks.build_tiktoken_tokenizer`): the ranks shifted
by ``num_special`` keep their order, so rank-mode BPE merges exactly as tiktoken does.
"""

from __future__ import annotations

import binascii
from dataclasses import replace
from typing import Any

from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer
from .tiktoken_ranks import build_tiktoken_tokenizer, check_pattern, rank_table

__all__ = ["looks_like_tekken", "load_tekken", "DEPRECATED_SPECIAL_TOKENS"]

#: the special tokens of tekken files up to v7 that list none (mistral-common's
#: ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``: ids 0-19, all control tokens)
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
_VERSIONS = ("v1", "v2", "v3", "v7", "v11", "v13", "v15")


def looks_like_tekken(obj: Any) -> bool:
    """A JSON object with a ``config`` holding a ``pattern`` and a ``vocab`` list."""
    return (
        isinstance(obj, dict) and isinstance(obj.get("config"), dict) and "pattern" in obj["config"]
        and isinstance(obj.get("vocab"), list)
    )


def _int(cfg: dict[str, Any], key: str, source: str) -> int:
    v = cfg.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise TokvizFormatError(f"expected a non-negative integer, got {v!r:.40}", source=source, where=f"config.{key}")
    return v


def _vocab(entries: list[Any], n: int, source: str) -> list[bytes]:
    """The token bytes of the first ``n`` entries (rank = index, the first 256 the bytes)."""
    if len(entries) < n:
        raise TokvizFormatError(
            f"{len(entries)} entries, but default_vocab_size - default_num_special_tokens = {n}",
            source=source, where="vocab",
        )
    out: list[bytes] = []
    for i, e in enumerate(entries[:n]):
        if not isinstance(e, dict) or e.get("rank") != i or not isinstance(e.get("token_bytes"), str):
            raise TokvizFormatError(f"expected {{\"rank\": {i}, \"token_bytes\": ...}}, got {str(e)[:60]}",
                                    source=source, where=f"vocab[{i}]")
        try:
            b = binascii.a2b_base64(e["token_bytes"].encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError):
            raise TokvizFormatError("token_bytes is not base64", source=source, where=f"vocab[{i}].token_bytes") from None
        if i < 256 and b != bytes([i]):
            raise TokvizFormatError(f"rank {i} must be the byte {bytes([i])!r}, got {b!r}", source=source,
                                    where=f"vocab[{i}]")
        out.append(b)
    return out


def _specials(obj: dict[str, Any], version: str, n: int, source: str) -> tuple[list[str], int]:
    """The ``n`` special token strings by id, and how many of them the file (or the old default) names."""
    listed = obj.get("special_tokens")
    if listed is None:
        if _VERSIONS.index(version) > _VERSIONS.index("v7"):
            raise TokvizFormatError(f"a {version} tekken file must list its special_tokens", source=source,
                                    where="special_tokens")
        names = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        if not isinstance(listed, list):
            raise TokvizFormatError("expected a list", source=source, where="special_tokens")
        names = []
        for i, t in enumerate(listed):
            if not isinstance(t, dict) or t.get("rank") != i or not isinstance(t.get("token_str"), str):
                raise TokvizFormatError(f"expected {{\"rank\": {i}, \"token_str\": ...}}, got {str(t)[:60]}",
                                        source=source, where=f"special_tokens[{i}]")
            names.append(t["token_str"])
    if len(names) > n:
        raise TokvizFormatError(f"{len(names)} special tokens, but default_num_special_tokens is {n}",
                                source=source, where="special_tokens")
    named = len(names)
    names += [f"<SPECIAL_{i}>" for i in range(named, n)]
    if len(set(names)) != len(names):
        dup = next(t for t in names if names.count(t) > 1)
        raise TokvizFormatError(f"special token {dup!r} appears twice", source=source, where="special_tokens")
    return names, named


def load_tekken(obj: dict[str, Any], *, source: str) -> Tokenizer:
    """Build the `Tokenizer` of a parsed tekken.json (see the module docstring).

    >>> tok = load_tekken(json.load(open("tekken.json")), source="tekken.json")   # doctest: +SKIP
    >>> tok.encode("Hello").ids                                                    # doctest: +SKIP
    [1, 22177]
    """
    cfg = obj["config"]
    pattern = cfg.get("pattern")
    if not isinstance(pattern, str):
        raise TokvizFormatError("expected the pre-tokenizer regex", source=source, where="config.pattern")
    version = cfg.get("version")
    if version not in _VERSIONS:
        raise TokvizFormatError(f"unknown tekken version {version!r} (mistral-common knows {', '.join(_VERSIONS)})",
                                source=source, where="config.version")
    vocab_size = _int(cfg, "default_vocab_size", source)
    num_special = _int(cfg, "default_num_special_tokens", source)
    if vocab_size < num_special:
        raise TokvizFormatError(f"default_vocab_size {vocab_size} is smaller than the {num_special} special tokens",
                                source=source, where="config.default_vocab_size")
    check_pattern(pattern, source)
    raw = _vocab(obj["vocab"], vocab_size - num_special, source)
    names, named = _specials(obj, version, num_special, source)
    table = rank_table(raw, [num_special + r for r in range(len(raw))], source=source)
    specials = {t: i for i, t in enumerate(names)}
    tok = build_tiktoken_tokenizer(table, pattern=pattern, special_tokens=specials, name=_name(source), source=source)
    from .post_processing import around_processor

    if "<s>" in specials:
        tok.post_processor = around_processor([(specials["<s>"], "<s>")], [], where="tekken post_processor")
    controls = [t for t in obj.get("special_tokens") or () if isinstance(t, dict) and t.get("is_control")]
    extra = {
        **tok.config.extra,
        "format": "tekken",
        "tekken_version": version,
        "num_special_tokens": f"{num_special:,} ({named} named, {num_special - named} <SPECIAL_n> fillers)",
        "vocab_entries": f"{len(obj['vocab']):,} in the file, the first {len(raw):,} used",
        "control_tokens": len(controls) if obj.get("special_tokens") is not None else named,
        "multimodal": ", ".join(k for k in ("image", "multimodal", "audio") if obj.get(k)) or None,
    }
    tok.config = replace(
        tok.config,
        bos_token="<s>" if "<s>" in specials else None,
        eos_token="</s>" if "</s>" in specials else None,
        pad_token="<pad>" if "<pad>" in specials else None,
        unk_token="<unk>" if "<unk>" in specials else None,
        add_bos_token="<s>" in specials,
        add_eos_token=False,
        extra=extra,
    )
    return tok


def _name(source: str) -> str:
    stem = source.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".json"):
        stem = stem.removesuffix(suffix)
    parent = source.replace("\\", "/").rsplit("/", 2)
    return parent[-2] if stem == "tekken" and len(parent) >= 2 and parent[-2] else stem
