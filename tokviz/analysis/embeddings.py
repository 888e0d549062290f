"""Optional embedding indicator of under-trained tokens (G8), from a local safetensors file.

The neighbour `tokviz.analysis.audit` works on the vocabulary alone; this module adds the one
weight-based signal magikarp uses, without torch: the input embedding's row L2 norms when the
output embedding is separate (untied), and the cosine distance of each row to the mean of a set
of reference rows (tokens known to be unused) when the embeddings are tied.

Only the embedding tensor is read (``safetensors.safe_open`` with numpy, or a memory map for
BF16, which numpy has no dtype for: f32 bits = bf16 bits << 16). A sharded checkpoint is read
through its ``*.safetensors.index.json`` ``weight_map``. Rows beyond the vocabulary's id space
(padding to a multiple of 64 and the like) are reported apart and never ranked.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.errors import TokvizFormatError
from ..io.files import open_regular, read_regular
from ..io.json_text import loads
from .audit import VocabAudit

__all__ = [
    "EmbeddingReport",
    "EmbeddingTensorNotFound",
    "INPUT_OUTPUT_NAMES",
    "cosine_distances",
    "embedding_report",
    "read_embedding",
]

#: (input tensor, output tensor) names to try, in order (Llama/Mistral/Qwen/Gemma/Phi-3, GPT-2,
#: NeoX/Pythia, OLMo, Falcon, BERT)
INPUT_OUTPUT_NAMES: tuple[tuple[str, str | None], ...] = (
    ("model.embed_tokens.weight", "lm_head.weight"),
    ("wte.weight", "lm_head.weight"),
    ("transformer.wte.weight", "lm_head.weight"),
    ("gpt_neox.embed_in.weight", "embed_out.weight"),
    ("model.transformer.wte.weight", "model.transformer.ff_out.weight"),
    ("transformer.word_embeddings.weight", "lm_head.weight"),
    ("bert.embeddings.word_embeddings.weight", None),
)
_FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")
#: candidates: indicator at or below this percentile of the reachable ordinary tokens (magikarp's 2.0)
THRESHOLD_PERCENTILE = 2.0


class EmbeddingTensorNotFound(TokvizFormatError):
    """No known embedding tensor: ``tensors`` lists (name, shape) so the user can pick one."""

    def __init__(self, source: str, tensors: Sequence[tuple[str, tuple[int, ...]]]) -> None:
        self.tensors = list(tensors)
        # (a name with a line break or another control character is quoted: the message stays one line)
        shown = ", ".join(f"{n if n.isprintable() else repr(n)} {list(s)}" for n, s in self.tensors[:20])
        more = f" (+{len(self.tensors) - 20} more)" if len(self.tensors) > 20 else ""
        super().__init__(
            f"no recognisable embedding tensor; which one is it? tensors: {shown}{more} (pass --embedding-tensor NAME)",
            source=source,
        )


@dataclass(frozen=True, slots=True)
class EmbeddingReport:
    """What the weights say about each token (rows in id order, padding rows apart)."""

    source: str
    tensor: str
    shape: tuple[int, int]
    dtype: str
    tied: bool
    indicator: str  # "l2-norm" (untied) or "cosine-distance" (tied)
    norms: tuple[float, ...]  # L2 norm of every input row inside the id space
    values: tuple[float, ...]  # the indicator per row inside the id space
    reference_ids: tuple[int, ...]  # the rows whose mean is the reference (tied)
    reference_name: str
    padding_rows: tuple[int, ...]  # row indices at or beyond the id space: listed, never ranked
    threshold: float | None
    candidates: tuple[int, ...]  # reachable ordinary tokens at or below the threshold, lowest first
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "tensor": self.tensor,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "tied": self.tied,
            "indicator": self.indicator,
            "reference": {"name": self.reference_name, "ids": list(self.reference_ids)},
            "threshold": self.threshold,
            "candidates": [{"id": i, "value": self.values[i]} for i in self.candidates],
            "padding_rows": list(self.padding_rows),
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------------- reading
#: bits per value of the safetensors dtypes (the F4/F6 ones are packed)
_DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64,
    "F64": 64, "C64": 64,
}
_MAX_HEADER = 100_000_000  # the safetensors library's own bound


@dataclass(frozen=True, slots=True)
class _Tensor:
    """One validated header entry: dtype, shape and byte range inside the data section."""

    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def _tensor_entry(name: str, info: Any, data_len: int, source: str) -> _Tensor:
    """One header entry checked field by field (every message names the file and the tensor)."""
    where = f"tensor {name!r}"
    if not isinstance(info, dict):
        raise TokvizFormatError(f"expected an object, got {type(info).__name__}", source=source, where=where)
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or not dtype:
        raise TokvizFormatError(f"dtype must be a string, got {dtype!r:.60}", source=source, where=where)
    if not isinstance(shape, list) or not all(map(_is_count, shape)):
        raise TokvizFormatError(f"shape must be a list of non-negative integers, got {shape!r:.60}",
                                source=source, where=where)
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))):
        raise TokvizFormatError(f"data_offsets must be two non-negative integers, got {offsets!r:.60}",
                                source=source, where=where)
    begin, end = offsets
    if begin > end or end > data_len:
        raise TokvizFormatError(f"data_offsets [{begin}, {end}] are outside the {data_len:,} data bytes",
                                source=source, where=where)
    bits = _DTYPE_BITS.get(dtype)
    count = math.prod(shape)
    if bits is not None and (count * bits + 7) // 8 != end - begin:
        raise TokvizFormatError(
            f"shape {shape} of {dtype} needs {(count * bits + 7) // 8:,} bytes, data_offsets hold {end - begin:,}",
            source=source, where=where,
        )
    return _Tensor(dtype, tuple(shape), begin, end)


def _header(path: Path) -> tuple[dict[str, _Tensor], int]:
    """The validated safetensors header (tensor name -> entry) and the byte offset where the
    data starts. The header is read through the bounded JSON reader; a FIFO is never opened."""
    source = str(path)
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        if len(head) != 8:
            raise TokvizFormatError("too short for a safetensors file", source=source)
        (n,) = struct.unpack("<Q", head)
        if n > min(_MAX_HEADER, size - 8):
            raise TokvizFormatError(f"header length {n:,} is implausible for a file of {size:,} bytes", source=source)
        obj = loads(f.read(n), source=source, where="header")
    if not isinstance(obj, dict):
        raise TokvizFormatError("the header is not a JSON object", source=source)
    data_len = size - 8 - n
    out: dict[str, _Tensor] = {}
    for name, info in obj.items():
        if name == "__metadata__":
            if not (isinstance(info, dict) and all(isinstance(v, str) for v in info.values())):
                raise TokvizFormatError("__metadata__ must be an object of strings", source=source)
            continue
        out[name] = _tensor_entry(name, info, data_len, source)
    return out, 8 + n


def _shards(path: Path) -> dict[str, Path]:
    """tensor name -> file holding it (one file, or the shards of an index json)."""
    if path.name.endswith(".json"):
        index = loads(read_regular(path, limit=_MAX_HEADER), source=str(path))
        wm = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(wm, dict) or not all(isinstance(v, str) and v for v in wm.values()):
            raise TokvizFormatError('expected a "weight_map" object of file names', source=str(path))
        return {str(k): path.parent / v for k, v in wm.items()}
    header, _ = _header(path)
    return dict.fromkeys(header, path)


def read_embedding(path: Path, name: str, rows: int | None = None) -> tuple[np.ndarray, str]:
    """The first ``rows`` rows (all when None) of tensor ``name`` as float32, and its dtype name."""
    shard = _shards(path).get(name)
    if shard is None:
        raise TokvizFormatError(f"no tensor {name!r}", source=str(path))
    header, start = _header(shard)
    info = header.get(name)
    if info is None:
        raise TokvizFormatError(f"no tensor {name!r} (the index names this file for it)", source=str(shard))
    if len(info.shape) != 2:
        raise TokvizFormatError(f"tensor {name!r} is not a 2-D matrix (shape {list(info.shape)})", source=str(shard))
    if info.dtype not in _FLOAT_DTYPES:
        raise TokvizFormatError(f"tensor {name!r} has dtype {info.dtype}; F32, F16, BF16 or F64 expected",
                                source=str(shard))
    n, dim = info.shape
    take = n if rows is None else min(rows, n)
    if info.dtype == "BF16":
        raw = np.memmap(shard, dtype="<u2", mode="r", offset=start + info.begin, shape=(take, dim))
        return (raw.astype(np.uint32) << 16).view(np.float32), info.dtype
    from safetensors import safe_open

    try:
        with safe_open(str(shard), framework="np") as f:
            return np.asarray(f.get_slice(name)[0:take], dtype=np.float32), info.dtype
    except Exception as exc:  # noqa: BLE001 - the package's own error type is not a ValueError
        raise TokvizFormatError(f"cannot read tensor {name!r}: {exc}", source=str(shard)) from None


def _tensor_shapes(path: Path) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    cache: dict[Path, dict[str, _Tensor]] = {}
    for name, shard in sorted(_shards(path).items()):
        if shard not in cache:
            cache[shard] = _header(shard)[0] if shard.exists() else {}
        info = cache[shard].get(name)
        out.append((name, info.shape if info is not None else ()))
    return out


def _pick(path: Path, tensor: str | None) -> tuple[str, bool]:
    """(input tensor name, tied) per G8; a file with no known name raises with the tensor list."""
    names = _shards(path)
    if tensor is not None:
        if tensor not in names:
            raise EmbeddingTensorNotFound(str(path), _tensor_shapes(path))
        outputs = {o for _, o in INPUT_OUTPUT_NAMES if o is not None}
        return tensor, not (outputs & set(names))
    for inp, out in INPUT_OUTPUT_NAMES:
        if inp in names:
            untied = out is not None and out in names
            cfg = path.parent / "config.json"
            if untied and cfg.exists():
                try:
                    config = loads(read_regular(cfg, limit=_MAX_HEADER), source=str(cfg))
                except TokvizFormatError:
                    config = {}  # an unreadable config.json says nothing about tying
                # HF's default for tie_word_embeddings is true when the key is absent
                untied = not (isinstance(config, dict) and config.get("tie_word_embeddings", True))
            return inp, not untied
    raise EmbeddingTensorNotFound(str(path), _tensor_shapes(path))


# ---------------------------------------------------------------------- indicators
def cosine_distances(e: np.ndarray, reference_ids: Sequence[int]) -> tuple[np.ndarray, bool]:
    """``1 - E[i]·m / max(‖E[i]‖‖m‖, 1e-6)`` with m the mean of the reference rows, and whether m is zero.

    >>> d, zero = cosine_distances(np.array([[3., 4.], [0., 0.], [1., 0.], [0., 2.]]), [2])
    >>> [round(float(x), 3) for x in d], zero
    ([0.4, 1.0, 0.0, 1.0], False)
    """
    m = e[list(reference_ids)].astype(np.float64).mean(axis=0)
    denom = np.maximum(np.linalg.norm(e, axis=1) * np.linalg.norm(m), 1e-6)
    return 1.0 - (e.astype(np.float64) @ m) / denom, not np.any(m)


def embedding_report(
    path: Path | str,
    audit: VocabAudit,
    *,
    tensor: str | None = None,
    reference_ids: Sequence[int] | None = None,
) -> EmbeddingReport:
    """G8 for one tokenizer's audit and one checkpoint (file or index json)."""
    path = Path(path)
    id_space = max((t.id for t in audit.tokens), default=-1) + 1
    name, tied = _pick(path, tensor)
    e, dtype = read_embedding(path, name)
    n_rows = e.shape[0]
    inside = e[: min(id_space, n_rows)]
    norms = np.linalg.norm(inside.astype(np.float64), axis=1)
    warnings: list[str] = []
    if n_rows < id_space:
        warnings.append(f"the tensor has {n_rows} rows but the vocabulary needs {id_space}")
    if reference_ids is None:
        ref = [t.id for t in audit.tokens if t.byte_class == "never-valid" and t.id < len(inside)]
        ref_name = "single-byte tokens of never-valid bytes (G2)"
    else:
        ref = [i for i in reference_ids if 0 <= i < len(inside)]
        ref_name = "user-given rows"
    if tied:
        if not ref:
            warnings.append("no reference rows: the indicator falls back to L2 norms")
            values, indicator = norms, "l2-norm"
        else:
            values, zero = cosine_distances(inside, ref)
            indicator = "cosine-distance"
            if zero:
                warnings.append("reference rows are zero: every cosine distance is 1")
    else:
        values, indicator = norms, "l2-norm"
    pool = [t.id for t in audit.tokens if t.id < len(values) and t.reachable and t.kind == "normal"]
    threshold = None
    candidates: tuple[int, ...] = ()
    if pool:
        threshold = float(np.percentile(values[pool], THRESHOLD_PERCENTILE))
        picked = [i for i in pool if values[i] <= threshold]
        candidates = tuple(sorted(picked, key=lambda i: (values[i], i)))
    return EmbeddingReport(
        source=str(path),
        tensor=name,
        shape=(int(n_rows), int(e.shape[1])),
        dtype=str(dtype),
        tied=tied,
        indicator=indicator,
        norms=tuple(map(float, norms)),
        values=tuple(map(float, values)),
        reference_ids=tuple(ref),
        reference_name=ref_name,
        padding_rows=tuple(range(id_space, n_rows)),
        threshold=threshold,
        candidates=candidates,
        warnings=tuple(warnings),
    )
