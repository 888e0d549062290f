"""Comparing N tokenizers on one text: cut sets, boundary agreement, atoms, per-script cost, overlap.

The definitions (C1–C9) are written out in docs/compare.md, "How the numbers are defined".
Everything is computed from the
exact UTF-8 byte spans of the engine (``Encoding.byte_offsets``), never from HF-convention char
offsets: a byte-level token holding the first byte of ``東`` has the char span of the whole
character, which would fake a cut between a space and ``東`` (tests/analysis/test_compare.py
checks this case).

Units are always named: **char** = code points of the original text, **byte** = its UTF-8.

Neighbours: `tokviz.analysis.corpus` runs these measures over a file of documents;
`tokviz.analysis.vocab_diff` compares two vocabularies entry by entry (ids, merges, pipeline).

>>> a = cut_ratios({2, 7}, {2, 5, 7})
>>> round(a.f1, 3), a.precision, a.recall
(0.8, 0.6666666666666666, 1.0)

Scripts are found with one alternation of ``\\p{sc=X}+`` groups (a C-level pass per text, not a
per-character loop). Per-token work (cut sets, display units, trimmed spans, script weights) runs
on numpy columns of the byte spans, so adding a row to a long text stays cheap. `Comparison` keeps every side's
results and every pair's |A∩B| (sets of ints: intersection is C-level), so a view that adds one
tokenizer computes one side and N pairs, not N sides and N² pairs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Literal

import numpy as np
import regex

from ..engine.encoding import Encoding
from ..engine.text import OffsetMap
from ..engine.tokenizer import Tokenizer
from .facts import TokenizerFacts

__all__ = [
    "WORD_PATTERN",
    "NO_SEPARATOR_SCRIPTS",
    "TextIndex",
    "Segmentation",
    "PairScore",
    "Atom",
    "ScriptStats",
    "ScriptMap",
    "OverlapStats",
    "segment",
    "cuts_byte",
    "cuts_char",
    "collapse_whitespace",
    "cut_set",
    "cut_ratios",
    "f1_matrix",
    "votes",
    "span_agreement",
    "atoms",
    "script_runs",
    "per_script",
    "per_script_spans",
    "text_by_script",
    "vocab_overlap",
    "overlap_matrix",
    "same_surface_tokens",
    "count_words",
    "surface_ids",
    "Side",
    "CUT_UNITS",
    "collapse_positions",
    "DisplayToken",
    "Analysis",
    "Comparison",
    "UnitTable",
    "analyze",
    "membership_patterns",
]

#: A word: a maximal run of letters, marks, numbers and connector punctuation.
WORD_PATTERN = r"[\p{L}\p{M}\p{N}\p{Pc}]+"
_WORD = regex.compile(WORD_PATTERN)
#: Scripts written without spaces between words: per-word figures are "n/a" for them.
NO_SEPARATOR_SCRIPTS = frozenset(
    {"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan"}
)
_WHITE_SPACE = regex.compile(r"\p{White_Space}+")
_WS_CHARS = frozenset(regex.findall(r"\p{White_Space}", "".join(map(chr, range(0x3001)))))  # all are ≤ U+3000

Unit = Literal["char", "byte"]


# ---------------------------------------------------------------------- text coordinates
class TextIndex:
    """The coordinates of one text: code point boundaries in bytes (β), White_Space runs, scripts.

    >>> ix = TextIndex("é!")
    >>> ix.boundaries, ix.char_of_byte(2), ix.char_of_byte(1)
    ([0, 2, 3], 1, None)
    """

    __slots__ = ("text", "n_chars", "n_bytes", "boundaries", "_char_at", "_arrays", "_ws_runs", "_units")

    def __init__(self, text: str) -> None:
        self.text = text
        self.n_chars = len(text)
        self._arrays: dict[str, np.ndarray] = {}
        # β(p): the engine's one char -> UTF-8 table (`OffsetMap.utf8_table`)
        table = OffsetMap(text).utf8_table()
        if isinstance(table, range):
            self.boundaries = list(table)
        else:
            bounds = np.frombuffer(table, dtype=np.int64)
            self._arrays["bounds"] = bounds
            self.boundaries = table.tolist()
        self.n_bytes = self.boundaries[-1]
        self._char_at: dict[int, int] | None = None
        self._ws_runs: list[tuple[int, int]] | None = None
        # (what, id(segmentation)) -> (the segmentation, value): per-side results, so that a view
        # adding one tokenizer recomputes only that side's units, cuts, scripts
        self._units: dict[tuple[str, int], tuple[object, object]] = {}

    def memo(self, what: str, seg: object, make):  # noqa: ANN001, ANN201
        """``make()`` once per (what, segmentation) for this text."""
        key = (what, id(seg))
        hit = self._units.get(key)
        if hit is not None and hit[0] is seg:
            return hit[1]
        value = make()
        self._units[key] = (seg, value)
        return value

    def forget_except(self, keep: Iterable[object]) -> None:
        """Drop the memoized results of every segmentation not in ``keep`` (removed rows)."""
        ids = {id(s) for s in keep} | {id(self)}
        for key in [k for k, (owner, _) in self._units.items() if id(owner) not in ids]:
            del self._units[key]

    def char_of_byte(self, b: int) -> int | None:
        """p with β(p) = b, or None when byte b lies inside a multi-byte code point."""
        if self.n_bytes == self.n_chars:
            return b if 0 <= b <= self.n_chars else None
        if self._char_at is None:
            self._char_at = {bb: p for p, bb in enumerate(self.boundaries)}
        return self._char_at.get(b)

    def bounds_array(self) -> np.ndarray:
        """β as an int64 array (``n_chars + 1`` entries)."""
        if "bounds" not in self._arrays:
            self._arrays["bounds"] = np.arange(self.n_chars + 1, dtype=np.int64)
        return self._arrays["bounds"]

    def floor_array(self) -> np.ndarray:
        """``floor[b]`` = index of the code point holding byte b (``floor[n_bytes]`` = n_chars)."""
        if "floor" not in self._arrays:
            if self.n_bytes == self.n_chars:
                self._arrays["floor"] = self.bounds_array()
            else:
                widths = np.diff(self.bounds_array())
                floor = np.repeat(np.arange(self.n_chars, dtype=np.int64), widths)
                self._arrays["floor"] = np.append(floor, self.n_chars)
        return self._arrays["floor"]

    def whitespace_runs(self) -> list[tuple[int, int]]:
        """Maximal runs [a, b) of White_Space code points, in chars."""
        if self._ws_runs is None:
            self._ws_runs = [m.span() for m in _WHITE_SPACE.finditer(self.text)]
        return self._ws_runs

    def whitespace_arrays(self, unit: Unit = "char") -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of the White_Space runs as int64 arrays, in ``unit``."""
        key = f"ws-{unit}"
        if key not in self._arrays:
            runs = np.array(self.whitespace_runs(), dtype=np.int64).reshape(-1, 2)
            if unit == "byte":
                runs = self.bounds_array()[runs]
            self._arrays[key] = runs
        runs = self._arrays[key]
        return runs[:, 0], runs[:, 1]

    def non_space_array(self) -> np.ndarray:
        """Positions (chars) of the code points that are not White_Space, ascending."""
        if "nonws" not in self._arrays:
            starts, ends = self.whitespace_arrays()
            ws = np.zeros(self.n_chars + 1, dtype=np.int64)
            np.add.at(ws, starts, 1)
            np.add.at(ws, ends, -1)
            self._arrays["nonws"] = np.flatnonzero(np.cumsum(ws[:-1]) == 0)
        return self._arrays["nonws"]

