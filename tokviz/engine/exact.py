"""Exact token spans beside HF's: which original code points each token really came from.

`Encoding.offsets` reproduce HF's ``return_offsets_mapping`` bit for bit, including its known
losses: a composed character (NFC ``e`` + U+0301 -> ``é``) keeps only the span of its first
source, a prepended marker (``Prepend("▁")``, Metaspace, ByteLevel's prefix space) borrows the
span of the first character, and a ByteLevel/Roberta post-processor trims by the token *string*,
so a token whose leading ``Ġ`` was inserted loses its first real character (``ĠB`` -> empty).
This module computes the *exact* spans from what the run already kept (the normalized segments
with their alignments, the pre-tokenizer and the model) without touching the encode path:

* **composition -> union**: an original code point that no normalized character's alignment
  covers was either deleted by the normalizer or swallowed by a composition. It is *deleted*
  when the normalizer gives the same output with or without it after an inert ``a``
  (``normalize("a" + c) == normalize("a")``: StripAccents, control characters, stripped
  whitespace); otherwise it is added to the normalized character on its left (the composee of
  UAX #15's canonical composition; the right one at a segment start).
* **expansion -> the expanded char**: characters sharing one alignment (``ﬁ`` -> ``fi``, byte
  proxies of one character) keep it; identical spans, never a partial overlap.
* **deletion -> none**: deleted code points are listed in `ExactAlignment.deleted`.
* **prepend/append -> zero-width** at the insertion point (PR #2149's semantics): the prefix of a
  `Prepend` normalizer, Metaspace's ``▁`` and ByteLevel's prefix space.

Everything here is computed on request (`Encoding.exact_offsets`, `exact_alignment`); the
encode path only records which tokenizer produced the encoding.

Performance notes: one pass per segment and per chunk in Python, plus one model call per
chunk (the chunk's token ranges are not kept by the encode path); meant for views and lints,
not for throughput. Linear in the text: the facts about what lies right of an uncovered code
point (next covering character, collapsed white space) come from one right-to-left pass
(`_right_facts`), not a scan ahead per code point (quadratic on texts with long uncovered
runs). What remains super-linear on very long texts is the cyclic GC walking the many small
per-character lists; the GC is not paused here, since that is a global side effect in a library
call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import regex

from .text import NormalizedText

__all__ = ["SPACES", "ExactAlignment", "ExactSource", "TokenOrigin", "WHITE_SPACE_RE", "exact_alignment", "space_counts"]

WHITE_SPACE_RE = regex.compile(r"\p{White_Space}")
# Rust's char::is_whitespace is the Unicode White_Space property (not Python's str.isspace,
# which also accepts U+001C..U+001F); with Ġ, the byte-level proxy of b" "
SPACES = "".join(sorted({chr(c) for c in range(0x3000 + 1) if WHITE_SPACE_RE.match(chr(c))} | {"\u0120"}))


def space_counts(token: str) -> tuple[int, int]:
    """Leading and trailing space characters (``Ġ`` or White_Space) of a token string: what HF's
    ByteLevel ``process_offsets`` trims.

    >>> space_counts("ĠĠhi ")
    (2, 1)
    """
    n = len(token)
    return n - len(token.lstrip(SPACES)), n - len(token.rstrip(SPACES))


class ExactSource(Protocol):
    """What exact spans read from the pipeline that made an encoding
    (`tokviz.engine.pipeline.Pipeline` is one)."""

    normalizer: Any
    pre_tokenizer: Any
    model: Any
    post_processor: Any
    added: Any  # an `AddedVocabulary`
    byte_level: bool


class _EncodingLike(Protocol):
    text: str
    stages: Any
    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]
    word_ids: list[int | None]


@dataclass(frozen=True, slots=True)
class TokenOrigin:
    """Where one token came from, stage by stage (for "which stage moved this offset").

    ``normalized`` is the token's range in `Stages.normalized` coordinates (None for tokens a
    post-processor added); ``chunk`` its pre-token chunk index in `Stages.pre_tokens` (None for
    added tokens); ``synthetic`` how many of its characters were inserted by a pipeline step,
    ``inserted_by`` which step (``"Prepend normalizer"``, ``"Metaspace prefix"``, ``"ByteLevel
    prefix space"``); ``raw`` its exact span before any post-processor trimming;
    ``reanchored`` True when the model's own range was wrong (see `_reanchor`) and the token was
    placed by its value instead.
    """

    normalized: tuple[int, int] | None
    chunk: int | None
    synthetic: int
    inserted_by: str | None
    raw: tuple[int, int]
    reanchored: bool = False


@dataclass(frozen=True, slots=True)
class ExactAlignment:
    """Exact spans of one encoding, and the per-character facts they were derived from.

    ``offsets``: one exact span per token (code points of the original). ``origins``: one
    `TokenOrigin` per token. ``char_sources``: the exact original span of every character of
    `Stages.normalized`. ``deleted``: original code points the normalizer deleted.
    ``absorbed``: original code point -> the normalized character it was composed into (HF's
    alignment drops it). ``inserted``: normalized characters a `Prepend` normalizer inserted.
    ``available`` is False when the recomputation could not reproduce the encoding's tokens
    (then ``offsets`` are HF's and ``note`` says why).
    """

    offsets: list[tuple[int, int]]
    origins: list[TokenOrigin | None]
    char_sources: list[tuple[int, int]]
    deleted: tuple[int, ...]
    absorbed: dict[int, int]
    inserted: tuple[int, ...]
    available: bool = True
    note: str = ""


# ---------------------------------------------------------------------- normalizer facts
def _flatten(component: Any, attr: str) -> list[Any]:
    if component is None:
        return []
    children = getattr(component, attr, None)
    if isinstance(children, (list, tuple)):
        out: list[Any] = []
        for c in children:
            out.extend(_flatten(c, attr))
        return out
    return [component]


def _prepend_len(normalizer: Any) -> int:
    """Characters a `Prepend` normalizer puts in front of a non-empty piece (0 without one)."""
    return sum(len(n.prepend) for n in _flatten(normalizer, "normalizers") if getattr(n, "type_name", "") == "Prepend")


class _Deletion:
    """Does the normalizer delete a code point (rather than compose it into a neighbour)?"""

    def __init__(self, normalizer: Any) -> None:
        self.normalize_str = normalizer.normalize_str if normalizer is not None else None
        self.normalize = normalizer.normalize if normalizer is not None else None
        self.memo: dict[str, str | None] = {}
        self.base: str | None = None

    def _tail(self, c: str) -> str | None:
        """What the normalizer makes of ``c`` after an inert ``a`` (None: not a clean suffix)."""
        if c in self.memo:
            return self.memo[c]
        if self.base is None:
            self.base = self.normalize_str("a")  # type: ignore[misc]
        out = self.normalize_str("a" + c)  # type: ignore[misc]
        v = self.memo[c] = out[len(self.base) :] if out.startswith(self.base) else None
        return v

    def __call__(self, c: str) -> bool:
        return self.normalize_str is None or self._tail(c) == ""

    def blank(self, c: str) -> bool:
        """Is ``c`` white space, or made white space by the normalizer (the Precompiled charsmap
        maps U+200D/U+200B to a space, which a ``Replace(" {2,}", " ")`` may then collapse)?"""
        if WHITE_SPACE_RE.match(c) is not None:
            return True
        if self.normalize_str is None:
            return False
        tail = self._tail(c)
        return bool(tail) and all(t == "\u2581" or WHITE_SPACE_RE.match(t) for t in tail)


def _segment_sources(
    nt: NormalizedText, seg_start: int, seg_end: int, deletes: _Deletion, prefix: int
) -> tuple[list[list[int]], list[int], dict[int, int], int]:
    """Exact sources of one normalized segment: per char ``[start, end]``, the deleted code
    points, absorbed code point -> char index, and the number of leading inserted chars."""
    nt = _without_lost_deletions(nt, seg_start, seg_end, deletes)
    n = len(nt.text)
    src = [list(nt.align(i)) for i in range(n)]
    inserted = 0
    if prefix and n > prefix and all(src[k] == src[prefix] for k in range(prefix)):
        # HF's prepend signature: the prefix chars share the first real char's alignment
        inserted = prefix
        p = src[prefix][0]
        for k in range(prefix):
            src[k] = [p, p]
    _widen_empty_expansions(nt.text, src, inserted)
    width = seg_end - seg_start
    owner = [-1] * width
    for i in range(inserted, n):
        a, b = src[i]
        for cp in range(max(a, seg_start), min(b, seg_end)):
            owner[cp - seg_start] = i
    deleted: list[int] = []
    absorbed: dict[int, int] = {}
    original = nt.original
    if all(o >= 0 for o in owner):
        return src, deleted, absorbed, inserted
    right_of, collapses = _right_facts(original, owner, seg_start, deletes)
    last = -1
    for k in range(width):
        if owner[k] >= 0:
            last = owner[k]
            continue
        cp = seg_start + k
        if deletes(original[cp]):
            deleted.append(cp)
            continue
        right = right_of[k]
        target = last
        if target < 0 or (right >= 0 and deletes.blank(original[cp]) and collapses[k + 1]):
            # nothing on the left, or a run of white space collapsed into the one after it
            # (Replace(" {2,}", " ") aligns its content with the match's last character)
            target = right
        if target < 0:
            deleted.append(cp)
            continue
        absorbed[cp] = target
        s = src[target]
        s[0], s[1] = min(s[0], cp), max(s[1], cp + 1)
    return src, deleted, absorbed, inserted


def _without_lost_deletions(nt: NormalizedText, seg_start: int, seg_end: int, deletes: _Deletion) -> NormalizedText:
    """The segment realigned when its alignment lost the deletion of its leading code points.

    HF's ``Precompiled`` records a shrink on the last change already emitted; at the start of a
    piece there is none, so a deleted leading control character (``\x10``) is never accounted
    for and every later normalized character takes the alignment of the intermediate character
    *before* its own (``"\x10ヿa"`` -> ``コトa`` aligned (0, 1), (1, 2), (1, 2): the ``a`` on
    ``ヿ``, its own code point uncovered). A later step can hide that (a collapsed run of spaces
    realigned to its last one), so whenever the segment starts with a run of deletable code
    points it is normalized again without it (rare: one more normalizer call); when that gives
    the same text, its alignment is the exact one (the run itself is deleted). A normalizer that
    keeps its books right gives the same alignment both ways."""
    original = nt.original
    lead = seg_start
    while lead < seg_end and deletes(original[lead]):
        lead += 1
    if lead == seg_start or lead == seg_end or deletes.normalize is None:
        return nt
    again = deletes.normalize(NormalizedText.identity(original, lead, seg_end))
    return again if again.text == nt.text else nt


def _widen_empty_expansions(text: str, src: list[list[int]], first: int) -> None:
    """SentencePiece's ``norm_to_orig`` gives every character of an expansion but the last an
    empty span at the source (``…`` -> ``...``: (p, p), (p, p), (p, q)); exactly, each comes from
    the expanded character. (An empty ``▁`` is the dummy prefix or a collapsed space: kept.)"""
    n = len(src)
    i = first
    while i < n:
        a, b = src[i]
        if a != b or text[i] == "\u2581":
            i += 1
            continue
        j = i + 1  # the run of empty spans at a: all of it takes the span that ends it
        while j < n and src[j][0] == src[j][1] == a and text[j] != "\u2581":
            j += 1
        if j < n and src[j][0] == a < src[j][1]:
            for k in range(i, j):
                src[k] = list(src[j])
        i = j


def _right_facts(original: str, owner: list[int], seg_start: int, deletes: _Deletion) -> tuple[list[int], list[bool]]:
    """Per segment position k: the first covering normalized char right of k (-1: none), and
    whether the run from k on (deleted characters skipped) reaches a *covered* white-space code
    point before any kept non-white-space one (then white space before k collapsed into it;
    "white space" includes what the normalizer turns into it, `_Deletion.blank`).
    One pass from the right, instead of a scan ahead per uncovered code point."""
    width = len(owner)
    right_of = [-1] * width
    collapses = [False] * (width + 1)
    nxt = -1
    for k in range(width - 1, -1, -1):
        right_of[k] = nxt
        o = owner[k]
        c = original[seg_start + k]
        if not deletes.blank(c):
            collapses[k] = collapses[k + 1] if o < 0 and deletes(c) else False
        else:
            collapses[k] = True if o >= 0 else collapses[k + 1]
        if o >= 0:
            nxt = o
    return right_of, collapses


# ---------------------------------------------------------------------- pre-tokenizer facts
def _proxy_piece(text: str, at_start: bool) -> NormalizedText:
    """The segment's normalized text as an unnormalized piece whose "original" positions are its
    own character indexes (+1 when the segment does not start the text, so that Metaspace's
    ``prepend_scheme="first"`` sees the same ``orig_start == 0`` test)."""
    if at_start:
        return NormalizedText.identity(text)
    return NormalizedText("\0" + text, text, 1, 1 + len(text))


def _inserted_by(pre_tokenizer: Any) -> str:
    for p in _flatten(pre_tokenizer, "pretokenizers") + _flatten(pre_tokenizer, "pre_tokenizers"):
        name = getattr(p, "type_name", "")
        if name == "Metaspace":
            return "Metaspace prefix"
        if name == "ByteLevel":
            return "ByteLevel prefix space"
    return "pre-tokenizer"


def _chunk_chars(chunk: NormalizedText, base: int, byte_level: bool, piece: str) -> tuple[list[int], list[bool]]:
    """For every chunk char: the index of the segment char it came from, and whether it was
    inserted (a run of chunk chars on one segment char longer than that char's own mapping:
    one char, or its UTF-8 length under ByteLevel; the extra ones come first, as prepended)."""
    n = len(chunk.text)
    local = [chunk.align(j)[0] - base for j in range(n)]
    inserted = [False] * n
    j = 0
    while j < n:
        k = j
        while k < n and local[k] == local[j]:
            k += 1
        li = local[j]
        if 0 <= li < len(piece):
            expected = len(piece[li].encode("utf-8")) if byte_level else 1
            for m in range(j, min(k - expected, k)):
                inserted[m] = True
        j = k
    return local, inserted


# ---------------------------------------------------------------------- the computation
def _token_value(model: Any, id_: int, first: bool) -> str | None:
    """The chunk text a BPE/WordPiece token stands for (subword prefix / word suffix removed)."""
    value = model.id_to_token(id_)
    if value is None:
        return None
    prefix = getattr(model, "continuing_subword_prefix", None) or ""
    if prefix and not first and value.startswith(prefix):
        value = value[len(prefix) :]
    suffix = getattr(model, "end_of_word_suffix", None) or ""
    if suffix and value.endswith(suffix):
        value = value[: -len(suffix)]
    return value


def _reanchor(model: Any, text: str, triples: Sequence[tuple[int, int, int]]) -> Sequence[tuple[int, int, int]]:
    """Ranges that match the tokens' values in the chunk text, for a character-level BPE that
    dropped an unknown character without an unk token: HF's ``Word`` offsets are running sums
    over the *kept* characters, so every later token of the chunk shifts left (``"This"`` with
    no ``T`` in the vocabulary: ``hi`` gets the range of ``Th``). Unchanged when they match."""
    if getattr(model, "type_name", "") != "BPE" or getattr(model, "unk_token", None):
        return triples
    if all(text[s:e] == _token_value(model, i, k == 0) for k, (i, s, e) in enumerate(triples)):
        return triples
    out = []
    cursor = 0
    for k, (id_, s, e) in enumerate(triples):
        value = _token_value(model, id_, k == 0)
        pos = text.find(value, cursor) if value else -1
        if pos < 0:
            return triples
        out.append((id_, pos, pos + len(value)))
        cursor = pos + len(value)
    return out


@dataclass(slots=True)
class _RawToken:
    id: int
    span: tuple[int, int]
    origin: TokenOrigin


def _hull(points: Sequence[tuple[int, int]]) -> tuple[int, int]:
    return (min(p[0] for p in points), max(p[1] for p in points))


def _raw_tokens(tokenizer: ExactSource, enc: _EncodingLike) -> tuple[list[_RawToken], ExactAlignment]:
    stages = enc.stages
    assert stages is not None
    normalizer = tokenizer.normalizer
    pre_tokenizer = tokenizer.pre_tokenizer
    model = tokenizer.model
    deletes = _Deletion(normalizer)
    prefix = _prepend_len(normalizer)
    byte_level = tokenizer.byte_level
    by_id = tokenizer.added.by_id
    step_name = _inserted_by(pre_tokenizer)
    char_sources: list[tuple[int, int]] = []
    deleted: list[int] = []
    absorbed: dict[int, int] = {}
    inserted_chars: list[int] = []
    tokens: list[_RawToken] = []
    base = 0
    chunk_index = 0
    raw_piece_start = True  # does this segment begin a raw (pre-extraction) piece?
    for seg in stages.segments:
        nt = seg.normalized
        n = len(nt.text)
        if seg.added_id is not None:
            span = nt.original_span(0, n)
            char_sources.extend([nt.align(i) for i in range(n)])
            tokens.append(_RawToken(seg.added_id, span, TokenOrigin((base, base + n), None, 0, None, span)))
            tok = by_id.get(seg.added_id)
            raw_piece_start = tok is None or not tok.normalized
            base += n
            continue
        src, dels, absb, ins = _segment_sources(nt, seg.start, seg.end, deletes, prefix if raw_piece_start else 0)
        raw_piece_start = False
        deleted.extend(dels)
        absorbed.update({cp: base + i for cp, i in absb.items()})
        inserted_chars.extend(range(base, base + ins))
        char_sources.extend((a, b) for a, b in src)
        proxy = _proxy_piece(nt.text, nt.orig_start == 0)
        offset = proxy.orig_start
        chunks = pre_tokenizer.pre_tokenize([proxy]) if pre_tokenizer is not None else [proxy]
        for chunk in chunks:
            if not chunk.text:
                continue
            local, inserted = _chunk_chars(chunk, offset, byte_level, nt.text)
            given = model.tokenize(chunk.text)
            triples = _reanchor(model, chunk.text, given) if not byte_level else given
            for k_tok, (id_, s, e) in enumerate(triples):
                if s < e:
                    pts = [(src[local[j]][0], src[local[j]][0]) if inserted[j] else tuple(src[local[j]]) for j in range(s, e)]
                    span = _hull(pts)  # type: ignore[arg-type]
                    real = [local[j] for j in range(s, e) if not inserted[j]]
                    norm = (base + min(real), base + max(real) + 1) if real else (base + local[s], base + local[s])
                else:  # an empty model range: a point where it sits
                    li = local[s] if s < len(local) else (local[-1] + 1 if local else 0)
                    p = src[li][0] if li < len(src) else (src[-1][1] if src else seg.start)
                    span, norm = (p, p), (base + li, base + li)
                synthetic = sum(inserted[s:e])
                moved = triples is not given and tuple(given[k_tok][1:]) != (s, e)
                origin = TokenOrigin(norm, chunk_index, synthetic, step_name if synthetic else None, span, moved)
                tokens.append(_RawToken(id_, span, origin))
            chunk_index += 1
        base += n
    # pieces the normalizer emptied are dropped from the segments: all their code points went
    in_segments = bytearray(len(stages.original))
    for seg in stages.segments:
        in_segments[seg.start : seg.end] = b"\x01" * (seg.end - seg.start)
    deleted.extend(cp for cp in range(len(in_segments)) if not in_segments[cp])
    info = ExactAlignment([], [], char_sources, tuple(sorted(deleted)), absorbed, tuple(inserted_chars))
    return tokens, info


def _trim_config(post_processor: Any) -> bool | None:
    """``add_prefix_space`` of the first ByteLevel/Roberta processor that trims offsets, else None."""
    for p in _flatten(post_processor, "processors"):
        if getattr(p, "type_name", "") in ("ByteLevel", "RobertaProcessing") and getattr(p, "trim_offsets", False):
            return bool(getattr(p, "add_prefix_space", True))
    return None


def _trim(span: tuple[int, int], token: str, index: int, add_prefix_space: bool, text: str) -> tuple[int, int]:
    """HF's ``process_offsets`` counts (leading / trailing space characters of the token string),
    applied to the exact span only over *original* white space: an inserted ``Ġ`` has no
    original character, so nothing real is trimmed for it."""
    start, end = span
    leading, trailing = space_counts(token)
    if leading and (index == 0 or start == 0) and add_prefix_space and leading == 1:
        leading = 0
    while leading and start < end and WHITE_SPACE_RE.match(text[start]):
        start += 1
        leading -= 1
    while trailing and end > start and WHITE_SPACE_RE.match(text[end - 1]):
        end -= 1
        trailing -= 1
    return (start, end)


def exact_alignment(tokenizer: ExactSource, enc: _EncodingLike) -> ExactAlignment:
    """Exact spans of ``enc`` (an encoding the pipeline ``tokenizer`` produced), with their
    per-char facts.

    Usually reached through `Encoding.exact_offsets` / `Encoding.exact_alignment`.
    """
    if enc.stages is None:
        return ExactAlignment(list(enc.offsets), [None] * len(enc.ids), [], (), {}, (), False, "no stages kept")
    raw, info = _raw_tokens(tokenizer, enc)
    offsets: list[tuple[int, int]] = []
    origins: list[TokenOrigin | None] = []
    p = 0
    for i, id_ in enumerate(enc.ids):
        if p < len(raw) and raw[p].id == id_ and enc.word_ids[i] is not None:
            offsets.append(raw[p].span)
            origins.append(raw[p].origin)
            p += 1
        else:  # a token the post-processor added: HF's span is its only span
            offsets.append(enc.offsets[i])
            origins.append(None)
    if p != len(raw):
        return ExactAlignment(
            list(enc.offsets), [None] * len(enc.ids), info.char_sources, info.deleted, info.absorbed, info.inserted,
            False, "the recomputed tokens differ from the encoding's (a sampling model?)",
        )
    trim = _trim_config(tokenizer.post_processor)
    if trim is not None:
        offsets = [
            o if origins[i] is None else _trim(o, enc.tokens[i], i, trim, enc.text) for i, o in enumerate(offsets)
        ]
    return ExactAlignment(offsets, origins, info.char_sources, info.deleted, info.absorbed, info.inserted)
