"""Sniff a tokenizer file's format from its content and load it: ``load(path) -> Tokenizer``.

The file name is never trusted: a ``.json`` may be a vocab.json or a tokenizer_config.json, a
``.model`` may be anything. gzip is undone first (by its magic bytes), then the content decides:

===============================  ===========================================================
content                          loader
===============================  ===========================================================
JSON object with "model"         HF tokenizer.json (`hf_json`)
JSON object str -> int           GPT-2 vocab.json, needs merges.txt beside it (`gpt2_files`)
JSON with "config" + "vocab"     Mistral tekken.json (`tekken`)
JSON (or JS module) bpe_ranks    js-tiktoken rank JSON, claude.json (`tiktoken_json`)
``<base64> <int>`` lines         tiktoken rank file (`tiktoken_ranks`)
protobuf ModelProto              SentencePiece .model (`sentencepiece`)
``GGUF`` magic                   GGUF model or vocab file (`gguf`; memory-mapped, header only)
CLIP merges (``</w>``)            CLIP's bpe_simple_vocab, vocabulary derived (`clip`)
one token per line               BERT vocab.txt (`wordpiece_vocab`)
===============================  ===========================================================

A directory is searched for tokenizer.json, tekken.json, tokenizer.model, vocab.json +
merges.txt, a ``*.tiktoken`` file, vocab.txt, a ``*.gguf`` file and CLIP's bpe_simple_vocab, in
that order (each possibly ``.gz``), then for a rank JSON by its content. The configuration files
of a Hugging Face folder (tokenizer_config.json, special_tokens_map.json, chat templates:
`hf_config`) apply to the formats such a folder holds. A GGUF file is recognised by its first four
bytes before anything else is read: model files are gigabytes, and only their header is needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.errors import TokvizFormatError
from .files import open_regular, read_bytes, read_file, resolve_path, sibling
from .json_text import loads, try_loads

if TYPE_CHECKING:
    from ..engine.tokenizer import Tokenizer

__all__ = ["load", "sniff", "format_details"]

_JSON_KIND = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}



def load(
    path: str | Path | bytes,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Load any supported tokenizer file (or folder, or the bytes of a file).

    ``pattern``/``special_tokens`` are for a tiktoken rank file that is not one of the published
    encodings (they override the preset of a published one).

    >>> tok = load("cl100k_base.tiktoken")   # doctest: +SKIP
    >>> tok.encode("hello world").ids        # doctest: +SKIP
    [15339, 1917]
    """
    if isinstance(path, (bytes, bytearray, memoryview)):
        return _load_data(
            read_bytes(bytes(path), source="<bytes>"),
            source="<bytes>",
            folder=None,
            pattern=pattern,
            special_tokens=special_tokens,
        )
    p = resolve_path(Path(path))
    source = str(p)
    if _file_is_gguf(p):
        return _load_gguf(p, source=source, pattern=pattern, special_tokens=special_tokens)
    data = read_bytes(read_file(p), source=source)
    return _load_data(data, source=source, folder=p.parent, pattern=pattern, special_tokens=special_tokens)


def _file_is_gguf(p: Path) -> bool:
    from .gguf import GGUF_MAGIC

    try:
        with open_regular(p) as f:  # never blocks on a FIFO
            return f.read(4) == GGUF_MAGIC
    except (OSError, TokvizFormatError):
        return False  # `read_file` says why


def _load_gguf(
    path: Path, *, source: str, pattern: str | None, special_tokens: Mapping[str, int] | None
) -> Tokenizer:
    from .gguf import load_gguf

    if pattern is not None or special_tokens is not None:
        raise TokvizFormatError("pattern= and special_tokens= only apply to tiktoken rank files", source=source)
    return load_gguf(path, source=source)


def _load_gguf_bytes(data: bytes, *, source: str) -> Tokenizer:
    """GGUF content given as bytes: the reader maps a file, so through a temporary one."""
    import os
    import tempfile

    fd, name = tempfile.mkstemp(suffix=".gguf")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return _load_gguf(Path(name), source=source, pattern=None, special_tokens=None)
    finally:
        os.unlink(name)


def sniff(data: bytes) -> str:
    """Name the format of (decompressed) content: ``"hf-json"``, ``"vocab-json"``,
    ``"tokenizer-config"``, ``"json"``, ``"tiktoken"``, ``"sentencepiece"``, ``"merges"``,
    ``"vocab-txt"``, ``"gguf"``, ``"text"`` (none of these), ``"empty"`` or ``"binary"``.

    >>> sniff(b'{"model": {"type": "BPE"}}'), sniff(b"IQ== 0\\n"), sniff(b"[PAD]\\n[UNK]\\n")
    ('hf-json', 'tiktoken', 'vocab-txt')
    """
    return _classify(data)[0]