# ---------------------------------------------------------------------- segmentations (C1)
@dataclass(frozen=True, slots=True)
class Segmentation:
    """One tokenizer's tokens over one text: ids, strings, exact byte spans, surfaces, specials."""

    name: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    byte_spans: tuple[tuple[int, int], ...]
    surfaces: tuple[bytes, ...]
    special: tuple[bool, ...]
    #: the encoding holds the post-processor's special tokens (token indices count them)
    special_tokens_added: bool = False

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_tokens(self) -> int:
        """Tokens that are not special (the count the CLI reports)."""
        return sum(1 for s in self.special if not s)

    @classmethod
    def from_spans(
        cls,
        name: str,
        spans: Sequence[tuple[int, int]],
        *,
        surfaces: Sequence[bytes] | None = None,
        ids: Sequence[int] | None = None,
        special: Sequence[bool] | None = None,
    ) -> Segmentation:
        """A segmentation given by byte spans only (toy cases, tests)."""
        n = len(spans)
        return cls(
            name,
            tuple(ids if ids is not None else range(n)),
            tuple("" for _ in range(n)),
            tuple(tuple(s) for s in spans),
            tuple(surfaces if surfaces is not None else [b""] * n),
            tuple(special if special is not None else [False] * n),
        )


def segment(
    tok: Tokenizer,
    text: str,
    *,
    name: str | None = None,
    encoding: Encoding | None = None,
    add_special_tokens: bool = False,
) -> Segmentation:
    """Encode ``text`` (by default without the post-processor's special tokens, as every
    comparison counts) and keep what the comparisons need (each token's surface is
    `TokenizerFacts.surface` of its id). ``encoding``: one already made with ``add_special_tokens``."""
    facts = TokenizerFacts.of(tok)
    enc = encoding if encoding is not None else tok.encode(text, add_special_tokens=add_special_tokens)
    special = tuple(bool(m) for m in enc.special_tokens_mask)
    return Segmentation(
        name if name is not None else (tok.name or "tokenizer"),
        tuple(enc.ids),
        tuple(enc.tokens),
        tuple(enc.byte_offsets),
        tuple(map(facts.surface, enc.ids)),
        special,
        facts.adds_special_tokens(add_special_tokens),
    )


