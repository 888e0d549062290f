"""The ``Metaspace`` pre-tokenizer (SentencePiece style): spaces become ``▁``, a ``▁`` is
prepended (``prepend_scheme``: always, first, never), and the text is split before each ``▁``.

Alignment, as HF: a replaced space keeps its own alignment; the prepended ``▁`` shares the
piece's first character's alignment (so a word's offsets start at the word, not before it).
``first`` prepends only to the piece that starts at offset 0 of the original text (a piece after
an added token does not get one).
"""

from __future__ import annotations

from array import array
from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..normalizers.basic import prepend
from ..text import NormalizedText, make_text
from . import PreTokenizer
from .split import split_piece

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

    def _identity_chunks(self, piece: NormalizedText, out: list[NormalizedText]) -> None:
        """Fast path for an unnormalized piece: no alignment arrays except for the first chunk.

        After the prepend, normalized char ``k >= 1`` comes from original ``o + k - 1`` (an
        identity shifted by one) and the ▁ at 0 shares the first character's span.
        """
        r = self.replacement
        text = piece.text.replace(" ", r)
        o = piece.orig_start
        original = piece.original
        shift = 0
        if self.prepend_scheme != "never" and not text.startswith(r):
            if self.prepend_scheme == "always" or o == 0:
                text = r + text
                shift = 1
        bounds = self._bounds(text) if self.split else [0, len(text)]
        for s, e in zip(bounds, bounds[1:]):
            if s == e:
                continue
            if shift and s == 0:
                starts = array("q", [o, *range(o, o + e - 1)])
                ends = array("q", [o + 1, *range(o + 1, o + e)])
                out.append(make_text(original, text[s:e], o, o + e - 1, starts, ends))
            else:
                out.append(make_text(original, text[s:e], o + s - shift, o + e - shift))

    def pre_tokenize(self, pieces: list[NormalizedText]) -> list[NormalizedText]:
        r = self.replacement
        out: list[NormalizedText] = []
        for piece in pieces:
            if not piece.text:
                continue
            if piece.starts is None:
                self._identity_chunks(piece, out)
                continue
            piece = self.transform(piece)
            if not self.split or r not in piece.text:
                out.append(piece)
                continue
            bounds = self._bounds(piece.text)
            out += split_piece(piece, list(zip(bounds, bounds[1:])))
        return out

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
