"""tiktoken's public names over tokviz, for the vendored tiktoken tests: calls translated, no answer
computed here (every id, byte and offset comes from a tokviz `Tokenizer`).

Not offered by tokviz, so absent or refused here (the tests that need them are listed in
tests/conformance/README.md): ``disallowed_special`` (raising on special-token text), encoding
raw bytes (``_encode_bytes``), ``encode_with_unstable``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import AbstractSet, Literal

from support import ModuleCache

import tokviz
from tokviz.engine.byte_alphabet import bytes_to_proxy
from tokviz.io.tiktoken_encodings import encoding_name_for_model as _name_for_model, encoding_names
from tokviz.io.tiktoken_ranks import build_tiktoken_tokenizer, rank_table

__all__ = ["Encoding", "get_encoding", "list_encoding_names", "encoding_for_model", "encoding_name_for_model"]


class Encoding:
    """``tiktoken.Encoding`` over a tokviz tokenizer."""

    def __init__(self, name: str, *, pat_str: str | None = None, mergeable_ranks: dict[bytes, int] | None = None,
                 special_tokens: dict[str, int] | None = None, explicit_n_vocab: int | None = None,
                 _tok: tokviz.Tokenizer | None = None) -> None:
        if _tok is None:
            raw = list(mergeable_ranks or {})
            table = rank_table(raw, [mergeable_ranks[b] for b in raw], source=name)  # type: ignore[index]
            _tok = build_tiktoken_tokenizer(table, pattern=pat_str or "", special_tokens=dict(special_tokens or {}),
                                            name=name, explicit_n_vocab=explicit_n_vocab)
        self._tok = _tok
        self.name = name

    def __reduce__(self):  # noqa: ANN204 - pickling rebuilds from the tables
        return (_rebuild, (self.name, self._pat_str, self._mergeable_ranks, self._special_tokens))

    # ------------------------------------------------------------------ tables
    @property
    def _pat_str(self) -> str:
        return self._tok.config.extra["pattern"]

    @property
    def _special_tokens(self) -> dict[str, int]:
        return {t.content: t.id for t in self._tok.added_tokens if t.special}

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        special = set(self._special_tokens.values())
        ids = sorted(i for i in self._tok.model.get_vocab().values() if i not in special)
        return dict(zip(self._tok.decode_tokens_bytes(ids), ids))

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    @property
    def n_vocab(self) -> int:
        return self._tok.vocab_size

    @property
    def max_token_value(self) -> int:
        return self._tok.vocab_size - 1

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    def is_special_token(self, token: int) -> bool:
        return self._tok.is_special_id(token)

    def token_byte_values(self) -> list[bytes]:
        return sorted(self._mergeable_ranks)

    # ------------------------------------------------------------------ encode
    def encode(self, text: str, *, allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
               disallowed_special: Literal["all"] | Collection[str] = "all") -> list[int]:
        allowed = "all" if allowed_special == "all" else (set(allowed_special) or None)
        return list(self._tok.encode(text, allowed_special=allowed, keep_stages=False).ids)

    def encode_ordinary(self, text: str) -> list[int]:
        return list(self._tok.encode(text, keep_stages=False).ids)

    def encode_batch(self, text: Sequence[str], *, num_threads: int = 8, allowed_special=frozenset(),  # noqa: ANN001
                     disallowed_special="all") -> list[list[int]]:  # noqa: ANN001
        return [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in text]

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        return [self.encode_ordinary(t) for t in text]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        if isinstance(text_or_bytes, bytes):
            special = self._special_tokens.get(text_or_bytes.decode("utf-8", errors="replace"))
        else:
            special = self._special_tokens.get(text_or_bytes)
            text_or_bytes = text_or_bytes.encode("utf-8")
        if special is not None:
            return special
        id_ = self._tok.model.token_to_id(bytes_to_proxy(text_or_bytes))
        if id_ is None:
            raise KeyError(text_or_bytes)
        return id_

    # ------------------------------------------------------------------ decode
    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        return b"".join(self._tok.decode_tokens_bytes(tokens))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._tok.decode_tokens_bytes([token])[0]

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return self._tok.decode_tokens_bytes(tokens)

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        return self._tok.decode_with_offsets(tokens)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        return [self.decode(t, errors=errors) for t in batch]

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r} (tokviz)>"


def _rebuild(name: str, pat_str: str, ranks: dict[bytes, int], specials: dict[str, int]) -> Encoding:
    return Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)


_CACHE = ModuleCache()


def get_encoding(encoding_name: str) -> Encoding:
    if encoding_name not in _CACHE:
        _CACHE[encoding_name] = Encoding(encoding_name, _tok=tokviz.get_encoding(encoding_name))
    return _CACHE[encoding_name]


def list_encoding_names() -> list[str]:
    return encoding_names()


def encoding_name_for_model(model_name: str) -> str:
    return _name_for_model(model_name)


def encoding_for_model(model_name: str) -> Encoding:
    return get_encoding(encoding_name_for_model(model_name))
