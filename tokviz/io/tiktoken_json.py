"""js-tiktoken rank JSON: ``{"pat_str", "special_tokens", "bpe_ranks", "explicit_n_vocab"}``.

The format of the ``js-tiktoken`` npm package (its ``ranks/*.js`` modules export this object),
of the ``tiktoken`` npm package's ``encoders/*.json`` and of ``@anthropic-ai/tokenizer``'s
``claude.json``. Unlike a ``.tiktoken`` rank file (`tiktoken_ranks`) it carries its own
pre-tokenizer pattern and special tokens. ``bpe_ranks`` is one string, compressed as
js-tiktoken writes it: lines of ``<marker> <first rank> <base64 token> <base64 token> ...``,
where the tokens of a line have consecutive ranks from the first one (a new line starts where
the ranks jump) and the marker is ignored.

The decoded ranks go through the rank-file pipeline (`tiktoken_ranks.build_tiktoken_tokenizer`:
the pattern's matches, byte-level BPE in rank mode, specials only where allowed), so a file
equals tiktoken run with the same pattern, ranks and specials. When the ranks are exactly a
published encoding's (r50k, p50k, cl100k, o200k ...) the file is recognised by name.

``claude.json`` (Anthropic's 2023 tokenizer, 64,995 ranks after its 5 specials) is recognised by
its special tokens and rank count and built as ``@anthropic-ai/tokenizer`` runs it:
``countTokens`` normalizes the text with NFKC and then encodes with every special allowed, so
the pipeline gets an NFKC normalizer and specials matched in the normalized text, always.

A JavaScript module around the object (``export default {...}`` or ``module.exports = {...}``,
as in js-tiktoken's ``dist/ranks``) is read the same way.
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer
from .tiktoken_ranks import PRESETS, build_tiktoken_tokenizer, check_pattern, check_specials, pattern_preset, rank_table

__all__ = ["looks_like_tiktoken_json", "js_module_json", "decode_bpe_ranks", "load_tiktoken_json", "CLAUDE_SPECIALS"]

#: ``@anthropic-ai/tokenizer``'s claude.json special tokens (ids 0-4, before the 64,995 ranks)
CLAUDE_SPECIALS: Mapping[str, int] = {"<EOT>": 0, "<META>": 1, "<META_START>": 2, "<META_END>": 3, "<SOS>": 4}
_CLAUDE_RANKS = 64995

_JS_MODULE = re.compile(rb"\A\s*(?:export\s+default|module\.exports\s*=)\s*(?=\{)")


def looks_like_tiktoken_json(obj: Any) -> bool:
    """True for a JSON object with a ``bpe_ranks`` string next to ``pat_str``/``special_tokens``."""
    return isinstance(obj, dict) and isinstance(obj.get("bpe_ranks"), str) and ("pat_str" in obj or "special_tokens" in obj)


def js_module_json(data: bytes) -> bytes | None:
    """The JSON object of a JavaScript module that exports one (js-tiktoken's rank modules),
    or None when ``data`` does not start like one."""
    m = _JS_MODULE.match(data[:200])
    if m is None:
        return None
    body = data[m.end():].rstrip()
    return body[:-1].rstrip() if body.endswith(b";") else body


def decode_bpe_ranks(text: str, *, source: str) -> tuple[list[bytes], list[int]]:
    """The token bytes and ranks of a compressed ``bpe_ranks`` string.

    >>> decode_bpe_ranks("! 0 YQ== Yg==\\n! 5 YWI=", source="x")
    ([b'a', b'b', b'ab'], [0, 1, 5])
    """
    raw: list[bytes] = []
    ranks: list[int] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        parts = line.split(" ")
        where = f"bpe_ranks line {lineno}"
        if len(parts) < 2 or not parts[1].isdigit():
            raise TokvizFormatError(
                f"expected '<marker> <first rank> <base64 token> ...', got {line[:60]!r}", source=source, where=where
            )
        first = int(parts[1])
        for k, token in enumerate(parts[2:]):
            try:
                raw.append(binascii.a2b_base64(token.encode("ascii"), strict_mode=True))
            except (binascii.Error, UnicodeEncodeError):
                raise TokvizFormatError(
                    f"token {k + 1} of the line is not base64: {token[:40]!r}", source=source, where=where
                ) from None
            ranks.append(first + k)
    if not raw:
        raise TokvizFormatError("bpe_ranks holds no token", source=source, where="bpe_ranks")
    return raw, ranks


def _published(raw: list[bytes], ranks: list[int]) -> str | None:
    """The published encoding whose rank file these ranks are, written back as one."""
    import base64

    order = sorted(range(len(raw)), key=ranks.__getitem__)
    data = b"".join(base64.b64encode(raw[i]) + b" %d\n" % ranks[i] for i in order)
    preset = PRESETS.get(hashlib.sha256(data).hexdigest())
    return preset.name if preset is not None else None


def _field(obj: dict[str, Any], key: str, kind: type, source: str) -> Any:
    value = obj.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise TokvizFormatError(f"{key} must be a {kind.__name__}, got {type(value).__name__}", source=source, where=key)
    return value


def load_tiktoken_json(
    obj: dict[str, Any],
    *,
    source: str,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Build a `Tokenizer` from a parsed rank JSON object (``pattern``/``special_tokens``
    override the file's own).

    >>> tok = load_tiktoken_json(json.load(open("claude.json")), source="claude.json")  # doctest: +SKIP
    """
    text = _field(obj, "bpe_ranks", str, source)
    raw, ranks = decode_bpe_ranks(text, source=source)
    table = rank_table(raw, ranks, source=source)
    file_pattern = _field(obj, "pat_str", str, source)
    named = pattern_preset(pattern) if pattern is not None else None
    pattern = named.pattern if named is not None else pattern if pattern is not None else file_pattern
    if pattern is None:
        raise TokvizFormatError("no pat_str: give the pre-tokenizer pattern with pattern=", source=source, where="pat_str")
    specials = special_tokens if special_tokens is not None else _field(obj, "special_tokens", dict, source) or {}
    for name, id_ in specials.items():
        if not isinstance(id_, int) or isinstance(id_, bool):
            raise TokvizFormatError(f"special token {name!r}: id must be an integer, got {id_!r}", source=source,
                                    where="special_tokens")
    n_vocab = _field(obj, "explicit_n_vocab", int, source)
    claude = dict(specials) == dict(CLAUDE_SPECIALS) and len(table) == _CLAUDE_RANKS
    published = None if claude else _published(raw, ranks)
    check_pattern(pattern, source)
    checked = check_specials(specials, table, source)
    tok = build_tiktoken_tokenizer(
        table, pattern=pattern, special_tokens=checked, name=_name(source, published, claude), source=source,
        recognised=published,
    )
    tok = _as_claude(tok) if claude else _with_format(tok, "tiktoken-json", None)
    if n_vocab is not None and n_vocab != tok.config.extra.get("n_vocab"):
        # js-tiktoken never checks it (claude.json says 64,739 for its 65,000 ids); shown by info
        from dataclasses import replace

        note = f"{n_vocab:,} (the file's; js-tiktoken does not check it)"
        tok.config = replace(tok.config, extra={**tok.config.extra, "explicit_n_vocab": note})
    return tok


def _name(source: str, published: str | None, claude: bool) -> str:
    if claude:
        return "claude (@anthropic-ai/tokenizer)"
    if published:
        return published
    stem = source.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".json", ".cjs", ".js"):
        stem = stem.removesuffix(suffix)
    return stem


def _with_format(tok: Tokenizer, fmt: str, recognised: str | None) -> Tokenizer:
    from dataclasses import replace

    extra = {**tok.config.extra, "format": fmt}
    if recognised is not None:
        extra["published_as"] = recognised
    tok.config = replace(tok.config, extra=extra)
    return tok


def _as_claude(tok: Tokenizer) -> Tokenizer:
    """``@anthropic-ai/tokenizer``: NFKC first, then every special matched in the normalized text."""
    from ..engine.added_tokens import AddedToken
    from ..engine.normalizers import normalizer_from_json

    added = [AddedToken(t.content, t.id, special=True, normalized=True) for t in tok.added_tokens]
    out = Tokenizer(
        tok.model,
        normalizer=normalizer_from_json({"type": "NFKC"}, where="claude normalizer"),
        pre_tokenizer=tok.pre_tokenizer,
        decoder=tok.decoder,
        added_tokens=added,
        special_policy="hf",
        name=tok.name,
        source=tok.source,
        config=tok.config,
    )
    return _with_format(out, "tiktoken-json", "claude (@anthropic-ai/tokenizer countTokens: NFKC, all specials)")
