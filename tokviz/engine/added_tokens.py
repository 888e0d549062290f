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

from collections.abc import Callable, Collection, Iterable, Sequence
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


class _Matcher:
    """Leftmost-longest, non-overlapping literal matching (HF's Aho-Corasick ``LeftmostLongest``).

    A regex alternation tries alternatives in order at each position, so with the literals
    sorted longest first the first alternative that matches at the leftmost position is the
    longest one there, which is exactly leftmost-longest.
    """

    __slots__ = ("_re", "_ids")

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        ordered = sorted(pairs, key=lambda p: -len(p[0]))
        self._ids: dict[str, int] = {}
        for content, id_ in ordered:
            self._ids.setdefault(content, id_)
        pattern = "|".join(regex.escape(c) for c, _ in ordered)
        self._re = regex.compile(pattern)

    def finditer(self, text: str) -> Iterable[tuple[int, int, int]]:
        ids = self._ids
        for m in self._re.finditer(text):
            yield m.start(), m.end(), ids[m.group()]


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
        self.special_contents: frozenset[str] = frozenset(t.content for t in self.by_id.values() if t.special)
        # HF keeps the normalized form of normalized tokens; it is what they match in the
        # normalized text, and what decode shows for them (``simple_id_to_token``).
        self.normalized_form: dict[int, str] = {}
        raw_pairs: list[tuple[str, int]] = []
        norm_pairs: list[tuple[str, int]] = []
        for id_, t in self.by_id.items():
            if t.normalized:
                form = normalize_str(t.content) if normalize_str is not None else t.content
                if form != t.content:
                    self.normalized_form[id_] = form
                norm_pairs.append((form, id_))
            else:
                raw_pairs.append((t.content, id_))
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
                while new_start > 0 and _IS_SPACE(text[new_start - 1]):
                    new_start -= 1
                start = max(new_start, pos)
            if tok.rstrip:
                n = len(text)
                while stop < n and _IS_SPACE(text[stop]):
                    stop += 1
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
