"""The offset linter: find and explain every offset mismatch of one encoding (a corpus:
`tokviz.analysis.corpus_jobs.lint_corpus`, which sums `CorpusLint` counts over shards).

tokviz's ``offsets`` are HF's, bit for bit, so they inherit HF's offset bugs (docs/offset-lint.md
lists them with their checks). This module checks an encoding's spans and says, per finding, which
tokens, which span, what the original text there is, and *why* ("prepended marker",
"normalizer composition", "byte split", "deleted by the normalizer", "added token shifted the
prefix space" ...), using the exact alignment (`Encoding.exact_alignment`) to tell an HF
artefact from a real loss. The checks (ids as in docs/offset-lint.md):

Z1 zero-width content token (error) · Z2 zero-width marker (info) · O1 partial overlap
(info byte split / error prepended marker / warn) · D1 duplicate span (info byte split or
expansion / error prepended marker) · R1 out of order (error) · G1 gap over non-white-space
(error; info when the normalizer deleted it) · U1 UTF-8 cut (info: drawn as one bracket) ·
K1 grapheme cut (info; warn when a base loses its mark and the vocabulary has the composed
character) · T1 surface mismatch (error) · T2 span differs from the alignment hull, not
explained by another finding (error) · N1 normalization length change (info).

Special tokens a post-processor added are skipped. ``exact=True`` lints the exact spans
instead of the HF-compatible ones (the errors HF's conventions cause then disappear).
Pure Python over the public engine API; the GUI's lint panel and ``tokviz lint`` share it.

Performance notes: every check is one pass over the tokens or the text; "which tokens hold
this span" goes through `SpanIndex` (sorted starts + running maximum of ends, bisect), built once
per kind of span. The first version scanned every token per finding, quadratic on CJK text
where byte splits give a finding every few tokens; tests/analysis/test_lint_scaling.py keeps
those scans as the oracle.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import regex

from ..engine.byte_alphabet import text_to_proxy
from ..engine.encoding import Encoding
from ..engine.exact import WHITE_SPACE_RE, ExactAlignment
from ..engine.tokenizer import Tokenizer
from .facts import TokenizerFacts
from ..io import json_text

__all__ = [
    "CHECKS",
    "Finding",
    "LintReport",
    "CorpusLint",
    "lint_encoding",
    "lint_text",
    "regression_case",
    "surface",
    "SpanIndex",
]

#: check id -> one-line description (the order is the report's order)
CHECKS: dict[str, str] = {
    "Z1": "zero-width content token",
    "Z2": "zero-width marker",
    "O1": "partial overlap",
    "D1": "duplicate span",
    "R1": "out of order",
    "G1": "gap over non-white-space",
    "U1": "UTF-8 cut inside a character",
    "K1": "grapheme cluster cut",
    "T1": "surface mismatch",
    "T2": "span differs from the alignment hull",
    "N1": "normalization length change",
}
SEVERITIES = ("error", "warn", "info")

_WS = WHITE_SPACE_RE
_MARKERS = frozenset(" \u2581\u0120")  # synthetic markers once mapped to surface: ▁ and Ġ are spaces


def _cp(c: str) -> str:
    return f"U+{ord(c):04X}" if not c.isprintable() or unicodedata.combining(c) or _WS.match(c) else repr(c)


def _cps(s: str) -> str:
    """``'ヿ' (1 code point)`` or, when the code points do not show, ``'마' (U+1106 U+1161)``."""
    if len(s) > 1 and (any(unicodedata.combining(c) or not c.isprintable() for c in s) or unicodedata.normalize("NFC", s) != s):
        return f"{s!r} ({' '.join(f'U+{ord(c):04X}' for c in s)})"
    return f"{s!r} ({len(s)} code point{'s' if len(s) != 1 else ''})"


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding. ``span`` is the linted span (HF-compatible, or exact with ``exact=True``),
    ``hf_span`` / ``exact_span`` both sources, ``original`` the original text of the span."""

    check: str
    severity: str
    tokens: tuple[int, ...]
    span: tuple[int, int]
    hf_span: tuple[int, int]
    exact_span: tuple[int, int]
    original: str
    reason: str
    token_spans: tuple[tuple[int, int], ...] = ()  # HF-compatible span of each token
    token_exact: tuple[tuple[int, int], ...] = ()  # exact span of each token

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "tokens": list(self.tokens),
            "span": list(self.span),
            "hf_span": list(self.hf_span),
            "exact_span": list(self.exact_span),
            "token_spans": [list(s) for s in self.token_spans],
            "token_exact_spans": [list(s) for s in self.token_exact],
            "original": self.original,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class LintReport:
    """Findings of one text, in check order then position; ``counts`` per check id.

    A finding's ``tokens`` are indices into the encoding that was linted, the special tokens a
    post-processor added (``added_special``: BOS, CLS ...) counted too, as every view of that
    encoding numbers them; ``special_tokens_added`` says whether there are any.
    """

    text: str
    findings: tuple[Finding, ...]
    exact: bool = False
    added_special: tuple[int, ...] = ()

    @property
    def special_tokens_added(self) -> bool:
        return bool(self.added_special)

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.check] = out.get(f.check, 0) + 1
        return out

    def by_check(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.check, []).append(f)
        return out

    def for_token(self, i: int) -> list[Finding]:
        return [f for f in self.findings if i in f.tokens]

    def to_json(self) -> dict[str, Any]:
        return {
            "spans": "exact" if self.exact else "hf",
            "special_tokens_added": self.special_tokens_added,
            "added_special_tokens": list(self.added_special),
            "findings": [f.to_json() for f in self.findings],
            "counts": self.counts,
        }


