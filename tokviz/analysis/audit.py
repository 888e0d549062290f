"""Glitch-token audit of a vocabulary: surfaces, byte taxonomy, reachability, fragments.

Everything here is computed from the tokenizer alone (no model weights; see
`tokviz.analysis.embeddings` for the optional weight-based indicator). Per token:

* **surface** — the exact bytes the token stands for, from the vocab string (byte-level ``Ġ``
  strings through the GPT-2 byte alphabet, SentencePiece ``▁`` -> space and ``<0xNN>`` byte
  pieces, WordPiece ``##x`` -> ``x`` flagged as a continuation, added tokens as their literal).
  Never the decoder's output: decoders strip spaces, join ``##`` and print U+FFFD.
* **G1/G2** — surfaces that are not valid UTF-8 (strict decoding), the class of every
  one-byte surface (ascii, UTF-8 lead, continuation, never valid) and byte pieces that duplicate a
  character piece.
* **G3/G4** — reachability in isolation: is there a context of the token's family (the surface
  itself; SentencePiece/Unigram pieces after a probe stem; WordPiece ``##x`` after a letter)
  that encodes to exactly the token, and if not, the first stage that breaks it: ``A`` an added
  token is extracted, ``N`` the normalizer changes the text, ``P`` the pre-tokenizer splits it,
  ``M`` the model picks other tokens.
* **G5** — special-token lookalikes (magikarp's pattern), added or ordinary vocab entries.
* **G6** — merge-shadow fragments: BPE tokens with exactly one child within k ranks.
* **G7** — `magikarp_categories`, a reproduction of magikarp's decode->re-encode test, for
  comparison with its published reports (misleading for WordPiece: every ``##x`` "fails").

The neighbour `tokviz.analysis.embeddings` reads the optional safetensors embeddings; this module
never touches weights.

Performance notes: reachability runs the pipeline stage by stage over the public components
(``normalize_str``, ``pre_tokenize_str``, ``Model.tokenize``), about four times cheaper than
`Tokenizer.encode` per token because no Encoding is built; only tokens found unreachable are
encoded in full (so every "unreachable" verdict is the real pipeline's, and the detail card shows
what the surface encodes to). Fragment parents in rank mode try the unique two-token split first
and run the rank-limited BPE loop only when a surface has several splits. Tried and dropped: a
memo of contexts (every context of an audit is a different text) and one bulk ``pre_tokenize``
over all surfaces (no faster than one call per surface).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.byte_alphabet import is_proxy_text, proxy_to_bytes
from ..engine.cancel import CancelToken
from ..engine.tokenizer import Tokenizer

__all__ = [
    "AuditCancelled",
    "TokenAudit",
    "VocabAudit",
    "audit_vocabulary",
    "byte_class",
    "magikarp_categories",
    "superstrings",
    "STAGES",
    "PROBE_STEMS",
]

#: G4 stages in pipeline order, with the words the UI and the JSON use for them
STAGES: dict[str, str] = {
    "A": "added token extracted first",
    "N": "normalizer changes the text",
    "P": "pre-tokenizer splits it",
    "M": "model picks other tokens",
}
#: probe stems put before a SentencePiece piece without ``▁`` (magikarp's ``«`` first)
PROBE_STEMS: tuple[str, ...] = ("«", "the", "a", "x", "q", "zzz", "un", "pre", "kk", "jj")
#: magikarp's special-token pattern (G5): bracketed, three chars or more, with an ASCII letter
_LOOKALIKE = re.compile(r"[\[<].*[A-Za-z].*[\]>]", re.DOTALL)
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SPACE = "\u2581"
# how often the long loops poll the cancel token and report progress
_STEP = 4096

Progress = Callable[[str, int, int], None]


class AuditCancelled(Exception):
    """The audit was cancelled through its `CancelToken`."""


# ---------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True)
class TokenAudit:
    """Everything the audit knows about one token (categories are plain strings, see `categories`)."""

    id: int
    vocab: str  # the vocab string as stored (Ġ, ▁, ##, <0x41>)
    surface: bytes
    kind: str  # "normal", "byte" (byte piece), "special", "added", "marker" (SentencePiece's lone ▁)
    continuation: bool = False  # WordPiece ``##x``
    rank: float | None = None  # merge rank (BPE), score (Unigram / SentencePiece)
    byte_class: str | None = None  # one-byte surfaces: ascii, utf8-lead, utf8-continuation, never-valid
    partial: bool = False  # G1: a surface longer than one byte that is not valid UTF-8
    duplicate_byte: bool = False
    lookalike: bool = False
    tested: bool = False  # G3 was run (normal tokens with a valid, multi-byte or byte-free surface)
    reachable: bool | None = None
    stage: str | None = None  # G4, when unreachable
    instead: tuple[int, ...] = ()  # what the failing context encodes to (the pipeline's own ids)
    context: str | None = None  # the context text that was tried first
    parents: tuple[int, int] | None = None  # G6 canonical parent pair
    children: tuple[int, ...] = ()
    fragment_gap: int | None = None  # rank(child) - rank(t) when there is exactly one child

    @property
    def unreachable(self) -> bool:
        return self.tested and self.reachable is False

    @property
    def surface_text(self) -> str:
        """The surface as text; bytes that are not valid UTF-8 show as ``\\xNN``."""
        return self.surface.decode("utf-8", errors="backslashreplace")

    def is_fragment(self, k: int) -> bool:
        return self.fragment_gap is not None and self.fragment_gap <= k

    def categories(self, ks: Sequence[int] = (1, 64)) -> list[str]:
        """The category badges of this token, in a fixed order (empty: an ordinary reachable token)."""
        out: list[str] = []
        if self.kind in ("special", "added", "marker"):
            out.append(self.kind)
        if self.byte_class is not None and self.kind in ("normal", "byte"):
            out += ["single-byte", self.byte_class]
        if self.partial:
            out.append("partial-utf8")
        if self.duplicate_byte:
            out.append("duplicate-byte")
        if self.lookalike:
            out.append("lookalike-" + ("ordinary" if self.kind in ("normal", "byte") else "added"))
        if self.unreachable:
            out += ["unreachable", f"stage-{self.stage}"]
        out += [f"fragment-k{k}" for k in ks if self.is_fragment(k)]
        return out


@dataclass(frozen=True, slots=True)
class VocabAudit:
    """The audit of one tokenizer: one `TokenAudit` per vocabulary entry, in id order."""

    name: str
    family: str  # "byte-level", "sentencepiece", "wordpiece", "plain"
    byte_alphabet: bool  # byte taxonomy applies (byte-level or byte fallback)
    tokens: tuple[TokenAudit, ...]
    rank_kind: str | None = None  # "merge rank", "rank", "score" or None
    by_id: dict[int, TokenAudit] = field(default_factory=dict, repr=False)

    def get(self, id_: int) -> TokenAudit | None:
        return self.by_id.get(id_)

    def summary(self, *, ks: Sequence[int] = (1, 64)) -> dict[str, Any]:
        """The counts of the CLI's ``--json`` (and of the tab's header), see the issue's list."""
        sb = Counter(t.byte_class for t in self.tokens if t.byte_class is not None and t.kind in ("normal", "byte"))
        stages = Counter(t.stage for t in self.tokens if t.unreachable)
        look = Counter("ordinary" if t.kind in ("normal", "byte") else "added" for t in self.tokens if t.lookalike)
        return {
            "entries": len(self.tokens),
            "family": self.family,
            "single_byte": {
                "ascii": sb["ascii"],
                "utf8_lead": sb["utf8-lead"],
                "utf8_continuation": sb["utf8-continuation"],
                "never_valid": sb["never-valid"],
            },
            "partial_utf8": sum(t.partial for t in self.tokens),
            "duplicate_byte": sum(t.duplicate_byte for t in self.tokens),
            "unreachable": sum(stages.values()),
            "unreachable_by_stage": {s: stages[s] for s in STAGES},
            "special_lookalike": {"added": look["added"], "ordinary": look["ordinary"]},
            "fragments": {f"k{k}": sum(t.is_fragment(k) for t in self.tokens) for k in ks},
        }

    def flagged(self, *, ks: Sequence[int] = (1, 64)) -> list[dict[str, Any]]:
        """``tokens`` of the JSON: every token with at least one category."""
        out = []
        for t in self.tokens:
            cats = t.categories(ks)
            if cats:
                out.append({"id": t.id, "vocab": t.vocab, "surface_hex": t.surface.hex(), "categories": cats})
        return out


