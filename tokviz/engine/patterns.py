"""Split patterns: compiling tokenizer-file regexes, finding matches, and HF's split behaviours.

HF tokenizers compile ``Split``/``Replace`` patterns with Oniguruma (Ruby syntax); tokviz uses the
`regex` module, which supports the same Unicode classes (``\\p{L}``, ``\\p{N}``), possessive
quantifiers and atomic groups. The differences that matter are handled here, once:

* Ruby syntax makes ``^``/``$`` line anchors; we compile with ``MULTILINE`` so they agree.
* A pattern from a file may backtrack catastrophically; a search with such a pattern runs with
  the `regex` module's ``timeout`` and raises `PatternTimeoutError` naming the pattern instead of
  hanging. The timeout costs about as much as the search itself, so it is only armed for
  patterns that *can* backtrack exponentially (`may_backtrack`: a repeated group that contains
  a quantifier or an alternation, or a backreference); the real tokenizer patterns (GPT-2,
  cl100k, o200k, Qwen) have none and run at full speed.
* A pattern that does not compile raises `TokvizFormatError` naming the pattern.
* The `regex` module knows a newer Unicode than Oniguruma: characters HF sees as unassigned
  (`unicode_tables.UNKNOWN_TO_HF_REGEX`) are replaced by a noncharacter before matching
  (same length, so spans are unchanged).

`find_matches` reproduces HF's ``Pattern::find_matches`` (contiguous ``(start, end, is_match)``
covering the whole text, in code points), and `split_spans` the five ``SplitDelimiterBehavior``
rules (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous).

>>> split_spans(find_matches(compile_pattern("-", literal=True), "the-final--countdown"), "MergedWithNext")
[(0, 3), (3, 9), (9, 10), (10, 20)]
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Literal

import regex

from .errors import TokvizFormatError
from .unicode_tables import UNKNOWN_TO_HF_REGEX, ranges_class

__all__ = [
    "Behavior",
    "BEHAVIORS",
    "PatternTimeoutError",
    "compile_pattern",
    "find_matches",
    "split_spans",
    "pattern_from_json",
    "pattern_to_json",
    "search_timeout",
    "hf_regex_view",
    "isolated_spans",
    "isolated_strings",
    "may_backtrack",
    "HFRegex",
]

Behavior = Literal["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
BEHAVIORS: tuple[str, ...] = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

#: Seconds every regex search may take at least, plus this many per character of text searched.
TIMEOUT_BASE = 5.0
TIMEOUT_PER_CHAR = 4e-6


class PatternTimeoutError(TokvizFormatError):
    """A pattern from a file took too long (catastrophic backtracking) on some text."""

    def __init__(self, pattern: str, length: int) -> None:
        self.pattern = pattern
        super().__init__(
            f"the pattern {pattern!r} took too long on a text of {length} characters "
            "(catastrophic backtracking?); fix the pattern in the tokenizer file"
        )


def search_timeout(length: int) -> float:
    return TIMEOUT_BASE + TIMEOUT_PER_CHAR * length


def _quantifier_at(p: str, i: int) -> tuple[int, bool]:
    """Length of the quantifier starting at ``p[i]`` (0 if none) and whether it repeats (> 1)."""
    if i >= len(p):
        return 0, False
    c = p[i]
    if c in "*+":
        return 1, True
    if c == "?":
        return 1, False
    if c == "{":
        m = regex.match(r"\{(\d*)(,?)(\d*)\}", p[i:])
        if m and (m.group(1) or m.group(3)):
            hi = m.group(3)
            repeats = bool(m.group(2)) and (not hi or int(hi) > 1) or (not m.group(2) and int(m.group(1)) > 1)
            return m.end(), repeats
    return 0, False


@lru_cache(maxsize=256)
def may_backtrack(pattern: str) -> bool:
    r"""Conservative test for exponential backtracking: a repeated group whose body has a
    quantifier or an alternation (``(a+)+``, ``(a|aa)*``), or a backreference.

    >>> may_backtrack(r"(a|aa)+$"), may_backtrack(r"'s|'t| ?\p{L}+|\s+(?!\S)|\s+")
    (True, False)
    """
    stack: list[list[bool]] = [[False, False]]  # per open group: [has_quantifier, has_alternation]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if (nxt.isdigit() and nxt != "0") or nxt in ("k", "g"):
                return True  # backreference
            if nxt in ("p", "P", "x", "u", "N") and pattern[i + 2 : i + 3] == "{":
                j = pattern.find("}", i)
                i = j + 1 if j > 0 else n
            else:
                i += 2
            q, _ = _quantifier_at(pattern, i)
            if q:
                stack[-1][0] = True
                i += q
            continue
        if c == "[":
            j = i + 1
            depth = 1
            while j < n and depth:
                if pattern[j] == "\\":
                    j += 2
                    continue
                if pattern[j] == "[" and j > i + 1:
                    depth += 1
                elif pattern[j] == "]" and j > i + 1 + (pattern[i + 1 : i + 2] == "^"):
                    depth -= 1
                j += 1
            i = j
            q, _ = _quantifier_at(pattern, i)
            if q:
                stack[-1][0] = True
                i += q
            continue
        if c == "(":
            stack.append([False, False])
            i += 1
            if pattern[i : i + 1] == "?":  # group syntax, not a quantifier
                i += 1
            continue
        if c == ")":
            inner = stack.pop() if len(stack) > 1 else [False, False]
            i += 1
            q, repeats = _quantifier_at(pattern, i)
            if repeats and (inner[0] or inner[1]):
                return True
            parent = stack[-1]
            parent[0] = parent[0] or inner[0] or bool(q)
            parent[1] = parent[1] or inner[1]
            i += q
            continue
        if c == "|":
            stack[-1][1] = True
        else:
            q, _ = _quantifier_at(pattern, i + 1)
            if q:
                stack[-1][0] = True
                i += q
        i += 1
    return False


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, *, literal: bool = False) -> HFRegex:
    """Compile (once; cached) a file's pattern; ``literal`` for HF ``{"String": ...}`` patterns."""
    if literal:
        return HFRegex(regex.compile(regex.escape(pattern)))
    try:
        # V0 keeps the semantics of Python's ``re`` for set syntax (no nested-set surprises);
        # MULTILINE because Oniguruma's Ruby syntax has line anchors for ^ and $.
        return HFRegex(regex.compile(pattern, regex.MULTILINE | regex.VERSION0))
    except (regex.error, ValueError, TypeError, OverflowError) as exc:
        raise TokvizFormatError(f"pattern {pattern!r} does not compile: {exc}") from None