# ---------------------------------------------------------------------- surfaces
@dataclass(frozen=True, slots=True)
class _Surface:
    data: bytes
    continuation: bool = False
    unk: bool = False
    special: bool = False
    byte_piece: bool = False


def surface(tokenizer: Tokenizer, id_: int, *, added: bool = False) -> _Surface:
    """Token ``id_`` as the linter reads it: its exact bytes (`TokenizerFacts.surface`) and what
    kind of token it is. ``added``: the token was matched as an added token in the text.

    >>> import tokviz  # doctest: +SKIP
    >>> surface(tokviz.load("mistral.json"), 28705).data  # doctest: +SKIP
    b' '
    """
    facts = TokenizerFacts.of(tokenizer)
    return _Surface(
        facts.surface(id_),
        continuation=facts.is_continuation(id_),
        unk=id_ in facts.unknown_ids,
        special=added or id_ in facts.added_ids,
        byte_piece=facts.is_byte_piece(id_),
    )


# ---------------------------------------------------------------------- the linter
@dataclass(slots=True)
class _Ctx:
    tokenizer: Any
    enc: Encoding
    ex: ExactAlignment
    spans: list[tuple[int, int]]
    content: list[int]
    surfaces: dict[int, _Surface]
    synthetic: dict[int, int]
    inserted_by: dict[int, str]
    deleted: frozenset[int]
    exact: bool
    findings: list[Finding] = field(default_factory=list)
    _index: dict[str, SpanIndex] = field(default_factory=dict)

    def index(self, kind: str) -> SpanIndex:
        """Content tokens by ``"span"`` (the linted spans), ``"exact"`` spans, ``"bytes"`` or
        ``"normalized"`` range (built on first use)."""
        got = self._index.get(kind)
        if got is None:
            got = self._index[kind] = SpanIndex(self.content, self._span_of(kind))
        return got

    def _span_of(self, kind: str) -> Callable[[int], tuple[int, int] | None]:
        if kind == "span":
            return self.spans.__getitem__
        if kind == "exact":
            return self.ex.offsets.__getitem__
        if kind == "bytes":
            return self.enc.byte_offsets.__getitem__
        origins = self.ex.origins
        return lambda t: origins[t].normalized if origins[t] is not None else None  # type: ignore[union-attr]

    @property
    def text(self) -> str:
        return self.enc.text

    @property
    def replacement(self) -> str | None:
        """The character that stands for a space in this tokenizer's vocabulary (``▁``), if any."""
        return TokenizerFacts.of(self.tokenizer).replacement

    def add(self, check: str, severity: str, tokens: Iterable[int], span: tuple[int, int], reason: str) -> None:
        toks = tuple(sorted(set(tokens)))
        hf = _hull([self.enc.offsets[i] for i in toks]) if toks else span
        exs = _hull([self.ex.offsets[i] for i in toks]) if toks else span
        self.findings.append(Finding(
            check, severity, toks, span, hf, exs, self.text[span[0] : span[1]], reason,
            tuple(self.enc.offsets[i] for i in toks), tuple(self.ex.offsets[i] for i in toks),
        ))

    def marker(self, i: int) -> bool:
        """Token i is only a synthetic marker (an inserted ▁ / Ġ / space)."""
        s = self.surfaces[i]
        return self.synthetic.get(i, 0) > 0 and not s.special and all(chr(b) in _MARKERS for b in s.data)


