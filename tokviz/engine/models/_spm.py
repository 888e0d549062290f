"""What SentencePiece's two models share: piece types, the id table, and the processor's last step.

SentencePiece's models (``unigram_model.cc``, ``bpe_model.cc``) return ``(piece, id)`` over the
normalized text; ``SentencePieceProcessor::PopulateSentencePieceText`` then turns that into the
pieces users see: a run of unknown pieces is merged into one (its span grows), or, with
``byte_fallback``, every unknown piece becomes one ``<0xNN>`` piece per UTF-8 byte, where only the
last byte carries the character's span and the others get an empty span at its start.
`SentencePieceVocab.finish` is that step, in characters of the normalized text.
"""

from __future__ import annotations

import operator
import re
from array import array
from collections.abc import Iterable, Sequence
from enum import IntEnum
from itertools import compress

from .. import kernels
from ..errors import TokvizFormatError

__all__ = ["PieceType", "SentencePieceVocab", "byte_piece", "to_float32", "space_chunker", "merge_unknown_runs", "SPACE", "SCORE_RESET"]

SPACE = "\u2581"
#: sentencepiece's kScoreResetThreshold: its float32 Viterbi re-bases path scores beyond ±this.
SCORE_RESET = 100000.0


class PieceType(IntEnum):
    """``ModelProto.SentencePiece.Type``."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def byte_piece(b: int) -> str:
    return f"<0x{b:02X}>"


def to_float32(values: Sequence[float]) -> list[float]:
    """Round to the nearest float32 (scores are float32 in a .model file)."""
    return list(array("f", values))


def space_chunker(pieces: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern cutting normalized text into chunks no piece can span, or None.

    A piece spans a cut only if it contains the two characters around it, so cutting before
    each ``▁`` run that follows another character is safe when no piece holds ``x▁`` (x not
    ``▁``); in suffix mode (pieces end with ``▁``) cutting after each ``▁`` run is safe when no
    piece holds ``▁x``.
    """
    before = after = False
    for p in pieces:
        if SPACE not in p:
            continue
        for a, b in zip(p, p[1:]):
            if b == SPACE and a != SPACE:
                before = True
            if a == SPACE and b != SPACE:
                after = True
    if not before:
        return re.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+")
    if not after:
        return re.compile(f"[^{SPACE}]*{SPACE}+|[^{SPACE}]+")
    return None


_TYPES = frozenset(map(int, PieceType))
# the types `SentencePieceVocab.piece_to_id` looks up after the reserved ones
_NORMAL_TYPES = frozenset((PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED))


def _refuse_piece(pieces: Sequence[str], types: Sequence[int], source: str | None) -> None:
    """Name the first piece that is not UTF-8, empty, or of an unknown type."""
    for i, (p, t) in enumerate(zip(pieces, types)):
        if not isinstance(p, str):
            # protobuf hands over a proto2 string that is not UTF-8 as bytes
            raise TokvizFormatError(f"piece {i} is not valid UTF-8 ({bytes(p)[:20]!r})", source=source,
                                    where=f"pieces[{i}]")
        if not p:
            raise TokvizFormatError(f"piece {i} is empty", source=source, where=f"pieces[{i}]")
        if t not in _TYPES:
            raise TokvizFormatError(f"piece {i} ({p!r}) has unknown type {t}", source=source, where=f"pieces[{i}]")


def _refuse_twice(ids: list[int], pieces: Sequence[str], source: str | None) -> None:
    """Name the first of ``ids`` whose piece string came before."""
    seen: dict[str, int] = {}
    for i in ids:
        p = pieces[i]
        if p in seen:
            raise TokvizFormatError(f"piece {p!r} is defined twice (ids {seen[p]} and {i})", source=source,
                                    where=f"pieces[{i}]")
        seen[p] = i


