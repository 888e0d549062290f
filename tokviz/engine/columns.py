"""Token columns: the compact per-token result of an encode, read as Python lists on demand.

`TokenColumns` is what an `Encoding` holds: one int32 array (``array('i')``: 4 bytes a value, no
Python object per token, nothing for the cycle collector to visit) per integer column, and one
sequence of token strings (the vocab's own string objects, shared). Ids and positions fit:
vocabulary ids are below 2**31 (`tokviz.engine.ids`) and `Tokenizer.encode` takes texts of up
to 2**31 - 1 UTF-8 bytes. A column becomes a Python
list only when a caller reads it (`Encoding.ids` and its siblings build the list once and keep
it). The columns:

* ``ids``; ``tokens`` (the token strings HF shows);
* ``starts``/``ends``: char offsets into the original text (`Encoding.offsets` pairs them);
* ``byte_starts``/``byte_ends``: exact UTF-8 byte spans (`Encoding.byte_offsets`);
* ``word_ids``: the pre-token chunk index, ``-1`` for no word (`Encoding.word_ids` shows None);
* ``special``: 1 for a special token (`Encoding.special_tokens_mask`), None when there is none;
* ``type_ids``: the sequence index (`Encoding.type_ids`), None when all are 0;
* ``attention``: 0 for a padding token (`Encoding.attention_mask`), None when all are 1.

An integer column is normally an ``array('i')``; any read-only sequence of ints works (a
post-processor's or the incremental encoder's columns), and the lists read the same.
New per-token columns are new optional fields here with their list view on `Encoding`.

>>> c = TokenColumns.of_lists([5, 7], ["a", "b"], [(0, 1), (1, 2)], [(0, 1), (1, 3)], word_ids=[0, None])
>>> c.ids_list(), c.offsets_list(), c.word_ids_list(), c.special_list()
([5, 7], [(0, 1), (1, 2)], [0, None], [0, 0])
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, repeat

__all__ = ["NO_WORD", "IntColumn", "TokenColumns", "int_column"]

#: ``word_ids`` value of a token with no word (shown as None).
NO_WORD = -1

IntColumn = Sequence[int]


def int_column(values: Iterable[int] = ()) -> array:
    """An int32 column (``array('i')``) of ``values``.

    >>> int_column([1, 2])
    array('i', [1, 2])
    """
    return array("i", values)


def _joined(columns: Iterable[Iterable[int]]) -> array:
    """One int32 column of ``columns`` one after the other (an int32 array is copied whole,
    not value by value)."""
    out = int_column()
    for col in columns:
        out.extend(col if type(col) is not array or col.typecode == "i" else col.tolist())
    return out


@dataclass(frozen=True, slots=True, eq=False)
class TokenColumns:
    """The per-token columns of one encoding (see the module docstring)."""

    ids: IntColumn
    tokens: Sequence[str]
    starts: IntColumn
    ends: IntColumn
    byte_starts: IntColumn
    byte_ends: IntColumn
    word_ids: IntColumn
    special: IntColumn | None = None
    type_ids: IntColumn | None = None
    attention: IntColumn | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def of_lists(
        cls,
        ids: Sequence[int],
        tokens: Sequence[str],
        offsets: Sequence[tuple[int, int]],
        byte_offsets: Sequence[tuple[int, int]],
        *,
        special_tokens_mask: Sequence[int] | None = None,
        type_ids: Sequence[int] | None = None,
        word_ids: Sequence[int | None] | None = None,
    ) -> TokenColumns:
        """Columns from HF-style lists (``offsets`` as ``(start, end)`` pairs, None words)."""
        n = len(ids)
        words = int_column(NO_WORD if w is None else w for w in word_ids) if word_ids is not None else int_column(repeat(NO_WORD, n))
        return cls(
            int_column(ids), list(tokens),
            int_column(s for s, _ in offsets), int_column(e for _, e in offsets),
            int_column(s for s, _ in byte_offsets), int_column(e for _, e in byte_offsets),
            words,
            int_column(special_tokens_mask) if special_tokens_mask is not None and any(special_tokens_mask) else None,
            int_column(type_ids) if type_ids is not None and any(type_ids) else None,
        )

    @classmethod
    def empty(cls) -> TokenColumns:
        return cls(int_column(), [], int_column(), int_column(), int_column(), int_column(), int_column())

    @classmethod
    def concat(cls, parts: Sequence[TokenColumns]) -> TokenColumns:
        """The columns of ``parts`` one after the other (HF ``Encoding::merge``, offsets kept)."""
        if len(parts) == 1:
            return parts[0]

        def cat(name: str) -> array:
            return _joined(getattr(p, name) for p in parts)

        def optional(name: str, absent: int = 0) -> array | None:
            if all(getattr(p, name) is None for p in parts):
                return None
            return _joined(int_column((absent,)) * len(p) if getattr(p, name) is None else getattr(p, name) for p in parts)

        return cls(
            cat("ids"), list(chain.from_iterable(p.tokens for p in parts)), cat("starts"), cat("ends"),
            cat("byte_starts"), cat("byte_ends"), cat("word_ids"), optional("special"), optional("type_ids"),
            optional("attention", 1),
        )

    @classmethod
    def of_padding(cls, n: int, *, pad_id: int, pad_type_id: int, pad_token: str) -> TokenColumns:
        """``n`` padding tokens: special, no word, the span ``(0, 0)``, attention 0 (as HF)."""
        zeros = int_column(repeat(0, n))
        return cls(
            int_column(repeat(pad_id, n)), [pad_token] * n, zeros, zeros, zeros, zeros,
            int_column(repeat(NO_WORD, n)), int_column(repeat(1, n)),
            int_column(repeat(pad_type_id, n)) if pad_type_id else None, zeros,
        )

    def window(self, start: int, stop: int) -> TokenColumns:
        """The tokens ``start:stop`` (a truncation window), every column sliced alike."""

        def cut(col: IntColumn | None) -> IntColumn | None:
            return None if col is None else col[start:stop]

        return TokenColumns(
            self.ids[start:stop], self.tokens[start:stop], self.starts[start:stop], self.ends[start:stop],
            self.byte_starts[start:stop], self.byte_ends[start:stop], self.word_ids[start:stop],
            cut(self.special), cut(self.type_ids), cut(self.attention),
        )

    @classmethod
    def of_specials(cls, tokens: Sequence[tuple[int, str, int]]) -> TokenColumns:
        """A post-processor's tokens ``(id, token, type_id)``: special, no word, the empty span
        ``(0, 0)`` (as HF)."""
        n = len(tokens)
        zeros = int_column(repeat(0, n))
        return cls(
            int_column(t[0] for t in tokens), [t[1] for t in tokens], zeros, zeros, zeros, zeros,
            int_column(repeat(NO_WORD, n)), int_column(repeat(1, n)), int_column(t[2] for t in tokens),
        )

    def with_type_id(self, type_id: int) -> TokenColumns:
        """These columns with every type id set to ``type_id``."""
        return replace(self, type_ids=int_column(repeat(type_id, len(self))) if type_id else None)

    def with_offsets(self, starts: IntColumn, ends: IntColumn) -> TokenColumns:
        """These columns with other char offsets."""
        return replace(self, starts=starts, ends=ends)

    # ------------------------------------------------------------------ list views
    def __len__(self) -> int:
        return len(self.ids)

    def ids_list(self) -> list[int]:
        return list(self.ids)

    def tokens_list(self) -> list[str]:
        return list(self.tokens)

    def offsets_list(self) -> list[tuple[int, int]]:
        return list(zip(self.starts, self.ends))

    def byte_offsets_list(self) -> list[tuple[int, int]]:
        return list(zip(self.byte_starts, self.byte_ends))

    def special_list(self) -> list[int]:
        return [0] * len(self) if self.special is None else list(self.special)

    def type_ids_list(self) -> list[int]:
        return [0] * len(self) if self.type_ids is None else list(self.type_ids)

    def attention_list(self) -> list[int]:
        return [1] * len(self) if self.attention is None else list(self.attention)

    def word_ids_list(self) -> list[int | None]:
        words: list[int | None] = list(self.word_ids)
        if NO_WORD in words:
            words = [None if w == NO_WORD else w for w in words]
        return words
