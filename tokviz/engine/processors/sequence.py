"""The Sequence post-processor: run several processors in order (HF ``processors.Sequence``)."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Any

from ..encoding import Encoding
from ..errors import TokvizFormatError
from ..fields import Fields
from . import PostProcessor, post_processor_from_json
from ._common import ListProcessor

__all__ = ["Sequence"]


class Sequence(ListProcessor):
    """Feeds the list of encodings through each processor's ``process_encodings`` in turn."""

    type_name = "Sequence"

    def __init__(self, processors: Seq[PostProcessor]) -> None:
        for p in processors:
            if not isinstance(p, ListProcessor):
                raise TypeError(f"{type(p).__name__} cannot be chained in a Sequence")
        self.processors = tuple(processors)

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        for p in self.processors:
            encodings = p.process_encodings(encodings, add_special_tokens=add_special_tokens)  # type: ignore[attr-defined]
        return encodings

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        built = []
        for i, item in enumerate(Fields(obj).list("processors")):
            p = post_processor_from_json(item, where=f"processors[{i}]")
            if not isinstance(p, ListProcessor):
                shown = "null" if p is None else f"{type(p).__name__}, which cannot be chained"
                raise TokvizFormatError(f"expected a post_processor object, got {shown}", where=f"processors[{i}]")
            built.append(p)
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "processors": [p.to_json() for p in self.processors]}