def _counted_spans(seg: Segmentation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, token indices) in bytes of the tokens that count for cuts and units:
    not special and not zero-width (BOS/EOS, a prepended ``▁`` with span (p, p))."""
    n = len(seg.byte_spans)
    spans = np.fromiter(chain.from_iterable(seg.byte_spans), dtype=np.int64, count=2 * n).reshape(n, 2)
    keep = spans[:, 0] != spans[:, 1]
    if any(seg.special):
        keep &= ~np.fromiter(seg.special, dtype=bool, count=n)
    idx = np.flatnonzero(keep)
    return spans[idx, 0], spans[idx, 1], idx


def _byte_cut_array(seg: Segmentation, n_bytes: int) -> np.ndarray:
    s, e, _ = _counted_spans(seg)
    cuts = np.unique(np.concatenate((s, e)))
    return cuts[(cuts > 0) & (cuts < n_bytes)]


def cuts_byte(seg: Segmentation, n_bytes: int) -> set[int]:
    """C1: ``{b : b is a start or end of a non-special, non-zero-width token, 0 < b < n_bytes}``."""
    return set(_byte_cut_array(seg, n_bytes).tolist())


def _char_cut_array(seg: Segmentation, index: TextIndex) -> np.ndarray:
    cuts = _byte_cut_array(seg, index.n_bytes)
    if index.n_bytes == index.n_chars:
        return cuts
    p = index.floor_array()[cuts]
    return p[index.bounds_array()[p] == cuts]  # a byte cut inside a code point is no char cut


def cuts_char(seg: Segmentation, index: TextIndex) -> set[int]:
    """C1: ``{p : β(p) ∈ cuts_byte}`` — a byte cut inside a code point is not a char cut."""
    return set(_char_cut_array(seg, index).tolist())


def collapse_positions(cuts: np.ndarray, index: TextIndex, *, unit: Unit = "char") -> np.ndarray:
    """C2 position by position: each p with a ≤ p ≤ b for a White_Space run [a, b) becomes a."""
    starts, ends = index.whitespace_arrays(unit)
    if not (starts.size and cuts.size):
        return cuts
    k = np.maximum(np.searchsorted(starts, cuts, side="right") - 1, 0)
    inside = (starts[k] <= cuts) & (cuts <= ends[k])
    return np.where(inside, starts[k], cuts)


def _collapse_array(cuts: np.ndarray, index: TextIndex, unit: Unit) -> np.ndarray:
    cuts = np.unique(collapse_positions(cuts, index, unit=unit))
    # a run that starts at the text start collapses onto 0, which is not a cut
    return cuts[cuts != 0]


def collapse_whitespace(cuts: Iterable[int], index: TextIndex, *, unit: Unit = "char") -> set[int]:
    """C2: every cut p with a ≤ p ≤ b for a White_Space run [a, b) becomes a (in ``unit``)."""
    arr = np.unique(np.fromiter(cuts, dtype=np.int64))
    return set(_collapse_array(arr, index, unit).tolist())


def cut_set(seg: Segmentation, index: TextIndex, *, unit: Unit = "char", collapse: bool = True) -> set[int]:
    """The cut set of ``seg`` in ``unit``, whitespace-collapsed or raw (memoized on the index)."""
    return set(_cut_frozen(seg, index, unit, collapse))


def _cut_frozen(seg: Segmentation, index: TextIndex, unit: Unit, collapse: bool) -> frozenset[int]:
    return index.memo(
        f"cuts-{unit}-{collapse}", seg, lambda: frozenset(_cut_array(seg, index, unit, collapse).tolist())
    )


def _cut_array(seg: Segmentation, index: TextIndex, unit: Unit, collapse: bool) -> np.ndarray:
    """The sorted cut positions (memoized: the collapsed set is built from the raw one)."""

    def make() -> np.ndarray:
        if collapse:
            return _collapse_array(_cut_array(seg, index, unit, False), index, unit)
        return _char_cut_array(seg, index) if unit == "char" else _byte_cut_array(seg, index.n_bytes)

    return index.memo(f"cut-array-{unit}-{collapse}", seg, make)


# ---------------------------------------------------------------------- agreement (C3)
@dataclass(frozen=True, slots=True)
class PairScore:
    """C3 for cut sets A (reference) and B: ``P(B|A) = |A∩B|/|B|``, ``R(B|A) = |A∩B|/|A|``."""

    common: int
    size_a: int
    size_b: int
    precision: float
    recall: float
    f1: float
    jaccard: float


def cut_ratios(a: set[int] | frozenset[int], b: set[int] | frozenset[int]) -> PairScore:
    """Precision, recall, F1 (symmetric; 1 when both are empty) and Jaccard of two cut sets."""
    common = len(a & b)
    union = len(a) + len(b) - common
    return PairScore(
        common=common,
        size_a=len(a),
        size_b=len(b),
        precision=common / len(b) if b else 1.0 if not a else 0.0,
        recall=common / len(a) if a else 1.0 if not b else 0.0,
        f1=2 * common / (len(a) + len(b)) if (a or b) else 1.0,
        jaccard=common / union if union else 1.0,
    )


def f1_matrix(cut_sets: Sequence[set[int]]) -> list[list[float]]:
    """The N×N boundary-F1 matrix, in the order given (F1 is symmetric: each pair once)."""
    n = len(cut_sets)
    m = [[1.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            m[i][j] = m[j][i] = cut_ratios(cut_sets[i], cut_sets[j]).f1
    return m


def votes(cut_sets: Sequence[set[int]]) -> Counter[int]:
    """votes(p): how many of the cut sets cut at p. Consensus: votes == N; contested: 0 < votes < N."""
    c: Counter[int] = Counter()
    for s in cut_sets:
        c.update(s)
    return c


# ---------------------------------------------------------------------- span agreement (C4)
@dataclass(frozen=True, slots=True)
class DisplayToken:
    """A token unit for an aligned view: char span (C1-derived: tokens splitting one code point
    are one unit), the token indices it holds, and their ids."""

    start: int
    end: int
    indices: tuple[int, ...]
    ids: tuple[int, ...]


class UnitTable(Sequence[DisplayToken]):
    """One segmentation's tokens as char-span units, in columns: non-special, non-zero-width
    tokens, where tokens sharing a code point (byte tokens of one character) form one unit.

    ``starts`` / ``ends`` (lists, for bisecting) and ``first_ids`` (the id of each unit's first
    token, its colour) are read directly; ``table[j]`` builds the `DisplayToken` of unit j on demand.
    """

    __slots__ = ("starts", "ends", "first_ids", "_heads", "_tokens", "_ids", "_keys")

    def __init__(self, index: TextIndex, s: np.ndarray, e: np.ndarray, tokens: np.ndarray, ids: np.ndarray) -> None:
        """Units of the tokens with byte spans [s, e) (non-empty, in text order), which are the
        tokens ``tokens`` of a segmentation whose ids are ``ids``."""
        idx = tokens
        floor, bounds = index.floor_array(), index.bounds_array()
        cs = floor[s]
        ce = floor[e]
        ce = ce + (bounds[ce] != e)  # an end inside a code point: the unit takes the whole of it
        if cs.size:
            new = np.empty(cs.size, dtype=bool)
            new[0] = True
            # a token starting before the furthest end so far shares a code point: same unit
            new[1:] = cs[1:] >= np.maximum.accumulate(ce)[:-1]
            heads = np.flatnonzero(new)
            ends = np.maximum.reduceat(ce, heads)
        else:
            heads = ends = cs
        self._heads = np.append(heads, idx.size)
        self._tokens = idx
        self._ids = ids
        starts = cs[heads]
        self.starts: list[int] = starts.tolist()
        self.ends: list[int] = ends.tolist()
        self.first_ids: list[int] = ids[idx[heads]].tolist() if heads.size else []
        self._keys = (starts, ends)

    @classmethod
    def of(cls, seg: Segmentation, index: TextIndex) -> UnitTable:
        """The units of a segmentation (its non-special, non-zero-width tokens)."""
        s, e, idx = _counted_spans(seg)
        return cls(index, s, e, idx, np.fromiter(seg.ids, dtype=np.int64, count=len(seg.ids)))

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, j):  # noqa: ANN001, ANN204 - int -> DisplayToken (Sequence protocol)
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        if j < 0:
            j += len(self)
        members = self.members(j)
        return DisplayToken(self.starts[j], self.ends[j], members, tuple(self._ids[list(members)].tolist()))

    def members(self, j: int) -> tuple[int, ...]:
        """The token indices of unit j (in the segmentation)."""
        return tuple(self._tokens[self._heads[j] : self._heads[j + 1]].tolist())

    def size(self, j: int) -> int:
        """How many tokens unit j holds (more than one: byte tokens of one character)."""
        return int(self._heads[j + 1] - self._heads[j])

    def span_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of the units as int64 arrays."""
        return self._keys