def _hull(spans: Sequence[tuple[int, int]]) -> tuple[int, int]:
    return (min(s for s, _ in spans), max(e for _, e in spans))


class SpanIndex:
    """Tokens by span, for "which tokens overlap ``[a, b)``" without a scan of every token.

    Sorted by start with a running maximum of the ends: the tokens starting before ``b`` are a
    prefix, walked back only while some earlier token still reaches past ``a``. Token spans are
    local (a token covers a few characters), so a query costs O(log n + hits).
    """

    __slots__ = ("starts", "ends", "tokens", "reach", "_by_end")

    def __init__(self, tokens: Iterable[int], spans: Callable[[int], tuple[int, int] | None]) -> None:
        rows = sorted((sp[0], sp[1], t) for t in tokens if (sp := spans(t)) is not None)
        self.starts = [r[0] for r in rows]
        self.ends = [r[1] for r in rows]
        self.tokens = [r[2] for r in rows]
        self.reach: list[int] = []
        top = -1
        for e in self.ends:
            top = max(top, e)
            self.reach.append(top)
        self._by_end: tuple[list[int], list[int]] | None = None

    @classmethod
    def of_columns(cls, starts: Sequence[int], ends: Sequence[int]) -> SpanIndex:
        """The index of items ``0..n-1`` spanning ``(starts[k], ends[k])``, from two columns: when
        the starts are already in order (pre-token chunks are), C-level passes and no sort.

        >>> SpanIndex.of_columns([0, 2, 5], [2, 5, 6]).overlapping(1, 3)
        [0, 1]
        """
        if not all(map(int.__le__, starts, starts[1:])):
            return cls(range(len(starts)), lambda k: (starts[k], ends[k]))
        idx = cls.__new__(cls)
        idx.starts, idx.ends, idx.tokens = list(starts), list(ends), list(range(len(starts)))
        idx.reach = list(accumulate(idx.ends, max))
        idx._by_end = None
        return idx

    def overlapping(self, a: int, b: int) -> list[int]:
        """Tokens (ascending) whose span has ``start < b`` and ``end > a``."""
        out = []
        j = bisect_left(self.starts, b) - 1
        while j >= 0 and self.reach[j] > a:
            if self.ends[j] > a:
                out.append(self.tokens[j])
            j -= 1
        out.sort()
        return out

    def last_ending_by(self, p: int) -> int | None:
        """The highest token whose span ends at or before ``p``."""
        if self._by_end is None:
            rows = sorted(zip(self.ends, self.tokens))
            best, top = [], -1
            for _, t in rows:
                top = max(top, t)
                best.append(top)
            self._by_end = ([e for e, _ in rows], best)
        ends, best = self._by_end
        k = bisect_right(ends, p)
        return best[k - 1] if k else None


def _context(tokenizer: Any, enc: Encoding, exact: bool) -> _Ctx:
    ex = enc.exact_alignment
    content = [i for i in range(len(enc.ids)) if ex.origins[i] is not None or enc.word_ids[i] is not None]
    surfaces: dict[int, _Surface] = {}
    synthetic: dict[int, int] = {}
    inserted_by: dict[int, str] = {}
    inserted = frozenset(ex.inserted)
    for i in content:
        o = ex.origins[i]
        surfaces[i] = surface(tokenizer, enc.ids[i], added=o is not None and o.chunk is None)
        if o is None:
            continue
        n = o.synthetic
        if o.inserted_by:
            inserted_by[i] = o.inserted_by
        if o.normalized is not None and inserted:
            k = sum(1 for c in range(*o.normalized) if c in inserted)
            if k:
                n += k
                inserted_by[i] = "Prepend normalizer"
        if n:
            synthetic[i] = n
    spans = list(ex.offsets if exact else enc.offsets)
    return _Ctx(tokenizer, enc, ex, spans, content, surfaces, synthetic, inserted_by, frozenset(ex.deleted), exact)


def _marker_reason(ctx: _Ctx, i: int, other: int) -> str:
    who = ctx.inserted_by.get(i, "a pipeline step")
    p = ctx.ex.offsets[i][0]
    return (
        f"prepended marker: {ctx.enc.tokens[i]!r} was inserted by the {who} and has no source character; "
        f"HF gives it the span of {ctx.text[ctx.enc.offsets[other][0]:ctx.enc.offsets[other][1]]!r} "
        f"(exact: zero-width at {p})"
    )


