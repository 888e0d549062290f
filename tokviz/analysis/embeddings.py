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

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.errors import TokvizFormatError
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
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
#: candidates: indicator at or below this percentile of the reachable ordinary tokens (magikarp's 2.0)
THRESHOLD_PERCENTILE = 2.0


class EmbeddingTensorNotFound(TokvizFormatError):
    """No known embedding tensor: ``tensors`` lists (name, shape) so the user can pick one."""

    def __init__(self, source: str, tensors: Sequence[tuple[str, tuple[int, ...]]]) -> None:
        self.tensors = list(tensors)
        shown = ", ".join(f"{n} {list(s)}" for n, s in self.tensors[:20])
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
def _header(path: Path) -> tuple[dict[str, Any], int]:
    """The safetensors JSON header and the byte offset where the data starts."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
            if len(head) != 8:
                raise TokvizFormatError("too short for a safetensors file", source=str(path))
            (n,) = struct.unpack("<Q", head)
            if n > 100_000_000:
                raise TokvizFormatError(f"header length {n} is implausible", source=str(path))
            obj = json.loads(f.read(n).decode("utf-8"))
    except FileNotFoundError:
        raise TokvizFormatError("no such file", source=str(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TokvizFormatError(f"the header is not valid JSON ({exc})", source=str(path)) from None
    if not isinstance(obj, dict):
        raise TokvizFormatError("the header is not a JSON object", source=str(path))
    return obj, 8 + n


def _shards(path: Path) -> dict[str, Path]:
    """tensor name -> file holding it (one file, or the shards of an index json)."""
    if path.name.endswith(".json"):
        try:
            index = json.loads(path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TokvizFormatError(f"cannot read the index ({exc})", source=str(path)) from None
        wm = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(wm, dict):
            raise TokvizFormatError('expected a "weight_map" object', source=str(path))
        return {str(k): path.parent / str(v) for k, v in wm.items()}
    header, _ = _header(path)
    return {k: path for k in header if k != "__metadata__"}


def read_embedding(path: Path, name: str, rows: int | None = None) -> tuple[np.ndarray, str]:
    """The first ``rows`` rows (all when None) of tensor ``name`` as float32, and its dtype name."""
    shard = _shards(path).get(name)
    if shard is None:
        raise TokvizFormatError(f"no tensor {name!r}", source=str(path))
    header, start = _header(shard)
    info = header.get(name)
    if not isinstance(info, dict) or len(info.get("shape", ())) != 2:
        raise TokvizFormatError(f"tensor {name!r} is not a 2-D matrix", source=str(shard))
    dtype = info.get("dtype")
    n, dim = (int(x) for x in info["shape"])
    take = n if rows is None else min(rows, n)
    width = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8}.get(str(dtype))
    if width is None:
        raise TokvizFormatError(f"tensor {name!r} has dtype {dtype}; F32, F16, BF16 or F64 expected", source=str(shard))
    begin, end = (int(x) for x in info.get("data_offsets", (0, 0)))
    if end - begin != n * dim * width or start + end > shard.stat().st_size:
        raise TokvizFormatError(
            f"tensor {name!r}: data_offsets [{begin}, {end}] do not hold {n}x{dim} {dtype} values inside the file",
            source=str(shard),
        )
    if dtype == "BF16":
        raw = np.memmap(shard, dtype="<u2", mode="r", offset=start + begin, shape=(take, dim))
        return (raw.astype(np.uint32) << 16).view(np.float32), dtype
    from safetensors import safe_open

    try:
        with safe_open(str(shard), framework="np") as f:
            return np.asarray(f.get_slice(name)[0:take], dtype=np.float32), dtype
    except Exception as exc:  # noqa: BLE001 - the package's own error type is not a ValueError
        raise TokvizFormatError(f"cannot read tensor {name!r}: {exc}", source=str(shard)) from None


def _tensor_shapes(path: Path) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    cache: dict[Path, dict[str, Any]] = {}
    for name, shard in sorted(_shards(path).items()):
        if shard not in cache:
            cache[shard] = _header(shard)[0] if shard.exists() else {}
        info = cache[shard].get(name) or {}
        out.append((name, tuple(int(x) for x in info.get("shape", ()))))
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
                    config = json.loads(cfg.read_bytes().decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    config = {}
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
