"""SentencePiece normalization: the precompiled charsmap and SentencePiece's whitespace rules.

A SentencePiece model normalizes with a *precompiled charsmap*: a little-endian ``uint32``
trie size, a Darts-clone double-array trie of that many bytes whose keys are UTF-8 source
strings, and a blob of NUL-terminated replacement strings the trie values point into.
`CharsMap` decodes that blob once into a plain ``{source: replacement}`` table (walking the
double array exactly as Darts' ``commonPrefixSearch`` would) and checks every offset, so a
corrupt charsmap fails at load time with `TokvizFormatError` instead of deep inside encoding.

Two normalizers use it, because the two reference libraries apply it differently:

* `SentencePieceNormalizer` is what a ``.model`` file does (``normalizer.cc``): user-defined
  symbols are copied verbatim, otherwise the *longest* charsmap rule at the current position
  wins; then the whitespace rules (``remove_extra_whitespaces``, ``add_dummy_prefix``,
  ``escape_whitespaces`` to ``▁``, ``treat_whitespace_as_suffix``). The alignment reproduces
  SentencePiece's ``norm_to_orig``: a normalized character is aligned to
  ``[origin of its source rule, origin of the next kept character)``, so characters removed by
  normalization belong to the piece before them, exactly like SentencePiece's piece
  ``begin``/``end``. With the native core the same function runs in C (``spm_normalize`` in
  ``_native/spm.c``); `SentencePieceNormalizer.normalize_with_map_py` is the reference it mirrors
  and the fallback wherever the C declines (see there).
* `Precompiled` is HF tokenizers' ``"Precompiled"`` normalizer (from tokenizer.json): it walks
  extended grapheme clusters and, for a cluster shorter than 6 UTF-8 bytes, replaces the *whole*
  cluster by the replacement of the *shortest* rule that is a prefix of it; otherwise it maps
  character by character. The whitespace rules are then separate HF components (Metaspace).
"""

from __future__ import annotations

import base64
import re
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import regex

from .. import kernels
from ..errors import TokvizFormatError
from ..fields import Fields
from ..text import NormalizedText, _arr, make_text
from ..unicode_tables import chars_class
from . import Normalizer

__all__ = ["CharsMap", "Precompiled", "SentencePieceNormalizer", "SentencePieceText", "SPACE_SYMBOL"]

SPACE_SYMBOL = "\u2581"  # ▁ LOWER ONE EIGHTH BLOCK, SentencePiece's escaped space

_LEAF_BIT = 1 << 31
_MAX_KEY_BYTES = 256
# Trie steps allowed per byte of the blob (decoding real maps takes fewer than 2 per byte) and at least.
_STEPS_PER_BYTE = 8
_MIN_STEPS = 100_000  # no real rule is this long; a longer walk means a corrupt (cyclic) trie


def _offset(unit: int) -> int:
    # Darts-clone unit layout: offset in bits 10..31, scaled by 2**8 when bit 9 is set.
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class CharsMap:
    """A decoded precompiled charsmap: source string -> replacement, with longest-match lookup.

    `from_bytes` checks the whole blob (in C with the native core); the trie is decoded for the
    Python matcher when it first asks (one pass over the array, `_decode`), and the rules under
    one first character the first time that character is seen.

    >>> cm = CharsMap.from_rules({"ﬁ": "fi", "Ａ": "A"})
    >>> cm.longest_match("xﬁy", 1)
    (1, 'fi')
    """

    def __init__(self) -> None:
        self.blob = b""
        self.source: str | None = None
        self._units: array | None = None
        self._normalized = b""
        # the rules under a first char, and their key lengths, longest first (decoded on demand)
        self._sub: dict[str, dict[str, str]] = {}
        self._sub_lengths: dict[str, tuple[int, ...]] = {}
        self._all: dict[str, str] | None = None
        self._steps = 0  # trie steps taken by all walks so far, against `_budget` (`_spend`)
        self._budget = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_rules(cls, rules: dict[str, str]) -> CharsMap:
        """A charsmap from an explicit table (tests, hand-made normalizers)."""
        cm = cls()
        grouped: dict[str, dict[str, str]] = {}
        for k, v in rules.items():
            if k:
                grouped.setdefault(k[0], {})[k] = v
        cm._children = {}
        cm._first = {}
        for c, sub in grouped.items():
            cm._first[c] = (-1, b"")
            cm._sub[c] = sub
            cm._sub_lengths[c] = tuple(sorted({len(k) for k in sub}, reverse=True))
        cm._all = dict(rules)
        return cm

    @classmethod
    def from_bytes(cls, blob: bytes, *, source: str | None = None) -> CharsMap:
        """Decode SentencePiece's ``precompiled_charsmap`` bytes (raises `TokvizFormatError`)."""
        cm = cls()
        cm.blob = bytes(blob)
        cm.source = source
        bad = cm._bad
        if len(blob) <= 4:
            raise bad(f"blob of {len(blob)} bytes is too short for the 4-byte trie size header")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if 4 + trie_size > len(blob):
            raise bad(f"trie size {trie_size} exceeds the blob size {len(blob)} (after the 4-byte header)")
        if trie_size % 4 or trie_size == 0:
            raise bad(f"trie size {trie_size} is not a positive multiple of 4 (uint32 units)")
        units = array("I", struct.unpack_from(f"<{trie_size // 4}I", blob, 4))
        cm._units = units
        cm._budget = _STEPS_PER_BYTE * len(blob) + _MIN_STEPS
        cm._normalized = bytes(blob[4 + trie_size :])
        # A bad blob is reported now: the native check walks every path of the trie (a superset
        # of the Python's walks); without it, or when it finds a fault, the Python decodes now
        # and names the fault. A blob it vouches for is decoded when the Python matcher asks.
        native = kernels.native
        if native is None or not native.spm_charsmap_check(cm.blob, cm._budget):
            cm._decoded  # noqa: B018 - (decoding raises TokvizFormatError for a bad blob)
        return cm

    # ------------------------------------------------------------------ lazy tables
    # The decoded trie, built on first read (`functools.cached_property`, see
    # `tokviz.engine.caching`): the Python matcher walks it; the native normalizer reads the
    # blob itself.
    @cached_property
    def _decoded(self) -> tuple[dict[int, tuple[int, ...]], dict[str, tuple[int, bytes]]]:
        """`_children` and `_first`, decoded together (`_decode`)."""
        return self._decode()

    @cached_property
    def _children(self) -> dict[int, tuple[int, ...]]:
        """Node base -> the units answering to it (every value slot checked on the way)."""
        return self._decoded[0]

    @cached_property
    def _first(self) -> dict[str, tuple[int, bytes]]:
        """First char -> (trie base after it, its bytes)."""
        return self._decoded[1]

    def _decode(self) -> tuple[dict[int, tuple[int, ...]], dict[str, tuple[int, bytes]]]:
        """The children of every node and the first characters of the blob's trie (raises
        `TokvizFormatError` for a bad value slot or a walk past the budget). Tables of atoms:
        tuples and dicts the cycle collector stops tracking, so a decoded charsmap adds almost
        nothing to every full collection."""
        units = self._units
        assert units is not None
        bad = self._bad
        normalized = self._normalized
        n = len(units)
        n_norm = len(normalized)

        # Children of a node: Darts goes from node q to q ^ offset(q) ^ byte and checks that the
        # unit there carries that byte as its label. Group every unit by the base it answers to,
        # which gives each node's children without probing all 256 bytes. The same pass checks
        # every value slot, so bad offsets are reported at load time.
        children: dict[int, list[int]] = {}
        for p, u in enumerate(units):
            if u & _LEAF_BIT:
                continue
            label = u & 0xFF
            if label == 0:  # the terminal transition; keys are NUL-terminated C strings
                continue
            children.setdefault(p ^ label, []).append(p)
            if (u >> 8) & 1:
                slot = p ^ _offset(u)
                if slot >= n:
                    raise bad(f"unit {p}: value slot {slot} is outside the trie ({n} units)")
                v = units[slot] & 0x7FFFFFFF
                if v >= n_norm:
                    raise bad(f"unit {p}: replacement offset {v} is outside the {n_norm}-byte table")
        kids_of = {base: tuple(kids) for base, kids in children.items()}

        # First characters: walk from the root until the bytes form one whole UTF-8 character.
        first: dict[str, tuple[int, bytes]] = {}
        frontier: list[tuple[int, bytes]] = [(_offset(units[0]), b"")]
        while frontier:
            base, key = frontier.pop()
            self._spend(len(kids_of.get(base, ())))
            for p in kids_of.get(base, ()):
                u = units[p]
                k = key + bytes((u & 0xFF,))
                child = p ^ _offset(u)
                try:
                    c = k.decode("utf-8")
                except UnicodeDecodeError:
                    if len(k) < 4:
                        frontier.append((child, k))
                    continue
                first[c] = (p, k)
        return kids_of, first

    def _spend(self, steps: int) -> None:
        """Count trie steps against the blob's budget (see `_rules_under`)."""
        self._steps += steps
        if self._steps > self._budget:
            raise self._bad(f"trie walk took more than {self._budget} steps (corrupt offsets make paths multiply)")

    def _bad(self, msg: str) -> TokvizFormatError:
        return TokvizFormatError(msg, source=self.source, where="precompiled_charsmap")

    def _value(self, slot: int) -> str:
        units = self._units
        assert units is not None
        v = units[slot] & 0x7FFFFFFF
        end = self._normalized.find(b"\0", v)
        raw = self._normalized[v:] if end < 0 else self._normalized[v:end]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad(f"replacement at offset {v} is not UTF-8") from None

    def _rules_under(self, c: str) -> tuple[dict[str, str], tuple[int, ...]]:
        got = self._sub.get(c)
        if got is not None:
            return got, self._sub_lengths[c]
        units = self._units
        assert units is not None
        pos, kbytes = self._first[c]
        rules: dict[str, str] = {}
        stack: list[tuple[int, bytes]] = [(pos, kbytes)]
        # darts-clone shares identical subtrees (a DAWG), so units may be reached more than once;
        # a corrupt "diamond" of depth d would then have 2**d paths. Every rule costs one step
        # per byte of its key, so all walks together get a budget proportional to the blob.
        while stack:
            p, key = stack.pop()
            self._spend(1)
            if len(key) > _MAX_KEY_BYTES:
                raise self._bad(f"trie walk deeper than {_MAX_KEY_BYTES} bytes (cyclic offsets?)")
            u = units[p]
            base = p ^ _offset(u)
            if (u >> 8) & 1:
                try:
                    rules[key.decode("utf-8")] = self._value(base)
                except UnicodeDecodeError:
                    # A rule ending inside a character never matches whole characters of a str.
                    pass
            for q in self._children.get(base, ()):
                stack.append((q, key + bytes((units[q] & 0xFF,))))
        lengths = tuple(sorted({len(k) for k in rules}, reverse=True))
        self._sub[c] = rules
        self._sub_lengths[c] = lengths
        return rules, lengths

    # ------------------------------------------------------------------ lookup
    @property
    def rules(self) -> dict[str, str]:
        """Every rule (decodes the whole trie on first use: slow for big maps; for inspection)."""
        if self._all is None:
            table: dict[str, str] = {}
            for c in self._first:
                table.update(self._rules_under(c)[0])
            self._all = table
        return self._all

    @property
    def first_chars(self) -> frozenset[str]:
        """Characters some rule starts with (every other character maps to itself)."""
        return frozenset(self._first)

    def start_sets(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """``(single, multi_first, multi_second)``: characters that are a rule by themselves;
        first and second characters of longer rules. A rule can match at ``i`` only if
        ``text[i]`` is in ``single``, or in ``multi_first`` with ``text[i+1]`` in ``multi_second``.
        (Decodes every rule: called once per normalizer.)"""
        single: set[str] = set()
        first: set[str] = set()
        second: set[str] = set()
        units = self._units
        if units is None:  # built from an explicit table
            for c in self._first:
                for key in self._rules_under(c)[0]:
                    if len(key) == 1:
                        single.add(key)
                    else:
                        first.add(key[0])
                        second.add(key[1])
            return frozenset(single), frozenset(first), frozenset(second)
        # Walk the trie only one more character deep after each first character: keys only,
        # no replacement decoding (a 200k-rule map would take seconds to decode).
        children = self._children
        for c, (pos, _) in self._first.items():
            u = units[pos]
            base = pos ^ _offset(u)
            if (u >> 8) & 1:
                single.add(c)
            frontier = [(q, b"") for q in children.get(base, ())]
            while frontier:
                q, partial = frontier.pop()
                self._spend(1)
                uq = units[q]
                k = partial + bytes((uq & 0xFF,))
                try:
                    c2 = k.decode("utf-8")
                except UnicodeDecodeError:
                    if len(k) < 4:
                        frontier.extend((r, k) for r in children.get(q ^ _offset(uq), ()))
                    continue
                first.add(c)
                second.add(c2)
        return frozenset(single), frozenset(first), frozenset(second)

    def longest_match(self, text: str, i: int) -> tuple[int, str] | None:
        """SentencePiece: the longest rule matching ``text`` at ``i``: (chars consumed, replacement)."""
        c = text[i]
        if c not in self._first:
            return None
        rules, lengths = self._rules_under(c)
        room = len(text) - i
        for n in lengths:
            if n > room:
                continue  # a slice past the end would be shorter than n
            repl = rules.get(text[i : i + n])
            if repl is not None:
                return n, repl
        return None

    def shortest_prefix_rule(self, s: str) -> str | None:
        """HF ``transform``: the replacement of the *shortest* rule that is a prefix of ``s``."""
        if not s or s[0] not in self._first:
            return None
        rules, lengths = self._rules_under(s[0])
        for n in reversed(lengths):
            if n > len(s):
                break
            repl = rules.get(s[:n])
            if repl is not None:
                return repl
        return None


# ---------------------------------------------------------------------- HF "Precompiled"
_GRAPHEME = regex.compile(r"\X", regex.DOTALL)


class Precompiled(Normalizer):
    """HF tokenizers' ``Precompiled`` normalizer (a SentencePiece charsmap inside tokenizer.json).

    Reproduces HF's per-grapheme rule (see the module docstring), including its alignment
    bookkeeping: an expansion's extra characters are insertions, a shrink folds the removed
    characters into the last emitted one.
    """

    type_name: ClassVar[str] = "Precompiled"

    def __init__(self, charsmap: CharsMap | bytes | None, *, source: str | None = None) -> None:
        if isinstance(charsmap, (bytes, bytearray)):
            charsmap = CharsMap.from_bytes(bytes(charsmap), source=source) if charsmap else None
        self.charsmap = charsmap

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Precompiled:
        raw = Fields(obj).str("precompiled_charsmap", None, optional=True)
        if not raw:
            return cls(None)
        try:
            blob = base64.b64decode(raw, validate=True)
        except ValueError:
            raise TokvizFormatError("not valid base64", where="precompiled_charsmap") from None
        return cls(CharsMap.from_bytes(blob, source=None))

    def to_json(self) -> dict[str, Any]:
        blob = self.charsmap.blob if self.charsmap is not None else b""
        return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode("ascii")}

    def normalize(self, text: NormalizedText) -> NormalizedText:
        cm = self.charsmap
        s = text.text
        if cm is None or not s:
            return text
        first = cm.first_chars
        if not any(c in first for c in s):
            return text
        changes: list[tuple[str, int]] = []
        modified = False
        for m in _GRAPHEME.finditer(s):
            g = m.group()
            if len(g.encode("utf-8")) < 6:
                repl = cm.shortest_prefix_rule(g)
                if repl is not None:
                    modified = True
                    _hf_replace(changes, len(g), repl)
                    continue
            for c in g:
                repl = cm.shortest_prefix_rule(c) if c in first else None
                if repl is not None:
                    modified = True
                    _hf_replace(changes, 1, repl)
                else:
                    changes.append((c, 0))
        if not modified:
            return text
        return text.transform(changes, 0)


def _hf_replace(changes: list[tuple[str, int]], old_count: int, new: str) -> None:
    # HF precompiled.rs `replace`: new chars replace (change 0); if the replacement is longer
    # the last `diff` new chars become insertions (1); if shorter, the last emitted change
    # (possibly from an earlier cluster) absorbs the removal.
    diff = len(new) - old_count
    changes.extend((c, 0) for c in new)
    if diff > 0:
        for k in range(len(changes) - diff, len(changes)):
            changes[k] = (changes[k][0], 1)
    elif diff < 0 and changes:
        c, ch = changes[-1]
        changes[-1] = (c, ch + diff)


# ---------------------------------------------------------------------- SentencePiece's own
@dataclass(frozen=True, slots=True)
class SentencePieceText(NormalizedText):
    """A `NormalizedText` from `SentencePieceNormalizer`: an *empty* normalized range maps to
    SentencePiece's ``norm_to_orig`` at that position (where the byte-fallback pieces of one
    character, all but the last, have their empty span), not to HF's relative-offset quirk."""

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        starts = self.starts
        if starts is None:
            return NormalizedText.original_span(self, start, end)
        if start < end:
            return (starts[start], self.ends[end - 1])  # type: ignore[index]
        if start == end:
            if start < len(self.text):
                p = starts[start]
            else:
                p = self.ends[-1] if self.text else self.orig_start  # type: ignore[index]
            return (p, p)
        return NormalizedText.original_span(self, start, end)


