"""``tokenizers.models`` over tokviz's models (built by ``model_from_json``). A WordPiece
``vocab.txt`` is read by tokviz's reader; reading BPE and WordLevel files is not translated (the
tests that do so need a download), nor is saving a model's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokviz.io.wordpiece_vocab import read_vocab_lines

from ._base import Component


class Model(Component):
    family = "model"

    def token_to_id(self, token: str) -> int | None:
        return self._engine().token_to_id(token)

    def id_to_token(self, id: int) -> str | None:  # noqa: A002 - HF's name
        return self._engine().id_to_token(id)

    def tokenize(self, sequence: str) -> list[Any]:
        raise NotImplementedError("Model.tokenize (HF Token objects) is not offered by tokviz")

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        raise NotImplementedError("saving a model's files is not offered by tokviz")


def _vocab(vocab: Any, what: str) -> Any:
    if isinstance(vocab, str):
        raise NotImplementedError(f"{what} from files is not translated (the tests that do so need a download)")
    return vocab


def _wordpiece_vocab(vocab: Any) -> dict[str, int]:
    """A WordPiece vocabulary, or the path of a ``vocab.txt`` (read by tokviz's reader)."""
    if isinstance(vocab, str):
        return read_vocab_lines(Path(vocab).read_text(encoding="utf-8"))
    return dict(vocab or {})


class BPE(Model):
    type_name = "BPE"

    def __init__(self, vocab: Any = None, merges: Any = None, cache_capacity: int | None = None,
                 dropout: float | None = None, unk_token: str | None = None,
                 continuing_subword_prefix: str | None = None, end_of_word_suffix: str | None = None,
                 fuse_unk: bool | None = None, byte_fallback: bool = False, ignore_merges: bool = False) -> None:
        super().__init__(dropout=dropout, unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
                         end_of_word_suffix=end_of_word_suffix, fuse_unk=bool(fuse_unk), byte_fallback=byte_fallback,
                         ignore_merges=ignore_merges, vocab=dict(_vocab(vocab, "BPE") or {}),
                         merges=[list(m) for m in (_vocab(merges, "BPE") or [])])
        self._engine()  # tokviz checks the arguments

    @staticmethod
    def from_file(vocab: str, merges: str, **kwargs: Any) -> BPE:
        return BPE(vocab, merges, **kwargs)

    @staticmethod
    def read_file(vocab: str, merges: str) -> Any:
        raise NotImplementedError("reading BPE files is not translated (the tests that do so need a download)")


class Unigram(Model):
    type_name = "Unigram"

    def __init__(self, vocab: Any = None, unk_id: int | None = None, byte_fallback: bool | None = None) -> None:
        super().__init__(unk_id=unk_id, vocab=[list(v) for v in vocab or ()], byte_fallback=bool(byte_fallback))


class WordPiece(Model):
    type_name = "WordPiece"

    def __init__(self, vocab: Any = None, unk_token: str = "[UNK]", max_input_chars_per_word: int = 100,
                 continuing_subword_prefix: str = "##") -> None:
        super().__init__(unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
                         max_input_chars_per_word=max_input_chars_per_word,
                         vocab=_wordpiece_vocab(vocab))

    @staticmethod
    def from_file(vocab: str, **kwargs: Any) -> WordPiece:
        return WordPiece(vocab, **kwargs)


class WordLevel(Model):
    type_name = "WordLevel"

    def __init__(self, vocab: Any = None, unk_token: str | None = None) -> None:
        super().__init__(vocab=dict(_vocab(vocab, "WordLevel") or {}), unk_token=unk_token)

    @staticmethod
    def from_file(vocab: str, unk_token: str | None = None) -> WordLevel:
        return WordLevel(vocab, unk_token)
