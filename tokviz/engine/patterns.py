"""Split patterns: compiling tokenizer-file regexes, finding matches, and HF's split behaviours.

HF tokenizers compile ``Split``/``Replace`` patterns with Oniguruma (Ruby syntax); tokviz uses the
`regex` module, which supports the same Unicode classes (``\\p{L}``, ``\\p{N}``), possessive
quantifiers and atomic groups. The differences that matter are handled here, once:

* Ruby syntax makes ``^``/``$`` line anchors; we compile with ``MULTILINE`` so they agree.
* A pattern from a file may backtrack catastrophically (exponentially, or polynomially as in
  ``a*a*a*b``); every search with such a pattern runs with the `regex` module's ``timeout``
  (cumulative over one ``finditer``/``sub``) and raises `PatternTimeoutError` naming the pattern
  within about a second instead of hanging. `HFRegex` is the one compile-and-run helper for
  every regex that comes from a file (Split, the Replace normalizer and decoder, tiktoken
  presets): nothing else compiles a file's pattern.
* A pattern that does not compile raises `TokvizFormatError` naming the pattern.
* The `regex` module knows a newer Unicode than Oniguruma: characters HF sees as unassigned
  (`unicode_tables.UNKNOWN_TO_HF_REGEX`) are replaced by a noncharacter before matching
  (same length, so spans are unchanged).
* A published split pattern (GPT-2, cl100k, o200k, Llama 3, Qwen2, DeepSeek ...: the exact texts
  of `tokviz.engine.scanners`) runs in its native scanner when `tokviz.engine._scan` is built:
  `HFRegex.native` is set once, at compile time, and every split helper here reads its matches
  from it (the same spans the `regex` module finds, hidden characters included).

`find_matches` reproduces HF's ``Pattern::find_matches`` (contiguous ``(start, end, is_match)``
covering the whole text, in code points), and `split_spans` the five ``SplitDelimiterBehavior``
rules (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous).

>>> split_spans(find_matches(compile_pattern("-", literal=True), "the-final--countdown"), "MergedWithNext")
[(0, 3), (3, 9), (9, 10), (10, 20)]
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate
from typing import Any, Literal

import regex

from .errors import TokvizFormatError
from .scanners import scanner_for
from .unicode_tables import UNKNOWN_HIDDEN_AS, UNKNOWN_TO_HF_REGEX, ranges_class

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
    "tiling_chunks",
    "isolated_chunks",
    "needs_timeout",
    "trust_patterns",
    "HFRegex",
    "match_spans",
]

Behavior = Literal["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
BEHAVIORS: tuple[str, ...] = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

#: Seconds every regex search may take at least, plus this many per character of text searched.
TIMEOUT_BASE = 1.0
TIMEOUT_PER_CHAR = 4e-6

# Arming the timeout makes every search markedly slower, so the
# patterns the real tokenizers publish (registered by their modules with `trust_patterns`, plus
# Qwen2/3's below) and quantifier-free patterns run without it. Every other pattern is bounded:
# no syntactic test can tell which patterns backtrack badly (``(?x)(a{1,10}) {1,10}$`` looks
# harmless, and polynomial cases are beyond such a test).

#: Qwen2/Qwen3's Split pattern (cl100k's with single digits), as their tokenizer.json writes it.
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Llama 3's Split pattern: cl100k as a tokenizer.json writes it (no possessive quantifiers).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

_TRUSTED: set[str] = {QWEN2_PATTERN, LLAMA3_PATTERN}


def trust_patterns(*patterns: str) -> None:
    """Let published patterns (whose worst cases are the reference libraries' own) run without
    the timeout; called by the modules that define them (GPT-2, r50k, cl100k, o200k)."""
    _TRUSTED.update(patterns)


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


_BACKREF_ESCAPES = frozenset("123456789kgG")


@lru_cache(maxsize=256)
def needs_timeout(pattern: str) -> bool:
    r"""True unless ``pattern`` is a trusted published pattern or has no quantifier, no
    backreference and no recursion (then a search is linear in the text).

    >>> needs_timeout(r"(a|aa)+$"), needs_timeout(r"\p{N}"), needs_timeout(r"(?x)(a{1,10}) {1,10}$")
    (True, False, True)
    """
    if pattern in _TRUSTED:
        return False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in _BACKREF_ESCAPES:
                return True
            i += 2
            if nxt in "pPxuUN" and pattern[i : i + 1] == "{":  # \p{L}, \x{41}: not a quantifier
                close = pattern.find("}", i)
                i = close + 1 if close > 0 else n
        elif c == "[":
            i = _class_end(pattern, i)
        elif c == "(" and pattern[i + 1 : i + 2] == "?":
            # (?: (?= (?! (?<= (?<! (?> and flag groups are harmless; (?P=name), (?&name),
            # (?R), (?1), (?(cond) are backreferences, recursion or conditionals
            if pattern[i + 2 : i + 3] in ("P", "&", "R", "(", "|") or pattern[i + 2 : i + 3].isdigit():
                return True
            i += 2
        elif c in "*+?{":
            return True
        else:
            i += 1
    return False


def _class_end(pattern: str, i: int) -> int:
    """Index after the character class opening at ``pattern[i]`` (nested classes, escapes)."""
    j, depth, n = i + 1, 1, len(pattern)
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1  # a leading ] is a literal
    while j < n and depth:
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "[":
            depth += 1
        elif pattern[j] == "]":
            depth -= 1
        j += 1
    return j


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, *, literal: bool = False) -> HFRegex:
    """Compile (once; cached) a file's pattern; ``literal`` for HF ``{"String": ...}`` patterns."""
    if literal:
        return HFRegex(regex.compile(regex.escape(pattern)))
    try:
        # V0 keeps the semantics of Python's ``re`` for set syntax (no nested-set surprises);
        # MULTILINE because Oniguruma's Ruby syntax has line anchors for ^ and $.
        compiled = regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (regex.error, ValueError, TypeError, OverflowError) as exc:
        raise TokvizFormatError(f"pattern {pattern!r} does not compile: {exc}") from None
    return HFRegex(compiled, native=scanner_for(pattern))


def pattern_from_json(obj: Any, *, where: str = "pattern") -> tuple[str, bool]:
    """``{"String": s}`` or ``{"Regex": r}`` -> ``(text, is_regex)``; anything else is an error
    naming ``where`` (the field's path inside its component)."""
    if isinstance(obj, dict) and len(obj) == 1:
        (kind, value), = obj.items()
        if kind in ("String", "Regex") and isinstance(value, str):
            return value, kind == "Regex"
    shown = repr(obj)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise TokvizFormatError(f'expected {{"String": ...}} or {{"Regex": ...}}, got {shown}', where=where)


def pattern_to_json(text: str, is_regex: bool) -> dict[str, str]:
    return {"Regex": text} if is_regex else {"String": text}


_UNKNOWN = regex.compile(f"[{ranges_class(UNKNOWN_TO_HF_REGEX)}]")


_FIRST_UNKNOWN = chr(UNKNOWN_TO_HF_REGEX.starts[0])


def _has_unknown(text: str) -> bool:
    # a long text is tested by its distinct characters (a set is built at C speed; a character
    # class search over the whole text is several times slower), a short one by the class
    if len(text) < 4096:
        return _UNKNOWN.search(text) is not None
    first = _FIRST_UNKNOWN
    return any(c in UNKNOWN_TO_HF_REGEX for c in set(text) if c >= first)


def hf_regex_view(text: str) -> str:
    """``text`` with the characters HF's regex engines do not know replaced by a noncharacter."""
    if text.isascii() or not _has_unknown(text):
        return text
    return _UNKNOWN.sub(UNKNOWN_HIDDEN_AS, text)


class HFRegex:
    """A compiled tokenizer-file pattern that searches the way HF's Oniguruma does.

    ``finditer``/``findall``/``search`` take the original text: characters HF's engines do not
    know are hidden first (`hf_regex_view`; match spans stay valid for the original text, and
    ``findall`` returns slices of the original), and a timeout is armed only when the pattern
    can backtrack (`needs_timeout`; a caller's ``timeout`` is ignored otherwise). A search that
    times out raises `PatternTimeoutError` from every method here.
    ``native`` is the pattern's native scanner (`tokviz.engine.scanners.scanner_for`) or None:
    ``findall`` and the split helpers of this module use it; ``finditer``, ``search`` and ``sub``
    always run in `regex` (they give match objects).
    Other attributes come from the underlying `regex` pattern.
    """

    __slots__ = ("compiled", "pattern", "groups", "risky", "native")

    def __init__(self, compiled: regex.Pattern[str], *, native: Any = None) -> None:
        self.compiled = compiled
        self.pattern = compiled.pattern
        self.groups = compiled.groups
        self.risky = needs_timeout(compiled.pattern)
        self.native = native

    def _timeout(self, length: int, timeout: float | None) -> float | None:
        if not self.risky:
            return None
        return search_timeout(length) if timeout is None else timeout

    def finditer(self, text: str, timeout: float | None = None):  # noqa: ANN201 - iterator of matches
        it = self.compiled.finditer(hf_regex_view(text), timeout=self._timeout(len(text), timeout))
        return it if not self.risky else self._guarded(it, len(text))

    def _guarded(self, it, length: int):  # noqa: ANN001, ANN202 - match iterator in, out
        try:
            yield from it
        except TimeoutError:
            raise PatternTimeoutError(self.pattern, length) from None

    def search(self, text: str, timeout: float | None = None):  # noqa: ANN201 - match or None
        try:
            return self.compiled.search(hf_regex_view(text), timeout=self._timeout(len(text), timeout))
        except TimeoutError:
            raise PatternTimeoutError(self.pattern, len(text)) from None

    def findall(self, text: str, timeout: float | None = None) -> list:
        if self.native is not None:
            return self.native.findall(text)
        view = hf_regex_view(text)
        t = self._timeout(len(text), timeout)
        try:
            if view is text or self.groups:
                return self.compiled.findall(view, timeout=t)
            return [text[m.start() : m.end()] for m in self.compiled.finditer(view, timeout=t)]
        except TimeoutError:
            raise PatternTimeoutError(self.pattern, len(text)) from None

    def sub(self, replacement: str, text: str) -> str:
        """Every match replaced by ``replacement`` taken literally (no group references)."""
        pieces: list[str] = []
        prev = 0
        for m in self.finditer(text):
            s, e = m.span()
            pieces.append(text[prev:s])
            pieces.append(replacement)
            prev = e
        if not pieces:
            return text
        pieces.append(text[prev:])
        return "".join(pieces)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"HFRegex({self.pattern!r})"


def match_spans(compiled: HFRegex, text: str) -> Iterable[tuple[int, int]]:
    """The ``(start, end)`` of every match of ``compiled`` in ``text``: the native scanner's when
    the pattern has one, else `regex`'s (empty matches included: the callers drop the ones
    Oniguruma never reports)."""
    if compiled.native is not None:
        return compiled.native.spans(text)
    return map(_SPAN, compiled.finditer(text))


_SPAN = regex.Match.span


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
        for s, e in match_spans(compiled, text):
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
        for s, e in match_spans(compiled, text):
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


def isolated_chunks(compiled: HFRegex, text: str) -> tuple[list[int], list[str]]:
    """The non-empty ``Isolated`` pieces of ``text`` (they tile it) as chunk columns ``(starts,
    texts)``, the form `ChunkPlan.from_columns` takes (fastest form).

    The native scanner's columns when the pattern has one; else one C-level ``findall`` when the
    matches cover the text (always, for the byte-level patterns), or the pieces of
    `isolated_spans`. Honours the same timeout policy and Unicode-version hiding as
    `find_matches`.
    """
    if not text:
        return [], []
    if compiled.native is not None:
        return compiled.native.pieces(text)
    found = tiling_chunks(compiled, text)
    if found is not None:
        return found
    spans = isolated_spans(compiled, text)
    return [s for s, _ in spans], [text[s:e] for s, e in spans]


def tiling_chunks(compiled: HFRegex, text: str) -> tuple[list[int], list[str]] | None:
    """The non-empty matches of ``compiled`` in ``text`` as chunk columns ``(starts, texts)`` when
    they tile it (the native scanner, or one C-level ``findall``), else None. Tiling matches are
    at once the ``Isolated`` pieces and the pieces ``Removed`` keeps when inverted (tiktoken's
    split: there is no gap to remove)."""
    if compiled.native is not None:
        return compiled.native.tiling(text)
    if compiled.groups != 0:
        return None
    try:
        found = compiled.findall(text)
    except TimeoutError:
        raise PatternTimeoutError(compiled.pattern, len(text)) from None
    if sum(map(len, found)) != len(text):
        return None
    if "" in found:
        found = [f for f in found if f]
    return (list(accumulate(map(len, found[:-1]), initial=0)) if found else []), found


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
