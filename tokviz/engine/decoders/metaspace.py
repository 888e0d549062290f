"""The Metaspace decoder: ``▁`` back to spaces, dropping the one the pre-tokenizer prepended."""

from __future__ import annotations

from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from . import Decoder

__all__ = ["Metaspace"]

_SCHEMES = ("always", "never", "first")


class Metaspace(Decoder):
    """HF ``decoders.Metaspace``.

    Every ``replacement`` character becomes a space, except in the *first* token when the
    prepend scheme is not ``"never"``: there it is removed (HF drops every replacement char
    of token 0, not only the leading one).
    """

    type_name = "Metaspace"

    def __init__(self, *, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise TokvizFormatError(f"replacement must be one character, got {replacement!r}")
        if prepend_scheme not in _SCHEMES:
            raise TokvizFormatError(f"prepend_scheme must be one of {_SCHEMES}, got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def decode_chain(self, tokens: list[str]) -> list[str]:
        r = self.replacement
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                out.append(t.replace(r, ""))
            else:
                out.append(t.replace(r, " "))
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Metaspace:
        f = Fields(obj)
        if f.has("prepend_scheme"):
            scheme = f.choice("prepend_scheme", _SCHEMES)
        else:  # older files: add_prefix_space true/false
            scheme = "always" if f.bool("add_prefix_space", True, optional=True) else "never"
        return cls(replacement=f.char("replacement", "\u2581"), prepend_scheme=scheme, split=f.bool("split", True))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme, "split": self.split}