def _char_units(seg: Segmentation, index: TextIndex) -> UnitTable:
    """The `UnitTable` of ``seg`` over ``index``, memoized on the index."""
    return index.memo("units", seg, lambda: UnitTable.of(seg, index))


def _trimmed_arrays(seg: Segmentation, index: TextIndex) -> tuple[np.ndarray, np.ndarray]:
    """The units of ``seg`` with leading/trailing White_Space removed (memoized)."""
    return index.memo("trimmed", seg, lambda: _trim_units(_char_units(seg, index), index))


def _trim_units(units: UnitTable, index: TextIndex) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the units without leading/trailing White_Space (``" cats"`` -> ``"cats"``)."""
    s, e = units.span_arrays()
    keep = index.non_space_array()
    if not keep.size:  # all White_Space: every unit trims to its end
        return e.copy(), e.copy()
    k = np.searchsorted(keep, s)  # first non-space at or after the start
    ts = np.minimum(np.where(k < keep.size, keep[np.minimum(k, keep.size - 1)], index.n_chars), e)
    k = np.searchsorted(keep, e) - 1  # last non-space before the end
    te = np.maximum(np.where(k >= 0, keep[np.maximum(k, 0)] + 1, 0), ts)
    return ts, te


def _span_keys(seg: Segmentation, index: TextIndex, *, trimmed: bool) -> frozenset[int]:
    """The (trimmed) unit spans of ``seg`` as integers ``start * (n + 1) + end`` (memoized)."""

    def make() -> frozenset[int]:
        s, e = _trimmed_arrays(seg, index) if trimmed else _char_units(seg, index).span_arrays()
        return frozenset((s * (index.n_chars + 1) + e).tolist())

    return index.memo(f"span-keys-{trimmed}", seg, make)


def span_agreement(segs: Sequence[Segmentation], index: TextIndex, *, trimmed: bool = False) -> list[float]:
    """C4: per side, the share of its token spans (char units) present in every other side's list."""
    if not segs:
        return []
    keys = [_span_keys(seg, index, trimmed=trimmed) for seg in segs]
    # a side's spans never repeat (units do not overlap; trimming keeps them apart), so the
    # spans every side holds are the intersection and each side holds each of them once
    shared = len(frozenset.intersection(*sorted(keys, key=len)))
    return [shared / len(_char_units(seg, index)) if len(_char_units(seg, index)) else 1.0 for seg in segs]


# ---------------------------------------------------------------------- atoms (C5)
@dataclass(frozen=True, slots=True)
class Atom:
    """One piece of the text between consecutive cuts of the union, and how each side covers it.

    ``covers[k]`` is the char span of side k's covering token unit, or None (status ``gap``).
    """

    start: int
    end: int
    status: str  # same | id-only | surface | boundary | gap
    covers: tuple[tuple[int, int] | None, ...]
    ids: tuple[tuple[int, ...] | None, ...]


def atoms(segs: Sequence[Segmentation], index: TextIndex, *, compare_ids: bool = False) -> list[Atom]:
    """C5: the union of all raw char cuts plus {0, n} cuts the text into atoms; each gets a status.

    ``compare_ids`` only for tokenizers that share an id space (r50k/p50k, cl100k/Llama-3):
    equal spans and surfaces with different ids are then ``id-only``.
    """
    per_side = [_char_units(seg, index) for seg in segs]
    bounds = {0, index.n_chars}
    for units in per_side:
        bounds.update(units.starts)
        bounds.update(units.ends)
    edges = sorted(bounds)
    cursors = [0] * len(segs)
    out = []
    for a, b in zip(edges, edges[1:]):
        covers, ids, surf = [], [], []
        for k, units in enumerate(per_side):
            while cursors[k] < len(units) and units.ends[cursors[k]] <= a:
                cursors[k] += 1
            j = cursors[k]
            if j < len(units) and units.starts[j] <= a and b <= units.ends[j]:
                members = units.members(j)
                covers.append((units.starts[j], units.ends[j]))
                ids.append(tuple(segs[k].ids[i] for i in members))
                surf.append(b"".join(segs[k].surfaces[i] for i in members))
            else:
                covers.append(None)
                ids.append(None)
                surf.append(None)
        out.append(Atom(a, b, _status(covers, ids, surf, compare_ids), tuple(covers), tuple(ids)))
    return out


def _status(covers: list, ids: list, surf: list, compare_ids: bool) -> str:
    if any(c is None for c in covers):
        return "gap"
    if len(set(covers)) > 1:
        return "boundary"
    if len(set(surf)) > 1:
        return "surface"
    if compare_ids and len(set(ids)) > 1:
        return "id-only"
    return "same"


