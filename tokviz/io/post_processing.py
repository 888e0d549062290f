"""The post-processor a loader builds for a tokenizer whose file says only "add BOS / EOS".

GGUF files (``add_bos_token`` ...), Mistral's tekken.json (BOS always) and CLIP's merges file
(``<|startoftext|>`` ... ``<|endoftext|>``) name the tokens to put around a sequence, not a
post-processor: this builds HF's ``TemplateProcessing`` for them, so ``add_special_tokens=True``
runs the same stage as for a tokenizer.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["around_processor"]


def around_processor(first: Sequence[tuple[int, str]], last: Sequence[tuple[int, str]], *, where: str) -> Any:
    """``TemplateProcessing`` putting the ``(id, token)`` pieces ``first`` before a sequence and
    ``last`` after it (a pair repeats both around the second sequence); None when both are empty."""
    from ..engine.processors import post_processor_from_json

    if not first and not last:
        return None

    def piece(token: str) -> dict[str, Any]:
        return {"SpecialToken": {"id": token, "type_id": 0}}

    head = [piece(t) for _, t in first]
    tail = [piece(t) for _, t in last]
    single = [*head, {"Sequence": {"id": "A", "type_id": 0}}, *tail]
    pair = [*single, *head, {"Sequence": {"id": "B", "type_id": 1}}, *tail]
    specials = {t: {"id": t, "ids": [i], "tokens": [t]} for i, t in [*first, *last]}
    return post_processor_from_json(
        {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}, where=where
    )
