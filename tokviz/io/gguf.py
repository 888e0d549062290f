"""GGUF files (llama.cpp, Ollama, LM Studio): the tokenizer from the file's metadata alone.

A GGUF file is a header of typed key/value metadata, tensor descriptions, then the weights. The
tokenizer lives in the ``tokenizer.*`` keys: ``tokenizer.ggml.model`` names the algorithm,
``.tokens``/``.scores``/``.token_type``/``.merges`` hold the vocabulary, ``.pre`` names the
pre-tokenizer (see `gguf_pre`), ``.bos_token_id`` ... the special ids and
``tokenizer.chat_template`` the chat template. The file is read by `gguf_file` in one bounded
pass, memory-mapped: only the header pages are touched, never the weights.

How each ``tokenizer.ggml.model`` becomes a pipeline (the components other loaders use, so every
stage shows in the GUI as for any other file):

==========  ==========================================================================
``gpt2``    byte-level BPE over the merges: one ``Split(Isolated)`` per llama.cpp regex of
            the ``.pre`` name, then ByteLevel; ``ignore_merges`` where llama.cpp sets it
``llama``   SentencePiece BPE by scores (llama.cpp's SPM tokenizer): built as a SentencePiece
            ModelProto and loaded by `sentencepiece` (dummy prefix from
            ``tokenizer.ggml.add_space_prefix``, byte fallback when there are byte tokens)
``t5``      SentencePiece Unigram with the file's ``precompiled_charsmap``, the same way
``bert``    WordPiece, the pipeline of a BERT vocab.txt (`wordpiece_vocab`)
==========  ==========================================================================

Token types (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte: the numbering
SentencePiece uses too) decide the added tokens: control tokens are special added tokens,
user-defined ones ordinary added tokens. Converters pad the token list to the model's embedding
rows with entries spelled ``[PAD<id>]``; those rows are counted and reported
(``padding_entries``), kept out of the vocabulary and never produced by encode.
``add_bos``/``add_eos`` (llama.cpp's defaults per model, then the file's keys) become the
post-processor that ``add_special_tokens=True`` runs.

Anything malformed (wrong magic, truncated header, an unknown value type, token arrays of
different lengths, ids out of range) is a `TokvizFormatError` naming the file and the key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.added_tokens import AddedToken
from ..engine.errors import TokvizFormatError
from ..engine.tokenizer import Tokenizer, TokenizerConfig
from .gguf_file import GGUF_MAGIC, TYPE_NAMES, GGUFValue, read_gguf_metadata
from .gguf_pre import PreSpec, pre_spec

__all__ = ["GGUF_MAGIC", "GGUFVocab", "looks_like_gguf", "read_gguf_vocab", "load_gguf", "gguf_model_names"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# tokenizer.ggml.<name>_token_id keys, in llama.cpp's order ("seperator" is llama.cpp's spelling)
_SPECIAL_KEYS = {
    "bos": "bos_token_id",
    "eos": "eos_token_id",
    "eot": "eot_token_id",
    "eom": "eom_token_id",
    "unk": "unknown_token_id",
    "sep": "seperator_token_id",
    "pad": "padding_token_id",
    "mask": "mask_token_id",
    "cls": "cls_token_id",
    "fim_pre": "fim_pre_token_id",
    "fim_suf": "fim_suf_token_id",
    "fim_mid": "fim_mid_token_id",
    "fim_pad": "fim_pad_token_id",
    "fim_rep": "fim_rep_token_id",
    "fim_sep": "fim_sep_token_id",
}

# llama.cpp's default special ids per model before the file's keys, and its add_bos/add_eos/
# add_sep defaults (llama-vocab.cpp, llama_vocab::impl::load)
_MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {"ids": {"bos": 1, "eos": 2, "unk": 0}, "add_bos": True, "add_eos": False, "add_space_prefix": True},
    "bert": {
        "ids": {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103},
        "add_bos": True, "add_eos": False, "add_sep": True,
    },
    "gpt2": {"ids": {"bos": 11, "eos": 11}, "add_bos": False, "add_eos": False},
    "t5": {"ids": {"eos": 1, "unk": 2, "pad": 0}, "add_bos": False, "add_eos": True},
    # every special id comes from the file; the pre-tokenizer is always gemma4's
    "gemma4": {"ids": {}, "add_bos": False, "add_eos": False},
}

_PAD_ENTRY = re.compile(r"\[PAD(\d+)\]")


def gguf_model_names() -> list[str]:
    """The ``tokenizer.ggml.model`` values this loader builds."""
    return sorted(_MODEL_DEFAULTS)


def looks_like_gguf(data: bytes) -> bool:
    """True when ``data`` starts with the GGUF magic."""
    return data[:4] == GGUF_MAGIC


@dataclass(frozen=True, slots=True, eq=False)
class GGUFVocab:
    """The tokenizer metadata of one GGUF file, as read (nothing derived yet)."""

    model: str
    pre: str | None
    tokens: list[str]
    scores: list[float] | None
    token_types: list[int] | None
    merges: list[str] | None
    special_ids: dict[str, int]  # "bos", "eos", ... -> id, only the keys the file has
    flags: dict[str, bool]  # add_bos, add_eos, add_sep, add_space_prefix, remove_extra_whitespaces
    chat_template: str | None
    precompiled_charsmap: bytes | None
    embedding_rows: int | None  # rows of token_embd.weight, when the file has weights
    general: dict[str, Any] = field(default_factory=dict)  # general.name, general.architecture


# ---------------------------------------------------------------------- reading
def _scalar(fields: dict[str, GGUFValue], key: str, kinds: tuple[type, ...], source: str) -> Any:
    fld = fields.get(key)
    if fld is None:
        return None
    value = fld.value
    if isinstance(value, list):
        raise TokvizFormatError(
            f"expected {'/'.join(k.__name__ for k in kinds)}, got an array of {TYPE_NAMES.get(fld.item_type or 0, '?')}",
            source=source,
            where=key,
        )
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise TokvizFormatError(
            f"expected {'/'.join(k.__name__ for k in kinds)}, got {type(value).__name__} {value!r:.60}",
            source=source,
            where=key,
        )
    return value


_ARRAY_ITEMS = {
    "string": {8},
    "float": {6, 12, 5},
    "int": {0, 1, 2, 3, 4, 5, 10, 11},
    "bytes": {0, 1},
}


def _array(fields: dict[str, GGUFValue], key: str, item: str, source: str) -> list[Any] | None:
    """The array at ``key`` whose items are ``item`` ("string", "float", "int", "bytes"), or None."""
    fld = fields.get(key)
    if fld is None:
        return None
    if fld.item_type is None:
        raise TokvizFormatError(f"expected an array, got {TYPE_NAMES.get(fld.type, '?')}", source=source, where=key)
    if fld.item_type not in _ARRAY_ITEMS[item]:
        raise TokvizFormatError(
            f"expected an array of {item}s, got an array of {TYPE_NAMES.get(fld.item_type, '?')}", source=source, where=key
        )
    if item == "bytes":
        return [v & 0xFF for v in fld.value]
    if item == "string":
        return _decode_strings(fld.value, key, source)
    return list(fld.value)


def _decode_strings(items: list[bytes], key: str, source: str) -> list[str]:
    """UTF-8 entries of a string array: one decode of the NUL-joined entries (an entry holding a
    NUL shows as one split too many), else entry by entry, which also names a bad entry."""
    try:
        out = b"\x00".join(items).decode("utf-8").split("\x00")
        if len(out) == len(items):
            return out
    except UnicodeDecodeError:
        pass
    out = []
    for k, raw in enumerate(items):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise TokvizFormatError(f"entry {k} is not valid UTF-8 (byte {exc.start})", source=source, where=key) from None
    return out


def _refuse_unsupported(source: str) -> Any:
    """A `read_gguf_metadata` stop: an unknown ``tokenizer.ggml.model`` is refused at its key,
    before the token list after it is read."""

    def stop(key: str, value: GGUFValue) -> None:
        if key == "tokenizer.ggml.model" and isinstance(value.value, str) and value.value not in _MODEL_DEFAULTS:
            raise TokvizFormatError(
                f"tokenizer model {value.value!r} is not supported (tokviz builds {', '.join(gguf_model_names())})",
                source=source,
                where="tokenizer.ggml.model",
            )

    return stop


def read_gguf_vocab(path: str | Path, *, source: str | None = None, supported_only: bool = False) -> GGUFVocab:
    """Read the tokenizer metadata of a GGUF file (memory-mapped; weights are never read).

    With ``supported_only`` a model type `load_gguf` cannot build is refused as soon as its key
    is read.
    """
    p = Path(path)
    source = source or str(p)
    meta = read_gguf_metadata(p, source=source, stop=_refuse_unsupported(source) if supported_only else None)
    fields = meta.fields
    model = _scalar(fields, "tokenizer.ggml.model", (str,), source)
    if model is None:
        raise TokvizFormatError("no tokenizer in this GGUF file", source=source, where="tokenizer.ggml.model")
    tokens = _array(fields, "tokenizer.ggml.tokens", "string", source)
    if tokens is None:
        raise TokvizFormatError("the token list is missing", source=source, where="tokenizer.ggml.tokens")
    if not tokens:
        raise TokvizFormatError("the token list is empty", source=source, where="tokenizer.ggml.tokens")
    n = len(tokens)
    scores = _array(fields, "tokenizer.ggml.scores", "float", source)
    types = _array(fields, "tokenizer.ggml.token_type", "int", source)
    for key, arr in (("tokenizer.ggml.scores", scores), ("tokenizer.ggml.token_type", types)):
        if arr is not None and len(arr) != n:
            raise TokvizFormatError(
                f"{len(arr)} entries but tokenizer.ggml.tokens has {n} (the arrays must have one entry per token)",
                source=source,
                where=key,
            )
    specials: dict[str, int] = {}
    for name, key in _SPECIAL_KEYS.items():
        v = _scalar(fields, f"tokenizer.ggml.{key}", (int,), source)
        if v is None:
            continue
        if not 0 <= v < n:
            raise TokvizFormatError(f"id {v} is out of range (the vocabulary has ids 0..{n - 1})",
                                    source=source, where=f"tokenizer.ggml.{key}")
        specials[name] = v
    flags: dict[str, bool] = {}
    for flag in ("add_bos_token", "add_eos_token", "add_sep_token", "add_space_prefix", "remove_extra_whitespaces"):
        v = _scalar(fields, f"tokenizer.ggml.{flag}", (bool,), source)
        if v is not None:
            flags[flag.removesuffix("_token")] = v
    charsmap = _array(fields, "tokenizer.ggml.precompiled_charsmap", "bytes", source)
    general = {k: _scalar(fields, f"general.{k}", (str,), source) for k in ("name", "architecture")}
    shape = meta.tensor_shapes.get("token_embd.weight")
    return GGUFVocab(
        model=model,
        pre=_scalar(fields, "tokenizer.ggml.pre", (str,), source),
        tokens=tokens,
        scores=[float(s) for s in scores] if scores is not None else None,
        token_types=[int(t) for t in types] if types is not None else None,
        merges=_array(fields, "tokenizer.ggml.merges", "string", source),
        special_ids=specials,
        flags=flags,
        chat_template=_scalar(fields, "tokenizer.chat_template", (str,), source),
        precompiled_charsmap=bytes(charsmap) if charsmap else None,
        # rows of the token embedding matrix (its description only; the weights stay unread)
        embedding_rows=int(shape[-1]) if shape is not None and len(shape) >= 2 else None,
        general={k: v for k, v in general.items() if v is not None},
    )


# ---------------------------------------------------------------------- building
def load_gguf(path: str | Path, *, source: str | None = None) -> Tokenizer:
    """Build the `Tokenizer` of a GGUF file.

    >>> tok = load_gguf("ggml-vocab-qwen2.gguf")   # doctest: +SKIP
    >>> tok.encode("Hello world").ids              # doctest: +SKIP
    [9707, 1879]
    """
    source = source or str(path)
    vocab = read_gguf_vocab(path, source=source, supported_only=True)
    defaults = _MODEL_DEFAULTS.get(vocab.model)
    if defaults is None:
        raise TokvizFormatError(
            f"tokenizer model {vocab.model!r} is not supported (tokviz builds {', '.join(gguf_model_names())})",
            source=source,
            where="tokenizer.ggml.model",
        )
    types = vocab.token_types or [NORMAL] * len(vocab.tokens)
    padding = _padding_ids(vocab.tokens, types)
    if vocab.model in ("gpt2", "gemma4"):
        # llama.cpp sets gemma4's pre-tokenizer itself, whatever the file's .pre says
        spec = pre_spec("gemma4" if vocab.model == "gemma4" else vocab.pre, source=source)
        if spec.escape_whitespaces:
            tok = _build_spm_bpe(vocab, types, padding, spec, source)
        else:
            tok = _build_bpe(vocab, types, padding, spec, source)
    elif vocab.model in ("llama", "t5"):
        spec = None
        tok = _build_spm(vocab, types, padding, defaults, source)
    else:
        spec = None
        tok = _build_wpm(vocab, types, padding, source)
    ids = _special_ids(vocab, defaults)
    add_bos = vocab.flags.get("add_bos", spec.add_bos if spec is not None and spec.add_bos else defaults["add_bos"])
    if spec is not None and spec.kind == "gemma4":
        add_bos = True  # llama.cpp overrides the file's add_bos_token for gemma4 (its PR 21500)
    add_eos = vocab.flags.get("add_eos", defaults["add_eos"])
    add_sep = vocab.flags.get("add_sep", defaults.get("add_sep", False) or (spec is not None and spec.add_sep))
    for flag, on, role in (("add_bos", add_bos, "bos"), ("add_eos", add_eos, "eos"), ("add_sep", add_sep, "sep")):
        if on and role not in ids:
            # llama.cpp refuses such a file too ("add_bos is true, but bos_token_id is not set")
            raise TokvizFormatError(
                f"{flag} is on (the file's key or llama.cpp's default) but the file sets no {role} token id",
                source=source,
                where=f"tokenizer.ggml.{_SPECIAL_KEYS[role]}",
            )
    tok.post_processor = _post_processor(vocab.tokens, ids, add_bos=add_bos, add_eos=add_eos, add_sep=add_sep)
    tok.name = vocab.general.get("name") or Path(source).stem
    tok.source = source
    tok.config = _config(vocab, ids, padding, add_bos, add_eos, spec)
    return tok


def _special_ids(vocab: GGUFVocab, defaults: dict[str, Any]) -> dict[str, int]:
    """llama.cpp's default ids for the model (dropped when out of range, as it does), then the file's."""
    ids = {k: v for k, v in defaults["ids"].items() if 0 <= v < len(vocab.tokens)}
    ids.update(vocab.special_ids)
    return ids


def _padding_ids(tokens: Sequence[str], types: Sequence[int]) -> frozenset[int]:
    """Rows a converter added to reach the embedding size: ``[PAD<id>]`` entries and unused ones."""
    out = set()
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty == UNUSED:
            out.add(i)
            continue
        m = _PAD_ENTRY.fullmatch(t)
        if m is not None and int(m.group(1)) == i:
            out.add(i)
    return frozenset(out)


def _added_tokens(tokens: Sequence[str], types: Sequence[int], padding: frozenset[int]) -> list[dict[str, Any]]:
    """Control tokens as special added tokens, user-defined ones as ordinary added tokens."""
    out = []
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty in (CONTROL, USER_DEFINED) and i not in padding and t:
            out.append(
                {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": ty == CONTROL}
            )
    return out


def _build_bpe(vocab: GGUFVocab, types: list[int], padding: frozenset[int], spec: PreSpec, source: str) -> Tokenizer:
    from .hf_json import load_hf_json

    if vocab.merges is None:
        raise TokvizFormatError("a gpt2 (BPE) tokenizer needs merges", source=source, where="tokenizer.ggml.merges")
    token_ids = _vocab_dict(vocab.tokens, padding, source)
    if spec.regexes == (_GPT2_SPEC_REGEX,):
        # one regex that is GPT-2's: ByteLevel's own split (the same cut, and the engine's fast path)
        pre: dict[str, Any] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    else:
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                *({"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False} for r in spec.regexes),
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            ],
        }
    obj = {
        "version": "1.0",
        "added_tokens": _added_tokens(vocab.tokens, types, padding),
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": spec.ignore_merges,
            "vocab": token_ids,
            "merges": vocab.merges,
        },
    }
    return load_hf_json(obj, source=source)


def _build_spm_bpe(
    vocab: GGUFVocab, types: list[int], padding: frozenset[int], spec: PreSpec, source: str
) -> Tokenizer:
    """gemma4 / sarvam-moe: llama.cpp's BPE session with ``escape_whitespaces`` and no byte
    encoding. Each space becomes U+2581, the text is split into runs of newlines and the lines
    between them, each run is merged by rank from single UTF-8 characters, and a final piece
    that is not a token becomes its ``<0xXX>`` byte tokens (a byte without one is dropped).
    No dummy prefix, no unknown token. In HF terms: a Replace normalizer, one Split, BPE with
    byte fallback; decoding undoes the U+2581 and the byte tokens (Replace, ByteFallback, Fuse)."""
    from .hf_json import load_hf_json

    if vocab.merges is None:
        raise TokvizFormatError(f"a {vocab.model} (BPE) tokenizer needs merges", source=source, where="tokenizer.ggml.merges")
    token_ids = _vocab_dict(vocab.tokens, padding, source)
    byte_tokens = sum(1 for b in range(256) if f"<0x{b:02X}>" in token_ids)
    if byte_tokens not in (0, 256):
        # llama.cpp drops just the missing bytes of a piece; HF's byte fallback would give the
        # unknown token or drop the whole character: no pipeline reproduces the mix
        raise TokvizFormatError(
            f"the vocabulary has {byte_tokens} of the 256 <0xXX> byte tokens; tokviz reproduces llama.cpp's "
            "byte fallback only with all of them or none",
            source=source,
            where="tokenizer.ggml.tokens",
        )
    obj = {
        "version": "1.0",
        "added_tokens": _added_tokens(vocab.tokens, types, padding),
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False} for r in spec.regexes
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
            ],
        },
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": byte_tokens == 256,
            "ignore_merges": False, "vocab": token_ids, "merges": vocab.merges,
        },
    }
    tok = load_hf_json(obj, source=source)
    if spec.whole_newline_runs:
        _check_newline_runs(tok, token_ids, source)
    return tok


def _check_newline_runs(tok: Tokenizer, token_ids: dict[str, int], source: str) -> None:
    """llama.cpp emits a run of newlines that is itself a token whole, where plain BPE would
    merge it by rank. Both agree when the merges build every such token from its newlines (as
    in Gemma 4's vocabulary); a file where they do not is refused rather than approximated."""
    for token, id_ in token_ids.items():
        if token and token.strip("\n") == "" and [t[0] for t in tok.model.tokenize(token)] != [id_]:
            raise TokvizFormatError(
                f"the merges do not build the newline token {token!r} (id {id_}) from its newlines; llama.cpp "
                "emits such a run whole and tokviz's BPE would not",
                source=source,
                where="tokenizer.ggml.merges",
            )


def _vocab_dict(tokens: Sequence[str], padding: frozenset[int], source: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if i in padding:
            continue
        if t in out:
            raise TokvizFormatError(
                f"token {t!r:.60} appears twice (ids {out[t]} and {i})", source=source, where=f"tokenizer.ggml.tokens[{i}]"
            )
        out[t] = i
    return out


def _build_wpm(vocab: GGUFVocab, types: list[int], padding: frozenset[int], source: str) -> Tokenizer:
    from .hf_json import load_hf_json
    from .wordpiece_vocab import bert_tokenizer_json, looks_cased

    # llama.cpp's converter writes WordPiece tokens in "phantom space" form: "▁word" starts a
    # word, a bare "word" continues one (HF's "##word"), "[X]" specials stay; undo it
    tokens = [_from_phantom_space(t) for t in vocab.tokens]
    vocab = _replace_tokens(vocab, tokens)
    token_ids = _vocab_dict(tokens, padding, source)
    ids = _special_ids(vocab, _MODEL_DEFAULTS["bert"])
    cls_id = ids.get("cls", ids.get("bos"))
    names = {}
    for role, id_ in (("cls", cls_id), ("sep", ids.get("sep")), ("unk", ids.get("unk"))):
        if id_ is None or not 0 <= id_ < len(vocab.tokens):
            raise TokvizFormatError(f"a bert tokenizer needs a {role} token", source=source,
                                    where=f"tokenizer.ggml.{_SPECIAL_KEYS[role]}")
        names[role] = vocab.tokens[id_]
    obj = bert_tokenizer_json(
        token_ids,
        lowercase=not looks_cased(token_ids),
        cls=names["cls"],
        sep=names["sep"],
        unk=names["unk"],
        specials=[a["content"] for a in _added_tokens(vocab.tokens, types, padding)],
    )
    return load_hf_json(obj, source=source)


def _from_phantom_space(token: str) -> str:
    if token.startswith("\u2581"):
        return token[1:]
    if len(token) > 1 and token.startswith("[") and token.endswith("]"):
        return token
    return "##" + token


def _replace_tokens(vocab: GGUFVocab, tokens: list[str]) -> GGUFVocab:
    from dataclasses import replace

    return replace(vocab, tokens=tokens)


def _build_spm(
    vocab: GGUFVocab, types: list[int], padding: frozenset[int], defaults: dict[str, Any], source: str
) -> Tokenizer:
    """llama (SentencePiece BPE by scores) and t5 (Unigram): a ModelProto, then `sentencepiece`."""
    from . import sentencepiece_model_pb2 as pb
    from .sentencepiece import load_sentencepiece_model

    if vocab.scores is None:
        raise TokvizFormatError(f"a {vocab.model} tokenizer needs scores", source=source, where="tokenizer.ggml.scores")
    ids = _special_ids(vocab, defaults)
    proto = pb.ModelProto()
    unk_id = ids.get("unk")
    for i, (t, s, ty) in enumerate(zip(vocab.tokens, vocab.scores, types)):
        piece = proto.pieces.add()
        piece.piece = t or f"[EMPTY_{i}]"  # llama.cpp's name for an empty entry
        piece.score = s
        # padding rows and every UNKNOWN but the unk id (phi-3 pads with UNKNOWN entries) are unused
        if i == unk_id:
            ty = UNKNOWN  # phi-3 types its <unk> as a control token
        elif i in padding or ty == UNKNOWN or ty not in (1, 2, 3, 4, 5, 6):
            ty = UNUSED
        piece.type = ty
    ts = proto.trainer_spec
    ts.model_type = 2 if vocab.model == "llama" else 1
    ts.byte_fallback = BYTE in types
    ts.unk_id = unk_id if unk_id is not None else 0
    ts.bos_id = ids.get("bos", -1)
    ts.eos_id = ids.get("eos", -1)
    ts.pad_id = ids.get("pad", -1)
    ns = proto.normalizer_spec
    ns.name = "identity"
    ns.add_dummy_prefix = vocab.flags.get("add_space_prefix", defaults.get("add_space_prefix", False))
    ns.remove_extra_whitespaces = vocab.flags.get("remove_extra_whitespaces", False)
    ns.escape_whitespaces = True
    if vocab.precompiled_charsmap:
        ns.precompiled_charsmap = vocab.precompiled_charsmap
        ns.name = "precompiled"
    tok = load_sentencepiece_model(proto.SerializeToString(), source=source)
    added = [
        AddedToken(a["content"], a["id"], special=a["special"], normalized=False)
        for a in _added_tokens(vocab.tokens, types, padding)
    ]
    return Tokenizer(tok.model, normalizer=tok.normalizer, decoder=tok.decoder, added_tokens=added, config=tok.config)


_GPT2_SPEC_REGEX = pre_spec("gpt-2").regexes[0]


def _post_processor(tokens: Sequence[str], ids: dict[str, int], *, add_bos: bool, add_eos: bool, add_sep: bool) -> Any:
    """What ``add_special_tokens=True`` adds, as llama.cpp does: BOS first, EOS (or SEP) last."""
    from .post_processing import around_processor

    first = [ids["bos"]] if add_bos and "bos" in ids else []
    last = [ids["eos"]] if add_eos and "eos" in ids else []
    if add_sep and "sep" in ids:
        last.append(ids["sep"])
    return around_processor([(i, tokens[i]) for i in first], [(i, tokens[i]) for i in last], where="gguf post_processor")


def _config(
    vocab: GGUFVocab, ids: dict[str, int], padding: frozenset[int], add_bos: bool, add_eos: bool, spec: PreSpec | None
) -> TokenizerConfig:
    def tok_at(role: str) -> str | None:
        i = ids.get(role)
        return vocab.tokens[i] if i is not None and 0 <= i < len(vocab.tokens) else None

    extra: dict[str, Any] = {
        "format": "gguf",
        "gguf_model": vocab.model,
        "gguf_pre": vocab.pre,
        "pre_tokenizer_type": spec.kind if spec is not None else None,
        "token_list_entries": len(vocab.tokens),
        "padding_entries": len(padding),
        "special_ids": dict(sorted(ids.items())),
        "merges": len(vocab.merges) if vocab.merges is not None else None,
    }
    extra.update({f"general.{k}": v for k, v in vocab.general.items()})
    return TokenizerConfig(
        bos_token=tok_at("bos"),
        eos_token=tok_at("eos"),
        pad_token=tok_at("pad"),
        unk_token=tok_at("unk"),
        add_bos_token=add_bos,
        add_eos_token=add_eos,
        chat_template=vocab.chat_template,
        # GGUF token lists have one entry per embedding row (converters pad them to it)
        embedding_rows=vocab.embedding_rows if vocab.embedding_rows is not None else len(vocab.tokens),
        extra=extra,
    )
