"""``tokenizers.pre_tokenizers`` over tokviz's pre-tokenizers (built by
``pre_tokenizer_from_json``). FixedLength and custom (Python) pre-tokenizers are not offered by
tokviz: their objects exist so the tests import, and tokviz refuses them when they are used."""

from __future__ import annotations

from typing import Any

from tokviz.engine.byte_alphabet import bytes_to_unicode

from ._base import Component, SequenceOf, without_arguments
from .normalizers import pattern_json

# HF's Python behaviour names -> tokenizer.json's
BEHAVIOURS = {"removed": "Removed", "isolated": "Isolated", "merged_with_previous": "MergedWithPrevious",
              "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}


class PreTokenizer(Component):
    family = "pre_tokenizer"

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        return self._engine().pre_tokenize_str(sequence)

    def pre_tokenize(self, pretok: Any) -> None:
        raise NotImplementedError("pre-tokenizing a PreTokenizedString in place is not offered by tokviz")

    @staticmethod
    def custom(obj: Any) -> PreTokenizer:
        raise NotImplementedError("custom (Python) pre-tokenizers are not offered by tokviz")


class ByteLevel(PreTokenizer):
    type_name = "ByteLevel"

    def __init__(self, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True,
                 **_kwargs: Any) -> None:
        super().__init__(add_prefix_space=add_prefix_space, trim_offsets=trim_offsets, use_regex=use_regex)

    @staticmethod
    def alphabet() -> list[str]:
        return list(bytes_to_unicode().values())


def _plain(name: str) -> type[PreTokenizer]:
    return without_arguments(PreTokenizer, name, __name__)  # type: ignore[return-value]


Whitespace = _plain("Whitespace")
WhitespaceSplit = _plain("WhitespaceSplit")
BertPreTokenizer = _plain("BertPreTokenizer")
UnicodeScripts = _plain("UnicodeScripts")


class Split(PreTokenizer):
    type_name = "Split"
    hidden = frozenset({"pattern"})

    def __init__(self, pattern: Any, behavior: str, invert: bool = False) -> None:
        super().__init__(pattern=pattern_json(pattern), behavior=BEHAVIOURS.get(behavior, behavior), invert=invert)


class Metaspace(PreTokenizer):
    type_name = "Metaspace"

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        super().__init__(replacement=replacement, prepend_scheme=prepend_scheme, split=split)
        self._engine()  # tokviz checks the arguments


class CharDelimiterSplit(PreTokenizer):
    type_name = "CharDelimiterSplit"

    def __init__(self, delimiter: str) -> None:
        super().__init__(delimiter=delimiter)
        self._engine()  # tokviz checks the arguments


class Punctuation(PreTokenizer):
    type_name = "Punctuation"

    def __init__(self, behavior: str = "isolated") -> None:
        super().__init__(behavior=BEHAVIOURS.get(behavior, behavior))


class Digits(PreTokenizer):
    type_name = "Digits"

    def __init__(self, individual_digits: bool = False) -> None:
        super().__init__(individual_digits=individual_digits)


class FixedLength(PreTokenizer):
    type_name = "FixedLength"

    def __init__(self, length: int = 5) -> None:
        super().__init__(length=length)


class Sequence(SequenceOf, PreTokenizer):
    type_name = "Sequence"
    key = "pretokenizers"