class SentencePieceVocab:
    """The pieces of a SentencePiece model with SentencePiece's lookup rules.

    ``piece_to_id`` follows ``ModelInterface::PieceToId``: reserved pieces (CONTROL, UNKNOWN,
    BYTE) first, then the others (NORMAL, USER_DEFINED, UNUSED), else the unk id.
    """

    __slots__ = (
        "pieces", "scores", "types", "unk_id", "byte_fallback", "_reserved", "_normal",
        "_byte_ids", "control_ids", "user_defined", "_vocab", "_kernels",
    )

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int],
        *,
        byte_fallback: bool = False,
        source: str | None = None,
    ) -> None:
        if not (len(pieces) == len(scores) == len(types)):
            raise TokvizFormatError("pieces, scores and types differ in length", source=source)
        # (tuples of atoms: the cycle collector neither tracks nor walks them at each full collection)
        self.pieces: tuple[str, ...] = tuple(pieces)
        self.scores: tuple[float, ...] = tuple(to_float32(scores))
        self.types: tuple[int, ...] = tuple(map(int, types))
        self.byte_fallback = byte_fallback
        types_ = self.types
        if not set(map(type, self.pieces)) <= {str} or "" in self.pieces or not set(types_) <= _TYPES:
            _refuse_piece(self.pieces, types_, source)
        # the bulk pass (C-level): which table each piece goes to; the loop below runs only for
        # the reserved pieces and user-defined symbols, which are few
        is_normal = list(map(_NORMAL_TYPES.__contains__, types_))
        normal = dict(zip(compress(self.pieces, is_normal), compress(range(len(types_)), is_normal)))
        if len(normal) != is_normal.count(True):
            _refuse_twice([i for i, n in enumerate(is_normal) if n], self.pieces, source)
        reserved: dict[str, int] = {}
        unk_id = -1
        user_defined: list[str] = list(compress(self.pieces, map(PieceType.USER_DEFINED.__eq__, types_)))
        control: set[int] = set()
        for i in compress(range(len(types_)), map(operator.not_, is_normal)):
            p, t = self.pieces[i], types_[i]
            if p in reserved:
                raise TokvizFormatError(f"piece {p!r} is defined twice (ids {reserved[p]} and {i})", source=source,
                                        where=f"pieces[{i}]")
            reserved[p] = i
            if t == PieceType.UNKNOWN:
                if unk_id >= 0:
                    raise TokvizFormatError(f"a second UNKNOWN piece {p!r} at id {i} (first at {unk_id})",
                                            source=source, where=f"pieces[{i}]")
                unk_id = i
            elif t == PieceType.CONTROL:
                control.add(i)
            elif t == PieceType.BYTE and not byte_fallback:
                raise TokvizFormatError(f"byte piece {p!r} found although byte_fallback is false",
                                        source=source, where=f"pieces[{i}]")
            if t == PieceType.BYTE and _BYTE_PIECE.fullmatch(p) is None:
                # SentencePiece writes byte pieces as <0xNN>; the decoder reads NN back
                raise TokvizFormatError(f"byte piece {p[:20]!r} is not of the form <0xNN>", source=source,
                                        where=f"pieces[{i}]")
        if unk_id < 0:
            raise TokvizFormatError("the model defines no UNKNOWN piece", source=source, where="pieces")
        self.unk_id = unk_id
        self._reserved = reserved
        self._normal = normal
        self.control_ids = frozenset(control)
        self.user_defined = tuple(user_defined)
        self._byte_ids = [self.piece_to_id(byte_piece(b)) for b in range(256)]
        self._vocab: dict[str, int] | None = None
        self._kernels = kernels.native  # the native `merge_unknown_runs`, or None (pure Python)

    def piece_to_id(self, piece: str) -> int:
        i = self._reserved.get(piece)
        if i is not None:
            return i
        i = self._normal.get(piece)
        return self.unk_id if i is None else i

    def lookup(self, piece: str) -> int | None:
        """The id of a piece string, or None (no unk substitution)."""
        i = self._reserved.get(piece)
        return self._normal.get(piece) if i is None else i

    def get_vocab(self) -> dict[str, int]:
        if self._vocab is None:
            self._vocab = {p: i for i, p in enumerate(self.pieces)}
        return dict(self._vocab)

    def finish(self, text: str, raw: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """``PopulateSentencePieceText`` on the model's ``(id, start, end)`` pieces of ``text``."""
        unk = self.unk_id
        out: list[tuple[int, int, int]] = []
        if not self.byte_fallback:
            if unk not in {r[0] for r in raw}:
                return list(raw)
            prev_unk = False
            for t in raw:
                if t[0] == unk and prev_unk:
                    # a run of unknown pieces becomes one piece (still unknown)
                    out[-1] = (unk, out[-1][1], t[2])
                else:
                    out.append(t)
                prev_unk = t[0] == unk
            return out
        byte_ids = self._byte_ids
        for t in raw:
            if t[0] != unk:
                out.append(t)
                continue
            _, s, e = t
            data = text[s:e].encode("utf-8")
            last = len(data) - 1
            for k, b in enumerate(data):
                # only the last byte carries the span; the others are empty at its start
                out.append((byte_ids[b], s, e if k == last else s))
        return out

    def finish_columns(
        self, text: str, ids: list[int], starts: list[int], ends: list[int]
    ) -> tuple[list[int], list[int], list[int]]:
        """`finish` on columns (the usual case, no unknown piece, costs one ``in`` test)."""
        unk = self.unk_id
        if unk not in ids:
            return ids, starts, ends
        if not self.byte_fallback:
            if self._kernels is not None:
                return self._kernels.spm_merge_unknown(ids, starts, ends, unk)
            return merge_unknown_runs(ids, starts, ends, unk)
        byte_ids = self._byte_ids
        if self._kernels is not None:
            return self._kernels.spm_byte_fallback(text, ids, starts, ends, unk, byte_ids)
        o_ids: list[int] = []
        o_starts: list[int] = []
        o_ends: list[int] = []
        copied = 0  # columns before this index are in the output already
        k = ids.index(unk)
        while True:
            o_ids += ids[copied:k]
            o_starts += starts[copied:k]
            o_ends += ends[copied:k]
            s, e = starts[k], ends[k]
            data = text[s:e].encode("utf-8")
            # only the last byte carries the span; the others are empty at its start
            o_ids += map(byte_ids.__getitem__, data)
            o_starts += [s] * len(data)
            o_ends += [s] * (len(data) - 1)
            o_ends.append(e)
            copied = k + 1
            try:
                k = ids.index(unk, copied)
            except ValueError:
                break
        o_ids += ids[copied:]
        o_starts += starts[copied:]
        o_ends += ends[copied:]
        return o_ids, o_starts, o_ends


def merge_unknown_runs(
    ids: list[int], starts: list[int], ends: list[int], unk: int
) -> tuple[list[int], list[int], list[int]]:
    """`SentencePieceVocab.finish` without byte fallback, on columns: every run of unknown
    pieces becomes one unknown piece spanning the run."""
    n = len(ids)
    o_ids: list[int] = []
    o_starts: list[int] = []
    o_ends: list[int] = []
    copied = 0  # columns before this index are in the output already
    try:
        k = ids.index(unk)
        while True:
            r = k + 1
            while r < n and ids[r] == unk:
                r += 1
            if r - k > 1:
                o_ids += ids[copied : k + 1]
                o_starts += starts[copied : k + 1]
                o_ends += ends[copied:k]
                o_ends.append(ends[r - 1])
                copied = r
            if r >= n:
                break
            k = ids.index(unk, r)
    except ValueError:  # no further unknown piece
        pass
    if not copied:
        return ids, starts, ends
    o_ids += ids[copied:]
    o_starts += starts[copied:]
    o_ends += ends[copied:]
    return o_ids, o_starts, o_ends