def _share_normalized(ctx: _Ctx, i: int, j: int) -> bool:
    """Do tokens i and j hold bytes of one *normalized* character (in a normalized segment the
    byte spans are whole characters, so the normalized ranges say it)?"""
    oi, oj = ctx.ex.origins[i], ctx.ex.origins[j]
    if oi is None or oj is None or oi.normalized is None or oj.normalized is None:
        return False
    return oj.normalized[0] < oi.normalized[1] and oi.normalized[0] < oj.normalized[1]


def _byte_split(ctx: _Ctx, i: int, j: int, cp: int) -> bool:
    """Do tokens i and j both hold bytes of code point ``cp`` (and only part of it)?"""
    if _share_normalized(ctx, i, j):
        return True
    m = ctx.enc.offset_map
    b0, b1 = m.to_utf8(cp), m.to_utf8(cp + 1)
    (bi0, bi1), (bj0, bj1) = ctx.enc.byte_offsets[i], ctx.enc.byte_offsets[j]
    return bi0 < b1 and bi1 > b0 and bj0 < b1 and bj1 > b0 and not (bi0 <= b0 and bi1 >= b1 and bj0 <= b0 and bj1 >= b1)


def _byte_reason(ctx: _Ctx, cp: int) -> str:
    c = ctx.text[cp]
    return f"byte split: the tokens share {_cp(c)} ({len(c.encode('utf-8'))} UTF-8 bytes); each claims the whole character"


def _check_zero_width(ctx: _Ctx) -> None:
    for k, i in enumerate(ctx.content):
        s, e = ctx.spans[i]
        if s != e:
            continue
        surf = ctx.surfaces[i]
        if surf.data and not surf.special and all(b < 0x80 and chr(b).isspace() for b in surf.data):
            ctx.add("Z2", "info", [i], (s, e), f"zero-width marker: {ctx.enc.tokens[i]!r} holds only white space")
            continue
        if surf.byte_piece:
            ctx.add("Z1", "info", [i], (s, e), "byte split: a leading byte piece of a character gets an empty char span (SentencePiece convention); its byte span is exact")
            continue
        if surf.unk or not surf.data:
            continue
        ctx.add("Z1", "error", [i], (s, e), _zero_width_reason(ctx, i, k))


def _zero_width_reason(ctx: _Ctx, i: int, k: int) -> str:
    ex = ctx.ex.offsets[i]
    prev = ctx.content[k - 1] if k else None
    if ctx.synthetic.get(i) and prev is not None and ctx.surfaces[prev].special:
        return (
            f"added token shifted the prefix space: the {ctx.inserted_by.get(i, 'pre-tokenizer')} put a space after "
            f"the added token {ctx.enc.tokens[prev]!r}, and offset trimming then skipped the real character "
            f"{ctx.text[ex[0]:ex[1]]!r} (exact span {ex}, which is its byte span)"
        )
    if ctx.synthetic.get(i):
        return f"inserted prefix trimmed away with the real character (exact span {ex})"
    if ex[0] < ex[1] and _expansion(ctx, [i]):
        return (
            f"normalizer expansion: the token is a piece of {ctx.text[ex[0]:ex[1]]!r} expanded by the normalizer; "
            f"SentencePiece's alignment gives all but the last piece an empty span (exact span {ex})"
        )
    return f"zero-width span for a token with content (exact span {ex})"


def _check_pairs(ctx: _Ctx) -> None:
    """O1, D1, R1 over consecutive content tokens."""
    content = ctx.content
    k = 0
    while k + 1 < len(content):
        i, j = content[k], content[k + 1]
        (si, ei), (sj, ej) = ctx.spans[i], ctx.spans[j]
        if sj < si:
            ctx.add("R1", "error", [i, j], (sj, ei), f"out of order: token {j} starts at {sj}, before token {i} ({si})")
        if (si, ei) == (sj, ej) and si < ei:
            run = [i, j]
            while k + len(run) < len(content) and ctx.spans[content[k + len(run)]] == (si, ei):
                run.append(content[k + len(run)])
            _duplicate(ctx, run, (si, ei))
            k += len(run) - 1
            continue
        if sj < ei and (si, ei) != (sj, ej):
            _overlap(ctx, i, j, (sj, min(ei, ej)))
        k += 1


