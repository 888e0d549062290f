"""Small decoders: ByteFallback, Fuse, Strip, Replace, BPEDecoder, CTC and Sequence (HF semantics)."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from itertools import groupby
from typing import Any

from ..errors import TokvizFormatError
from ..fields import Fields
from ..patterns import compile_pattern, pattern_from_json
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
        f = Fields(obj)
        return cls(content=f.char("content", " "), start=f.int("start", 0, minimum=0), stop=f.int("stop", 0, minimum=0))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


class Replace(Decoder):
    """Replace every match of ``pattern`` (a literal or a regex) in each token by ``content``."""

    type_name = "Replace"

    def __init__(self, *, pattern: str, content: str, regex_pattern: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.regex_pattern = regex_pattern
        self._re = compile_pattern(pattern) if regex_pattern else None

    def decode_chain(self, tokens: list[str]) -> list[str]:
        if self._re is None:
            if not self.pattern:
                return list(tokens)
            return [t.replace(self.pattern, self.content) for t in tokens]
        return [self._re.sub(self.content, t) for t in tokens]

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Replace:
        f = Fields(obj)
        raw = f.raw("pattern")
        value, is_regex = (raw, False) if isinstance(raw, str) else pattern_from_json(raw)
        return cls(pattern=value, content=f.str("content"), regex_pattern=is_regex)

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
        return cls(suffix=Fields(obj).str("suffix", "</w>"))

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
        f = Fields(obj)
        return cls(
            pad_token=f.str("pad_token", "<pad>"),
            word_delimiter_token=f.str("word_delimiter_token", "|"),
            cleanup=f.bool("cleanup", True),
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
        items = Fields(obj).list("decoders")
        built = [decoder_from_json(d, where=f"decoders[{i}]") for i, d in enumerate(items)]
        if None in built:
            raise TokvizFormatError("expected a decoder object, got null", where=f"decoders[{built.index(None)}]")
        return cls(built)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}
