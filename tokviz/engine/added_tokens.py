"""Added tokens: literals matched in the text before normalization, the way HF does.

An added token (special or not) is found in the raw text (``normalized=False``) or in the
normalized text (``normalized=True``), with ``lstrip``/``rstrip``/``single_word`` rules, and
bypasses the model. tiktoken-style special tokens are added tokens that are only honoured when
``allowed_special`` admits them.

`AddedVocabulary` is the matcher (HF ``AddedVocabulary``): two leftmost-longest literal
matchers, one for the raw text and one for the normalized text, and the extraction step
``extract`` that turns the input into segments (added tokens and normalized ordinary text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

import regex

from .text import NormalizedText

__all__ = ["AddedToken", "AddedVocabulary", "ExtractedSegment"]


@dataclass(frozen=True, slots=True)
class AddedToken:
    """One entry of tokenizer.json ``added_tokens`` (same field names)."""

    content: str
    id: int
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True


# A segment after extraction: the (normalized) text and the added token id, or None for text
# that goes on to the pre-tokenizer and the model.
ExtractedSegment = tuple[NormalizedText, "int | None"]

# HF decides single_word / lstrip / rstrip with Rust-regex \w and \s (Unicode); the `regex`
# module's \w and \s use the same Unicode properties.
_IS_WORD = regex.compile(r"\w").match
_IS_SPACE = regex.compile(r"\s").match
_SPACES_AT = regex.compile(r"\s*").match


class _Node:
    """A node of the radix tree of the literals: edges keyed by their first character."""

    __slots__ = ("edges", "id")

    def __init__(self) -> None:
        self.edges: dict[str, tuple[str, _Node]] = {}  # first character -> (edge label, child)
        self.id: int | None = None  # the literal that ends here


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (binary search over C-level
    comparisons, so a literal of a million characters costs about 20 of them)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _insert(root: _Node, literal: str, id_: int) -> None:
    node, at = root, 0
    while True:
        edge = node.edges.get(literal[at])
        if edge is None:
            leaf = _Node()
            leaf.id = id_
            node.edges[literal[at]] = (literal[at:], leaf)
            return
        label, child = edge
        k = _common_prefix(label, literal[at : at + len(label)])
        if k < len(label):  # split the edge where the literal leaves it
            mid = _Node()
            mid.edges[label[k]] = (label[k:], child)
            node.edges[literal[at]] = (label[:k], mid)
            child = mid
        at += k
        if at == len(literal):
            if child.id is None:
                child.id = id_
            return
        node = child


#: at most this many first characters get a class of second characters in the candidate scan
#: (more, and the scan looks at first characters only: its regex must stay cheap to compile)
_MAX_PREFIX_BRANCHES = 256


def _candidate_scan(root: _Node) -> re.Pattern[str]:
    """A zero-width regex matching wherever a literal may start: its first two characters
    (``<[|/t]`` for ``<|im_start|>``, ``</think>``, ``<think>``), or its first character alone
    when a literal is one character long or the literals start with too many characters."""
    singles: list[str] = []
    branches: list[str] = []
    for first, (label, child) in sorted(root.edges.items()):
        seconds = {label[1]} if len(label) > 1 else set(child.edges) if child.id is None else set()
        if not seconds:  # a one-character literal: the first character is enough
            singles.append(first)
        else:
            branches.append(re.escape(first) + "[" + "".join(re.escape(c) for c in sorted(seconds)) + "]")
    if len(branches) > _MAX_PREFIX_BRANCHES:
        singles, branches = sorted(root.edges), []
    if singles:
        branches.append("[" + "".join(re.escape(c) for c in singles) + "]")
    return re.compile("(?=" + "|".join(branches) + ")")


class _Matcher:
    """Leftmost-longest, non-overlapping literal matching (HF's Aho-Corasick ``LeftmostLongest``):
    the match that starts first, the longest one there, then the search goes on after it.

    A radix tree of the literals (built in time linear in their total length, up to a log
    factor for long ones) finds the longest literal at a position; a scan for the literals'
    first two characters (`_candidate_scan`) finds, at C speed, the positions where one may
    start.
    """

    __slots__ = ("_scan", "_root")

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        ids: dict[str, int] = {}
        for content, id_ in pairs:
            ids.setdefault(content, id_)  # the same literal twice: the first one's id
        self._root = _Node()
        for content, id_ in ids.items():
            _insert(self._root, content, id_)
        self._scan = _candidate_scan(self._root)

    def _longest_at(self, text: str, pos: int) -> tuple[int, int] | None:
        """(end, id) of the longest literal at ``pos``, or None."""
        node, at, best, n = self._root, pos, None, len(text)
        while at < n:
            edge = node.edges.get(text[at])
            if edge is None or not text.startswith(edge[0], at):
                break
            at += len(edge[0])
            node = edge[1]
            if node.id is not None:
                best = (at, node.id)
        return best

    def finditer(self, text: str) -> Iterator[tuple[int, int, int]]:
        longest = self._longest_at
        pos = 0
        for m in self._scan.finditer(text):  # zero-width: every candidate position, in order
            start = m.start()
            if start < pos:
                continue  # inside the previous match
            hit = longest(text, start)
            if hit is not None:
                yield start, hit[0], hit[1]
                pos = hit[0]


class AddedVocabulary:
    """The added tokens of a tokenizer and the logic that cuts them out of the text.

    ``extract(text, normalize)`` follows HF ``extract_and_normalize``: first the non-normalized
    tokens are matched in the original text; every remaining piece is normalized; then the
    normalized tokens are matched in the normalized pieces. Empty pieces are dropped.
    """

    def __init__(self, tokens: Sequence[AddedToken], *, normalize_str: Callable[[str], str] | None = None) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(tokens)
        self.by_id: dict[int, AddedToken] = {}
        self.by_content: dict[str, int] = {}
        for t in self.tokens:
            if not t.content:
                continue  # HF ignores empty added tokens
            self.by_id[t.id] = t
            self.by_content[t.content] = t.id
        self.special_contents: frozenset[str] = frozenset(t.content for t in self.tokens if t.content and t.special)
        # HF keeps the normalized form of normalized tokens; it is what they match in the
        # normalized text, and what decode shows for them (``simple_id_to_token``).
        self.normalized_form: dict[int, str] = {}
        raw_pairs: list[tuple[str, int]] = []
        norm_pairs: list[tuple[str, int]] = []
        # every content is matched, also when several share one id (tiktoken's o200k_harmony)
        by_content = {t.content: t for t in self.tokens if t.content}
        for content, t in by_content.items():
            id_ = t.id
            if t.normalized:
                form = normalize_str(content) if normalize_str is not None else content
                if form != content and self.by_id[id_] is t:
                    self.normalized_form[id_] = form
                norm_pairs.append((form, id_))
            else:
                raw_pairs.append((content, id_))
        self._raw = _Matcher(raw_pairs) if raw_pairs else None
        self._norm = _Matcher(norm_pairs) if norm_pairs else None

    def __len__(self) -> int:
        return len(self.by_id)

    @property
    def is_empty(self) -> bool:
        return not self.by_id

    def id_to_token(self, id_: int) -> str | None:
        """HF ``simple_id_to_token``: the normalized form for normalized tokens, else the content."""
        t = self.by_id.get(id_)
        if t is None:
            return None
        return self.normalized_form.get(id_, t.content)

    def is_special(self, token: str) -> bool:
        return token in self.special_contents

    # ------------------------------------------------------------------ matching
    def _find(
        self, text: str, matcher: _Matcher | None, skip: Collection[int] | None
    ) -> list[tuple[int, int, int | None]]:
        """HF ``find_matches``: ``(start, end, id or None)`` pieces covering ``text``."""
        if not text:
            return [(0, 0, None)]
        if matcher is None:
            return [(0, len(text), None)]
        out: list[tuple[int, int, int | None]] = []
        pos = 0  # HF start_offset: end of the previous piece
        by_id = self.by_id
        for start, stop, id_ in matcher.finditer(text):
            if skip is not None and id_ in skip:
                continue  # a special token that is not honoured: ordinary text
            tok = by_id[id_]
            if tok.single_word:
                start_ok = start == 0 or not _IS_WORD(text[start - 1])
                stop_ok = stop == len(text) or not _IS_WORD(text[stop])
                if not (start_ok and stop_ok):
                    continue
            if tok.lstrip:
                # the whitespace run before the match joins the token (never past the previous piece)
                new_start = start
                while new_start > pos and _IS_SPACE(text[new_start - 1]):
                    new_start -= 1
                start = max(new_start, pos)  # after an rstrip the match may start before pos
            if tok.rstrip:
                stop = _SPACES_AT(text, stop).end()
            if pos < start:
                out.append((pos, start, None))
            out.append((start, stop, id_))
            pos = stop
        if pos != len(text):
            out.append((pos, len(text), None))
        return out

    def extract(
        self,
        text: str,
        normalize: Callable[[NormalizedText], NormalizedText] | None,
        *,
        skip_ids: Collection[int] | None = None,
    ) -> list[ExtractedSegment]:
        """Cut ``text`` into added-token segments and normalized ordinary segments.

        ``skip_ids`` are added-token ids to leave as ordinary text (tiktoken specials that are
        not allowed). Empty segments are dropped, as HF drops empty splits.
        """
        whole = NormalizedText.identity(text)
        first: list[ExtractedSegment] = []
        for s, e, id_ in self._find(text, self._raw, skip_ids):
            if s == e:
                continue
            first.append((whole.slice(s, e), id_))
        out: list[ExtractedSegment] = []
        for piece, id_ in first:
            if id_ is not None:
                out.append((piece, id_))
                continue
            normed = normalize(piece) if normalize is not None else piece
            if self._norm is None:
                if normed.text:
                    out.append((normed, None))
                continue
            for s, e, nid in self._find(normed.text, self._norm, skip_ids):
                if s == e:
                    continue
                out.append((normed.slice(s, e), nid))
        return out