# ---------------------------------------------------------------------- scripts (C6)
# Unicode Script property values known to ``regex`` (UAX #24 long names). The final catch-all
# group keeps the pass total if ``regex`` knows a newer script than this list.
_SCRIPTS = (
    "Common Latin Han Hiragana Katakana Cyrillic Greek Arabic Hebrew Hangul Devanagari Thai Inherited "
    "Adlam Ahom Anatolian_Hieroglyphs Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Beria_Erfe "
    "Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma "
    "Cham Cherokee Chorasmian Coptic Cuneiform Cypriot Cypro_Minoan Deseret Dives_Akuru Dogra Duployan "
    "Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay Georgian Glagolitic Gothic Grantha Gujarati "
    "Gunjala_Gondi Gurmukhi Gurung_Khema Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic Inscriptional_Pahlavi "
    "Inscriptional_Parthian Javanese Kaithi Kannada Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki "
    "Khudawadi Kirat_Rai Lao Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam "
    "Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive "
    "Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari "
    "New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic "
    "Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage "
    "Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan "
    "Saurashtra Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese "
    "Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil Tangsa Tangut "
    "Telugu Thaana Tibetan Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai Vithkuqi "
    "Wancho Warang_Citi Yezidi Yi Zanabazar_Square"
).split()


_ASCII_RUNS = regex.compile(r"[A-Za-z]+|[^A-Za-z]+")


@lru_cache(maxsize=1)
def _script_regex() -> regex.Pattern[str]:
    groups = []
    for name in _SCRIPTS:
        try:
            regex.compile(rf"\p{{sc={name}}}")
        except regex.error:  # an older `regex` without this script
            continue
        groups.append(rf"(?P<{name}>\p{{sc={name}}}+)")
    return regex.compile("|".join(groups) + r"|(?P<Unknown>[\s\S])")


def script_runs(text: str) -> list[tuple[int, int, str]]:
    """Maximal runs (start, end, script) in chars of the resolved Script (UAX #24 ``sc``).

    ``Inherited`` takes the script of the preceding code point (Common at the text start).

    >>> script_runs("ab 東京é\\u0301")
    [(0, 2, 'Latin'), (2, 3, 'Common'), (3, 5, 'Han'), (5, 7, 'Latin')]
    """
    if text.isascii():  # ASCII: letters are Latin, everything else (digits, punctuation, controls) Common
        return [
            (m.start(), m.end(), "Latin" if m.group()[0].isalpha() else "Common")
            for m in _ASCII_RUNS.finditer(text)
        ]
    out: list[tuple[int, int, str]] = []
    for m in _script_regex().finditer(text):
        name = m.lastgroup or "Unknown"
        s, e = m.span()
        if name == "Inherited":
            name = out[-1][2] if out else "Common"
        if out and out[-1][2] == name and out[-1][1] == s:
            out[-1] = (out[-1][0], e, name)
        else:
            out.append((s, e, name))
    return out


