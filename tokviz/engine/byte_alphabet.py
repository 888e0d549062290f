"""The GPT-2 byte alphabet: a bijection between the 256 byte values and 256 printable characters.

Byte-level BPE (GPT-2, RoBERTa, Qwen, Claude's legacy tokenizer, tiktoken rank files read as
tokenizer.json vocabularies) never sees raw bytes; every UTF-8 byte is first replaced by a
"proxy" character so that vocab entries are printable strings. Printable Latin-1 bytes
(``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) stand for themselves; the other 68 bytes (controls,
space, NBSP, soft hyphen) are mapped, in byte order, to U+0100, U+0101, ... (so space is ``Ġ``
U+0120 and newline is ``Ċ`` U+010A).

This module is the single home of that table: the ByteLevel pre-tokenizer, the ByteLevel
decoder and the loaders all import it from here.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("\\n")]
('Ġ', 'Ċ')
>>> bytes_to_proxy("é".encode())
'Ã©'
>>> proxy_to_bytes("Ġhi")
b' hi'
"""

from __future__ import annotations

__all__ = [
    "ByteLevelOptions",
    "BYTE_TO_CHAR",
    "CHAR_TO_BYTE",
    "BYTES_TO_UNICODE",
    "UNICODE_TO_BYTES",
    "bytes_to_unicode",
    "unicode_to_bytes",
    "bytes_to_proxy",
    "proxy_to_bytes",
    "text_to_proxy",
    "is_proxy_text",
]


def _build() -> tuple[str, ...]:
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table: dict[int, str] = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return tuple(table[b] for b in range(256))


#: ``BYTE_TO_CHAR[b]`` is the proxy character of byte ``b``.
BYTE_TO_CHAR: tuple[str, ...] = _build()
#: Inverse of `BYTE_TO_CHAR`.
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
#: GPT-2's names for the same two tables (``bytes_to_unicode()`` in encoder.py).
BYTES_TO_UNICODE: dict[int, str] = dict(enumerate(BYTE_TO_CHAR))
UNICODE_TO_BYTES: dict[str, int] = CHAR_TO_BYTE

# ``bytes.decode("latin-1")`` turns byte b into chr(b); this table then maps chr(b) to the proxy,
# so a whole byte string is translated by two C-level calls.
_LATIN1_TO_PROXY: dict[int, str] = {b: c for b, c in enumerate(BYTE_TO_CHAR) if ord(c) != b}
_PROXY_TO_LATIN1: dict[int, int | str] = {ord(c): b for b, c in enumerate(BYTE_TO_CHAR)}
# characters below U+0100 that are *not* proxies must not survive the latin-1 encode: send them
# to a character latin-1 cannot encode so the strict path reports them.
for _b in range(256):
    if _b not in _PROXY_TO_LATIN1:
        _PROXY_TO_LATIN1[_b] = "\uffff"
del _b
# per-character cache for text_to_proxy on non-ASCII text
_CHAR_PROXY: dict[str, str] = {}


def bytes_to_unicode() -> dict[int, str]:
    """The byte -> proxy character table as a dict (the name GPT-2's encoder.py uses)."""
    return dict(enumerate(BYTE_TO_CHAR))


def unicode_to_bytes() -> dict[str, int]:
    """The proxy character -> byte table."""
    return dict(CHAR_TO_BYTE)


def bytes_to_proxy(data: bytes) -> str:
    """Proxy string for raw bytes: one proxy character per byte."""
    return data.decode("latin-1").translate(_LATIN1_TO_PROXY)


def text_to_proxy(text: str) -> str:
    """Proxy string of the UTF-8 encoding of ``text``."""
    return text.encode("utf-8").decode("latin-1").translate(_LATIN1_TO_PROXY)


def is_proxy_text(s: str) -> bool:
    """True when every character of ``s`` is one of the 256 proxy characters."""
    return all(c in CHAR_TO_BYTE for c in s)


def proxy_to_bytes(s: str, *, strict: bool = True) -> bytes:
    """Bytes of a proxy string. With ``strict=False`` a character outside the alphabet is kept as
    its own UTF-8 bytes (what HF's ByteLevel decoder does for a whole token that is not proxy text
    is handled by the decoder; this is the per-character fallback)."""
    try:
        return s.translate(_PROXY_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        if strict:
            bad = next(c for c in s if c not in CHAR_TO_BYTE)
            raise ValueError(f"{bad!r} (U+{ord(bad):04X}) is not a byte-level proxy character") from None
        out = bytearray()
        for c in s:
            b = CHAR_TO_BYTE.get(c)
            if b is None:
                out += c.encode("utf-8")
            else:
                out.append(b)
        return bytes(out)


class ByteLevelOptions:
    """The three options HF's ``ByteLevel`` shares across its pre-tokenizer, decoder and processor.

    Each role keeps all three (even those it ignores) so that its JSON round-trips unchanged.
    """

    add_prefix_space: bool
    trim_offsets: bool
    use_regex: bool

    @classmethod
    def from_json(cls, obj: dict):  # noqa: ANN206 - returns the subclass
        from .fields import Fields

        f = Fields(obj)
        return cls(**{key: f.bool(key, True) for key in ("add_prefix_space", "trim_offsets", "use_regex")})

    def to_json(self) -> dict:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }
