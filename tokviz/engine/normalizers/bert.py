"""BertNormalizer: clean control characters, pad CJK ideographs, strip accents, lowercase.

HF's steps, in order, each with its alignment rule:

1. ``clean_text``: remove NUL, U+FFFD and "other" characters (Cc, Cf, Co in Unicode 8.0, except
   tab/newline/CR): kept characters keep their alignment; then every whitespace character
   (tab, newline, CR, Rust ``is_whitespace``) becomes a space, 1:1.
2. ``handle_chinese_chars``: each CJK ideograph becomes " X " — all three characters share the
   ideograph's alignment.
3. ``strip_accents`` (``None`` means: follow ``lowercase``): NFD, then remove non-spacing marks
   (Mn in Unicode 8.0).
4. ``lowercase``: Rust ``to_lowercase`` per character.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain, repeat
from typing import Any

from ..fields import Fields
from ..text import NormalizedText
from ..unicode_tables import NONSPACING_MARK, OTHER, WHITE_SPACE, CharSet
from . import Normalizer
from .basic import lowercase, old_alignment, remove_chars
from .unicode import _normalize

__all__ = ["BertNormalizer", "is_chinese_char"]

_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_CJK = CharSet.from_ranges(sorted(_CJK_RANGES))
_SPACES = {ord(c): " " for c in WHITE_SPACE if c != " "}


def is_chinese_char(c: str) -> bool:
    """The CJK blocks BERT pads with spaces (BERT's ``_is_chinese_char``)."""
    return c in _CJK


def _pad_chinese(nt: NormalizedText) -> NormalizedText:
    """" X " for every ideograph X; the three characters share the ideograph's alignment. Done
    for the whole text in C-level steps: one ``translate``, and every alignment entry repeated
    3 times (ideograph) or once."""
    text = nt.text
    if text.isascii():
        return nt
    ideographs = [c for c in set(text) if c in _CJK]
    if not ideographs:
        return nt
    padded = text.translate({ord(c): f" {c} " for c in ideographs})
    old_starts, old_ends = old_alignment(nt)
    if len(text) >= _NUMPY_CHARS:
        starts, ends = _repeat_numpy(text, ideographs, old_starts, old_ends)
    else:
        times = list(map(dict.fromkeys(ideographs, 3).get, text, repeat(1)))
        starts = array("q", chain.from_iterable(map(repeat, old_starts, times)))
        ends = array("q", chain.from_iterable(map(repeat, old_ends, times)))
    return NormalizedText(nt.original, padded, nt.orig_start, nt.orig_end, starts, ends)


def _strip_precomposed(nt: NormalizedText) -> NormalizedText:
    """The part of NFD + removing non-spacing marks that is a 1:1 substitution, as one
    ``translate``: a character whose decomposition is one base character followed by
    non-spacing marks only (が -> か + U+3099, é -> e + U+0301) ends up as its base with its own
    alignment (the marks follow it in NFD and are then removed). Everything else is left to
    NFD. Skipped when the text has a combining mark that stays (class > 0, not Mn): canonical
    reordering could then move it among the removed marks."""
    from .unicode import _active_set, _ccc, _changes_cached

    text = nt.text
    chars = set(text)
    if any(_ccc(c) and c not in NONSPACING_MARK for c in chars):
        return nt
    active = _active_set("NFD")
    table: dict[int, str] = {}
    for c in chars:
        if c in active:
            changes = _changes_cached(c, "NFD")
            if len(changes) > 1 and changes[0][1] == 0 and all(ch in NONSPACING_MARK for ch, _ in changes[1:]):
                table[ord(c)] = changes[0][0]
    if not table:
        return nt
    return nt.with_text(text.translate(table))


# Texts at least this long repeat their alignment with numpy (imported only then).
_NUMPY_CHARS = 50_000


def _repeat_numpy(
    text: str, ideographs: list[str], old_starts: Sequence[int], old_ends: Sequence[int]
) -> tuple[array, array]:
    """`_pad_chinese`'s alignment repeat for a long text (the pure path costs ~0.3 us a char)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    times = np.ones(len(codes), dtype=np.int64)
    times[np.isin(codes, np.array([ord(c) for c in ideographs], dtype=np.uint32))] = 3
    out = []
    for old in (old_starts, old_ends):
        if type(old) is range:
            values = np.arange(old.start, old.stop, dtype=np.int64)
        elif isinstance(old, array) and old.itemsize == 8:
            values = np.frombuffer(old, dtype=np.int64)
        else:
            values = np.asarray(old, dtype=np.int64)
        result = array("q")
        result.frombytes(np.repeat(values, times).astype(np.int64, copy=False).tobytes())
        out.append(result)
    return out[0], out[1]


class BertNormalizer(Normalizer):
    """HF ``BertNormalizer``.

    >>> BertNormalizer().normalize_str("Héllo\\t世界")
    'hello  世  界 '
    """

    type_name = "BertNormalizer"

    def __init__(
        self,
        *,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if self.clean_text:
            text = remove_chars(text, OTHER)
            spaced = text.text.translate(_SPACES)
            if spaced != text.text:
                text = text.with_text(spaced)
        if self.handle_chinese_chars:
            text = _pad_chinese(text)
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not text.text.isascii():
            text = _strip_precomposed(text)
            text = _normalize(text, "NFD")
            text = remove_chars(text, NONSPACING_MARK)
        if self.lowercase:
            text = lowercase(text)
        return text

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BertNormalizer:
        f = Fields(obj)
        kwargs: dict[str, Any] = {key: f.bool(key, True) for key in ("clean_text", "handle_chinese_chars", "lowercase")}
        return cls(strip_accents=f.bool("strip_accents", None, optional=True), **kwargs)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "BertNormalizer",
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }

    def __repr__(self) -> str:
        return (
            f"BertNormalizer(clean_text={self.clean_text}, handle_chinese_chars={self.handle_chinese_chars}, "
            f"strip_accents={self.strip_accents}, lowercase={self.lowercase})"
        )