@dataclass(frozen=True, slots=True)
class ScriptStats:
    """C6 for one script and one tokenizer. ``tokens`` is byte-weighted (a fraction in general)."""

    script: str
    tokens: float
    chars: int
    bytes: int
    words: int
    single_token_words: int  # words covered by exactly one token span (trimmed): STRR's numerator

    @property
    def tokens_per_char(self) -> float | None:
        return self.tokens / self.chars if self.chars else None

    @property
    def tokens_per_byte(self) -> float | None:
        return self.tokens / self.bytes if self.bytes else None

    @property
    def chars_per_token(self) -> float | None:
        return self.chars / self.tokens if self.tokens else None

    @property
    def bytes_per_token(self) -> float | None:
        return self.bytes / self.tokens if self.tokens else None

    @property
    def tokens_per_word(self) -> float | None:
        """Fertility; None ("n/a") for scripts written without separators or without words."""
        if self.script in NO_SEPARATOR_SCRIPTS or not self.words:
            return None
        return self.tokens / self.words

    @property
    def strr(self) -> float | None:
        if self.script in NO_SEPARATOR_SCRIPTS or not self.words:
            return None
        return self.single_token_words / self.words

    def to_json(self) -> dict[str, object]:
        return {
            "tokens": round(self.tokens, 6),
            "chars": self.chars,
            "bytes": self.bytes,
            "words": self.words,
            "tokens_per_char": _r(self.tokens_per_char),
            "tokens_per_byte": _r(self.tokens_per_byte),
            "chars_per_token": _r(self.chars_per_token),
            "bytes_per_token": _r(self.bytes_per_token),
            "tokens_per_word": _r(self.tokens_per_word),
            "strr": _r(self.strr),
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


class ScriptMap:
    """The script runs of one text in chars and bytes (build once, share among tokenizers)."""

    def __init__(self, index: TextIndex) -> None:
        runs = script_runs(index.text)
        b = index.boundaries
        self.runs = [(b[s], b[e], name) for s, e, name in runs]
        self.char_runs = runs
        self.starts = [r[0] for r in self.runs]
        self.names: list[str] = sorted({name for _, _, name in runs} | {"Common"})
        code = {name: k for k, name in enumerate(self.names)}
        self.common = code["Common"]
        self.code = np.array([code[name] for _, _, name in runs], dtype=np.int64)
        starts = np.array(self.starts, dtype=np.int64)
        # run index of every byte: a token's first and last byte find its runs by two lookups
        self.run_at = np.repeat(np.arange(len(runs), dtype=np.int64), np.diff(np.append(starts, index.n_bytes)))
        non_common = self.code != self.common
        self._nc_before = np.concatenate(([0], np.cumsum(non_common)))  # non-Common runs before run k
        self._nc_runs = np.flatnonzero(non_common)

    def bytes_by_script(self, s: int, e: int) -> dict[str, int]:
        k = max(0, bisect_right(self.starts, s) - 1)
        out: dict[str, int] = {}
        runs = self.runs
        while k < len(runs) and runs[k][0] < e:
            rs, re_, name = runs[k]
            n = min(e, re_) - max(s, rs)
            if n > 0:
                out[name] = out.get(name, 0) + n
            k += 1
        return out

    def token_weights(self, s: np.ndarray, e: np.ndarray) -> dict[str, float]:
        """C6 weights summed per script for tokens with byte spans [s, e) (non-empty).

        A token whose runs hold at most one non-Common run counts 1 to that run's script (to
        Common when it has none): ``" the"`` is Latin. Tokens over several non-Common runs are
        shared by bytes among their non-Common scripts, one by one (they are few).
        """
        if not s.size:
            return {}
        ra, rb = self.run_at[s], self.run_at[e - 1]
        n_nc = self._nc_before[rb + 1] - self._nc_before[ra]
        simple = n_nc <= 1
        script = np.full(ra.size, self.common, dtype=np.int64)
        one = n_nc == 1  # the first non-Common run at or after the token's first run is its script
        script[one] = self.code[self._nc_runs[np.searchsorted(self._nc_runs, ra[one])]]
        counts = np.bincount(script[simple], minlength=len(self.names))
        tokens = {self.names[k]: float(c) for k, c in enumerate(counts.tolist()) if c}
        for bs, be in zip(s[~simple].tolist(), e[~simple].tolist()):
            rest = {k: v for k, v in self.bytes_by_script(bs, be).items() if k != "Common"}
            if len(rest) == 1:  # "don't" with a Common apostrophe: Latin, Common, Latin -> Latin
                name = next(iter(rest))
                tokens[name] = tokens.get(name, 0.0) + 1.0
                continue
            total = sum(rest.values())
            for k, v in rest.items():
                tokens[k] = tokens.get(k, 0.0) + v / total
        return tokens


def per_script(
    seg: Segmentation,
    index: TextIndex,
    *,
    include_special: bool = False,
    script_map: ScriptMap | None = None,
    strr: bool = True,
) -> dict[str, ScriptStats]:
    """C6 of one segmentation: byte-weighted token counts per script, with chars, bytes, words.
    ``strr=False`` skips the single-token-word count (the only per-word figure that needs the
    token spans; corpus runs leave it off unless asked).

    A token with any non-Common bytes is shared among its non-Common scripts by bytes; a token of
    Common bytes only counts 1 to Common. A byte token holding part of a Han character counts to Han.
    """
    smap = script_map if script_map is not None else ScriptMap(index)
    if include_special:
        n = len(seg.byte_spans)
        spans = np.fromiter(chain.from_iterable(seg.byte_spans), dtype=np.int64, count=2 * n).reshape(n, 2)
        s, e = spans[spans[:, 0] != spans[:, 1]].T
    else:
        s, e, _ = _counted_spans(seg)
    single = _words_held(*_trimmed_arrays(seg, index), index, smap) if strr else Counter()
    return _script_stats(index, smap, smap.token_weights(s, e), single)


def per_script_spans(
    index: TextIndex, starts: np.ndarray, ends: np.ndarray, *, script_map: ScriptMap | None = None, strr: bool = False
) -> dict[str, ScriptStats]:
    """C6 as `per_script` for tokens given as byte-span columns (non-special, non-empty, in text
    order): what a corpus batch has, without building a `Segmentation`."""
    smap = script_map if script_map is not None else ScriptMap(index)
    single: Counter[str] = Counter()
    if strr:
        n = starts.size
        units = UnitTable(index, starts, ends, np.arange(n), np.zeros(n, dtype=np.int64))
        single = _words_held(*_trim_units(units, index), index, smap)
    return _script_stats(index, smap, smap.token_weights(starts, ends), single)


def _script_stats(
    index: TextIndex, smap: ScriptMap, tokens: dict[str, float], single: Counter[str]
) -> dict[str, ScriptStats]:
    chars, nbytes, words = text_by_script(index, smap)
    names = set(chars) | set(tokens)
    return {
        n: ScriptStats(n, tokens.get(n, 0.0), chars[n], nbytes[n], words[n], single[n])
        for n in sorted(names, key=lambda n: (-chars[n], n))
    }


def text_by_script(index: TextIndex, smap: ScriptMap) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Chars, bytes and words of each script of the text (no tokenizer involved; memoized:
    treat the counters as read-only)."""

    def make() -> tuple[Counter[str], Counter[str], Counter[str]]:
        chars: Counter[str] = Counter()
        nbytes: Counter[str] = Counter()
        for (s, e, name), (bs, be, _) in zip(smap.char_runs, smap.runs):
            chars[name] += e - s
            nbytes[name] += be - bs
        _, codes = _word_scripts(index, smap)
        counts = np.bincount(codes, minlength=len(smap.names)).tolist()
        words = Counter({smap.names[k]: c for k, c in enumerate(counts) if c})
        return chars, nbytes, words

    return index.memo("text-scripts", smap, make)


def _word_scripts(index: TextIndex, smap: ScriptMap) -> tuple[np.ndarray, np.ndarray]:
    """Every word's char span as a key ``start * (n + 1) + end`` and the script code of its first
    code point (memoized on the index)."""

    def make() -> tuple[np.ndarray, np.ndarray]:
        spans = np.array([m.span() for m in _WORD.finditer(index.text)], dtype=np.int64).reshape(-1, 2)
        starts = np.array([r[0] for r in smap.char_runs], dtype=np.int64)
        k = np.searchsorted(starts, spans[:, 0], side="right") - 1
        codes = smap.code[np.maximum(k, 0)] if smap.code.size else np.zeros(len(spans), dtype=np.int64)
        return spans[:, 0] * (index.n_chars + 1) + spans[:, 1], codes

    return index.memo("words", smap, make)


def _words_held(ts: np.ndarray, te: np.ndarray, index: TextIndex, smap: ScriptMap) -> Counter[str]:
    """Per script, the words whose span is one of the trimmed token spans [ts, te): STRR's numerator."""
    keys, codes = _word_scripts(index, smap)
    held = np.isin(keys, ts * (index.n_chars + 1) + te)
    counts = np.bincount(codes[held], minlength=len(smap.names)).tolist()
    return Counter({smap.names[k]: c for k, c in enumerate(counts) if c})


def count_words(text: str) -> int:
    """Words of ``text`` by `WORD_PATTERN`."""
    return sum(1 for _ in _WORD.finditer(text))


# ---------------------------------------------------------------------- vocabulary overlap (C7, C8)
_PLACEHOLDER = regex.compile(r"\[unused\d+\]|<\|reserved_special_token_\d+\|>|<extra_id_\d+>")


def surface_ids(tok: Tokenizer, *, level: Literal["L0", "L1", "L2"] = "L0") -> dict[bytes, list[int]]:
    """Σ(V) with the ids holding each surface (a vocab may hold one surface under two ids:
    Mistral's ``<0x41>`` and ``A``; the set counts it once).

    L0: exact bytes (``Ġthe`` ≡ ``▁the`` ≡ b" the"). L1: WordPiece word-initial ``x`` ≡ b" x",
    ``##x`` ≡ b"x" (other families as L0). L2: cores, one leading 0x20 stripped (and ``##``).
    """
    facts = TokenizerFacts.of(tok)
    wordpiece = facts.family == "wordpiece"
    out: dict[bytes, list[int]] = {}
    for id_ in facts.ordinary_ids():
        if _PLACEHOLDER.fullmatch(facts.token(id_)):
            continue
        surf = facts.surface(id_)
        if level == "L1" and wordpiece and not facts.is_continuation(id_):
            surf = b" " + surf
        elif level == "L2" and surf.startswith(b" "):
            surf = surf[1:]  # b"Ġ" keeps its empty core (one entry of Σ at L2)
        out.setdefault(surf, []).append(id_)
    return out


@dataclass(frozen=True, slots=True)
class OverlapStats:
    """C7/C8 for two surface sets (one level): sizes, intersection, Jaccard, id agreement."""

    level: str
    size_a: int
    size_b: int
    common: int
    jaccard: float
    a_only: int
    b_only: int
    same_id: int | None  # None at L2 and across WordPiece (no id comparison there)
    remapped: int | None

    def to_json(self) -> dict[str, object]:
        return {
            "level": self.level,
            "size_a": self.size_a,
            "size_b": self.size_b,
            "common": self.common,
            "jaccard": round(self.jaccard, 6),
            "a_only": self.a_only,
            "b_only": self.b_only,
            "same_id": self.same_id,
            "remapped": self.remapped,
        }


def vocab_overlap(a: Tokenizer, b: Tokenizer, *, level: Literal["L0", "L1", "L2"] = "L0") -> OverlapStats:
    """C7 (and C8 at the vocab level) for two tokenizers."""
    sa, sb = surface_ids(a, level=level), surface_ids(b, level=level)
    common = sa.keys() & sb.keys()
    union = len(sa) + len(sb) - len(common)
    same = remapped = None
    if level == "L0":
        same = sum(1 for s in common if set(sa[s]) & set(sb[s]))
        remapped = len(common) - same
    return OverlapStats(
        level,
        len(sa),
        len(sb),
        len(common),
        len(common) / union if union else 1.0,
        len(sa) - len(common),
        len(sb) - len(common),
        same,
        remapped,
    )


def overlap_matrix(toks: Sequence[Tokenizer], *, level: Literal["L0", "L1", "L2"] = "L0") -> list[list[int]]:
    """``m[i][j] = |Σ(T_i) ∩ Σ(T_j)|`` (the diagonal is |Σ(T_i)|), in the order given."""
    sets = [set(surface_ids(t, level=level)) for t in toks]
    return [[len(x & y) for y in sets] for x in sets]


def same_surface_tokens(a: Segmentation, b: Segmentation) -> list[tuple[bytes, tuple[int, int], int, int]]:
    """C8 at the encoding level: tokens of both sides with equal byte span and equal surface, as
    (surface, byte span, id in a, id in b); compare the ids to see which were remapped."""
    where = {
        (span, surf): id_ for span, surf, id_, sp in zip(b.byte_spans, b.surfaces, b.ids, b.special) if not sp
    }
    out = []
    for span, surf, id_, sp in zip(a.byte_spans, a.surfaces, a.ids, a.special):
        if sp or span[0] == span[1]:
            continue
        other = where.get((span, surf))
        if other is not None:
            out.append((surf, span, id_, other))
    return out


# ---------------------------------------------------------------------- the report (CLI --json, GUI export)
@dataclass(frozen=True, slots=True)
class Side:
    """One row of a comparison: a loaded tokenizer, or the error that stopped its loading."""

    name: str
    path: str
    tokenizer: Tokenizer | None
    error: str | None = None


#: The cut sets a report counts: (key, unit, whitespace-collapsed).
CUT_UNITS = (("char_raw", "char", False), ("char_collapsed", "char", True), ("byte", "byte", False))


# ---------------------------------------------------------------------- one analysis of N segmentations
@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything the Compare tab shows for N segmentations of one text (no Qt, no vocabularies).

    ``units[k]``: side k's `UnitTable`; ``cuts[unit][k]``: side k's cut set for unit
    ``char_raw`` / ``char_collapsed`` / ``byte``; ``f1[unit]`` the N×N matrix; ``votes[unit]``
    votes per position.
    """

    text: str
    names: tuple[str, ...]
    n_chars: int
    n_bytes: int
    n_words: int
    tokens: tuple[int, ...]
    units: tuple[UnitTable, ...]
    cuts: dict[str, tuple[frozenset[int], ...]]
    f1: dict[str, list[list[float]]]
    votes: dict[str, dict[int, int]]
    span_shared: tuple[float, ...]
    span_shared_trimmed: tuple[float, ...]
    scripts: tuple[dict[str, ScriptStats], ...]


@dataclass(slots=True)
class _Counted:
    """A side whose cuts are in the running votes: the segmentation, its cut sets, how often."""

    seg: Segmentation
    cuts: dict[str, frozenset[int]]
    times: int


class Comparison:
    """N segmentations of one text, analysed incrementally (what the Compare tab keeps).

    Per-side results (units, cut sets, scripts, span keys) are memoized on the `TextIndex` per
    segmentation; the pairwise |A∩B| and the votes live here. So `analyze` after adding a side
    computes that side's results and its N new pairs only, and removing a side subtracts its
    votes; results of sides no longer compared are dropped. One call at a time (not thread-safe).

    >>> a = Segmentation.from_spans("a", [(0, 2), (2, 7), (7, 12)])
    >>> b = Segmentation.from_spans("b", [(0, 2), (2, 5), (5, 7), (8, 12)])
    >>> c = Comparison("unhappy cats")
    >>> round(c.analyze([a, b]).f1["char_collapsed"][0][1], 3), c.analyze([a]).votes["char_raw"]
    (0.8, {2: 1, 7: 1})
    """

    def __init__(self, text: str, *, index: TextIndex | None = None) -> None:
        self.text = text
        self.index = index if index is not None and index.text == text else TextIndex(text)
        self._common: dict[tuple[str, int, int], int] = {}  # (unit, id(a), id(b)) -> |A∩B|
        self._votes: dict[str, Counter[int]] = {key: Counter() for key, _, _ in CUT_UNITS}
        self._counted: dict[int, _Counted] = {}
        self._shared: dict[bool, tuple[frozenset[int], frozenset[int]]] = {}  # ids of sides -> spans all hold

    def analyze(self, segs: Sequence[Segmentation]) -> Analysis:
        """C1–C6 for ``segs`` (in this order) over the text."""
        ix = self.index
        smap = ix.memo("script-map", ix, lambda: ScriptMap(ix))
        cuts = {
            key: tuple(_cut_frozen(s, ix, unit, collapse) for s in segs)  # type: ignore[arg-type]
            for key, unit, collapse in CUT_UNITS
        }
        self._count_votes(segs, cuts)
        result = Analysis(
            text=self.text,
            names=tuple(s.name for s in segs),
            n_chars=ix.n_chars,
            n_bytes=ix.n_bytes,
            n_words=ix.memo("words-count", ix, lambda: count_words(self.text)),
            tokens=tuple(len(s.special) - sum(s.special) for s in segs),
            units=tuple(_char_units(s, ix) for s in segs),
            cuts=cuts,
            f1={key: self._f1(key, segs, sets) for key, sets in cuts.items()},
            votes={key: dict(c) for key, c in self._votes.items()},
            span_shared=self._span_shared(segs, trimmed=False),
            span_shared_trimmed=self._span_shared(segs, trimmed=True),
            scripts=tuple(ix.memo("scripts", s, lambda s=s: per_script(s, ix, script_map=smap)) for s in segs),
        )
        self._forget_others(segs, smap)
        return result

    def _span_shared(self, segs: Sequence[Segmentation], *, trimmed: bool) -> tuple[float, ...]:
        """C4 as `span_agreement`, from the spans all sides hold: kept from the last call and
        narrowed by the new sides when sides were only added."""
        ids = frozenset(map(id, segs))
        keys = {id(s): _span_keys(s, self.index, trimmed=trimmed) for s in segs}
        last = self._shared.get(trimmed)
        if last is not None and last[0] <= ids and last[0]:
            common = last[1]
            for sid in ids - last[0]:
                common = common & keys[sid]
        else:
            common = frozenset.intersection(*sorted(keys.values(), key=len)) if keys else frozenset()
        self._shared[trimmed] = (ids, common)
        sizes = [len(_char_units(s, self.index)) for s in segs]
        return tuple(len(common) / n if n else 1.0 for n in sizes)

    def _f1(self, key: str, segs: Sequence[Segmentation], sets: Sequence[frozenset[int]]) -> list[list[float]]:
        n = len(segs)
        m = [[1.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                a, b = sets[i], sets[j]
                pair = (key, *sorted((id(segs[i]), id(segs[j]))))
                common = self._common.get(pair)  # type: ignore[arg-type]
                if common is None:
                    common = self._common[pair] = len(a & b)  # type: ignore[index]
                # the same expression as `cut_ratios(...).f1`
                m[i][j] = m[j][i] = 2 * common / (len(a) + len(b)) if (a or b) else 1.0
        return m

    def _count_votes(self, segs: Sequence[Segmentation], cuts: dict[str, tuple[frozenset[int], ...]]) -> None:
        """Bring the running votes from the sides counted so far to ``segs``."""
        want = Counter(id(s) for s in segs)
        for k, s in enumerate(segs):
            if id(s) not in self._counted:
                self._counted[id(s)] = _Counted(s, {key: sets[k] for key, sets in cuts.items()}, 0)
        for sid, entry in list(self._counted.items()):
            delta = want.get(sid, 0) - entry.times
            for key, c in self._votes.items():
                for _ in range(delta):
                    c.update(entry.cuts[key])
                for _ in range(-delta):
                    c.subtract(entry.cuts[key])
                    for p in entry.cuts[key]:
                        if c[p] <= 0:
                            del c[p]
            entry.times += delta
            if not entry.times:
                del self._counted[sid]

    def _forget_others(self, segs: Sequence[Segmentation], smap: ScriptMap) -> None:
        ids = {id(s) for s in segs}
        self.index.forget_except([*segs, smap])
        for pair in [p for p in self._common if p[1] not in ids or p[2] not in ids]:
            del self._common[pair]


def analyze(
    segs: Sequence[Segmentation],
    text: str,
    *,
    index: TextIndex | None = None,
    comparison: Comparison | None = None,
) -> Analysis:
    """C1–C6 for N segmentations of ``text`` in one call (what a comparison view needs);
    pass the `Comparison` of an earlier call on the same text to reuse its results."""
    if comparison is None or comparison.text != text:
        comparison = Comparison(text, index=index)
    return comparison.analyze(segs)


def membership_patterns(sets: Sequence[frozenset[bytes] | set[bytes]]) -> Counter[int]:
    """UpSet counts: for each bit mask of sides, how many surfaces are in exactly those sides.

    >>> sorted(membership_patterns([{b"a", b"b"}, {b"b", b"c"}]).items())
    [(1, 1), (2, 1), (3, 1)]
    """
    masks: dict[bytes, int] = {}
    for k, s in enumerate(sets):
        bit = 1 << k
        for x in s:
            masks[x] = masks.get(x, 0) | bit
    return Counter(masks.values())
