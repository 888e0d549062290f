"""`Pipeline`: the components of one tokenizer as one public value, and the steps before the model.

`Tokenizer` (tokviz.engine.tokenizer) builds one from its components and exposes it as
``Tokenizer.pipeline``; everything that needs to know how a tokenizer is put together reads it
from there instead of the tokenizer's private state: the reference path
(`tokviz.engine.reference`), exact spans (`tokviz.engine.exact`, through `Encoding.source`) and
the production path itself. It also runs steps 1-2 of an encode, which both paths share:

1. `AddedVocabulary.extract`: non-normalized added tokens are cut out of the raw text, each
   remaining piece is normalized, then normalized added tokens are cut out of it;
2. every ordinary piece becomes a `ChunkPlan` (`PreTokenizer.plan`; the piece as its one chunk
   when there is no pre-tokenizer).

`Pipeline.runs` gives those steps as `Run` records; `Pipeline.stages` the `Stages` value a
caller sees (`Tokenizer.stages`, ``Encoding.stages``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from .added_tokens import AddedVocabulary
from .encoding import Segment, Stages
from .pretokenized import ChunkPlan, PreTokens
from .text import NormalizedText, make_text

if TYPE_CHECKING:  # pragma: no cover
    from .models import Model
    from .normalizers import Normalizer
    from .pre_tokenizers import PreTokenizer
    from .processors import PostProcessor

__all__ = ["AllowedSpecial", "Pipeline", "Run"]

#: ``allowed_special`` of an encode: ``"all"``, a set of special-token literals, or None.
AllowedSpecial = str | set[str] | frozenset[str] | None


class Run(NamedTuple):
    """One piece of a text after steps 1-2: an added token (``added_id`` set, no plan) or a
    normalized piece of ordinary text with its chunk plan."""

    piece: NormalizedText
    added_id: int | None
    plan: ChunkPlan | None


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A tokenizer's components in pipeline order, and the facts derived from them once.

    ``byte_level``: the pre-tokenizer maps bytes to proxies (ByteLevel); ``special_ids``: the
    ids of the special added tokens.
    """

    model: Model
    normalizer: Normalizer | None
    pre_tokenizer: PreTokenizer | None
    post_processor: PostProcessor | None
    added: AddedVocabulary
    special_policy: Literal["hf", "tiktoken"]
    byte_level: bool
    special_ids: frozenset[int]

    def skip_ids(self, allowed_special: AllowedSpecial) -> frozenset[int] | None:
        """Added-token ids to leave as ordinary text for one call (None: none)."""
        if allowed_special == "all":
            return None
        if allowed_special is None:
            # tiktoken: encode(text, disallowed_special=()) -> special literals are plain text
            return self.special_ids if self.special_policy == "tiktoken" else None
        if isinstance(allowed_special, str):
            allowed_special = {allowed_special}
        allowed = frozenset(allowed_special)
        unknown = allowed - self.added.special_contents
        if unknown:
            raise ValueError(f"allowed_special names tokens that are not special tokens: {sorted(unknown)!r}")
        # by id: where several names share one id (o200k_harmony), allowing one allows them all
        return self.special_ids - {self.added.by_content[c] for c in allowed}

    def runs(self, text: str, allowed_special: AllowedSpecial = None) -> list[Run]:
        """Steps 1-2 on ``text``: the added-token segments and the normalized pieces with their
        chunk plans, in text order (a piece the normalizer empties is dropped)."""
        normalize = self.normalizer.normalize if self.normalizer is not None else None
        plan_of = self.pre_tokenizer.plan if self.pre_tokenizer is not None else ChunkPlan.whole
        if allowed_special is not None or not self.added.is_empty:
            pieces = self.added.extract(text, normalize, skip_ids=self.skip_ids(allowed_special))
            return [Run(piece, added_id, None if added_id is not None else plan_of(piece)) for piece, added_id in pieces]
        if not text:
            return []
        normed = make_text(text, text, 0, len(text))
        if normalize is not None:
            normed = normalize(normed)
        return [Run(normed, None, plan_of(normed))] if normed.text else []

    def stages_of(self, text: str, runs: list[Run]) -> Stages:
        """The `Stages` of ``runs`` (the runs of ``text``): its segments, and its pre-tokens
        read from the plans."""
        segments: list[Segment] = []
        plans: list[ChunkPlan] = []
        by_id = self.added.by_id
        for piece, added_id, plan in runs:
            if plan is not None:
                segments.append(Segment(piece.orig_start, piece.orig_end, piece))
                plans.append(plan)
            else:
                segments.append(Segment(piece.orig_start, piece.orig_end, piece, added_id, by_id[added_id].special))  # type: ignore[index]
        return Stages(text, tuple(segments), PreTokens(plans))

    def stages(self, text: str, *, allowed_special: AllowedSpecial = None) -> Stages:
        """Steps 1-2 of an encode as its `Stages`, without running the model."""
        return self.stages_of(text, self.runs(text, allowed_special))