def _classify(data: bytes) -> tuple[str, Any]:
    """`sniff`, plus the parsed JSON value (so a big tokenizer.json is parsed once)."""
    if data[:4] == b"GGUF":
        return "gguf", None
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        return "empty", None
    if head[:1] == b"{":
        return _sniff_json(data)
    if head[:1] in (b"e", b"m"):
        from .tiktoken_json import js_module_json, looks_like_tiktoken_json

        body = js_module_json(head)
        obj = try_loads(body) if body is not None else None
        if looks_like_tiktoken_json(obj):
            return "tiktoken-json", obj
    if head[:1] == b"[":
        # a JSON array is no tokenizer, but "[PAD]" opens every BERT vocab.txt
        kind, obj = _sniff_json(data)
        if obj is not None:
            return kind, obj
    if _looks_like_model_proto(data):
        return "sentencepiece", None
    from .tiktoken_ranks import looks_like_ranks

    if looks_like_ranks(data):
        return "tiktoken", None
    try:
        text = data[:65536].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < 65536 - 4:  # not just a character cut by the 64 KiB window
            return "binary", None
        text = data[: exc.start].decode("utf-8")
    if any(c in text for c in "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15"):
        return "binary", None
    from .gpt2_files import looks_like_merges

    from .clip import looks_like_clip_merges

    if looks_like_clip_merges(text, data.count(b"\n")):
        return "clip-merges", None
    if looks_like_merges(text):
        return "merges", None
    # vocab.txt: one token per line; tokens never hold spaces. Prose or code has them on most
    # lines, so a file with more than a few spaced lines is not a vocabulary.
    lines = [ln.rstrip("\r") for ln in text.split("\n")[:2000]]
    spaced = sum(1 for ln in lines if " " in ln.strip() or "\t" in ln)
    if spaced > max(2, len(lines) // 100):
        return "text", None
    return "vocab-txt", None


def _sniff_json(data: bytes) -> tuple[str, Any]:
    obj = try_loads(data)
    if obj is None:
        return "json", None  # malformed or too deep: the JSON branch of `_load_data` says why
    if isinstance(obj, dict):
        # "model" is also an ordinary token of GPT-2's vocab.json: only an object counts
        if isinstance(obj.get("model"), dict):
            return "hf-json", obj
        from .tiktoken_json import looks_like_tiktoken_json

        if looks_like_tiktoken_json(obj):
            return "tiktoken-json", obj
        from .tekken import looks_like_tekken

        if looks_like_tekken(obj):
            return "tekken", obj
        if obj and all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in obj.items()
        ):
            return "vocab-json", obj
        if "tokenizer_class" in obj or "chat_template" in obj or "added_tokens_decoder" in obj:
            return "tokenizer-config", obj
    return "json", obj


def _looks_like_model_proto(data: bytes) -> bool:
    """A SentencePiece ModelProto starts with field 1 (``pieces``, length-delimited): byte 0x0A,
    a varint length, and the first SentencePiece message, itself starting with its ``piece``
    string field (0x0A) or, rarely, ``score`` (0x15) / ``type`` (0x18)."""
    if len(data) < 4 or data[0] != 0x0A:
        return False
    i, length, shift = 1, 0, 0
    while i < len(data) and i < 6:
        b = data[i]
        length |= (b & 0x7F) << shift
        shift += 7
        i += 1
        if not b & 0x80:
            break
    else:
        return False
    return 0 < length and i < len(data) and data[i] in (0x0A, 0x15, 0x18)