def byte_class(b: int) -> str:
    """G2 class of one byte.

    >>> [byte_class(b) for b in (0x41, 0x80, 0xC1, 0xE6, 0xFF)]
    ['ascii', 'utf8-continuation', 'never-valid', 'utf8-lead', 'never-valid']
    """
    if b < 0x80:
        return "ascii"
    if b < 0xC0:
        return "utf8-continuation"
    if b in (0xC0, 0xC1) or b >= 0xF5:
        return "never-valid"
    return "utf8-lead"


# ---------------------------------------------------------------------- surfaces
@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    byte_alphabet: bool
    byte_ids: frozenset[int]  # SentencePiece byte pieces
    control_ids: frozenset[int]  # SentencePiece control/unknown pieces (not added tokens)
    wp_prefix: str = "##"


def _family(tok: Tokenizer) -> _Family:
    model = tok.model
    kind = getattr(model, "type_name", type(model).__name__)
    vocab = model.get_vocab()
    spm = getattr(model, "spm", None)
    if kind == "WordPiece":
        return _Family("wordpiece", False, frozenset(), frozenset(), model.continuing_subword_prefix)
    if spm is not None:  # SentencePiece .model (BPE or Unigram)
        types = spm.types
        byte_ids = frozenset(i for i, t in enumerate(types) if t == 6)
        control = frozenset(i for i, t in enumerate(types) if t in (2, 3))
        return _Family("sentencepiece", bool(byte_ids), byte_ids, control)
    if kind == "Unigram":
        byte_ids = frozenset(i for s, i in vocab.items() if _BYTE_PIECE.fullmatch(s)) if model.byte_fallback else frozenset()
        return _Family("sentencepiece", bool(byte_ids), byte_ids, frozenset())
    if kind == "BPE":
        if getattr(model, "rank_mode", False) or all(map(is_proxy_text, vocab)):
            return _Family("byte-level", True, frozenset(), frozenset())
        fallback = bool(getattr(model, "byte_fallback", False))
        byte_ids = frozenset(i for s, i in vocab.items() if _BYTE_PIECE.fullmatch(s)) if fallback else frozenset()
        if fallback or sum(s.startswith(_SPACE) for s in vocab) * 10 > len(vocab):
            return _Family("sentencepiece", fallback, byte_ids, frozenset())
    return _Family("plain", False, frozenset(), frozenset())


