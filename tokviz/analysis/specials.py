"""Special-token literals in user text: where they are, and what each API makes of them.

The same typed ``<|endoftext|>`` or ``<s>`` is a control token under one API and plain text under
another. `scan_literals` lists every occurrence of an added-token literal (and of a
SentencePiece control / user-defined symbol) with its id and special flag; `mode_matrix` encodes
the text under each API convention:

==================  ======================================================================
tiktoken-default    ``encode(text)``: any special literal is an error (literal + position);
                    without one, the literals are text
ordinary            ``encode_ordinary``: no added token matched at all
allowed=all         ``encode(text, allowed_special="all")``: every literal is its token
hf-default          HF ``encode(text)``: every added token extracted, BOS/EOS added
hf-split-special    ``split_special_tokens=True``: special tokens split into text, the
                    non-special added tokens still matched; BOS/EOS added
sentencepiece       control symbols never matched, user-defined symbols always; no BOS
==================  ======================================================================

Each mode gives ids, a count and which literal occurrences became their own token; literals
treated differently between modes are listed, and a double BOS (ids[0] = ids[1] = BOS) is flagged.
`tokviz.analysis.chat` handles literals inside chat messages (lint control-in-user).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.tokenizer import Tokenizer
from .chat import encode_as_text
from .facts import TokenizerFacts

__all__ = ["LiteralHit", "ModeResult", "SpecialsReport", "MODES", "mode_matrix", "scan_literals", "analyze_specials"]

MODES = ("tiktoken-default", "ordinary", "allowed=all", "hf-default", "hf-split-special", "sentencepiece")
_ADDS_SPECIAL = frozenset({"hf-default", "hf-split-special"})  # encode(..., add_special_tokens=True)


@dataclass(frozen=True, slots=True)
class LiteralHit:
    """One occurrence of a literal: code-point span, the literal, its id, and what it is."""

    start: int
    end: int
    literal: str
    id: int | None
    special: bool
    kind: str  # "special", "added" (non-special added token), "control", "user-defined"


@dataclass(frozen=True, slots=True)
class ModeResult:
    """The text under one mode: ids (None when the mode refuses the text) and what matched."""

    mode: str
    native: bool  # the convention of this tokenizer's own API family
    ids: tuple[int, ...] | None
    error: str | None
    matched: tuple[bool, ...]  # per hit of the report: did it become its own token
    special_tokens_added: bool = False  # the mode's ids hold the post-processor's BOS/EOS

    @property
    def count(self) -> int | None:
        return len(self.ids) if self.ids is not None else None

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "native": self.native, "ids": list(self.ids) if self.ids is not None else None,
                "count": self.count, "error": self.error, "matched": list(self.matched),
                "special_tokens_added": self.special_tokens_added}


@dataclass(frozen=True, slots=True)
class SpecialsReport:
    hits: tuple[LiteralHit, ...]
    modes: tuple[ModeResult, ...]
    differing: tuple[str, ...]  # literals whose treatment differs between the modes that encode
    double_bos: tuple[str, ...]  # modes whose ids start with two BOS

    def mode(self, name: str) -> ModeResult:
        return next(m for m in self.modes if m.mode == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": [{"start": h.start, "end": h.end, "literal": h.literal, "id": h.id, "special": h.special,
                      "kind": h.kind} for h in self.hits],
            "modes": [m.to_json() for m in self.modes],
            "differing": list(self.differing),
            "double_bos": list(self.double_bos),
        }


def _literals(tok: Tokenizer) -> dict[str, tuple[int | None, bool, str]]:
    """literal -> (id, special, kind) for every literal the tokenizer may treat specially."""
    facts = TokenizerFacts.of(tok)
    out: dict[str, tuple[int | None, bool, str]] = {}
    for t in tok.added_tokens:
        if t.content:
            out[t.content] = (t.id, t.special, "special" if t.special else "added")
    for ids, special, kind in ((facts.control_ids, True, "control"), (facts.user_defined_ids, False, "user-defined")):
        for i in sorted(ids):
            out.setdefault(facts.token(i), (i, special, kind))
    return out


def scan_literals(tok: Tokenizer, text: str) -> tuple[LiteralHit, ...]:
    """Every occurrence of a literal in ``text``, leftmost-longest and not overlapping.

    >>> [h.literal for h in scan_literals(tok, "hi <|endoftext|>")]  # doctest: +SKIP
    ['<|endoftext|>']
    """
    table = _literals(tok)
    if not table or not text:
        return ()
    pattern = re.compile("|".join(re.escape(c) for c in sorted(table, key=len, reverse=True)))
    return tuple(LiteralHit(m.start(), m.end(), m.group(), *table[m.group()]) for m in pattern.finditer(text))


def _is_sentencepiece(tok: Tokenizer) -> bool:
    return tok.config.extra.get("format") == "sentencepiece"


def _native(tok: Tokenizer, mode: str) -> bool:
    if tok.special_policy == "tiktoken":
        return mode in ("tiktoken-default", "ordinary", "allowed=all")
    if _is_sentencepiece(tok):
        return mode == "sentencepiece"
    return mode in ("hf-default", "hf-split-special")


def _tiktoken_default(tok: Tokenizer, text: str, hits: Sequence[LiteralHit]) -> tuple[list[int] | None, str | None]:
    specials = [h for h in hits if h.kind == "special"]
    if specials:
        h = specials[0]
        return None, (f"Encountered text corresponding to disallowed special token {h.literal!r} "
                      f"at character {h.start}")
    return list(tok.encode(text, add_special_tokens=False, allowed_special=set()).ids), None


def _encode_mode(tok: Tokenizer, mode: str, text: str, hits: Sequence[LiteralHit]) -> tuple[Any, str | None]:
    """(Encoding or id list, error) of one mode."""
    if mode == "tiktoken-default":
        return _tiktoken_default(tok, text, hits)
    if mode == "ordinary":
        return encode_as_text(tok, text), None
    if mode == "allowed=all":
        return tok.encode(text, add_special_tokens=False, allowed_special="all"), None
    if mode == "hf-default":
        return tok.encode(text, add_special_tokens=True, allowed_special="all"), None
    if mode == "hf-split-special":
        return tok.encode(text, add_special_tokens=True, allowed_special=set()), None
    if _is_sentencepiece(tok):
        return tok.encode(text, add_special_tokens=False), None  # the .model pipeline is SentencePiece's own
    return tok.encode(text, add_special_tokens=False, allowed_special=set()), None


def _matched(enc: Any, hits: Sequence[LiteralHit]) -> tuple[bool, ...]:
    """Per hit: some token of ``enc`` has the hit's id and covers its span (lstrip/rstrip may widen it)."""
    if not hasattr(enc, "offsets"):
        return tuple(False for _ in hits)
    spans: dict[int, list[tuple[int, int]]] = {}
    for id_, (s, e) in zip(enc.ids, enc.offsets):
        spans.setdefault(id_, []).append((s, e))
    return tuple(h.id is not None and any(s <= h.start and h.end <= e for s, e in spans.get(h.id, ())) for h in hits)


