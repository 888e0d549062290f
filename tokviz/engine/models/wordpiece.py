"""WordPiece model (BERT): greedy longest-match-first over one pre-token, HF ``"WordPiece"``.

Unlike BPE there is no merge table: at each position the longest vocab entry that matches
(``continuing_subword_prefix`` + substring after the first piece) is taken. When some position
has no match at all, the *whole word* becomes ``unk_token`` — the greedy choice is never
revisited, even when another split would have succeeded (seed D03). Words longer than
``max_input_chars_per_word`` characters are unk without trying.

Kernels: with the native core (`tokviz.engine._native`, ``wordpiece_tokenize``) a word is
matched in C over two content tables (every token, and the continuation tokens without their
prefix; `_native_table`); `_tokenize` is the Python kernel, the reference and the pure-Python
backend, and the one that traces.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from .. import kernels
from ..caching import BoundedCache
from ..encoding import WordPieceTrace
from ..errors import TokvizFormatError
from ..fields import MAX_ID, Fields
from . import DictVocabModel, ModelToken, read_vocab

__all__ = ["WordPiece"]

_CACHE_CAPACITY = 65_536
_CACHE_MAX_CHARS = 256


class WordPiece(DictVocabModel):
    """Greedy longest-match-first subword model.

    >>> wp = WordPiece({"a": 0, "##b": 1, "##bc": 2, "[UNK]": 3})
    >>> [wp.id_to_token(i) for i, _, _ in wp.tokenize("abc")]
    ['a', '##bc']
    >>> [wp.id_to_token(i) for i, _, _ in WordPiece({"a": 0, "##b": 1, "[UNK]": 3}).tokenize("abc")]
    ['[UNK]']
    """

    type_name = "WordPiece"

    def __init__(
        self,
        vocab: Mapping[str, int] | None = None,
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        self._vocab: dict[str, int] = dict(vocab or {})
        self._vocab_r: dict[int, str] = {}
        for tok, i in self._vocab.items():
            self._vocab_r.setdefault(i, tok)
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        # no candidate longer than the longest vocab entry can match, so none is tried
        self._max_len = max(map(len, self._vocab), default=0)
        self._first_char_max: tuple[dict[str, int], dict[str, int]] | None = None  # built on first use
        self._cache = BoundedCache(_CACHE_CAPACITY, max_key_chars=_CACHE_MAX_CHARS)
        self._native = kernels.native  # the native kernel, or None (see `_native_table`)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> WordPiece:
        f = Fields(obj)
        if f.raw("type", "WordPiece") != "WordPiece":
            f.fail("type", f"expected a WordPiece model, got type {f.raw('type')!r:.60}")
        vocab = read_vocab(obj, "WordPiece")
        return cls(
            vocab,
            unk_token=f.str("unk_token", "[UNK]"),
            continuing_subword_prefix=f.str("continuing_subword_prefix", "##"),
            max_input_chars_per_word=f.int("max_input_chars_per_word", 100, minimum=0),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "WordPiece",
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            "vocab": dict(sorted(self._vocab.items(), key=lambda kv: kv[1])),
        }

    # ------------------------------------------------------------------ vocab

    def clear_cache(self) -> None:
        self._cache.clear()

    # ------------------------------------------------------------------ tokenize
    def _unk_id(self) -> int:
        i = self._vocab.get(self.unk_token)
        if i is None:
            raise TokvizFormatError(
                f"unk_token {self.unk_token!r} is not in the vocab", where="unk_token"
            )
        return i

    def tokenize(self, text: str) -> tuple[ModelToken, ...]:
        hit = self._cache.get(text)
        if hit is None:
            got = self._native_columns(text)
            hit = tuple(zip(*got)) if got is not None else self._tokenize(text, None)
            self._cache.put(text, hit)
        return hit

    def tokenize_columns(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """`tokenize` as columns; straight from the native kernel when there is one (not cached
        here: the pipeline caches whole chunk results)."""
        got = self._native_columns(text)
        return got if got is not None else super().tokenize_columns(text)

    def _native_columns(self, text: str) -> tuple[list[int], list[int], list[int]] | None:
        """The native kernel's ``(ids, starts, ends)`` of one word; None without the native
        core, or when the word is unk and the vocab has no unk token (`_tokenize` raises)."""
        table = self._native_table
        return None if table is None else self._native.wordpiece_tokenize(table, text)  # type: ignore[union-attr]

    @cached_property
    def _native_table(self) -> Any:
        """The native kernel's tables (built on first use), or None: pure Python (no native
        core, or ids outside 0..`MAX_ID`, which only the Python API lets in)."""
        native, vocab = self._native, self._vocab
        if native is None:
            return None
        if vocab and (set(map(type, vocab.values())) != {int} or min(vocab.values()) < 0 or max(vocab.values()) > MAX_ID):
            return None
        prefix = self.continuing_subword_prefix
        if prefix:
            # a continuation piece is the prefix + a span of the word: look the span up here
            k = len(prefix)
            tail = {t[k:]: i for t, i in vocab.items() if len(t) > k and t.startswith(prefix)}
        else:
            tail = vocab
        limit = min(self.max_input_chars_per_word, sys.maxsize)
        return native.wordpiece_table(vocab, tail, vocab.get(self.unk_token), limit)

    def tokenize_traced(self, text: str) -> tuple[tuple[ModelToken, ...], tuple[WordPieceTrace, ...]]:
        """Tokens plus, per token, the candidates tried at its position (longest first).

        A whole-word unk carries the candidates tried at the position that failed
        (``matched=None``); a word over ``max_input_chars_per_word`` tried nothing.
        """
        traces: list[WordPieceTrace] = []
        tokens = self._tokenize(text, traces)
        return tokens, tuple(traces)

    def _first_char_lengths(self) -> tuple[dict[str, int], dict[str, int]]:
        """Longest vocab entry (in chars of the word) by its first char, for entries read at a
        word start and for continuations (after the prefix)."""
        prefix = self.continuing_subword_prefix
        head: dict[str, int] = {}
        tail: dict[str, int] = {}
        for tok in self._vocab:
            if tok:
                n = len(tok)
                if head.get(tok[0], 0) < n:
                    head[tok[0]] = n
            if prefix and tok.startswith(prefix) and len(tok) > len(prefix):
                body = tok[len(prefix) :]
                if tail.get(body[0], 0) < len(body):
                    tail[body[0]] = len(body)
            elif not prefix and tok:
                tail[tok[0]] = head[tok[0]]
        return head, tail

    def _tokenize(self, text: str, traces: list[WordPieceTrace] | None) -> tuple[ModelToken, ...]:
        n = len(text)
        if n > self.max_input_chars_per_word:
            if traces is not None:
                traces.append(WordPieceTrace((), None))
            return ((self._unk_id(), 0, n),)
        vocab = self._vocab
        prefix = self.continuing_subword_prefix
        max_len = self._max_len
        if traces is None:
            # longest vocab entry by first char (word start / continuation): far fewer failed
            # lookups on CJK runs; the traced path shows every candidate up to the global max
            firsts = self._first_char_max
            if firsts is None:
                firsts = self._first_char_max = self._first_char_lengths()
            head, tail = firsts
        out: list[ModelToken] = []
        start = 0
        while start < n:
            # candidates longer than the longest vocab entry cannot match: start below that
            if traces is None:
                end = min(n, start + (tail if start else head).get(text[start], 0))
            else:
                end = min(n, start + max_len)
            tried: list[str] | None = [] if traces is not None else None
            found = None
            while start < end:
                sub = text[start:end]
                if start:
                    sub = prefix + sub
                if tried is not None:
                    tried.append(sub)
                i = vocab.get(sub)
                if i is not None:
                    found = i
                    break
                end -= 1
            if found is None:
                if traces is not None:
                    traces.clear()
                    traces.append(WordPieceTrace(tuple(tried or ()), None))
                return ((self._unk_id(), 0, n),)
            out.append((found, start, end))
            if traces is not None:
                traces.append(WordPieceTrace(tuple(tried or ()), sub))
            start = end
        return tuple(out)

    def __repr__(self) -> str:
        return f"WordPiece({len(self._vocab)} tokens, prefix={self.continuing_subword_prefix!r})"
