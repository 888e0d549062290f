"""``tokenizers.decoders`` over tokviz's decoders (built by ``decoder_from_json``). DecodeStream
(incremental decoding through a tokenizer) is not offered by tokviz: it exists so the tests
import, and refuses when built."""

from __future__ import annotations

from typing import Any

from ._base import Component, SequenceOf
from .normalizers import pattern_json


class Decoder(Component):
    family = "decoder"

    def decode(self, tokens: list[str]) -> str:
        return self._engine().decode(list(tokens))

    @staticmethod
    def custom(obj: Any) -> Decoder:
        raise NotImplementedError("custom (Python) decoders are not offered by tokviz")


class ByteLevel(Decoder):
    type_name = "ByteLevel"

    def __init__(self, **_kwargs: Any) -> None:
        super().__init__(add_prefix_space=True, trim_offsets=True, use_regex=True)


class Replace(Decoder):
    type_name = "Replace"

    def __init__(self, pattern: Any, content: str) -> None:
        super().__init__(pattern=pattern_json(pattern), content=content)


class WordPiece(Decoder):
    type_name = "WordPiece"

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        super().__init__(prefix=prefix, cleanup=cleanup)


class ByteFallback(Decoder):
    type_name = "ByteFallback"

    def __init__(self) -> None:
        super().__init__()


class Fuse(Decoder):
    type_name = "Fuse"

    def __init__(self) -> None:
        super().__init__()


class Strip(Decoder):
    type_name = "Strip"
    aliases = {"left": "start", "right": "stop"}

    def __init__(self, content: str = " ", left: int = 0, right: int = 0) -> None:
        super().__init__(content=content, start=left, stop=right)


class Metaspace(Decoder):
    type_name = "Metaspace"

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        super().__init__(replacement=replacement, prepend_scheme=prepend_scheme, split=split)
        self._engine()  # tokviz checks the arguments


class BPEDecoder(Decoder):
    type_name = "BPEDecoder"

    def __init__(self, suffix: str = "</w>") -> None:
        super().__init__(suffix=suffix)


class CTC(Decoder):
    type_name = "CTC"

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        super().__init__(pad_token=pad_token, word_delimiter_token=word_delimiter_token, cleanup=cleanup)


class Sequence(SequenceOf, Decoder):
    type_name = "Sequence"
    key = "decoders"


class DecodeStream:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("DecodeStream (incremental decoding) is not offered by tokviz")