def mode_matrix(tok: Tokenizer, text: str, hits: Sequence[LiteralHit] | None = None) -> tuple[ModeResult, ...]:
    """``text`` under every mode of `MODES`."""
    hits = scan_literals(tok, text) if hits is None else hits
    out = []
    for mode in MODES:
        enc, error = _encode_mode(tok, mode, text, hits)
        ids = None if enc is None else tuple(enc.ids if hasattr(enc, "ids") else enc)
        matched = _matched(enc, hits) if enc is not None else tuple(False for _ in hits)
        added = ids is not None and TokenizerFacts.of(tok).adds_special_tokens(mode in _ADDS_SPECIAL)
        out.append(ModeResult(mode, _native(tok, mode), ids, error, matched, added))
    return tuple(out)


def analyze_specials(tok: Tokenizer, text: str) -> SpecialsReport:
    """Literals, the mode matrix, the literals that differ between modes and double BOS."""
    hits = scan_literals(tok, text)
    modes = mode_matrix(tok, text, hits)
    differing = []
    for k, h in enumerate(hits):
        seen = {m.matched[k] for m in modes if m.ids is not None}
        if len(seen) > 1 or any(m.ids is None for m in modes) and h.kind == "special":
            if h.literal not in differing:
                differing.append(h.literal)
    bos = tok.config.bos_token
    bos_id = tok.token_to_id(bos) if bos else None
    double = tuple(m.mode for m in modes if bos_id is not None and m.ids is not None and m.ids[:2] == (bos_id, bos_id))
    return SpecialsReport(hits, modes, tuple(differing), double)