def _surface(fam: _Family, s: str, id_: int) -> tuple[bytes, bool]:
    """(surface bytes, continuation) of a model vocab string."""
    if fam.name == "byte-level":
        return proxy_to_bytes(s, strict=False), False
    if fam.name == "sentencepiece":
        if id_ in fam.byte_ids:
            return bytes((int(s[3:5], 16),)), False
        return s.replace(_SPACE, " ").encode("utf-8"), False
    if fam.name == "wordpiece" and s.startswith(fam.wp_prefix) and len(s) > len(fam.wp_prefix):
        return s[len(fam.wp_prefix):].encode("utf-8"), True
    return s.encode("utf-8"), False


def _ranks(tok: Tokenizer, fam: _Family) -> tuple[dict[int, float], str | None]:
    model = tok.model
    if getattr(model, "rank_mode", False):
        return {i: i for i in model.get_vocab().values()}, "rank"
    scores = getattr(model, "scores", None)
    if scores is not None:
        return dict(enumerate(scores)), "score"
    merges = getattr(model, "merges", None)
    if merges:
        vocab = model.get_vocab()
        out: dict[int, float] = {}
        for r, (a, b) in enumerate(merges):
            i = vocab.get(a + b)
            if i is not None:
                out.setdefault(i, r)
        return out, "merge rank"
    return {}, None


