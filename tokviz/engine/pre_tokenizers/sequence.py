"""The ``Sequence`` pre-tokenizer: run several pre-tokenizers one after the other."""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..pretokenized import ChunkPlan, make_plan
from ..text import NormalizedText
from . import PreTokenizer, pre_tokenizer_from_json
from .byte_level import ByteLevel

__all__ = ["Sequence"]


class Sequence(PreTokenizer):
    """Each pre-tokenizer splits (and transforms) the chunks of the previous one (HF ``Sequence``)."""

    type_name = "Sequence"

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = list(pretokenizers)

    def plan(self, piece: NormalizedText) -> ChunkPlan:
        """The first stage's plan, cut further by every later stage that only cuts (ByteLevel
        without prefix space included: its byte map becomes the plan's). A later stage that
        transforms its chunks, or any stage after the byte map, gets the chunk objects instead
        (the fallback plan of `ChunkPlan.of_chunks`)."""
        if not self.pretokenizers:
            return ChunkPlan.whole(piece)
        plan = self.pretokenizers[0].plan(piece)
        for k, stage in enumerate(self.pretokenizers[1:], 1):
            composed = None if plan.byte_map or plan.fallback is not None else _compose(plan, stage)
            if composed is None:
                chunks = plan.chunks()
                for later in self.pretokenizers[k:]:
                    chunks = later.pre_tokenize(chunks)
                return ChunkPlan.of_chunks(chunks)
            plan = composed
        return plan

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        items = Fields(obj).list("pretokenizers")
        built = []
        for i, item in enumerate(items):
            p = pre_tokenizer_from_json(item, where=f"pretokenizers[{i}]")
            if p is None:
                raise TokvizFormatError("expected a pre_tokenizer object, got null", where=f"pretokenizers[{i}]")
            built.append(p)
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    def __repr__(self) -> str:
        return f"Sequence({self.pretokenizers!r})"


def _compose(plan: ChunkPlan, stage: PreTokenizer) -> ChunkPlan | None:
    """``plan``'s chunks cut by ``stage`` (None: the stage does more than cut)."""
    if type(stage) is ByteLevel and not stage.use_regex and not stage.add_prefix_space:
        # the byte map alone: the chunks stay, each one the chunk itself
        return make_plan(plan.piece, plan.starts, plan.texts, True, plan.whole_is_piece)
    cut = stage.chunk_spans
    if cut("") is None:  # (a stage that transforms has no spans for any text)
        return None
    starts: list[int] = []
    texts: list[str] = []
    for s, t in zip(plan.starts, plan.texts):
        for a, b in cut(t):
            if a != b:
                starts.append(s + a)
                texts.append(t[a:b])
    # a chunk is still the piece itself only if both stages kept it whole
    whole = plan.whole_is_piece and stage.whole_is_piece and len(plan.texts) == 1
    return make_plan(plan.piece, starts, texts, stage.maps_bytes, whole)
