"""The ``Metaspace`` pre-tokenizer (SentencePiece style): spaces become ``▁``, a ``▁`` is
prepended (``prepend_scheme``: always, first, never), and the text is split before each ``▁``.

Alignment, as HF: a replaced space keeps its own alignment; the prepended ``▁`` shares the
piece's first character's alignment (so a word's offsets start at the word, not before it).
``first`` prepends only to the piece that starts at offset 0 of the original text (a piece after
an added token does not get one).
"""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..normalizers.basic import prepend
from ..pretokenized import ChunkPlan
from ..text import NormalizedText
from . import PreTokenizer

__all__ = ["Metaspace", "PREPEND_SCHEMES"]

PREPEND_SCHEMES = ("always", "first", "never")


class Metaspace(PreTokenizer):
    """HF ``Metaspace``.

    >>> Metaspace().pre_tokenize_str("Hey  friend")
    [('▁Hey', (0, 3)), ('▁', (3, 4)), ('▁friend', (4, 11))]
    """

    type_name = "Metaspace"

    def __init__(self, *, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise TokvizFormatError(f"Metaspace.replacement must be one character, got {replacement!r}")
        if prepend_scheme not in PREPEND_SCHEMES:
            raise TokvizFormatError(
                f"Metaspace.prepend_scheme must be one of {', '.join(PREPEND_SCHEMES)}, got {prepend_scheme!r}"
            )
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def transform(self, piece: NormalizedText) -> NormalizedText:
        """One piece with spaces replaced and the ``▁`` prepended (before splitting)."""
        r = self.replacement
        if " " in piece.text:
            piece = piece.with_text(piece.text.replace(" ", r))  # 1:1, alignment unchanged
        if self.prepend_scheme != "never" and not piece.text.startswith(r):
            if self.prepend_scheme == "always" or piece.orig_start == 0:
                piece = prepend(piece, r)
        return piece

    def _bounds(self, text: str) -> list[int]:
        """Chunk boundaries: MergedWithNext on every replacement char (a chunk starts at each ▁)."""
        r = self.replacement
        cuts = []
        pos = 0
        for part in text.split(r)[:-1]:
            pos += len(part)
            cuts.append(pos)
            pos += 1
        return ([0] if not cuts or cuts[0] != 0 else []) + cuts + [len(text)]

    def plan(self, piece: NormalizedText) -> ChunkPlan:
        if not piece.text:
            return ChunkPlan.whole(piece)
        piece = self.transform(piece)
        if not self.split or self.replacement not in piece.text:
            return ChunkPlan.whole(piece)  # nothing to cut: the transformed piece itself
        bounds = self._bounds(piece.text)
        return ChunkPlan.from_spans(piece, list(zip(bounds, bounds[1:])))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Metaspace:
        f = Fields(obj)
        replacement = f.char("replacement", "▁")
        scheme = f.choice("prepend_scheme", ("always", "never", "first"), "always")
        legacy = f.bool("add_prefix_space", None, optional=True)
        if legacy is False:
            # HF refuses add_prefix_space=false unless prepend_scheme is "never" (and the scheme
            # defaults to "always" when absent), so an old file must say both.
            if scheme != "never":
                raise TokvizFormatError(
                    'Metaspace: add_prefix_space=false does not match prepend_scheme '
                    f'{scheme!r} (HF rejects this; use "prepend_scheme": "never")'
                )
        return cls(replacement=replacement, prepend_scheme=scheme, split=f.bool("split", True))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split,
        }

    def __repr__(self) -> str:
        return f"Metaspace(replacement={self.replacement!r}, prepend_scheme={self.prepend_scheme!r}, split={self.split})"
