"""GGUF files (llama.cpp, Ollama, LM Studio): the tokenizer from the file's metadata alone.

A GGUF file is a header of typed key/value metadata, tensor descriptions, then the weights. The
tokenizer lives in the ``tokenizer.*`` keys: ``tokenizer.ggml.model`` names the algorithm,
``.tokens``/``.scores``/``.token_type``/``.merges`` hold the vocabulary, ``.pre`` names the
pre-tokenizer (see `gguf_pre`), ``.bos_token_id`` ... the special ids and
``tokenizer.chat_template`` the chat template. The file is read with the PyPI package ``gguf``
(llama.cpp's own reader), memory-mapped: only the header pages are touched, never the weights.

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
from .gguf_pre import PreSpec, pre_spec

__all__ = ["GGUF_MAGIC", "GGUFVocab", "looks_like_gguf", "read_gguf_vocab", "load_gguf", "gguf_model_names"]

GGUF_MAGIC = b"GGUF"

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
def _mapped_reader_class() -> type:
    import numpy as np
    from gguf import GGUFReader

    class MappedReader(GGUFReader):
        """``GGUFReader`` over a plain ndarray view of its memory map.

        The reader slices its ``np.memmap`` once per value (hundreds of thousands of times for
        a 150k-token vocabulary), and every memmap slice runs memmap's ``__array_finalize__``.
        A base-class view of the same mapping reads the same pages without that per-slice
        cost (`bench/bench_gguf.py` times the load against the bare reader); nothing else changes.
        """

        @property
        def data(self) -> Any:
            return self._plain_data

        @data.setter
        def data(self, value: Any) -> None:
            self._plain_data = value.view(np.ndarray)

    return MappedReader


def _open_reader(path: Path, source: str) -> Any:
    """A ``gguf.GGUFReader`` over ``path``; any failure inside the reader becomes a
    `TokvizFormatError` naming the key where it stopped."""
    _MappedReader = _mapped_reader_class()

    try:
        if path.stat().st_size < 24:  # magic, version, tensor count, kv count
            with path.open("rb") as f:
                head = f.read(4)
            if head[:4] != GGUF_MAGIC:
                raise TokvizFormatError("not a GGUF file (wrong magic)", source=source)
            raise TokvizFormatError("truncated GGUF header", source=source, where="header")
        with path.open("rb") as f:
            if f.read(4) != GGUF_MAGIC:
                raise TokvizFormatError("not a GGUF file (wrong magic)", source=source)
    except OSError as exc:
        raise TokvizFormatError(f"cannot read: {exc.strerror or exc}", source=source) from None
    _check_counts(path, source)
    reader = _MappedReader.__new__(_MappedReader)
    try:
        reader.__init__(str(path))  # split so the fields read before a failure can be inspected
    except Exception as exc:  # noqa: BLE001 - the reader raises ValueError, IndexError, KeyError ...
        raise TokvizFormatError(_reader_failure(reader, exc), source=source, where=_failing_key(reader)) from None
    return reader


#: bytes of one GGUF scalar by value type (8 = STRING, 9 = ARRAY are walked)
_SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_MAX_ARRAY_NESTING = 8


def _check_counts(path: Path, source: str) -> None:
    """Walk the metadata once and refuse any count the rest of the file cannot hold.

    The gguf reader trusts every count: at the end of the mapping a scalar reads as an empty view
    of 0 bytes, so a damaged array length makes it append views forever (memory without bound)
    instead of failing. Here each string, array and key count is checked against the bytes left,
    without recursion past a small nesting depth; the reader then only sees counts that fit.
    """
    import mmap
    import struct

    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        size = len(m)
        version = struct.unpack_from("<I", m, 4)[0]
        bo = ">" if version & 0xFFFF == 0 and version else "<"  # a big-endian file, as the reader allows
        pos = 8

        def take(fmt: str, where: str) -> int:
            nonlocal pos
            n = struct.calcsize(fmt)
            if pos + n > size:
                raise TokvizFormatError("truncated GGUF file (it ends inside this entry)", source=source, where=where)
            (v,) = struct.unpack_from(bo + fmt, m, pos)
            pos += n
            return v

        def need(count: int, each: int, what: str, where: str) -> None:
            if count * each > size - pos:
                raise TokvizFormatError(
                    f"truncated or damaged GGUF file: {what} count {count:,} does not fit in the"
                    f" {size - pos:,} bytes left",
                    source=source,
                    where=where,
                )

        def string(where: str) -> bytes:
            nonlocal pos
            n = take("Q", where)
            need(n, 1, "string byte", where)
            pos += n
            return bytes(m[pos - n : pos])

        def value(vtype: int, where: str, depth: int = 0) -> None:
            nonlocal pos
            if vtype in _SCALAR_BYTES:
                need(1, _SCALAR_BYTES[vtype], "value byte", where)
                pos += _SCALAR_BYTES[vtype]
            elif vtype == 8:
                string(where)
            elif vtype == 9:
                if depth >= _MAX_ARRAY_NESTING:
                    raise TokvizFormatError("arrays nested too deep", source=source, where=where)
                itype, count = take("I", where), take("Q", where)
                if itype in _SCALAR_BYTES:
                    need(count, _SCALAR_BYTES[itype], "array item", where)
                    pos += count * _SCALAR_BYTES[itype]
                    return
                need(count, 8 if itype == 8 else 12, "array item", where)
                for _ in range(count):
                    value(itype, where, depth + 1)
            else:
                raise TokvizFormatError(f"unknown GGUF value type ({vtype})", source=source, where=where)

        tensors = take("Q", "header")
        kv_count = take("Q", "header")
        need(kv_count, 12, "metadata key", "header")
        need(tensors, 24, "tensor", "header")
        key = ""
        for _ in range(kv_count):
            key = string(f"the key after {key!r}" if key else "the first key").decode("utf-8", "replace")
            value(take("I", f"key {key!r}"), f"key {key!r}")


def _reader_failure(reader: Any, exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    # numpy's complaints about a view past the end of the mapping are the file ending early
    truncated = ("out of bounds", "larger than", "divisor of the total size")
    if isinstance(exc, (IndexError, OverflowError)) or any(t in text for t in truncated):
        return "truncated GGUF file (it ends inside this entry)"
    if "field type" in text or "is not a valid GGUFValueType" in text:
        return f"unknown GGUF value type ({text})"
    return f"malformed GGUF file ({type(exc).__name__}: {text})"


def _failing_key(reader: Any) -> str:
    """The metadata key the reader was reading when it failed: the one after the last it stored."""
    fields = getattr(reader, "fields", None)
    if not fields:
        return "header"
    last = next(reversed(fields.values()))
    if last.name.startswith("GGUF."):
        if last.name != "GGUF.kv_count":
            return "header"
    try:
        offset = last.offset + sum(int(p.nbytes) for p in last.parts)
        length, name = reader._get_str(offset)
        key = bytes(name).decode("utf-8", "replace")
        if key and len(name) < int(length[0]):
            return f"key {key + '...'!r} (its name is cut off)"
        if key:
            return f"key {key!r}"
    except Exception:  # noqa: BLE001 - the key's own name may be what is cut off
        pass
    return f"the key after {last.name!r}"


def _field(reader: Any, key: str) -> Any:
    return reader.fields.get(key)


def _scalar(reader: Any, key: str, kinds: tuple[type, ...], source: str) -> Any:
    fld = _field(reader, key)
    if fld is None:
        return None
    value = _contents(fld, key, source)
    if isinstance(value, list) or not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise TokvizFormatError(
            f"expected {'/'.join(k.__name__ for k in kinds)}, got {type(value).__name__} {value!r:.60}",
            source=source,
            where=key,
        )
    return value


def _contents(fld: Any, key: str, source: str) -> Any:
    try:
        return fld.contents()
    except UnicodeDecodeError as exc:
        raise TokvizFormatError(f"string is not valid UTF-8 (byte {exc.start})", source=source, where=key) from None
    except Exception as exc:  # noqa: BLE001 - the reader's own failures, never a crash
        raise TokvizFormatError(f"unreadable value ({type(exc).__name__}: {exc})", source=source, where=key) from None


def _array(reader: Any, key: str, item: str, source: str) -> list[Any] | None:
    """The array at ``key`` whose items are ``item`` ("string", "float", "int"), or None."""
    from gguf import GGUFValueType as T

    fld = _field(reader, key)
    if fld is None:
        return None
    types = list(fld.types)
    if not types or types[0] != T.ARRAY:
        raise TokvizFormatError(f"expected an array, got {types[0].name if types else 'nothing'}", source=source, where=key)
    allowed = {
        "string": {T.STRING},
        "float": {T.FLOAT32, T.FLOAT64, T.INT32},
        "int": {T.INT32, T.UINT32, T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT64, T.UINT64},
        "bytes": {T.INT8, T.UINT8},
    }[item]
    if len(types) > 1 and types[-1] not in allowed:
        raise TokvizFormatError(f"expected an array of {item}s, got an array of {types[-1].name}", source=source, where=key)
    if item == "bytes":
        import numpy as np

        parts = [fld.parts[i] for i in fld.data]
        return list(np.concatenate(parts).astype(np.uint8).tobytes()) if parts else []
    if item == "string":
        out: list[str] = []
        for k, idx in enumerate(fld.data):
            try:
                out.append(fld.parts[idx].tobytes().decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise TokvizFormatError(
                    f"entry {k} is not valid UTF-8 (byte {exc.start})", source=source, where=key
                ) from None
        return out
    return _contents(fld, key, source)


def read_gguf_vocab(path: str | Path, *, source: str | None = None) -> GGUFVocab:
    """Read the tokenizer metadata of a GGUF file (memory-mapped; weights are never read)."""
    p = Path(path)
    source = source or str(p)
    reader = _open_reader(p, source)
    model = _scalar(reader, "tokenizer.ggml.model", (str,), source)
    if model is None:
        raise TokvizFormatError("no tokenizer in this GGUF file", source=source, where="tokenizer.ggml.model")
    tokens = _array(reader, "tokenizer.ggml.tokens", "string", source)
    if tokens is None:
        raise TokvizFormatError("the token list is missing", source=source, where="tokenizer.ggml.tokens")
    if not tokens:
        raise TokvizFormatError("the token list is empty", source=source, where="tokenizer.ggml.tokens")
    n = len(tokens)
    scores = _array(reader, "tokenizer.ggml.scores", "float", source)
    types = _array(reader, "tokenizer.ggml.token_type", "int", source)
    for key, arr in (("tokenizer.ggml.scores", scores), ("tokenizer.ggml.token_type", types)):
        if arr is not None and len(arr) != n:
            raise TokvizFormatError(
                f"{len(arr)} entries but tokenizer.ggml.tokens has {n} (the arrays must have one entry per token)",
                source=source,
                where=key,
            )
    specials: dict[str, int] = {}
    for name, key in _SPECIAL_KEYS.items():
        v = _scalar(reader, f"tokenizer.ggml.{key}", (int,), source)
        if v is None:
            continue
        if not 0 <= v < n:
            raise TokvizFormatError(f"id {v} is out of range (the vocabulary has ids 0..{n - 1})",
                                    source=source, where=f"tokenizer.ggml.{key}")
        specials[name] = v
    flags: dict[str, bool] = {}
    for flag in ("add_bos_token", "add_eos_token", "add_sep_token", "add_space_prefix", "remove_extra_whitespaces"):
        v = _scalar(reader, f"tokenizer.ggml.{flag}", (bool,), source)
        if v is not None:
            flags[flag.removesuffix("_token")] = v
    charsmap = _array(reader, "tokenizer.ggml.precompiled_charsmap", "bytes", source)
    general = {k: _scalar(reader, f"general.{k}", (str,), source) for k in ("name", "architecture")}
    return GGUFVocab(
        model=model,
        pre=_scalar(reader, "tokenizer.ggml.pre", (str,), source),
        tokens=tokens,
        scores=[float(s) for s in scores] if scores is not None else None,
        token_types=[int(t) for t in types] if types is not None else None,
        merges=_array(reader, "tokenizer.ggml.merges", "string", source),
        special_ids=specials,
        flags=flags,
        chat_template=_scalar(reader, "tokenizer.chat_template", (str,), source),
        precompiled_charsmap=bytes(charsmap) if charsmap else None,
        embedding_rows=_embedding_rows(reader),
        general={k: v for k, v in general.items() if v is not None},
    )


def _embedding_rows(reader: Any) -> int | None:
    """Rows of the token embedding matrix (its description only; the weights stay unread)."""
    for t in getattr(reader, "tensors", ()):
        if t.name == "token_embd.weight" and len(t.shape) >= 2:
            return int(t.shape[-1])  # gguf lists ggml's ne order: [n_embd, n_vocab]
    return None


# ---------------------------------------------------------------------- building
def load_gguf(path: str | Path, *, source: str | None = None) -> Tokenizer:
    """Build the `Tokenizer` of a GGUF file.

    >>> tok = load_gguf("ggml-vocab-qwen2.gguf")   # doctest: +SKIP
    >>> tok.encode("Hello world").ids              # doctest: +SKIP
    [9707, 1879]
    """
    source = source or str(path)
    vocab = read_gguf_vocab(path, source=source)
    defaults = _MODEL_DEFAULTS.get(vocab.model)
    if defaults is None:
        raise TokvizFormatError(
            f"tokenizer model {vocab.model!r} is not supported (tokviz builds {', '.join(gguf_model_names())})",
            source=source,
            where="tokenizer.ggml.model",
        )
    types = vocab.token_types or [NORMAL] * len(vocab.tokens)
    padding = _padding_ids(vocab.tokens, types)
    if vocab.model == "gpt2":
        spec = pre_spec(vocab.pre, source=source)
        tok = _build_bpe(vocab, types, padding, spec, source)
    elif vocab.model in ("llama", "t5"):
        spec = None
        tok = _build_spm(vocab, types, padding, defaults, source)
    else:
        spec = None
        tok = _build_wpm(vocab, types, padding, source)
    ids = _special_ids(vocab, defaults)
    add_bos = vocab.flags.get("add_bos", spec.add_bos if spec is not None and spec.add_bos else defaults["add_bos"])
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
    from ..engine.processors import post_processor_from_json

    first = [ids["bos"]] if add_bos and "bos" in ids else []
    last = [ids["eos"]] if add_eos and "eos" in ids else []
    if add_sep and "sep" in ids:
        last.append(ids["sep"])
    if not first and not last:
        return None

    def piece(i: int) -> dict[str, Any]:
        return {"SpecialToken": {"id": tokens[i], "type_id": 0}}

    single = [*map(piece, first), {"Sequence": {"id": "A", "type_id": 0}}, *map(piece, last)]
    pair = [*single, *map(piece, first), {"Sequence": {"id": "B", "type_id": 1}}, *map(piece, last)]
    specials = {tokens[i]: {"id": tokens[i], "ids": [i], "tokens": [tokens[i]]} for i in {*first, *last}}
    return post_processor_from_json(
        {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials},
        where="gguf post_processor",
    )


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