@dataclass(frozen=True, slots=True)
class _ScanSets:
    """What `SentencePieceNormalizer.normalize_with_map_py` scans with: characters that act as a
    plain space (``blank``), that need a look (``special``, ``stop``), the first and second
    characters of longer rules (``multi1``, ``multi2``), the pattern finding the next of them,
    and whether the space itself is plain."""

    blank: frozenset[str]
    special: frozenset[str]
    stop: frozenset[str]
    multi1: frozenset[str]
    multi2: frozenset[str]
    next_special: re.Pattern[str]
    space_is_plain: bool


class SentencePieceNormalizer(Normalizer):
    """What SentencePiece's ``Normalizer::Normalize`` does, with its exact alignment.

    ``user_defined`` are the model's USER_DEFINED pieces: at any position the longest one that
    matches is copied unnormalized (SentencePiece's ``PrefixMatcher``).

    >>> sp = SentencePieceNormalizer(None)
    >>> sp.normalize_str("  Hello   world ")
    '▁Hello▁world'
    >>> nt = sp.normalize(NormalizedText.identity("a  b"))
    >>> nt.text, nt.original_span(0, 2), nt.original_span(2, 4)
    ('▁a▁b', (0, 1), (1, 4))
    """

    type_name: ClassVar[str] = "SentencePieceNormalizer"  # not an HF type; built by the .model loader

    def __init__(
        self,
        charsmap: CharsMap | None,
        *,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined: Sequence[str] = (),
        name: str = "",
    ) -> None:
        self.charsmap = charsmap
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined = tuple(u for u in user_defined if u)
        self.name = name
        ud_lengths: dict[str, set[int]] = {}
        for u in self.user_defined:
            ud_lengths.setdefault(u[0], set()).add(len(u))
        self._ud_by_first = {c: tuple(sorted(ls, reverse=True)) for c, ls in ud_lengths.items()}
        self._ud_set = frozenset(self.user_defined)
        self._space = SPACE_SYMBOL if escape_whitespaces else " "
        self._kernels = kernels.native  # the native normalizer's module, or None (pure Python)
        self._table: Any = _UNBUILT

    # ------------------------------------------------------------------ lazy tables
    # What the pure-Python normalizer scans with, built on first read (`functools.cached_property`,
    # see `tokviz.engine.caching`); with the native core an encode needs only `_native_table`.
    @cached_property
    def _scan_sets(self) -> _ScanSets:
        """The character sets and the scan pattern of `normalize_with_map_py` (`_ScanSets`)."""
        # Positions that need the slow path: a single-char rule, the space, a user-defined
        # symbol's first char, or the first char of a longer rule followed by its possible
        # second char. Everything else maps to itself and is copied in runs.
        cm = self.charsmap
        if cm is not None:
            single, multi1, multi2 = cm.start_sets()
        else:
            single, multi1, multi2 = frozenset(), frozenset(), frozenset()
        # A one-character user-defined symbol that starts no longer one is copied as itself
        # (the matcher wins over the charsmap), exactly like a plain character.
        lone_ud = {c for c, ls in self._ud_by_first.items() if ls == (1,) and c != " "}
        stop = (set(single) - lone_ud) | (set(self._ud_by_first) - lone_ud) | {" "}
        # the space is only special because of the whitespace rules (unless a rule starts with it)
        space_is_plain = " " not in single and " " not in self._ud_by_first and " " not in multi1
        # Characters that act exactly like a plain space: the space itself (when plain) and
        # every character whose only rule is a one-character rule giving " " (e.g. "\n" in
        # nmt_nfkc), starting no longer rule and no user-defined symbol. A run of them is
        # handled in one step, like a run of spaces.
        blank = {" "} if space_is_plain else set()
        if blank and cm is not None:
            for c in single:
                if c in multi1 or c in self._ud_by_first:
                    continue
                m = cm.longest_match(c, 0)
                if m is not None and m == (1, " "):
                    blank.add(c)
        multi1 = frozenset(multi1 - stop)
        special = frozenset(stop | multi1)
        # One character class (fast to scan for): the stop characters and the second characters
        # of longer rules; a longer rule can only start right before one of the latter.
        stop_set = frozenset(stop)
        multi2_set = frozenset(multi2) if multi1 else frozenset()
        scan = stop | (multi2 if multi1 else set())
        if space_is_plain:
            # A run of spaces (and space-like characters) is one match (handled in bulk). A lone
            # space between characters that map to themselves is not matched at all: it stays in
            # the plain run, escaped there, and only its "follows an emitted space" case (it is
            # then removed) needs a look at the run's first character.
            runs = "[" + chars_class(frozenset(blank)) + "]{2,}"
            rest = (scan - blank) | (blank - {" "})
            next_special = re.compile(runs + "|[" + _scan_class(rest) + "]" if rest else runs)
        else:
            next_special = re.compile("[" + _scan_class(scan) + "]")
        return _ScanSets(frozenset(blank), special, stop_set, multi1, multi2_set, next_special, space_is_plain)

    @cached_property
    def _blank(self) -> frozenset[str]:
        return self._scan_sets.blank

    @cached_property
    def _stop(self) -> frozenset[str]:
        return self._scan_sets.stop

    @cached_property
    def _multi1(self) -> frozenset[str]:
        return self._scan_sets.multi1

    @cached_property
    def _multi2(self) -> frozenset[str]:
        return self._scan_sets.multi2

    @cached_property
    def _next_special(self) -> re.Pattern[str]:
        return self._scan_sets.next_special

    @cached_property
    def _lone_spaces(self) -> bool:
        return self._scan_sets.space_is_plain

    def _native_table(self) -> Any:
        """The native normalizer, built on first use; None: the Python runs (no native core, a
        hand-made charsmap, or one whose full decoding the native check could not vouch for:
        the Python then reports its error where it meets it)."""
        table = self._table
        if table is _UNBUILT:
            table = None
            cm = self.charsmap
            if self._kernels is not None and (cm is None or cm._units is not None):
                blob = None if cm is None else cm.blob
                budget = 0 if cm is None else cm._budget - cm._steps
                table = self._kernels.spm_normalizer(
                    blob, self.user_defined, self.add_dummy_prefix, self.remove_extra_whitespaces,
                    self.escape_whitespaces, self.treat_whitespace_as_suffix, budget,
                )
            self._table = table
        return table

    def _native_map(self, s: str, base: int) -> tuple[str, array] | None:
        """`normalize_with_map` in C with ``base`` added to every position; None: not offered."""
        table = self._native_table()
        if table is None:
            return None
        got = self._kernels.spm_normalize(table, s, base)  # type: ignore[union-attr]
        if got is None:
            return None
        n2o = array("q")
        n2o.frombytes(got[1])
        return got[0], n2o

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "name": self.name,
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces,
            "treat_whitespace_as_suffix": self.treat_whitespace_as_suffix,
            "user_defined": list(self.user_defined),
        }

    # ------------------------------------------------------------------ core
    def _prefix(self, s: str, i: int) -> tuple[str, int]:
        """SentencePiece ``NormalizePrefix``: (replacement, characters consumed) at ``i``."""
        c = s[i]
        lengths = self._ud_by_first.get(c)
        if lengths is not None:
            room = len(s) - i
            for n in lengths:
                if n <= room and s[i : i + n] in self._ud_set:
                    return s[i : i + n], n
        cm = self.charsmap
        if cm is not None:
            m = cm.longest_match(s, i)
            if m is not None:
                return m[1], m[0]
        return c, 1

    def normalize_with_map(self, s: str) -> tuple[str, list[int]]:
        """The normalized string and ``norm_to_orig`` (per normalized char, plus one end entry),
        in characters of ``s``. Empty input gives ``("", [])`` as SentencePiece does.

        >>> SentencePieceNormalizer(None).normalize_with_map(" a  b ")
        ('▁a▁b', [1, 1, 2, 4, 5])
        """
        got = self._native_map(s, 0)
        if got is not None:
            return got[0], got[1].tolist()
        return self.normalize_with_map_py(s)

    def normalize_with_map_py(self, s: str) -> tuple[str, list[int]]:
        """`normalize_with_map` in pure Python: the reference of the native ``spm_normalize``."""
        n = len(s)
        if n == 0:
            return "", []
        i = 0
        remove = self.remove_extra_whitespaces
        if remove:
            blank0 = self._blank
            while i < n:
                c = s[i]
                if c in blank0:  # (its rule is exactly " ", one character)
                    i += 1
                    continue
                if c not in self._stop and (c not in self._multi1 or i + 1 == n or s[i + 1] not in self._multi2):
                    break  # starts no rule and no user-defined symbol here: it maps to itself
                rep, k = self._prefix(s, i)
                if rep != " ":
                    break
                i += k
            if i == n:
                return "", []
        ws = self._space
        out: list[str] = []
        n2o: list[int] = []
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            out.append(ws)
            n2o.append(i)
        is_prev_space = remove
        find = self._next_special.search
        escape = self.escape_whitespaces
        blank = self._blank
        stop_set = self._stop
        multi1 = self._multi1
        multi2 = self._multi2
        lone_spaces = self._lone_spaces
        while i < n:
            m = find(s, i)
            j = n if m is None else m.start()
            if j < n and s[j] not in stop_set:
                # a possible second char of a longer rule: the rule would start at j - 1
                if j > i and s[j - 1] in multi1:
                    j -= 1
                elif s[j] not in multi1:
                    j += 1  # the char itself maps to itself; keep scanning after it
                    if is_prev_space and s[i] == " ":
                        i += 1  # a lone space right after an emitted space: removed
                    out.append(s[i:j].replace(" ", ws) if lone_spaces else s[i:j])
                    n2o.extend(range(i, j))
                    is_prev_space = False
                    i = j
                    continue
            elif j < n and j > i and s[j - 1] in multi1 and s[j] in multi2:
                # a stop character can also be the second character of a longer rule that
                # starts right before it (nmt_nfkc: "シ" + halfwidth "ﾞ" -> "ジ"): match from there
                j -= 1
            if j > i:
                # a run of characters that map to themselves (and lone spaces, escaped)
                if is_prev_space and s[i] == " ":
                    i += 1  # a lone space right after an emitted space: removed
                if j > i:
                    if lone_spaces:
                        out.append(s[i:j].replace(" ", ws))
                        is_prev_space = remove and s[j - 1] == " "
                    else:
                        out.append(s[i:j])
                        is_prev_space = False
                    n2o.extend(range(i, j))
                i = j
                if i == n:
                    break
            if s[i] in blank:
                k = m.end() - i if m is not None and m.start() == i else 1  # the whole run
                if remove:
                    # only the first space of a run survives (the others follow a space)
                    if not is_prev_space:
                        out.append(ws)
                        n2o.append(i)
                        is_prev_space = True
                else:
                    out.append(ws * k)
                    n2o.extend(range(i, i + k))
                i += k
                continue
            rep, k = self._prefix(s, i)
            if is_prev_space:
                rep = rep.lstrip(" ")
            if rep:
                if escape and " " in rep:
                    out.append(rep.replace(" ", SPACE_SYMBOL))
                else:
                    out.append(rep)
                n2o.extend([i] * len(rep))
                is_prev_space = rep[-1] == " "
            i += k
            if not remove:
                is_prev_space = False
        text = "".join(out)
        consumed = n
        if remove:
            # Trailing whitespace goes; the end then maps to where the removed run began.
            end = len(text)
            while end > 0 and text[end - 1] == ws:
                end -= 1
                consumed = n2o[end]
            if end != len(text):
                text = text[:end]
                del n2o[end:]
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            text += ws
            n2o.append(consumed)
        n2o.append(consumed)
        return text, n2o

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if text.starts is None:  # (the usual call: the native normalizer, its map shifted to the piece)
            table = self._table
            if table is _UNBUILT:
                table = self._native_table()
            got = None if table is None else self._kernels.spm_normalize(table, text.text, text.orig_start)
            if got is not None:
                out, raw = got
                if not raw:
                    return SentencePieceText(text.original, "", text.orig_start, text.orig_end, _arr(), _arr())
                starts = array("q")  # (`_arr`'s type code; no frame)
                starts.frombytes(raw)
                ends = starts[1:]
                del starts[-1]
                return make_text(text.original, out, text.orig_start, text.orig_end, starts, ends, SentencePieceText)
        out, n2o = self.normalize_with_map(text.text)
        if not n2o:
            return SentencePieceText(text.original, "", text.orig_start, text.orig_end, _arr(), _arr())
        # Map positions of the input piece to absolute original positions (the input may itself
        # be normalized already): position j -> start of input char j, or the piece's end.
        if text.starts is None:
            base = text.orig_start
            if base:
                n2o = [base + p for p in n2o]
            starts = _arr(n2o)
            ends = starts[1:]
            del starts[-1]
        else:
            in_starts = list(text.starts) + [text.orig_end]
            starts = _arr(in_starts[p] for p in n2o[:-1])
            ends = _arr(in_starts[p] for p in n2o[1:])
        return SentencePieceText(text.original, out, text.orig_start, text.orig_end, starts, ends)


_UNBUILT = object()  # a native table not built yet


def _scan_class(chars: set[str] | frozenset[str]) -> str:
    """`chars_class` of ``chars`` for the scan pattern, with every character beyond the BMP
    included when any of them is: ``re`` tests a class with astral members range by range
    (thousands of nmt_nfkc ranges, much slower), a BMP class with one astral range by table.
    The extra astral matches are harmless: the scan only says where to look closer, and a
    character that starts no rule is then copied as itself."""
    bmp = {c for c in chars if ord(c) < 0x10000}
    if len(bmp) == len(chars):
        return chars_class(chars)
    return chars_class(bmp) + "\\U00010000-\\U0010ffff"