def _duplicate(ctx: _Ctx, run: list[int], span: tuple[int, int]) -> None:
    markers = [t for t in run if ctx.marker(t)]
    if markers:
        other = next(t for t in run if t not in markers) if len(markers) < len(run) else run[-1]
        ctx.add("D1", "error", run, span, _marker_reason(ctx, markers[0], other))
        return
    if span[1] - span[0] == 1 and all(_byte_split(ctx, a, b, span[0]) for a, b in zip(run, run[1:])):
        ctx.add("D1", "info", run, span, _byte_reason(ctx, span[0]))
        return
    if _expansion(ctx, run):
        src = ctx.text[span[0] : span[1]]
        norm = ctx.enc.stages.normalized.text if ctx.enc.stages is not None else ""
        ranges = [ctx.ex.origins[t].normalized for t in run]  # type: ignore[union-attr]
        out = "".join(norm[a:b] for a, b in ranges if a is not None)
        ctx.add("D1", "info", run, span, f"normalizer expansion: {src!r} became {out!r}; every piece keeps the source character")
        return
    ctx.add("D1", "warn", run, span, "duplicate span: the tokens claim the same original text")


def _expansion(ctx: _Ctx, run: list[int]) -> bool:
    srcs = []
    for t in run:
        o = ctx.ex.origins[t]
        if o is None or o.normalized is None or o.normalized[0] == o.normalized[1]:
            return False
        srcs.append({ctx.ex.char_sources[c] for c in range(*o.normalized)})
    return all(s == srcs[0] for s in srcs) and len(srcs[0]) == 1


def _overlap(ctx: _Ctx, i: int, j: int, overlap: tuple[int, int]) -> None:
    span = (ctx.spans[j][0], ctx.spans[i][1])
    if ctx.marker(i):
        ctx.add("O1", "error", [i, j], span, _marker_reason(ctx, i, j))
    elif overlap[1] - overlap[0] == 1 and _byte_split(ctx, i, j, overlap[0]):
        ctx.add("O1", "info", [i, j], span, _byte_reason(ctx, overlap[0]))
    else:
        ctx.add("O1", "warn", [i, j], span, "partial overlap: the tokens claim overlapping original text")


def _cause(ctx: _Ctx, cp: int) -> tuple[str, str, list[int]]:
    """(severity, reason, tokens) for an uncovered code point."""
    ex = ctx.ex
    c = ctx.text[cp]
    owners = ctx.index("exact").overlapping(cp, cp + 1)  # exact start <= cp < exact end
    if cp in ctx.deleted:
        before = ctx.index("span").last_ending_by(cp)
        return "info", f"deleted by the normalizer: {_cp(c)} has no normalized character", owners or (
            [before] if before is not None else [])
    if cp in ex.absorbed:
        norm = ctx.enc.stages.normalized.text[ex.absorbed[cp]] if ctx.enc.stages is not None else "?"
        return "error", (
            f"normalizer composition: {_cp(c)} was composed into {norm!r}; HF keeps only the span of its first "
            f"source, so {_cp(c)} belongs to no token"
        ), owners
    for i in owners:
        o = ex.origins[i]
        if ctx.synthetic.get(i) and ctx.enc.offsets[i][0] == ctx.enc.offsets[i][1]:
            return "error", _zero_width_reason(ctx, i, bisect_left(ctx.content, i)), owners
        if o is not None and ctx.enc.offsets[i] != ex.offsets[i] and _shifted(ctx, i):
            return "error", _shift_reason(ctx, i), owners
    if not owners:
        return "error", f"dropped by the model: {_cp(c)} is in no token (no token for it and no unk token)", owners
    return "error", f"{_cp(c)} lies in no token's HF span (exact: token {owners[0]})", owners


def _check_gaps(ctx: _Ctx) -> None:
    n = len(ctx.text)
    covered = bytearray(n + 1)
    for i in ctx.content:
        s, e = ctx.spans[i]
        covered[s:e] = b"\x01" * (e - s)
    run: list[int] = []
    key: tuple[str, str] | None = None
    toks: set[int] = set()

    def flush() -> None:
        if run and key is not None:
            ctx.add("G1", key[0], toks, (run[0], run[-1] + 1), key[1])

    for cp in range(n):
        if covered[cp] or _WS.match(ctx.text[cp]):
            flush()
            run, key, toks = [], None, set()
            continue
        sev, reason, owners = _cause(ctx, cp)
        kind = (sev, reason.split(":")[0])
        if key is None or (key[0], key[1].split(":")[0]) != kind or run[-1] != cp - 1:
            flush()
            run, key, toks = [], (sev, reason), set()
        run.append(cp)
        toks.update(owners)
    flush()


