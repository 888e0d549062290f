"""Template post-processors: TemplateProcessing, BertProcessing, RobertaProcessing.

They add the model's special tokens around the sequence(s) (``[CLS] $A [SEP]``,
``<s> $A``) with offsets ``(0, 0)``, no word and the special mask set, and set type ids. With
``add_special_tokens=False`` nothing is added, but type ids are still set (and Roberta still
trims offsets), exactly as HF does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..columns import TokenColumns
from ..encoding import Encoding
from ..errors import TokvizFormatError
from ..fields import MAX_ID, Fields, id_error, is_id
from ..model_inputs import set_sequence_id
from ._common import ListProcessor, around, special_encoding, with_type_ids
from .byte_level import trim_windows

__all__ = ["TemplateProcessing", "BertProcessing", "RobertaProcessing", "Piece", "SpecialTokenSpec"]


@dataclass(frozen=True, slots=True)
class Piece:
    """One template item: a sequence (``"A"``/``"B"``) or a special token id, with its type id."""

    kind: str  # "Sequence" or "SpecialToken"
    id: str
    type_id: int = 0


@dataclass(frozen=True, slots=True)
class SpecialTokenSpec:
    """A template special token: its name and the ids/tokens it expands to."""

    id: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]


def _type_id(type_id: int, obj: str, where: str) -> int:
    """``type_id`` of the string piece ``obj`` when every backend can hold it (an int32 column)."""
    if not is_id(type_id):
        raise TokvizFormatError(f"type id of template piece {obj!r:.60}: {id_error(type_id)}", where=where)
    return type_id


def _parse_piece(obj: Any, where: str) -> Piece:
    if isinstance(obj, str):
        # the string form of the Python API: "$A", "$B:1", "[CLS]", "[SEP]:1"
        name, _, type_str = obj.partition(":")
        try:
            type_id = int(type_str) if type_str else 0
        except ValueError:
            raise TokvizFormatError(f"bad type id in template piece {obj!r}", where=where) from None
        if name.startswith("$"):
            seq = name[1:] or "A"
            if seq.isdigit():  # "$0" / "$1" and the bare "$1" type shorthand
                seq, type_id = "A", int(seq)
            if seq not in ("A", "B"):
                raise TokvizFormatError(f"unknown sequence {name!r} (expected $A or $B)", where=where)
            return Piece("Sequence", seq, _type_id(type_id, obj, where))
        return Piece("SpecialToken", name, _type_id(type_id, obj, where))
    if isinstance(obj, dict) and len(obj) == 1:
        (kind, body), = obj.items()
        if kind in ("Sequence", "SpecialToken") and isinstance(body, dict) and "id" in body:
            f = Fields(body, f"{where}.{kind}")
            type_id = f.int("type_id", 0, minimum=0, maximum=MAX_ID)
            if kind == "Sequence":
                piece_id = f.choice("id", ("A", "B"))
            else:
                piece_id = f.str("id")
            return Piece(kind, piece_id, type_id)
    raise TokvizFormatError(
        f'expected {{"Sequence": {{...}}}} or {{"SpecialToken": {{...}}}}, got {obj!r:.80}', where=where
    )


def _parse_template(obj: Any, where: str) -> tuple[Piece, ...]:
    if isinstance(obj, str):
        obj = obj.split()
    if not isinstance(obj, list):
        raise TokvizFormatError("expected a list of template pieces", where=where)
    return tuple(_parse_piece(p, f"{where}[{i}]") for i, p in enumerate(obj))


class TemplateProcessing(ListProcessor):
    """HF ``TemplateProcessing``: ``single``/``pair`` templates over ``$A``, ``$B`` and specials.

    >>> tp = TemplateProcessing(single=[Piece("SpecialToken", "<s>"), Piece("Sequence", "A")],
    ...                         special_tokens={"<s>": SpecialTokenSpec("<s>", (1,), ("<s>",))})
    >>> tp.added_tokens(False)
    1
    """

    type_name = "TemplateProcessing"

    def __init__(
        self,
        *,
        single: Sequence[Piece],
        pair: Sequence[Piece] | None = None,
        special_tokens: Mapping[str, SpecialTokenSpec] | None = None,
    ) -> None:
        self.single = tuple(single)
        self.pair = tuple(pair) if pair is not None else self.single + (Piece("Sequence", "B", 1),)
        self.special_tokens = dict(special_tokens or {})
        if any(p.kind == "Sequence" and p.id == "B" for p in self.single):
            # one sequence has no $B to fill in (found by the fuzzer: an IndexError at encode time)
            raise TokvizFormatError("the single template uses $B, but a single sequence has only $A", where="single")
        for template in (self.single, self.pair):
            for p in template:
                if p.kind == "SpecialToken" and p.id not in self.special_tokens:
                    raise TokvizFormatError(f"template uses special token {p.id!r} missing from special_tokens")
        self._added_single = self._count(self.single)
        self._added_pair = self._count(self.pair)

    def _count(self, template: Sequence[Piece]) -> int:
        return sum(len(self.special_tokens[p.id].ids) for p in template if p.kind == "SpecialToken")

    def added_tokens(self, is_pair: bool) -> int:
        return self._added_pair if is_pair else self._added_single

    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        # HF ``apply_template``: one encoding per piece, merged afterwards; a sequence piece sets
        # the sequence's own type ids and range (its windows keep theirs and get the special
        # tokens through the merge)
        template = self.pair if len(encodings) == 2 else self.single
        encodings = list(encodings)
        out: list[Encoding] = []
        for piece in template:
            if piece.kind == "Sequence":
                i = 0 if piece.id == "A" else 1
                encodings[i] = set_sequence_id(with_type_ids(encodings[i], piece.type_id), i)
                out.append(encodings[i])
            elif add_special_tokens:
                spec = self.special_tokens[piece.id]
                out.append(special_encoding(encodings[0], [(i, t, piece.type_id) for i, t in zip(spec.ids, spec.tokens)]))
        if not out:  # a template with no sequence and no special token added
            out.append(Encoding(encodings[0].text, TokenColumns.empty(), encodings[0].stages, None, encodings[0].source))
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TemplateProcessing:
        single = _parse_template(obj.get("single"), "single")
        pair = _parse_template(obj["pair"], "pair") if obj.get("pair") is not None else None
        specials_obj = Fields(obj).object("special_tokens", {}, optional=True)
        specials: dict[str, SpecialTokenSpec] = {}
        for key, spec in specials_obj.items():
            f = Fields(spec, f"special_tokens[{key[:40]!r}]", what="an object {id, ids, tokens}")
            ids, tokens = f.list("ids"), f.str_list("tokens")
            for k, i in enumerate(ids):
                if not is_id(i):
                    f.fail("ids", f"{id_error(i)} at [{k}]")
            if len(tokens) != len(ids):
                f.fail("tokens", f"expected {len(ids)} tokens (as many as ids), got {len(tokens)}")
            specials[key] = SpecialTokenSpec(f.str("id", key), tuple(ids), tuple(tokens))
        return cls(single=single, pair=pair, special_tokens=specials)

    def to_json(self) -> dict[str, Any]:
        def pieces(t: Sequence[Piece]) -> list[dict[str, Any]]:
            return [{p.kind: {"id": p.id, "type_id": p.type_id}} for p in t]

        return {
            "type": "TemplateProcessing",
            "single": pieces(self.single),
            "pair": pieces(self.pair),
            "special_tokens": {
                k: {"id": s.id, "ids": list(s.ids), "tokens": list(s.tokens)} for k, s in self.special_tokens.items()
            },
        }


def _token_pair(obj: Any, where: str) -> tuple[str, int]:
    if isinstance(obj, list) and len(obj) == 2 and isinstance(obj[0], str) and is_id(obj[1]):
        return obj[0], obj[1]
    if isinstance(obj, list) and len(obj) == 2 and isinstance(obj[0], str):
        raise TokvizFormatError(f'expected ["token", id]: {id_error(obj[1])}', where=where)
    raise TokvizFormatError(f'expected ["token", id], got {obj!r:.80}', where=where)


class BertProcessing(ListProcessor):
    """HF ``BertProcessing``: ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` (B has type id 1)."""

    type_name = "BertProcessing"

    def __init__(self, *, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep = sep
        self.cls = cls

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        if not add_special_tokens:
            return encodings
        (sep_t, sep_i), (cls_t, cls_i) = self.sep, self.cls
        out = [around(encodings[0], [(cls_i, cls_t, 0)], [(sep_i, sep_t, 0)], sequence_id=0)]
        if len(encodings) > 1:
            out.append(around(encodings[1], (), [(sep_i, sep_t, 1)], sequence_id=1))
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BertProcessing:
        return cls(sep=_token_pair(obj.get("sep"), "sep"), cls=_token_pair(obj.get("cls"), "cls"))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


class RobertaProcessing(ListProcessor):
    """HF ``RobertaProcessing``: ``<s> A </s>`` / ``<s> A </s></s> B </s>``, all type id 0.

    With ``trim_offsets`` the ByteLevel offset trimming runs first (also when no special tokens
    are added), as HF does.
    """

    type_name = "RobertaProcessing"

    def __init__(
        self,
        *,
        sep: tuple[str, int],
        cls: tuple[str, int],
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
    ) -> None:
        self.sep = sep
        self.cls = cls
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process_encodings(self, encodings: list[Encoding], *, add_special_tokens: bool) -> list[Encoding]:
        if self.trim_offsets:
            encodings = [trim_windows(e, add_prefix_space=self.add_prefix_space) for e in encodings]
        # Roberta: every token has type id 0, pair included (windows too, once wrapped)
        encodings = [with_type_ids(e, 0) for e in encodings]
        if not add_special_tokens:
            return encodings
        (sep_t, sep_i), (cls_t, cls_i) = self.sep, self.cls
        out = [around(encodings[0], [(cls_i, cls_t, 0)], [(sep_i, sep_t, 0)], sequence_id=0, type_id=0)]
        if len(encodings) > 1:
            out.append(around(encodings[1], [(sep_i, sep_t, 0)], [(sep_i, sep_t, 0)], sequence_id=1, type_id=0))
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RobertaProcessing:
        return cls(
            sep=_token_pair(obj.get("sep"), "sep"),
            cls=_token_pair(obj.get("cls"), "cls"),
            trim_offsets=Fields(obj).bool("trim_offsets", True),
            add_prefix_space=Fields(obj).bool("add_prefix_space", True),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "RobertaProcessing",
            "sep": list(self.sep),
            "cls": list(self.cls),
            "trim_offsets": self.trim_offsets,
            "add_prefix_space": self.add_prefix_space,
        }
