"""Small decoders: ByteFallback, Fuse, Strip, Replace, BPEDecoder, CTC and Sequence (HF semantics)."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from itertools import groupby
from typing import Any

import regex

from ..errors import TokvizFormatError
from . import Decoder, decoder_from_json
from .wordpiece import cleanup

__all__ = ["ByteFallback", "Fuse", "Strip", "Replace", "BPEDecoder", "CTC", "Sequence"]


def _byte_of(token: str) -> int | None:
    """``<0xE9>`` -> 0xE9 (exactly six characters, two hex digits), else None."""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return int(token[3:5], 16)
        except ValueError:
            return None
    return None


class ByteFallback(Decoder):
    """Runs of ``<0xNN>`` tokens become their UTF-8 text; an invalid run becomes one U+FFFD per byte."""

    type_name = "ByteFallback"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()

        def flush() -> None:
            if pending:
                try:
                    out.append(pending.decode("utf-8"))
                except UnicodeDecodeError:
                    # HF: not "lossy" per sequence but one replacement char per byte of the run
                    out.extend("\ufffd" for _ in pending)
                pending.clear()

        for t in tokens:
            b = _byte_of(t)
            if b is not None:
                pending.append(b)
            else:
                flush()
                out.append(t)
        flush()
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ByteFallback:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "ByteFallback"}


class Fuse(Decoder):
    """All tokens into one string."""

    type_name = "Fuse"

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Fuse:
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": "Fuse"}


class Strip(Decoder):
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` characters of every token."""

    type_name = "Strip"

    def __init__(self, *, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if len(content) != 1:
            raise TokvizFormatError(f"Strip content must be one character, got {content!r}")
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        c = self.content
        out = []
        for t in tokens:
            a = 0
            while a < min(self.start, len(t)) and t[a] == c:
                a += 1
            b = len(t)
            for _ in range(self.stop):
                if b - 1 < 0 or t[b - 1] != c:
                    break
                b -= 1
            out.append(t[a:max(a, b)])
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Strip:
        return cls(content=obj.get("content", " "), start=int(obj.get("start", 0)), stop=int(obj.get("stop", 0)))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


def parse_pattern(obj: Any) -> tuple[str, str]:
    """tokenizer.json ``{"String": "..."}`` / ``{"Regex": "..."}`` -> ``(kind, value)``."""
    if isinstance(obj, dict) and len(obj) == 1:
        (kind, value), = obj.items()
        if kind in ("String", "Regex") and isinstance(value, str):
            return kind, value
    if isinstance(obj, str):
        return "String", obj
    raise TokvizFormatError(f'expected {{"String": ...}} or {{"Regex": ...}}, got {obj!r:.80}', where="pattern")


class Replace(Decoder):
    """Replace every match of ``pattern`` (a literal or a regex) in each token by ``content``."""

    type_name = "Replace"

    def __init__(self, *, pattern: str, content: str, regex_pattern: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.regex_pattern = regex_pattern
        self._re = regex.compile(pattern) if regex_pattern else None

    def decode_chain(self, tokens: list[str]) -> list[str]:
        if self._re is None:
            if not self.pattern:
                return list(tokens)
            return [t.replace(self.pattern, self.content) for t in tokens]
        content = self.content
        return [self._re.sub(lambda _m: content, t) for t in tokens]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Replace:
        kind, value = parse_pattern(obj.get("pattern"))
        content = obj.get("content")
        if not isinstance(content, str):
            raise TokvizFormatError("expected a string", where="content")
        try:
            return cls(pattern=value, content=content, regex_pattern=kind == "Regex")
        except regex.error as exc:
            raise TokvizFormatError(f"bad regex {value!r}: {exc}", where="pattern") from None

    def to_json(self) -> dict[str, Any]:
        kind = "Regex" if self.regex_pattern else "String"
        return {"type": "Replace", "pattern": {kind: self.pattern}, "content": self.content}


class BPEDecoder(Decoder):
    """The end-of-word ``suffix`` becomes a space (nothing after the last token)."""

    type_name = "BPEDecoder"

    def __init__(self, *, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        n = len(tokens) - 1
        if not self.suffix:
            return list(tokens)
        return [t.replace(self.suffix, "" if i == n else " ") for i, t in enumerate(tokens)]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BPEDecoder:
        return cls(suffix=obj.get("suffix", "</w>"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BPEDecoder", "suffix": self.suffix}


class CTC(Decoder):
    """CTC output: collapse repeats, drop the pad token, word delimiter -> space (with cleanup)."""

    type_name = "CTC"

    def __init__(self, *, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for t, _ in groupby(tokens):
            r = t.replace(self.pad_token, "") if self.pad_token else t
            if self.cleanup:
                r = cleanup(r)
                if self.word_delimiter_token:
                    r = r.replace(self.word_delimiter_token, " ")
            if r:
                out.append(r)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CTC:
        return cls(
            pad_token=obj.get("pad_token", "<pad>"),
            word_delimiter_token=obj.get("word_delimiter_token", "|"),
            cleanup=bool(obj.get("cleanup", True)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "CTC",
            "pad_token": self.pad_token,
            "word_delimiter_token": self.word_delimiter_token,
            "cleanup": self.cleanup,
        }


class Sequence(Decoder):
    """Each decoder's ``decode_chain`` output feeds the next."""

    type_name = "Sequence"

    def __init__(self, decoders: Seq[Decoder]) -> None:
        self.decoders = tuple(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Sequence:
        items = obj.get("decoders")
        if not isinstance(items, list):
            raise TokvizFormatError("expected a list of decoders", where="decoders")
        return cls([decoder_from_json(d, where=f"decoders[{i}]") for i, d in enumerate(items)])

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}