def _shifted(ctx: _Ctx, i: int) -> bool:
    """Did the model's running offsets shift this token (character BPE without unk token)?"""
    o = ctx.ex.origins[i]
    return o is not None and o.reanchored


def _shift_reason(ctx: _Ctx, i: int) -> str:
    hs, he = ctx.enc.offsets[i]
    return (
        f"the model dropped a character it has no token for (BPE without unk token): HF's offsets are running "
        f"sums over the kept characters, so {ctx.enc.tokens[i]!r} points at {ctx.text[hs:he]!r} "
        f"(exact span {ctx.ex.offsets[i]})"
    )


def _check_cuts(ctx: _Ctx) -> None:
    """U1 (byte boundaries inside a character) and K1 (token boundaries inside a grapheme)."""
    enc, m = ctx.enc, ctx.enc.offset_map
    content = ctx.content
    seen: set[int] = set()
    for k in range(1, len(content)):
        i, j = content[k - 1], content[k]
        b = enc.byte_offsets[j][0]
        cp = m.from_utf8(b)
        if cp < len(ctx.text) and m.to_utf8(cp) != b and cp not in seen:
            seen.add(cp)
            b0, b1 = m.to_utf8(cp), m.to_utf8(cp + 1)
            group = ctx.index("bytes").overlapping(b0, b1)
            ctx.add("U1", "info", group, (cp, cp + 1), _byte_reason(ctx, cp))
        elif _share_normalized(ctx, i, j):
            # a normalized segment: byte spans are whole characters, the normalized ranges tell
            c = ctx.ex.origins[j].normalized[0]  # type: ignore[union-attr]
            s, e = ctx.ex.char_sources[c]
            if s not in seen and e > s:
                seen.add(s)
                group = ctx.index("normalized").overlapping(c, c + 1)  # normalized start <= c < end
                ctx.add("U1", "info", group, (s, e), _byte_reason(ctx, s))
    bounds = _grapheme_bounds(ctx.text)
    for k in range(1, len(content)):
        i, j = content[k - 1], content[k]
        b = enc.byte_offsets[j][0]
        cp = m.from_utf8(b)
        if m.to_utf8(cp) != b or cp == 0 or cp >= len(ctx.text) or bounds[bisect_left(bounds, cp)] == cp:
            continue
        cluster = _cluster_at(ctx.text, bounds, cp)
        if all(_WS.match(c) or unicodedata.category(c) == "Cc" for c in cluster[2]):
            continue  # CRLF and other control clusters: no glyph is cut
        sev, reason = "info", f"grapheme cut: the boundary at {cp} splits the cluster {cluster[2]!r}"
        composed = unicodedata.normalize("NFC", cluster[2])
        if len(composed) == 1 and len(cluster[2]) > 1 and _in_vocab(ctx, composed):
            sev, reason = "warn", reason + f"; the vocabulary has the composed {composed!r}"
        ctx.add("K1", sev, [i, j], (cluster[0], cluster[1]), reason)


def _grapheme_bounds(text: str) -> list[int]:
    """Grapheme cluster boundaries, ascending (0 and the end included)."""
    out = [0]
    pos = 0
    for g in regex.findall(r"\X", text):
        pos += len(g)
        out.append(pos)
    return out


def _cluster_at(text: str, bounds: list[int], cp: int) -> tuple[int, int, str]:
    """The cluster around ``cp`` (0 < cp < len(text), not itself a boundary)."""
    k = bisect_left(bounds, cp)
    s, e = bounds[k - 1], bounds[k]
    return s, e, text[s:e]


def _in_vocab(ctx: _Ctx, c: str) -> bool:
    t = ctx.tokenizer
    facts = TokenizerFacts.of(t)
    if facts.byte_level:
        candidates = [text_to_proxy(c)]
    else:
        candidates = [c] + [m + c for m in (facts.replacement, facts.continuation_prefix) if m]
    return any(t.token_to_id(x) is not None for x in candidates)


def _spaces(text: str, replacement: str | None) -> str:
    return text.replace(replacement, " ") if replacement else text


