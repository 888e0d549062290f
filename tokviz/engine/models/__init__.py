"""Models: one pre-token chunk -> token ids (HF ``model`` types and SentencePiece models).

``tokenize(text)`` returns ``(id, start, end)`` triples with char offsets into ``text`` (the
chunk as the model sees it, e.g. ``"Ġhello"``); it is cached per chunk and allocates no trace.
``tokenize_traced(text)`` returns the same triples plus one trace per token (merges, matches,
scores) for the token card. Modules: ``bpe`` (BPE), ``wordpiece`` (WordPiece), ``wordlevel``
(WordLevel), ``unigram`` (Unigram, lattice), ``sentencepiece_bpe``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, ClassVar

from ..encoding import Trace
from ..errors import TokvizFormatError
from ..fields import MAX_ID, describe, id_error, is_id
from ..registry import build_component

__all__ = ["Model", "DictVocabModel", "read_vocab", "model_from_json", "TYPES", "ModelToken"]

TYPES: dict[str, str] = {
    "BPE": "tokviz.engine.models.bpe:BPE",
    "WordPiece": "tokviz.engine.models.wordpiece:WordPiece",
    "WordLevel": "tokviz.engine.models.wordlevel:WordLevel",
    "Unigram": "tokviz.engine.models.unigram:Unigram",
}

ModelToken = tuple[int, int, int]  # (id, start, end) in chars of the chunk


class Model(ABC):
    """Base of every model. ``type_name`` is the tokenizer.json ``"type"`` tag."""

    type_name: ClassVar[str]

    @abstractmethod
    def tokenize(self, text: str) -> Sequence[ModelToken]:
        """Tokens of one chunk: ``(id, start, end)`` char offsets into ``text``."""

    @abstractmethod
    def tokenize_traced(self, text: str) -> tuple[Sequence[ModelToken], Sequence[Trace | None]]:
        """Same tokens as `tokenize`, plus one trace per token."""

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns ``(ids, starts, ends)``; models with a columnar kernel override it."""
        spans = self.tokenize(text)
        return list(map(itemgetter(0), spans)), list(map(itemgetter(1), spans)), list(map(itemgetter(2), spans))

    def tokenize_utf8(self, text: str) -> tuple[list[int], list[int], list[int], list[int], list[int], int] | None:
        """A byte-level chunk given as its *original* text: `tokenize` of its UTF-8 bytes shown
        as GPT-2 byte proxies, as ``(ids, byte starts, byte ends, char starts, char ends, n
        bytes)`` (a token's char span covers the chars holding its first and last byte; the
        token values are the vocab strings). None: not offered, use `tokenize` on the proxies.
        BPE offers it with the native core (one C call per chunk)."""
        return None

    def utf8_entry_maker(
        self, id_table: list[str], byte_pieces: frozenset[str], fallback: Callable[[str], tuple]
    ) -> Callable[[str], tuple] | None:
        """A native function that makes the pipeline's whole cache entry of a byte-level chunk
        given as its original text (`Tokenizer._mapped_entry` in one C call; ``id_table``: id
        -> vocab string, ``fallback`` for a chunk it cannot take), or None. BPE offers it with
        the native core."""
        return None

    def text_entry_maker(
        self, id_table: list[str], byte_pieces: frozenset[str], fallback: Callable[[str], tuple], limit: int
    ) -> Callable[[str], tuple] | None:
        """A native function that makes the pipeline's whole cache entry of a chunk the model
        sees as it is (`Tokenizer._plain_entry` in one C call; a chunk longer than ``limit``
        chars, which is never cached, keeps its int columns in buffers), or None. BPE offers it
        with the native core."""
        return None

    def token_values(self, text: str, spans: Sequence[ModelToken], values: list[str]) -> list[str]:
        """The token strings HF shows for one chunk's tokens, given their vocab strings
        ``values``: the vocab strings themselves, unless a model says otherwise (Unigram's
        unknown token shows the text it covers)."""
        return values

    def token_values_columns(
        self, text: str, ids: list[int], starts: list[int], ends: list[int], values: list[str]
    ) -> list[str]:
        """`token_values` on columns: the vocab strings themselves (a model that overrides
        `token_values` overrides this too, on its columns)."""
        return values

    @property
    def deterministic(self) -> bool:
        """False while the model samples (BPE dropout): then no chunk result may be reused."""
        return True

    def clear_cache(self) -> None:
        """Forget cached chunks (results never depend on a cache)."""

    @abstractmethod
    def token_to_id(self, token: str) -> int | None: ...

    @abstractmethod
    def id_to_token(self, id: int) -> str | None: ...

    @abstractmethod
    def get_vocab(self) -> dict[str, int]: ...

    def vocab_by_id(self) -> Sequence[str | None] | None:
        """The vocab strings indexed by id (None where an id is no token), or None when the ids
        are too sparse for a table. The pipeline reads token strings through it."""
        return table_by_id(self.get_vocab())

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """Number of entries in the model's own vocabulary (not counting added tokens)."""

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Model:
        raise NotImplementedError(f"{cls.__name__}.from_json")

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}.to_json")


class DictVocabModel(Model):
    """A model whose vocabulary is a ``{token: id}`` dict (``_vocab``) with its reverse (``_vocab_r``)."""

    _vocab: dict[str, int]
    _vocab_r: dict[int, str]

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:  # noqa: A002 - HF's name
        return self._vocab_r.get(id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def vocab_by_id(self) -> Sequence[str | None] | None:
        return table_by_id(self._vocab)  # (no copy of the vocab first)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)


def table_by_id(vocab: dict[str, int]) -> list[str | None] | None:
    """``vocab``'s strings indexed by id (if two share an id, the later one), or None for very
    sparse ids (no huge table)."""
    size = max(vocab.values(), default=-1) + 1
    if size > 4 * len(vocab) + 1024:
        return None
    table: list[str | None] = [None] * size
    deque(map(table.__setitem__, vocab.values(), vocab.keys()), maxlen=0)
    return table


def read_vocab(obj: dict[str, Any], model: str) -> dict[str, int]:
    """The ``"vocab"`` object of a tokenizer.json model, checked: ``{token: non-negative int}``."""
    vocab = obj.get("vocab")
    if not isinstance(vocab, dict):
        raise TokvizFormatError(f'{model} needs a "vocab" object {{token: id}}, got {describe(vocab)}', where="vocab")
    if vocab and (set(map(type, vocab.values())) != {int} or min(vocab.values()) < 0 or max(vocab.values()) > MAX_ID):
        tok, i = next((t, i) for t, i in vocab.items() if not is_id(i))
        raise TokvizFormatError(id_error(i), where=f"vocab[{tok[:40]!r}]")
    return vocab


def model_from_json(obj: Any, *, where: str = "model") -> Model:
    if obj is None:  # every other section may be null; the model is required
        raise TokvizFormatError("expected a model object, got null", where=where)
    if isinstance(obj, dict) and "type" not in obj:
        # Old tokenizer.json files omit the model type; HF infers it from the fields.
        if "merges" in obj:
            obj = {**obj, "type": "BPE"}
        elif "continuing_subword_prefix" in obj or "max_input_chars_per_word" in obj:
            obj = {**obj, "type": "WordPiece"}
        elif isinstance(obj.get("vocab"), list):
            obj = {**obj, "type": "Unigram"}
        else:
            obj = {**obj, "type": "WordLevel"}
    return build_component("model", TYPES, obj, where=where)