def pattern_from_json(obj: Any, *, what: str = "pattern") -> tuple[str, bool]:
    """``{"String": s}`` or ``{"Regex": r}`` -> ``(text, is_regex)``; anything else is an error."""
    if not isinstance(obj, dict) or len(obj) != 1:
        raise TokvizFormatError(f'{what}: expected {{"String": ...}} or {{"Regex": ...}}, got {obj!r}')
    (kind, value), = obj.items()
    if kind not in ("String", "Regex") or not isinstance(value, str):
        raise TokvizFormatError(f'{what}: expected {{"String": ...}} or {{"Regex": ...}}, got {obj!r}')
    return value, kind == "Regex"


def pattern_to_json(text: str, is_regex: bool) -> dict[str, str]:
    return {"Regex": text} if is_regex else {"String": text}


_UNKNOWN = regex.compile(f"[{ranges_class(UNKNOWN_TO_HF_REGEX)}]")
_HIDE = "\ufdd0"  # a permanent noncharacter: general category Cn in every engine


def hf_regex_view(text: str) -> str:
    """``text`` with the characters HF's regex engines do not know replaced by a noncharacter."""
    if text.isascii() or _UNKNOWN.search(text) is None:
        return text
    return _UNKNOWN.sub(_HIDE, text)


class HFRegex:
    """A compiled tokenizer-file pattern that searches the way HF's Oniguruma does.

    ``finditer``/``findall``/``search`` take the original text: characters HF's engines do not
    know are hidden first (`hf_regex_view`; match spans stay valid for the original text, and
    ``findall`` returns slices of the original), and a timeout is armed only when the pattern
    can backtrack exponentially (`may_backtrack`; a caller's ``timeout`` is ignored otherwise).
    Other attributes come from the underlying `regex` pattern.
    """

    __slots__ = ("compiled", "pattern", "groups", "risky")

    def __init__(self, compiled: regex.Pattern[str]) -> None:
        self.compiled = compiled
        self.pattern = compiled.pattern
        self.groups = compiled.groups
        self.risky = may_backtrack(compiled.pattern)

    def _timeout(self, length: int, timeout: float | None) -> float | None:
        if not self.risky:
            return None
        return search_timeout(length) if timeout is None else timeout

    def finditer(self, text: str, timeout: float | None = None):  # noqa: ANN201 - iterator of matches
        return self.compiled.finditer(hf_regex_view(text), timeout=self._timeout(len(text), timeout))

    def search(self, text: str, timeout: float | None = None):  # noqa: ANN201 - match or None
        return self.compiled.search(hf_regex_view(text), timeout=self._timeout(len(text), timeout))

    def findall(self, text: str, timeout: float | None = None) -> list:
        view = hf_regex_view(text)
        t = self._timeout(len(text), timeout)
        if view is text or self.groups:
            return self.compiled.findall(view, timeout=t)
        return [text[m.start() : m.end()] for m in self.compiled.finditer(view, timeout=t)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"HFRegex({self.pattern!r})"


def find_matches(compiled: HFRegex, text: str) -> list[tuple[int, int, bool]]:
    """HF ``find_matches`` for a regex: the text cut into match / non-match spans, in order.

    An empty text gives ``[(0, 0, False)]``. Empty matches are reported as HF does (a zero-width
    match span), they produce no piece later because empty pieces are dropped.
    """
    if not text:
        return [(0, 0, False)]
    out: list[tuple[int, int, bool]] = []
    append = out.append
    prev = 0
    last_end = -1
    try:
        for m in compiled.finditer(text):
            s, e = m.span()
            if s == e and s == last_end:
                # Oniguruma (like Rust's regex) never reports an empty match right where the
                # previous match ended; Python's regex does ("b*" on "abbc": (3, 3)).
                continue
            last_end = e
            if prev != s:
                append((prev, s, False))
            append((s, e, True))
            prev = e
    except TimeoutError:
        raise PatternTimeoutError(compiled.pattern, len(text)) from None
    if prev != len(text):
        append((prev, len(text), False))
    return out


def isolated_spans(compiled: HFRegex, text: str) -> list[tuple[int, int]]:
    """The non-empty pieces of ``Isolated`` splitting (matches and the gaps between them).

    The hot path of ByteLevel/Split: same result as ``split_spans(find_matches(...), "Isolated")``
    without the empty spans.
    """
    if not text:
        return []
    out: list[tuple[int, int]] = []
    append = out.append
    prev = 0
    last_end = -1
    try:
        for m in compiled.finditer(text):
            s, e = m.span()
            if s == e and s == last_end:
                continue  # Oniguruma's empty-match rule, as in find_matches
            last_end = e
            if prev != s:
                append((prev, s))
            if s != e:  # an empty match makes no piece, but it does cut the gap before it
                append((s, e))
            prev = e
    except TimeoutError:
        raise PatternTimeoutError(compiled.pattern, len(text)) from None
    if prev != len(text):
        append((prev, len(text)))
    return out


def isolated_strings(compiled: HFRegex, text: str) -> list[str]:
    """The non-empty ``Isolated`` pieces of ``text`` as strings that tile it (fastest form).

    One C-level ``findall`` when the matches cover the text (always, for the byte-level patterns);
    otherwise the pieces of `isolated_spans`. Honours the same timeout policy and Unicode-version
    hiding as `find_matches`.
    """
    if not text:
        return []
    if compiled.groups == 0:
        try:
            found = compiled.findall(text)
        except TimeoutError:
            raise PatternTimeoutError(compiled.pattern, len(text)) from None
        if sum(map(len, found)) == len(text):
            return [f for f in found if f] if "" in found else found
    return [text[s:e] for s, e in isolated_spans(compiled, text)]


def split_spans(matches: Iterable[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """Spans to keep for HF ``NormalizedString::split`` with the given behaviour (empty spans kept;
    the caller drops them, as HF's ``PreTokenizedString::split`` does)."""
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in matches]
    if behavior == "Removed":
        return [(s, e) for s, e, m in matches if not m]
    acc: list[list[int]] = []
    previous = False
    if behavior == "Contiguous":
        for s, e, m in matches:
            if m == previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
    elif behavior == "MergedWithPrevious":
        for s, e, m in matches:
            if m and not previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
    elif behavior == "MergedWithNext":
        for s, e, m in reversed(list(matches)):
            if m and not previous and acc:
                acc[-1][0] = s
            else:
                acc.append([s, e])
            previous = m
        acc.reverse()
    else:
        raise TokvizFormatError(f"unknown split behavior {behavior!r} (known: {', '.join(BEHAVIORS)})")
    return [(s, e) for s, e in acc]