def _entries(tok: Tokenizer, fam: _Family) -> list[tuple[int, str, str]]:
    """(id, vocab string, kind) for every entry, id order; added tokens override model entries."""
    added = {t.id: t for t in tok.added_tokens if t.content}
    rows: dict[int, tuple[int, str, str]] = {}
    for s, i in tok.model.get_vocab().items():
        if i in fam.control_ids:
            rows[i] = (i, s, "special")
        elif i in fam.byte_ids:
            rows[i] = (i, s, "byte")
        elif fam.name == "sentencepiece" and s == _SPACE:
            rows[i] = (i, s, "marker")
        else:
            rows[i] = (i, s, "normal")
    for i, t in added.items():
        rows[i] = (i, t.content, "special" if t.special else "added")
    return [rows[i] for i in sorted(rows)]


# ---------------------------------------------------------------------- G3/G4 reachability
@dataclass(frozen=True, slots=True)
class _Trial:
    ids: tuple[int, ...]
    stage: str  # the first stage that changed or split the text: A, N, P, or M (none did)


@dataclass(frozen=True, slots=True)
class _Probe:
    id: int
    surface: bytes
    continuation: bool


class _Pipeline:
    """The encode pipeline stage by stage over the public components (no special tokens added)."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self.normalize = tok.normalizer.normalize_str if tok.normalizer is not None else None
        self.pre = tok.pre_tokenizer.pre_tokenize_str if tok.pre_tokenizer is not None else None
        self.model = tok.model
        # literals the encode call extracts before normalization (tiktoken policy: none by default)
        lits = [t.content for t in tok.added_tokens if t.content]
        if tok.special_policy == "tiktoken":
            lits = [t.content for t in tok.added_tokens if t.content and not t.special]
        self.added = re.compile("|".join(map(re.escape, sorted(lits, key=len, reverse=True)))) if lits else None

    def run(self, text: str) -> _Trial:
        if self.added is not None and self.added.search(text):
            trial = _Trial(tuple(self.tok.encode(text, add_special_tokens=False).ids), "A")
        else:
            normed = self.normalize(text) if self.normalize is not None else text
            stage = "N" if normed != text and _bare(normed) != _bare(text) else "M"
            chunks = self.pre(normed) if self.pre is not None else [(normed, (0, len(normed)))]
            if len(chunks) > 1 and stage == "M":
                stage = "P"
            ids: list[int] = []
            tokenize = self.model.tokenize
            for chunk, _ in chunks:
                ids.extend(i for i, _, _ in tokenize(chunk))
            trial = _Trial(tuple(ids), stage)
        return trial

    def full(self, text: str) -> tuple[int, ...]:
        return tuple(self.tok.encode(text, add_special_tokens=False).ids)


_WS = re.compile(r"[\s\u2581]+")


def _bare(s: str) -> str:
    # Whitespace handling (SentencePiece's dummy prefix and ▁ escaping, BERT's spaces around CJK)
    # is not counted as "the normalizer changed the text": what it does shows in the next stage.
    return _WS.sub("", s)


def _contexts(
    fam: _Family, t: _Probe, text: str, tok: Tokenizer
) -> Iterable[tuple[str, Callable[[tuple[int, ...]], bool] | None]]:
    """(context text, acceptance test or None for "exactly [t]") per G3, most natural first."""
    if fam.name == "sentencepiece":
        if text.startswith(" "):
            yield text[1:], None
        else:
            for stem in PROBE_STEMS:
                yield stem + text, _stem_check(stem, t.id, tok.decode)
    elif fam.name == "wordpiece" and t.continuation:
        for u in "abcdefghijklmnopqrstuvwxyz":
            uid = tok.token_to_id(u)
            if uid is not None:
                yield u + text, (lambda ids, uid=uid: ids == (uid, t.id))
    else:
        yield text, None


def _stem_check(stem: str, id_: int, decode: Callable[[list[int]], str]) -> Callable[[tuple[int, ...]], bool]:
    # accept "stem tokens + t" when the stem tokens decode back to the stem (decoders may add or
    # strip the dummy-prefix space)
    return lambda ids: len(ids) >= 2 and ids[-1] == id_ and decode(list(ids[:-1])).strip() == stem


def _reach(pipe: _Pipeline, fam: _Family, t: _Probe) -> dict[str, Any]:
    text = t.surface.decode("utf-8")
    first: tuple[str, _Trial] | None = None
    for ctx, accept in _contexts(fam, t, text, pipe.tok):
        trial = pipe.run(ctx)
        if (trial.ids == (t.id,)) if accept is None else accept(trial.ids):
            return {"tested": True, "reachable": True, "context": ctx}
        if first is None:
            first = (ctx, trial)
    if first is None:  # no context at all (a WordPiece continuation without letters)
        return {"tested": True, "reachable": False, "stage": "M", "context": None}
    ctx, trial = first
    ids = pipe.full(ctx)  # the verdict is the real pipeline's
    if ids == (t.id,):
        return {"tested": True, "reachable": True, "context": ctx}
    return {"tested": True, "reachable": False, "stage": trial.stage, "instead": ids, "context": ctx}


# ---------------------------------------------------------------------- G6 fragments
def _parents_merges(tok: Tokenizer) -> dict[int, tuple[int, int]]:
    vocab = tok.model.get_vocab()
    out: dict[int, tuple[int, int]] = {}
    for a, b in tok.model.merges:
        i = vocab.get(a + b)
        if i is not None and i not in out:
            out[i] = (vocab[a], vocab[b])
    return out


def _parents_ranks(vocab: dict[str, int], cancel: CancelToken | None, progress: Progress | None) -> dict[int, tuple[int, int]]:
    """Canonical parent pairs of a rank table: BPE of the token with ranks below its own (2 parts)."""
    out: dict[int, tuple[int, int]] = {}
    get = vocab.get
    big = 1 << 62
    for n, (s, r) in enumerate(vocab.items()):
        if n % _STEP == 0:
            _poll(cancel, progress, "fragments", n, len(vocab))
        if len(s) < 2:
            continue
        splits = [k for k in range(1, len(s)) if get(s[:k], big) < r and get(s[k:], big) < r]
        if len(splits) == 1:
            k = splits[0]
        elif splits:
            parts = _bpe_limited(s, r, vocab)
            if len(parts) != 2:
                continue
            k = len(parts[0])
        else:
            continue
        out[r] = (vocab[s[:k]], vocab[s[k:]])
    return out


def _bpe_limited(s: str, limit: int, vocab: dict[str, int]) -> list[str]:
    # tiktoken's rule: merge the adjacent pair of lowest rank, leftmost on ties, ranks < limit;
    # after a merge only the two pair ranks around it change
    parts = list(s)
    big = 1 << 62
    get = vocab.get
    ranks = [get(parts[i] + parts[i + 1], big) for i in range(len(parts) - 1)]
    while ranks:
        best = min(ranks)
        if best >= limit:
            break
        i = ranks.index(best)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        del ranks[i]
        if i > 0:
            ranks[i - 1] = get(parts[i - 1] + parts[i], big)
        if i < len(ranks):
            ranks[i] = get(parts[i] + parts[i + 1], big)
    return parts


def _fragment_fields(parents: dict[int, tuple[int, int]], ranks: dict[int, float]) -> dict[int, dict[str, Any]]:
    # uses[t]: the parent slots t fills; a self-pair child (t, t) uses t twice, so t is not "a step
    # to one longer token" (r50k: ÃÂ -> ÃÂÃÂ); this is the count behind the spec's F_64 = 34 for r50k
    uses: dict[int, list[int]] = {}
    for child, (a, b) in parents.items():
        uses.setdefault(a, []).append(child)
        uses.setdefault(b, []).append(child)
    out: dict[int, dict[str, Any]] = {}
    for i in set(parents) | set(uses):
        used = uses.get(i, ())
        ch = tuple(sorted(set(used)))
        gap = None
        if len(used) == 1 and i in ranks and ch[0] in ranks:
            gap = int(ranks[ch[0]] - ranks[i])
        out[i] = {"parents": parents.get(i), "children": ch, "fragment_gap": gap}
    return out


# ---------------------------------------------------------------------- the audit
def _poll(cancel: CancelToken | None, progress: Progress | None, phase: str, done: int, total: int) -> None:
    if cancel is not None and cancel.cancelled:
        raise AuditCancelled("audit cancelled")
    if progress is not None:
        progress(phase, done, total)


def audit_vocabulary(
    tok: Tokenizer, *, progress: Progress | None = None, cancel: CancelToken | None = None
) -> VocabAudit:
    """Audit every entry of ``tok`` (G1–G6). ``progress(phase, done, total)`` is called between
    blocks; a cancelled ``cancel`` raises `AuditCancelled`.

    >>> import tokviz  # doctest: +SKIP
    >>> audit_vocabulary(tokviz.load("o200k_base.tiktoken")).summary()["unreachable"]  # doctest: +SKIP
    12
    """
    fam = _family(tok)
    ranks, rank_kind = _ranks(tok, fam)
    entries = _entries(tok, fam)
    base: list[dict[str, Any]] = []
    surfaces: dict[bytes, list[int]] = {}
    for id_, s, kind in entries:
        surface, cont = _surface(fam, s, id_) if kind in ("normal", "byte", "marker") else (s.encode("utf-8"), False)
        rec: dict[str, Any] = {"id": id_, "vocab": s, "surface": surface, "kind": kind, "continuation": cont,
                               "rank": ranks.get(id_)}
        if kind in ("normal", "byte") and fam.byte_alphabet and len(surface) == 1:
            rec["byte_class"] = byte_class(surface[0])
        if kind == "normal" and len(surface) > 1 and not _valid_utf8(surface):
            rec["partial"] = True
        if len(s) >= 3 and s[0] in "[<" and _LOOKALIKE.fullmatch(s) and not s.startswith("<0x"):
            rec["lookalike"] = True
        if not cont:
            surfaces.setdefault(surface, []).append(id_)
        base.append(rec)
    for rec in base:
        if rec["kind"] == "byte" and any(j != rec["id"] for j in surfaces.get(rec["surface"], ())):
            rec["duplicate_byte"] = True

    _reachability(tok, fam, base, progress, cancel)
    _fragments(tok, fam, base, ranks, progress, cancel)
    tokens = tuple(TokenAudit(**rec) for rec in base)
    _poll(cancel, progress, "done", len(tokens), len(tokens))
    return VocabAudit(tok.name, fam.name, fam.byte_alphabet, tokens, rank_kind, {t.id: t for t in tokens})


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _testable(rec: dict[str, Any]) -> bool:
    return (
        rec["kind"] == "normal"
        and "byte_class" not in rec
        and not rec.get("partial")
        and not rec.get("lookalike")
        and bool(rec["surface"])
    )


def _reachability(tok: Tokenizer, fam: _Family, base: list[dict[str, Any]], progress: Progress | None,
                  cancel: CancelToken | None) -> None:
    pipe = _Pipeline(tok)
    todo = [rec for rec in base if _testable(rec)]
    # the common case first: one context (the surface itself) that must give exactly [t]
    single = fam.name in ("byte-level", "plain") or fam.name == "wordpiece"
    run = pipe.run
    for n, rec in enumerate(todo):
        if n % _STEP == 0:
            _poll(cancel, progress, "reachability", n, len(todo))
        if single and not rec["continuation"]:
            text = rec["surface"].decode("utf-8")
            if run(text).ids == (rec["id"],):
                rec.update(tested=True, reachable=True, context=text)
                continue
        rec.update(_reach(pipe, fam, _Probe(rec["id"], rec["surface"], rec["continuation"])))


def _fragments(tok: Tokenizer, fam: _Family, base: list[dict[str, Any]], ranks: dict[int, float],
               progress: Progress | None, cancel: CancelToken | None) -> None:
    model = tok.model
    if getattr(model, "type_name", "") != "BPE":
        return
    _poll(cancel, progress, "fragments", 0, len(base))
    if model.rank_mode:
        parents = _parents_ranks(model.get_vocab(), cancel, progress)
    else:
        parents = _parents_merges(tok)
    fields = _fragment_fields(parents, ranks)
    for rec in base:
        f = fields.get(rec["id"])
        if f is not None and rec["kind"] in ("normal", "byte"):
            rec.update(f)


def superstrings(audit: VocabAudit, id_: int, *, limit: int = 200) -> list[int]:
    """Ids of other entries whose surface contains this token's surface (magikarp's ``in_other_tokens``)."""
    t = audit.get(id_)
    if t is None or not t.surface:
        return []
    needle = t.surface
    out = []
    for u in audit.tokens:
        if u.id != id_ and needle in u.surface:
            out.append(u.id)
            if len(out) >= limit:
                break
    return out


# ---------------------------------------------------------------------- G7 magikarp
_SPACE_CHARS = " \u2581_\u0120"
_PREFIXES = ("«", "»")


def magikarp_categories(
    tok: Tokenizer, *, progress: Progress | None = None, cancel: CancelToken | None = None
) -> dict[int, str]:
    """magikarp's ``categorize_token`` over the whole vocabulary, on the decoder's output.

    Reproduces cohere-ai/magikarp: decode the token (after a ``«`` prefix token when the
    tokenizer adds a leading space), re-encode the decoded string (added tokens extracted, as
    transformers does), and call it OK when that gives the token back; else UNREACHABLE_SPECIAL
    for bracketed strings, UNDECODEABLE when the decoded string holds U+FFFD, else
    UNREACHABLE_SINGLE_TOKEN / UNREACHABLE_MULTI_TOKEN. Misleading for WordPiece (``##x``
    decodes to ``##x`` and re-encodes as ``#``, ``#``, ``x``) and for tokens that legitimately
    contain U+FFFD; the default audit uses surfaces instead.
    """

    def enc(s: str) -> list[int]:
        return tok.encode(s, add_special_tokens=False, allowed_special="all").ids

    vocab = tok.get_vocab()
    first = enc("test")
    space_mode = bool(first) and (tok.id_to_token(first[0]) or "x")[0] in _SPACE_CHARS
    prefix_ids: list[int] = []
    if space_mode:
        for p in _PREFIXES:
            ids = enc(p)
            if len(ids) != 1:
                raise ValueError(f"magikarp mode: the prefix {p!r} is not one token ({ids})")
            prefix_ids.append(ids[0])
    special = {t.id for t in tok.added_tokens if t.special}
    out: dict[int, str] = {}
    items = sorted(vocab.values())
    for n, i in enumerate(items):
        if n % _STEP == 0:
            _poll(cancel, progress, "magikarp", n, len(items))
        s = _mk_decode(tok, i, prefix_ids) if space_mode else tok.decode([i])
        toks = _mk_encode(enc, s, prefix_ids) if space_mode else enc(s)
        if toks == [i]:
            cat = "OK_SPECIAL" if i in special else "OK"
        elif len(s) >= 3 and s[0] in "[<" and s[-1] in "]>" and any(c.isalpha() for c in s):
            cat = "UNREACHABLE_SPECIAL"
        elif "\ufffd" in s:
            cat = "UNDECODEABLE"
        elif len(toks) == 1:
            cat = "UNREACHABLE_SINGLE_TOKEN"
        else:
            cat = "UNREACHABLE_MULTI_TOKEN"
        out[i] = cat
    return out


def _mk_decode(tok: Tokenizer, i: int, prefix_ids: list[int]) -> str:
    # magikarp's clean_decode: prepend the prefix tokens one after another until the decoded
    # text starts with the prefix (after dropping one leading space)
    ids = [i]
    decoded = ""
    for pid, p in zip(prefix_ids, _PREFIXES):
        ids = [pid, *ids]
        decoded = tok.decode(ids)
        if decoded[:1] == " ":
            decoded = decoded[1:]
        if decoded.startswith(p):
            return decoded[1:]
    raise ValueError(f"magikarp mode: the decoded {decoded!r} does not start with a prefix")


def _mk_encode(enc: Callable[[str], list[int]], s: str, prefix_ids: list[int]) -> list[int]:
    toks: list[int] = []
    for pid, p in zip(prefix_ids, _PREFIXES):
        s = p + s
        toks = enc(s)
        if toks and toks[0] == pid:
            return toks[1:]
    raise ValueError(f"magikarp mode: no prefix stayed a token of its own for {s!r}")