def _check_surfaces(ctx: _Ctx) -> None:
    """T1 (surface vs normalized text) per byte group, N1 per normalization change region."""
    stages = ctx.enc.stages
    if stages is None:
        return
    norm = stages.normalized.text
    groups: list[list[int]] = []
    inserted = set(ctx.ex.inserted)
    m = ctx.enc.offset_map
    for i in ctx.content:
        b = ctx.enc.byte_offsets[i][0]
        o, prev = ctx.ex.origins[i], ctx.ex.origins[groups[-1][-1]] if groups else None
        shares = (  # starts inside an original character, or inside the previous token's normalized one
            o is not None and prev is not None and o.normalized is not None and prev.normalized is not None
            and o.normalized[0] < prev.normalized[1]
        )
        if groups and (m.to_utf8(m.from_utf8(b)) != b or shares):
            groups[-1].append(i)
        else:
            groups.append([i])
    for g in groups:
        if any(ctx.surfaces[i].unk or ctx.ex.origins[i] is None for i in g):
            continue
        if not ctx.exact and any(_shifted(ctx, i) for i in g):
            i = next(i for i in g if _shifted(ctx, i))
            hs, he = ctx.enc.offsets[i]
            ctx.add("T1", "error", [i], (hs, he), f"surface mismatch: {ctx.surfaces[i].data.decode('utf-8', 'replace')!r} vs {ctx.text[hs:he]!r}; " + _shift_reason(ctx, i))
            continue
        got = b"".join(ctx.surfaces[i].data for i in g).decode("utf-8", "replace")
        lead = ctx.synthetic.get(g[0], 0)  # the synthetic marker is no text of the original
        got_text = got[lead:]
        ranges = [ctx.ex.origins[i].normalized for i in g]  # type: ignore[union-attr]
        a = min(r[0] for r in ranges if r)
        b = max(r[1] for r in ranges if r)
        want = _spaces("".join(norm[c] for c in range(a, b) if c not in inserted), ctx.replacement)
        if _spaces(got_text, ctx.replacement) != want:
            ctx.add("T1", "error", g, _hull([ctx.spans[i] for i in g]), f"surface mismatch: the tokens stand for {got_text!r}, the normalized text there is {want!r}")


def _check_normalization(ctx: _Ctx) -> None:
    ex = ctx.ex
    stages = ctx.enc.stages
    if stages is None or not ex.char_sources:
        return
    inserted = set(ex.inserted)
    norm = stages.normalized.text
    regions: list[list[int]] = []
    for c, (a, b) in enumerate(ex.char_sources):
        if c in inserted or a == b:
            continue
        if regions and a < ex.char_sources[regions[-1][-1]][1]:
            regions[-1].append(c)
        else:
            regions.append([c])
    found: list[tuple[int, int, str]] = []
    for r in regions:
        a, b = ex.char_sources[r[0]][0], max(ex.char_sources[c][1] for c in r)
        if b - a != len(r):
            found.append((a, b, norm[r[0] : r[-1] + 1]))
    in_region = bytearray(len(ctx.text) + 1)
    for a, b, _ in found:
        in_region[a:b] = b"\x01" * (b - a)
    found.extend((cp, cp + 1, "") for cp in ex.deleted if not in_region[cp])
    for a, b, out in sorted(found):
        toks = ctx.index("span").overlapping(a, b) or _tokens_at(ctx, a)
        what = "deleted" if not out else f"became {_cps(out)}"
        ctx.add("N1", "info", toks, (a, b), f"normalization length change: {_cps(ctx.text[a:b])} {what}")


def _tokens_at(ctx: _Ctx, cp: int) -> list[int]:
    """The tokens whose exact span holds ``cp`` or sits at it (zero-width), else the last token
    before it: where a change no HF span covers (a deleted code point) is shown."""
    at = ctx.index("exact")
    toks = at.overlapping(cp, cp + 1) or [t for t in at.overlapping(cp - 1, cp + 1) if ctx.ex.offsets[t] == (cp, cp)]
    if not toks:
        before = ctx.index("span").last_ending_by(cp)
        toks = [before] if before is not None else []
    return toks


def _check_hull(ctx: _Ctx) -> None:
    """T2: the HF span differs from the exact hull and no other finding explains that token."""
    if ctx.exact or not ctx.ex.available:
        return
    explained = {t for f in ctx.findings if f.severity in ("error", "warn") or f.check in ("O1", "D1", "Z2", "Z1") for t in f.tokens}
    for i in ctx.content:
        if i in explained or ctx.ex.origins[i] is None:
            continue
        if _core(ctx, ctx.enc.offsets[i]) != _core(ctx, ctx.ex.offsets[i]):
            ctx.add("T2", "error", [i], ctx.enc.offsets[i], f"span differs from the alignment hull: HF {ctx.enc.offsets[i]}, exact {ctx.ex.offsets[i]}")


