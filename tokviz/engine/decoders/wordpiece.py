"""The WordPiece decoder: glue ``##`` continuations, spaces between words, optional cleanup."""

from __future__ import annotations

from typing import Any

from ..fields import Fields
from . import Decoder

__all__ = ["WordPiece", "cleanup"]

# HF's wordpiece::cleanup, applied in this order (" do not" -> " don't" is HF's, not a typo)
_CLEANUP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


def cleanup(s: str) -> str:
    """Remove the spaces WordPiece puts before punctuation and contractions."""
    for a, b in _CLEANUP:
        s = s.replace(a, b)
    return s


class WordPiece(Decoder):
    type_name = "WordPiece"

    def __init__(self, *, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        p = self.prefix
        for i, t in enumerate(tokens):
            if i != 0:
                t = t[len(p) :] if t.startswith(p) else " " + t
            if self.cleanup:
                t = cleanup(t)
            out.append(t)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> WordPiece:
        f = Fields(obj)
        return cls(prefix=f.str("prefix", "##"), cleanup=f.bool("cleanup", True))

    def to_json(self) -> dict[str, Any]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}
