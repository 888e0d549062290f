"""The ByteLevel decoder: GPT-2 byte proxies (``Ġ``, ``Ċ`` ...) back to bytes, then UTF-8.

A token made only of proxy characters becomes its bytes; any other token (an added token such
as ``<|im_start|>``) contributes its own UTF-8. All bytes are decoded together, invalid
sequences becoming U+FFFD (HF ``String::from_utf8_lossy``).
"""

from __future__ import annotations

from ..byte_alphabet import ByteLevelOptions, proxy_to_bytes
from . import Decoder

__all__ = ["ByteLevel"]


class ByteLevel(ByteLevelOptions, Decoder):
    type_name = "ByteLevel"

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        # these options only matter to the pre-tokenizer/processor of the same name; kept for to_json
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = bytearray()
        for t in tokens:
            try:
                out += proxy_to_bytes(t)
            except ValueError:  # not a proxy token (e.g. an added token): its own UTF-8
                out += t.encode("utf-8")
        return [out.decode("utf-8", errors="replace")]