def _core(ctx: _Ctx, span: tuple[int, int]) -> tuple[int, int]:
    """A span without white space and deleted code points at its ends."""
    s, e = span
    text = ctx.text
    while s < e and (_WS.match(text[s]) or s in ctx.deleted):
        s += 1
    while e > s and (_WS.match(text[e - 1]) or (e - 1) in ctx.deleted):
        e -= 1
    return (s, e)


_ORDER = {c: k for k, c in enumerate(CHECKS)}


def lint_encoding(tokenizer: Any, encoding: Encoding, *, exact: bool = False) -> LintReport:
    """Lint one encoding (made by ``tokenizer.encode``); ``exact`` lints the exact spans."""
    ctx = _context(tokenizer, encoding, exact)
    _check_zero_width(ctx)
    _check_pairs(ctx)
    _check_gaps(ctx)
    _check_cuts(ctx)
    _check_surfaces(ctx)
    _check_normalization(ctx)
    _check_hull(ctx)
    findings = sorted(ctx.findings, key=lambda f: (_ORDER[f.check], f.span, f.tokens))
    content = set(ctx.content)
    added = tuple(i for i in range(len(encoding.ids)) if i not in content)
    return LintReport(encoding.text, tuple(findings), exact, added)


def lint_text(tokenizer: Tokenizer, text: str, *, exact: bool = False, add_special_tokens: bool = False) -> LintReport:
    """`lint_encoding` over ``tokenizer.encode(text, add_special_tokens=...)`` (token indices
    count the added special tokens, see `LintReport`)."""
    return lint_encoding(tokenizer, tokenizer.encode(text, add_special_tokens=add_special_tokens), exact=exact)


# ---------------------------------------------------------------------- corpus
@dataclass(slots=True)
class CorpusLint:
    """Counts per check and the first ``examples`` findings of each, over the lines of a corpus.

    ``lines`` linted, ``counts[check]`` findings, ``severities[check][severity]`` findings,
    ``samples[check]`` up to ``examples`` entries ``{"line", "text", "finding"}``.
    """

    examples: int = 5
    add_special_tokens: bool = False  # how every line was encoded
    lines: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    severities: dict[str, dict[str, int]] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cancelled: bool = False
    special_tokens_added: bool = False  # some line's encoding holds post-processor tokens

    def add(self, line_no: int, report: LintReport) -> None:
        self.lines += 1
        self.special_tokens_added |= report.special_tokens_added
        for f in report.findings:
            self.counts[f.check] = self.counts.get(f.check, 0) + 1
            sev = self.severities.setdefault(f.check, {})
            sev[f.severity] = sev.get(f.severity, 0) + 1
            bucket = self.samples.setdefault(f.check, [])
            if len(bucket) < self.examples:
                bucket.append({"line": line_no, "text": report.text, "finding": f.to_json()})

    def to_json(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "add_special_tokens": self.add_special_tokens,
            "cancelled": self.cancelled,
            "special_tokens_added": self.special_tokens_added,
            "counts": dict(sorted(self.counts.items(), key=lambda kv: _ORDER[kv[0]])),
            "severities": self.severities,
            "examples": self.samples,
        }


# ---------------------------------------------------------------------- export
def regression_case(
    tokenizer_path: str, encoding: Encoding, finding: Finding | None = None, *, add_special_tokens: bool = False
) -> dict[str, Any]:
    """A ready regression test for one text: the tokenizer file, the text, how it was encoded
    (``add_special_tokens``, as the encoding was made) and the spans it must keep
    (HF-compatible and exact), with the finding that prompted it.

    >>> from tokviz.engine.encoding import empty_encoding
    >>> regression_case("tok.json", empty_encoding(""))["expected"]["offsets"]
    []
    """
    try:
        exact = encoding.exact_offsets
    except ValueError:  # not made by Tokenizer.encode: no exact spans to pin
        exact = list(encoding.offsets)
    return {
        "tokenizer": str(tokenizer_path),
        "text": encoding.text,
        "add_special_tokens": add_special_tokens,
        "expected": {
            "tokens": list(encoding.tokens),
            "ids": list(encoding.ids),
            "offsets": [list(o) for o in encoding.offsets],
            "exact_offsets": [list(o) for o in exact],
        },
        "finding": finding.to_json() if finding is not None else None,
    }


def dumps(obj: Any) -> str:
    """JSON text as tokviz writes it (UTF-8 kept readable, always valid JSON: `json_text.dumps`)."""
    return json_text.dumps(obj, indent=2)
