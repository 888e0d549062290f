"""``tokenizers.normalizers`` over tokviz's normalizers (built by ``normalizer_from_json``).
ByteLevel and custom (Python) normalizers are not offered by tokviz: their objects exist so the
tests import, and tokviz refuses them when they are used."""

from __future__ import annotations

from typing import Any

from ._base import Component, SequenceOf, without_arguments


class Normalizer(Component):
    family = "normalizer"

    def normalize_str(self, sequence: str) -> str:
        return self._engine().normalize_str(sequence)

    def normalize(self, normalized: Any) -> None:
        raise NotImplementedError("normalizing a NormalizedString in place is not offered by tokviz")

    @staticmethod
    def custom(obj: Any) -> Normalizer:
        raise NotImplementedError("custom (Python) normalizers are not offered by tokviz")


class BertNormalizer(Normalizer):
    type_name = "BertNormalizer"

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool | None = None,
                 lowercase: bool = True) -> None:
        super().__init__(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                         strip_accents=strip_accents, lowercase=lowercase)


def _plain(name: str) -> type[Normalizer]:
    return without_arguments(Normalizer, name, __name__)  # type: ignore[return-value]


Lowercase = _plain("Lowercase")
NFC = _plain("NFC")
NFD = _plain("NFD")
NFKC = _plain("NFKC")
NFKD = _plain("NFKD")
StripAccents = _plain("StripAccents")
ByteLevel = _plain("ByteLevel")
Nmt = _plain("Nmt")


class Strip(Normalizer):
    type_name = "Strip"
    aliases = {"left": "strip_left", "right": "strip_right"}

    def __init__(self, left: bool = True, right: bool = True) -> None:
        super().__init__(strip_left=left, strip_right=right)


class Prepend(Normalizer):
    type_name = "Prepend"

    def __init__(self, prepend: str) -> None:
        super().__init__(prepend=prepend)


class Replace(Normalizer):
    type_name = "Replace"
    hidden = frozenset({"pattern"})

    def __init__(self, pattern: Any, content: str) -> None:
        super().__init__(pattern=pattern_json(pattern), content=content)


class Precompiled(Normalizer):
    type_name = "Precompiled"

    def __init__(self, precompiled_charsmap: Any) -> None:
        super().__init__(precompiled_charsmap=precompiled_charsmap)


class Sequence(SequenceOf, Normalizer):
    type_name = "Sequence"
    key = "normalizers"


def pattern_json(pattern: Any) -> dict[str, str]:
    """A pattern argument (a str, or `tokenizers.Regex`) as tokenizer.json's pattern object."""
    from . import Regex

    return {"Regex": pattern.pattern} if isinstance(pattern, Regex) else {"String": pattern}
