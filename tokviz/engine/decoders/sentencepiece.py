"""SentencePiece's own decoding (``SentencePieceProcessor::Decode``) for ``.model`` tokenizers.

Differs from HF's Metaspace + ByteFallback chain in the details that matter for exact output:
control pieces vanish; the unk piece becomes ``unk_surface`` (`` ⁇ `` by default); a run of
``<0xNN>`` pieces is decoded per UTF-8 character, each invalid byte becoming U+FFFD; ``▁``
becomes a space; and the leading ``▁`` of the first piece is dropped when the model adds a dummy
prefix or removes extra whitespace -- with ``remove_extra_whitespaces`` every leading ``▁`` piece
is stripped until some text has been produced, otherwise only the first one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ..normalizers.precompiled import SPACE_SYMBOL
from . import Decoder

__all__ = ["SentencePieceDecoder"]


def _byte_value(piece: str) -> int:
    return int(piece[3:5], 16)


class SentencePieceDecoder(Decoder):
    """Decode SentencePiece pieces exactly like ``sp.decode``.

    >>> d = SentencePieceDecoder(control={"<s>"}, unk_piece="<unk>", byte_pieces={"<0xE9>", "<0xBE>", "<0x98>"})
    >>> d.decode(["<s>", "▁Hello", "▁", "<0xE9>", "<0xBE>", "<0x98>", "<unk>"])
    'Hello 龘 ⁇ '
    """

    type_name: ClassVar[str] = "SentencePieceDecoder"  # not an HF type; built by the .model loader

    def __init__(
        self,
        *,
        control: Iterable[str] = (),
        unk_piece: str = "<unk>",
        byte_pieces: Iterable[str] = (),
        unk_surface: str = " \u2047 ",
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
    ) -> None:
        self.control = frozenset(control)
        self.unk_piece = unk_piece
        self.byte_pieces = frozenset(byte_pieces)
        self.unk_surface = unk_surface
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "unk_piece": self.unk_piece,
            "unk_surface": self.unk_surface,
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
        }

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending: list[int] = []  # a run of byte pieces, decoded together per character
        strip_lead = self.add_dummy_prefix or self.remove_extra_whitespaces
        is_bos_ws = True
        bos_ws_seen = False
        produced = False

        def flush() -> None:
            nonlocal produced
            if not pending:
                return
            data = bytes(pending)
            i = 0
            while i < len(data):
                n = _utf8_len(data, i)
                if n == 0:
                    out.append("\ufffd")
                    i += 1
                else:
                    out.extend([""] * (n - 1))
                    out.append(data[i : i + n].decode("utf-8"))
                    i += n
                produced = True
            pending.clear()

        byte_pieces = self.byte_pieces
        for tok in tokens:
            if tok in byte_pieces:
                pending.append(_byte_value(tok))
                continue
            flush()
            if bos_ws_seen or produced:
                is_bos_ws = False
            bos_ws_seen = False
            if tok in self.control:
                piece = ""
            elif tok == self.unk_piece:
                piece = self.unk_surface
            else:
                piece = tok
                if is_bos_ws and strip_lead and piece.startswith(SPACE_SYMBOL):
                    piece = piece[1:]
                    # with remove_extra_whitespaces every leading ▁ piece is stripped
                    bos_ws_seen = not self.remove_extra_whitespaces
                piece = piece.replace(SPACE_SYMBOL, " ")
            if piece:
                produced = True
            out.append(piece)
        flush()
        return out


def _utf8_len(data: bytes, i: int) -> int:
    """Length of the valid UTF-8 character at ``data[i]``, or 0 when it is invalid there."""
    b = data[i]
    if b < 0x80:
        return 1
    if 0xC2 <= b <= 0xDF:
        n = 2
    elif 0xE0 <= b <= 0xEF:
        n = 3
    elif 0xF0 <= b <= 0xF4:
        n = 4
    else:
        return 0
    chunk = data[i : i + n]
    if len(chunk) < n:
        return 0
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return n
