"""Trained results -> HF tokenizer.json (which HF tokenizers and tokviz both load).

The layout follows what HF tokenizers itself writes after ``train_from_iterator``: special
tokens as ``added_tokens`` (special, not normalized) holding the first model ids, then the
pipeline components from the trainer's `PipelineSpec` unchanged, then the model object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .words import PipelineSpec

__all__ = ["tokenizer_json", "save_tokenizer_json", "build_tokenizer"]


def tokenizer_json(
    model: Mapping[str, Any],
    spec: PipelineSpec,
    special_tokens: Sequence[str] = (),
    *,
    first_ids: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The whole tokenizer.json object for a trained ``model`` (an HF model object)."""
    ids = dict(first_ids or {})
    added = []
    seen: set[str] = set()
    for tok in special_tokens:
        if tok in seen or tok not in ids:
            continue
        seen.add(tok)
        added.append(
            {
                "id": ids[tok],
                "content": tok,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": _copy(spec.normalizer),
        "pre_tokenizer": _copy(spec.pre_tokenizer),
        "post_processor": _copy(spec.post_processor),
        "decoder": _copy(spec.decoder),
        "model": dict(model),
    }


def _copy(obj: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return json.loads(json.dumps(obj)) if obj is not None else None


def save_tokenizer_json(result: Any, path: str | Path) -> Path:
    """Write ``result.tokenizer_json()`` (any trainer result) to ``path`` as UTF-8 JSON."""
    p = Path(path)
    obj = result.tokenizer_json()
    p.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return p


def build_tokenizer(obj: Mapping[str, Any]) -> Any:
    """The engine `Tokenizer` for a tokenizer.json object (through the regular loader)."""
    from ..io.detect import load

    return load(json.dumps(obj, ensure_ascii=False).encode("utf-8"))
