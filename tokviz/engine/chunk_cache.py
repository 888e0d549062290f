"""The chunk cache entries of `Tokenizer`'s production path, and the column kernel that turns a
block of entries into the output columns.

An entry holds everything about a chunk that depends on its text alone (slots below), as a
tuple of atoms; `entry_of` builds one and `emit_columns` appends the tokens of a block of
entries (laid out by a `Block`) to the growing output (`OutColumns`). Both are the pure-Python
twins of the native core's ``entry`` and ``emit`` (tokviz/engine/_native/columns.c, whose
ENTRY_* and RULE_* numbers `tokviz.engine.kernels` checks against SLOT_* and RULE_* here at
import), with the same arguments and results; `tokviz.engine.tokenizer` picks one pair at
construction. The kernels give byte-fallback pieces their bytes (the reference's
`byte_piece_span`); the offset rules of chunks with an empty token stay in the tokenizer
(`Tokenizer._redo`), next to the reference's `chunk_offsets` they call.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate, chain, compress, repeat
from operator import add, eq, itemgetter
from typing import NamedTuple

from . import kernels
from .columns import TokenColumns, int_column
from .reference import byte_piece_span
from .text import pick

__all__ = [
    "CACHE_LIMIT", "RULE_CHARS", "RULE_EXACT", "RULE_HELD", "SLOT_BYTE_PIECES", "SLOT_EMPTIES",
    "SLOT_FIRST", "SLOT_IDS", "SLOT_IRREGULAR", "SLOT_LAST", "SLOT_MODEL_ENDS", "SLOT_MODEL_STARTS", "SLOT_STOP",
    "SLOT_TOKENS", "Block", "OutColumns", "emit_columns", "entry_of", "ids_of",
]

#: Chunk texts kept per cache table of the pipeline (`tokviz.engine.caching.BoundedCache`).
CACHE_LIMIT = 200_000

_MINUS_ONE = (-1).__add__

# The slots of a chunk cache entry (a plain tuple of atoms: the cycle collector stops tracking it):
# ids, token strings, the chunk char (of the chunk's own text, before any byte map) each token
# starts in, the one after the char it ends in and that last char itself (both: an identity
# alignment adds the first, any other alignment looks the last up), the model's spans in the
# text it saw (byte proxies: byte positions), and the tokens with their own offset rule: the
# positions of empty tokens and of byte-fallback pieces ``<0xNN>``, and whether there is any.
# The native ``entry`` and ``emit`` (columns.c, ENTRY_*) read and build entries by these slots.
SLOT_IDS, SLOT_TOKENS, SLOT_FIRST, SLOT_STOP, SLOT_LAST, SLOT_MODEL_STARTS, SLOT_MODEL_ENDS, SLOT_EMPTIES, SLOT_BYTE_PIECES, SLOT_IRREGULAR = range(10)
ids_of, _tokens_of_entry, _first_of, _stop_of, _last_of, _mstarts_of, _mends_of = map(itemgetter, range(7))
_irregular_of = itemgetter(SLOT_IRREGULAR)
# How a token's bytes are found (`emit_columns`; columns.c's RULE_*): from its chars; its
# chunk's first byte plus the model's span, in every chunk; the same in the chunks that hold
# their original bytes, from the chars elsewhere.
RULE_CHARS, RULE_EXACT, RULE_HELD = range(3)


class Block(NamedTuple):
    """Where the tokens of a block of chunks go (`emit_columns`' layout; a tuple in this order
    is what the native ``emit`` reads, BLOCK_* in columns.c).

    Chunk ``k`` starts at piece char ``starts[k]``; its tokens get the word id ``word + k``. A
    token's chars: ``orig + starts[k] + first .. + stop`` when the piece's alignment is the
    identity (``p_starts`` None), else ``p_starts[starts[k] + first] .. p_ends[starts[k] +
    last]``. Its bytes by ``rule``: `RULE_CHARS` the UTF-8 positions ``u8`` of its chars (None:
    ASCII, the very char span); `RULE_EXACT` its chunk's first byte plus the model's span;
    `RULE_HELD` the same with the first bytes ``bases`` in the chunks flagged in ``holds``, the
    char rule elsewhere."""

    starts: Sequence[int]
    orig: int
    p_starts: Sequence[int] | None
    p_ends: Sequence[int] | None
    u8: Sequence[int] | None
    rule: int
    bases: Sequence[int] | None
    holds: bool | list[bool]
    word: int


class OutColumns:
    """The growing output of one encode: int32 columns (`tokviz.engine.columns`) and the token
    strings, appended to by `emit_columns` (or the native ``emit``) and by added tokens; the
    positions of special added tokens. `finish` makes the `TokenColumns`."""

    __slots__ = ("byte_ends", "byte_starts", "ends", "ids", "specials", "starts", "tokens", "word_ids")

    def __init__(self) -> None:
        self.ids: array = int_column()
        self.tokens: list[str] = []
        self.starts: array = int_column()
        self.ends: array = int_column()
        self.byte_starts: array = int_column()
        self.byte_ends: array = int_column()
        self.word_ids: array = int_column()
        self.specials: list[int] = []  # positions of special added tokens (the special mask)

    def finish(self) -> TokenColumns:
        special = None
        if self.specials:
            special = int_column(repeat(0, len(self.ids)))
            for i in self.specials:
                special[i] = 1
        return TokenColumns(self.ids, self.tokens, self.starts, self.ends, self.byte_starts, self.byte_ends,
                            self.word_ids, special)


def entry_of(ids: Sequence[int], toks: Sequence[str], first: Sequence[int], stop: Sequence[int],
              m_starts: Sequence[int], m_ends: Sequence[int], maybe_empty: bool, byte_pieces: frozenset[str]) -> tuple:
    """A cache entry (tuples of atoms, slots above); the twin of the native ``entry``.
    ``maybe_empty``: look for empty tokens; ``byte_pieces``: the byte-fallback piece strings."""
    empties = tuple(compress(range(len(ids)), map(eq, m_starts, m_ends))) if maybe_empty else ()
    m_starts_t = tuple(m_starts)
    m_ends_t = m_starts_t if m_ends is m_starts else tuple(m_ends)
    first_t = m_starts_t if first is m_starts else tuple(first)
    stop_t = m_ends_t if stop is m_ends else tuple(stop)
    if empties:  # (redone from the chunk object: the column passes need valid indices only)
        first_l, stop_l = list(first_t), list(stop_t)
        for k in empties:
            first_l[k], stop_l[k] = 0, 1
        first_t, stop_t = tuple(first_l), tuple(stop_l)
    pieces = () if byte_pieces.isdisjoint(toks) else tuple(compress(range(len(toks)), map(byte_pieces.__contains__, toks)))
    return (tuple(ids), tuple(toks), first_t, stop_t, tuple(map(_MINUS_ONE, stop_t)), m_starts_t, m_ends_t,
            empties, pieces, bool(empties or pieces))


def emit_columns(entries: list[tuple], block: Block, out: OutColumns) -> list[int]:
    """Append the tokens of a block of chunks (their cache ``entries``, laid out by ``block``) to
    ``out``; the indexes of the chunks with an empty token, which the tokenizer redoes (byte
    pieces elsewhere get their bytes here: `_settle_byte_pieces`). The pure-Python twin of the
    native ``emit`` (same arguments, same results)."""
    starts, orig, p_starts, p_ends, u8, rule, bases, holds, word = block
    if len(entries) == 1:  # (a short line: no chaining over chunks)
        counts = [len(entries[0][SLOT_IDS])]
        out.ids.extend(entries[0][SLOT_IDS])
        out.tokens.extend(entries[0][SLOT_TOKENS])
    else:
        counts = list(map(len, map(ids_of, entries)))
        out.ids.extend(chain.from_iterable(map(ids_of, entries)))
        out.tokens.extend(chain.from_iterable(map(_tokens_of_entry, entries)))
    if p_starts is None:
        shift = list(chain.from_iterable(map(repeat, map(orig.__add__, starts), counts)))
        cs = list(map(add, chain.from_iterable(map(_first_of, entries)), shift))
        ce = list(map(add, chain.from_iterable(map(_stop_of, entries)), shift))
    elif len(entries) == 1 and not starts[0]:  # the piece is the one chunk (no shift)
        cs = pick(p_starts, entries[0][SLOT_FIRST])
        ce = pick(p_ends, entries[0][SLOT_LAST])  # type: ignore[arg-type]
    else:
        shift = list(chain.from_iterable(map(repeat, starts, counts)))
        cs = pick(p_starts, list(map(add, chain.from_iterable(map(_first_of, entries)), shift)))
        ce = pick(p_ends, list(map(add, chain.from_iterable(map(_last_of, entries)), shift)))  # type: ignore[arg-type]
    at0 = len(out.starts)
    out.starts.extend(cs)
    out.ends.extend(ce)
    if rule == RULE_CHARS:
        out.byte_starts.extend(cs if u8 is None else pick(u8, cs))
        out.byte_ends.extend(ce if u8 is None else pick(u8, ce))
    else:
        if rule == RULE_EXACT:
            bases = list(map(orig.__add__, starts))
            bases = bases if u8 is None else pick(u8, bases)
        shift = list(chain.from_iterable(map(repeat, bases, counts)))  # type: ignore[arg-type]
        bs = int_column(map(add, chain.from_iterable(map(_mstarts_of, entries)), shift))
        be = int_column(map(add, chain.from_iterable(map(_mends_of, entries)), shift))
        if rule == RULE_HELD and not all(holds):  # type: ignore[arg-type]
            at = list(accumulate(counts, initial=0))
            for k in compress(range(len(entries)), map(eq, holds, repeat(False))):  # type: ignore[arg-type]
                i, j = at[k], at[k + 1]
                bs[i:j] = int_column(out.starts[at0 + i : at0 + j] if u8 is None else pick(u8, cs[i:j]))
                be[i:j] = int_column(out.ends[at0 + i : at0 + j] if u8 is None else pick(u8, ce[i:j]))
        out.byte_starts.extend(bs)
        out.byte_ends.extend(be)
    if len(entries) == 1:
        out.word_ids.extend(repeat(word, counts[0]))
        irregular = [0] if entries[0][SLOT_IRREGULAR] else []
    else:
        out.word_ids.extend(chain.from_iterable(map(repeat, range(word, word + len(entries)), counts)))
        irregular = list(compress(range(len(entries)), map(_irregular_of, entries)))
    return _settle_byte_pieces(entries, irregular, counts, at0, rule, holds, out) if irregular else irregular


def _settle_byte_pieces(
    entries: list[tuple], irregular: list[int], counts: list[int], at0: int, rule: int, holds: bool | list[bool],
    out: OutColumns,
) -> list[int]:
    """`emit_columns` for its ``irregular`` chunks: in those without an empty token, each
    byte-fallback piece gets the one byte of its character that is its own (`byte_piece_span`),
    unless the chunk holds its original bytes (then every token has its bytes already). The
    chunks with an empty token are returned: the tokenizer redoes them (`Tokenizer._redo`)."""
    at = list(accumulate(counts, initial=at0))
    b_starts, b_ends = out.byte_starts, out.byte_ends
    redo: list[int] = []
    for k in irregular:
        entry = entries[k]
        if entry[SLOT_EMPTIES]:
            redo.append(k)
        elif rule == RULE_CHARS or (rule == RULE_HELD and not holds[k]):  # type: ignore[index]
            i = at[k]
            for j in entry[SLOT_BYTE_PIECES]:
                b_starts[i + j], b_ends[i + j] = byte_piece_span(b_starts[i + j], b_ends[i + j], b_ends[i + j - 1] if j else -1)
    return redo


def _check_native_layout() -> None:
    """The native core's ENTRY_*, RULE_* and BLOCK_* numbers (columns.c) are this module's."""
    native = kernels.native
    if native is None:
        return
    ours = {f"ENTRY_{name.removeprefix('SLOT_')}": value for name, value in globals().items() if name.startswith("SLOT_")}
    ours |= {"ENTRY_SLOTS": SLOT_IRREGULAR + 1, "RULE_CHARS": RULE_CHARS, "RULE_EXACT": RULE_EXACT,
             "RULE_HELD": RULE_HELD, "BLOCK_FIELDS": len(Block._fields)}
    theirs = {name: getattr(native, name, None) for name in ours}
    if theirs != ours:
        differ = sorted(name for name in ours if theirs[name] != ours[name])
        raise ImportError(f"tokviz's native core was built for another chunk cache layout ({', '.join(differ)}); rebuild it")


_check_native_layout()