def _decode_text(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TokvizFormatError(f"not valid UTF-8 text (byte {exc.start})", source=source) from None


def _load_hf_folder_format(kind: str, data: bytes, parsed: Any, *, source: str, folder: Path | None) -> Tokenizer | None:
    """The formats a Hugging Face model folder holds (their configuration files apply), or None."""
    if kind == "hf-json":
        from .hf_json import load_hf_json

        return load_hf_json(parsed, source=source)
    if kind == "vocab-json":
        from .gpt2_files import load_gpt2_files

        merges_path = sibling(folder, "merges.txt")
        if merges_path is None:
            raise TokvizFormatError(
                "this is a GPT-2 style vocab.json; it needs merges.txt in the same folder "
                "(load the folder or the vocab.json path, not its bytes)",
                source=source,
            )
        merges = read_bytes(read_file(merges_path), source=str(merges_path))
        return load_gpt2_files(
            parsed, _decode_text(merges, str(merges_path)), source=source, merges_source=str(merges_path)
        )
    if kind == "clip-merges":
        if sibling(folder, "vocab.json") is not None:
            raise TokvizFormatError(
                "this is a merges.txt with a vocab.json beside it; load the vocab.json (or the folder) instead",
                source=source,
            )
        from .clip import load_clip_merges

        return load_clip_merges(_decode_text(data, source), source=source)
    if kind == "sentencepiece":
        from .sentencepiece import load_sentencepiece_model

        return load_sentencepiece_model(data, source=source)
    if kind == "vocab-txt":
        from .wordpiece_vocab import load_wordpiece_vocab

        return load_wordpiece_vocab(_decode_text(data, source), source=source)
    return None


def _load_data(
    data: bytes,
    *,
    source: str,
    folder: Path | None,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None,
) -> Tokenizer:
    kind, parsed = _classify(data)
    if kind == "gguf":
        if pattern is not None or special_tokens is not None:
            raise TokvizFormatError("pattern= and special_tokens= only apply to tiktoken rank files", source=source)
        return _load_gguf_bytes(data, source=source)
    if kind == "tiktoken":
        from .tiktoken_ranks import load_tiktoken_ranks

        return load_tiktoken_ranks(data, source=source, pattern=pattern, special_tokens=special_tokens)
    if kind == "tiktoken-json":
        from .tiktoken_json import load_tiktoken_json

        return load_tiktoken_json(parsed, source=source, pattern=pattern, special_tokens=special_tokens)
    if pattern is not None or special_tokens is not None:
        raise TokvizFormatError(
            "pattern= and special_tokens= only apply to tiktoken rank files", source=source
        )
    if kind == "tekken":
        from .tekken import load_tekken

        return load_tekken(parsed, source=source)
    tok = _load_hf_folder_format(kind, data, parsed, source=source, folder=folder)
    if tok is not None:
        if folder is not None:
            from .hf_config import apply_folder_config, read_folder_config

            fc = read_folder_config(folder)
            if fc is not None:
                tok = apply_folder_config(tok, fc)
        return tok
    if kind == "json":
        obj = loads(data, source=source)
        raise TokvizFormatError(
            f"a JSON {'object' if isinstance(obj, dict) else _JSON_KIND.get(type(obj), 'value')} that is not a tokenizer (expected "
            "tokenizer.json with a "
            '"model" or a vocab.json token -> id object)',
            source=source,
        )
    messages = {
        "tokenizer-config": "this is a tokenizer_config.json; load tokenizer.json (or the folder) instead",
        "merges": "this is a merges.txt; load vocab.json beside it (or the folder) instead",
        "empty": "empty file",
        "text": "text that is not a tokenizer file (expected tokenizer.json, a tiktoken rank file, "
        "vocab.json + merges.txt or a one-token-per-line vocab.txt)",
        "binary": "unrecognised binary content (expected tokenizer.json, a tiktoken rank file, a "
        "SentencePiece .model, vocab.json + merges.txt or vocab.txt)",
    }
    raise TokvizFormatError(messages[kind], source=source)


# config.extra keys worth showing per format, with the words `tokviz info` prints for them
_DETAILS = {
    "gguf": (
        ("gguf_model", "tokenizer.ggml.model"),
        ("gguf_pre", "tokenizer.ggml.pre"),
        ("pre_tokenizer_type", "llama.cpp pre-tokenizer"),
        ("token_list_entries", "token list entries"),
        ("padding_entries", "padding rows"),
        ("merges", "merges"),
        ("special_ids", "special ids"),
    ),
    "tiktoken": (
        ("published_as", "recognised as"),
        ("pattern_preset", "pattern preset"),
        ("n_vocab", "n_vocab"),
    ),
    "clip-merges": (
        ("merges", "merges used"),
        ("derived_vocab", "derived vocabulary"),
    ),
    "tekken": (
        ("tekken_version", "tekken version"),
        ("num_special_tokens", "special ids"),
        ("control_tokens", "control tokens"),
        ("vocab_entries", "vocabulary"),
        ("multimodal", "multimodal config"),
    ),
    "tiktoken-json": (
        ("published_as", "recognised as"),
        ("pattern_preset", "pattern preset"),
        ("n_vocab", "n_vocab"),
        ("explicit_n_vocab", "explicit_n_vocab"),
    ),
}


# what `tokviz info` calls a format the file's name does not say
_FORMAT_NAMES = {
    "tiktoken-json": "js-tiktoken rank JSON (pat_str, special_tokens, compressed bpe_ranks)",
    "tekken": "Mistral tekken.json (mistral-common's Tekkenizer)",
    "clip-merges": "CLIP merges (bpe_simple_vocab): vocabulary derived from bytes, </w> and merges",
}


def format_details(tok: Tokenizer) -> dict[str, Any]:
    """What the file format adds to `Tokenizer.info`: for a GGUF file its model and pre names,
    the token list with its padding rows, the special ids; for a rank file the preset in use.

    Keys are the words ``tokviz info`` prints; empty for formats with nothing to add.
    """
    extra = tok.config.extra
    fmt = extra.get("format")
    out: dict[str, Any] = {}
    if fmt in _FORMAT_NAMES:
        out["format"] = _FORMAT_NAMES[fmt]
    for key, label in _DETAILS.get(fmt, ()):  # type: ignore[arg-type]
        value = extra.get(key)
        if value is not None:
            out[label] = value
    if extra.get("config_sources"):
        from .hf_config import config_details

        out.update(config_details(extra, tok.config))
    if fmt == "gguf":
        out["add_bos / add_eos"] = f"{tok.config.add_bos_token} / {tok.config.add_eos_token}"
        out["chat template"] = "yes" if tok.config.chat_template else "no"
    return out
