"""Glitch-token audit of a vocabulary: surfaces, byte taxonomy, reachability, fragments.

Everything here is computed from the tokenizer alone (no model weights; see
`tokviz.analysis.embeddings` for the optional weight-based indicator), over the facts every
analysis shares (`tokviz.analysis.facts`). Per token:

* **surface** — `TokenizerFacts.surface`: the exact bytes the token stands for. Never the
  decoder's output: decoders strip spaces, join ``##`` and print U+FFFD.
* **G1/G2** — surfaces that are not valid UTF-8 (strict decoding), the class of every
  one-byte surface (ascii, UTF-8 lead, continuation, never valid) and byte pieces that duplicate a
  character piece.
* **G3/G4** — reachability in isolation: is there a context of the token's family (the surface
  itself; metaspace pieces at text start or after a probe stem; ``##x`` after a letter) that
  encodes to exactly the token, and if not, the first stage that breaks it (from
  `Tokenizer.stages`): ``A`` an added token is extracted, ``N`` the normalizer changes the text,
  ``P`` the pre-tokenizer splits it, ``M`` the model picks other tokens.
* **G5** — special-token lookalikes (magikarp's pattern), added or ordinary vocab entries.
* **G6** — merge-shadow fragments: BPE tokens with exactly one child ``0 <= gap <= k`` merge
  ranks later, from each token's canonical merge (`TokenizerFacts.merges`), so a rank file, its
  HF conversion and a SentencePiece ``.model`` give the same fragments for the same vocabulary.
* **G7** — `magikarp_categories`, a reproduction of magikarp's decode->re-encode test, for
  comparison with its published reports (misleading for WordPiece: every ``##x`` "fails").

Categories do not exclude each other: an ordinary ``<s>`` of a rank file is a lookalike *and*
unreachable, a Mistral ``<0x41>`` a duplicate byte *and* unreachable; `VocabAudit.summary` counts
each category over every token and lists the overlaps.

The neighbour `tokviz.analysis.embeddings` reads the optional safetensors embeddings; this module
never touches weights.

Performance notes: every reachability verdict is one `Tokenizer.encode_ids` of a short context
(the real pipeline and chunk cache, without the offsets and stages an `Encoding` would build);
stage attribution runs `Tokenizer.stages` for the unreachable ones only. Contexts are not
memoized: every context of an audit is a different text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ..engine.cancel import CancelToken, ProgressFn, checkpoint
from ..engine.models.bpe import BPE
from ..engine.models.sentencepiece_bpe import SentencePieceBPE
from ..engine.models.unigram import Unigram
from ..engine.tokenizer import Tokenizer
from .facts import TokenizerFacts

__all__ = [
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
# how often the long loops poll the cancel token and report progress
_STEP = 4096

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
    fragment_gap: int | None = None  # merge rank(child) - merge rank(t) when there is exactly one child

    @property
    def unreachable(self) -> bool:
        return self.tested and self.reachable is False

    @property
    def surface_text(self) -> str:
        """The surface as text; bytes that are not valid UTF-8 show as ``\\xNN``."""
        return self.surface.decode("utf-8", errors="backslashreplace")

    def is_fragment(self, k: int) -> bool:
        """G6: exactly one child, learned ``0 <= gap <= k`` merges after this token."""
        return self.fragment_gap is not None and 0 <= self.fragment_gap <= k

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
    family: str  # `TokenizerFacts.family`: byte-level, rank-file, metaspace, wordpiece, char
    byte_alphabet: bool  # byte taxonomy applies (byte-level or byte fallback)
    tokens: tuple[TokenAudit, ...]
    rank_kind: str | None = None  # "merge rank", "rank", "score" or None
    by_id: dict[int, TokenAudit] = field(default_factory=dict, repr=False)

    def get(self, id_: int) -> TokenAudit | None:
        return self.by_id.get(id_)

    @property
    def byte_level(self) -> bool:
        """Vocabulary strings are GPT-2 byte proxies (a byte-level pipeline or a rank file)."""
        return self.family in ("byte-level", "rank-file")

    def overlaps(self, *, ks: Sequence[int] = (1, 64)) -> dict[str, int]:
        """How many tokens are in two headline categories at once, ``"a & b"`` -> count (non-zero
        pairs only): categories do not exclude each other."""
        pairs: Counter[str] = Counter()
        for t in self.tokens:
            heads = _headline(t, ks)
            if len(heads) > 1:
                pairs.update(f"{a} & {b}" for a, b in combinations(heads, 2))
        return dict(sorted(pairs.items()))

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
            "overlaps": self.overlaps(ks=ks),
        }

    def flagged(self, *, ks: Sequence[int] = (1, 64)) -> list[dict[str, Any]]:
        """``tokens`` of the JSON: every token with at least one category."""
        out = []
        for t in self.tokens:
            cats = t.categories(ks)
            if cats:
                out.append({"id": t.id, "vocab": t.vocab, "surface_hex": t.surface.hex(), "categories": cats})
        return out


def _headline(t: TokenAudit, ks: Sequence[int]) -> list[str]:
    """The summary's categories of one token, in the summary's order."""
    out = []
    if t.kind in ("special", "added"):
        out.append(t.kind)
    if t.byte_class is not None and t.kind in ("normal", "byte"):
        out.append("single-byte")
    if t.partial:
        out.append("partial-utf8")
    if t.duplicate_byte:
        out.append("duplicate-byte")
    if t.lookalike:
        out.append("lookalike")
    if t.unreachable:
        out.append("unreachable")
    out += [f"fragment-k{k}" for k in ks if t.is_fragment(k)]
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


# ---------------------------------------------------------------------- entries
def _kind(facts: TokenizerFacts, id_: int) -> str:
    """special, added, byte (a byte piece), marker (the lone replacement piece ``▁``) or normal."""
    if id_ in facts.added_ids:
        return "special" if id_ in facts.special_ids else "added"
    if not facts.is_ordinary(id_):
        return "special"  # a SentencePiece control, unknown or unused piece, or the unk token
    if id_ in facts.byte_piece_ids:
        return "byte"
    if facts.replacement is not None and facts.token(id_) == facts.replacement:
        return "marker"
    return "normal"


def _rank_of(tok: Tokenizer, facts: TokenizerFacts) -> tuple[dict[int, float], str | None]:
    """The rank column: a rank file's rank (the id), a model's piece score, or the merge rank."""
    model = tok.model
    if isinstance(model, BPE) and model.rank_mode:
        return {i: i for i in facts.model_ids()}, "rank"
    if isinstance(model, (Unigram, SentencePieceBPE)):
        return dict(enumerate(model.scores)), "score"
    merges = facts.merges
    if merges is not None:
        return {i: r for i, r in merges.rank.items()}, "merge rank"
    return {}, None


def _record(facts: TokenizerFacts, id_: int, rank: float | None) -> dict[str, Any]:
    """G1, G2, G5 of one entry (as keyword arguments of `TokenAudit`)."""
    kind = _kind(facts, id_)
    s = facts.token(id_)
    surface = facts.surface(id_)
    rec: dict[str, Any] = {"id": id_, "vocab": s, "surface": surface, "kind": kind,
                           "continuation": facts.is_continuation(id_), "rank": rank}
    if kind in ("normal", "byte") and len(surface) == 1 and (facts.byte_level or facts.byte_piece_ids):
        rec["byte_class"] = byte_class(surface[0])
    if kind == "normal" and len(surface) > 1 and not _valid_utf8(surface):
        rec["partial"] = True
    if len(s) >= 3 and s[0] in "[<" and _LOOKALIKE.fullmatch(s) and not s.startswith("<0x"):
        rec["lookalike"] = True
    return rec


# ---------------------------------------------------------------------- G3/G4 reachability
def _stage(tok: Tokenizer, text: str, replacement: str | None) -> str:
    """G4 from the engine's own steps 1-2 (`Tokenizer.stages`): the first stage that changed or
    split ``text`` (A, N, P), else M (one chunk, the model picked other tokens)."""
    st = tok.stages(text)
    if any(seg.added_id is not None for seg in st.segments):
        return "A"
    normed = st.normalized.text
    if normed != text and _bare(normed, replacement) != _bare(text, replacement):
        return "N"
    return "P" if len(st.pre_tokens) > 1 else "M"


_WS = re.compile(r"\s+")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _bare(s: str, replacement: str | None) -> str:
    # Whitespace handling (SentencePiece's dummy prefix and ▁ escaping, BERT's spaces around CJK)
    # is not counted as "the normalizer changed the text": what it does shows in the next stage.
    if replacement:
        s = s.replace(replacement, " ")
    return _WS.sub("", s)


Accept = Callable[[tuple[int, ...]], bool]


def _contexts(tok: Tokenizer, facts: TokenizerFacts, rec: dict[str, Any]) -> Iterator[tuple[str, Accept]]:
    """(context text, acceptance test) per G3, most natural first."""
    id_ = rec["id"]
    text = rec["surface"].decode("utf-8")

    def exactly(ids: tuple[int, ...]) -> bool:
        return ids == (id_,)

    if rec["continuation"]:  # ##x: after a letter, accept [letter, t]
        for u in _LETTERS:
            uid = tok.token_to_id(u)
            if uid is not None:
                yield u + text, (lambda ids, uid=uid: ids == (uid, id_))
    elif facts.end_of_word_suffix and not facts.token(id_).endswith(facts.end_of_word_suffix):
        # a word-inner piece of a BPE with an end-of-word suffix: before a letter, accept it first
        for u in _LETTERS:
            yield text + u, (lambda ids: ids[:1] == (id_,))
    elif facts.family == "metaspace":
        if text.startswith(" "):  # ▁w: w at text start (dummy prefix), else " w"
            yield text[1:], exactly
            yield text, exactly
        else:  # w: after a probe stem whose tokens decode back to it
            for stem in PROBE_STEMS:
                yield stem + text, _stem_check(stem, id_, tok.decode)
            yield text, exactly
    else:
        yield text, exactly


def _stem_check(stem: str, id_: int, decode: Callable[[list[int]], str]) -> Accept:
    # accept "stem tokens + t" when the stem tokens decode back to the stem (decoders may add or
    # strip the dummy-prefix space)
    return lambda ids: len(ids) >= 2 and ids[-1] == id_ and decode(list(ids[:-1])).strip() == stem


def _reach(tok: Tokenizer, facts: TokenizerFacts, rec: dict[str, Any]) -> dict[str, Any]:
    """G3 through the real pipeline (`Tokenizer.encode_ids`: no special tokens added), G4 when no
    context gives the token."""
    first: tuple[str, tuple[int, ...]] | None = None
    for ctx, accept in _contexts(tok, facts, rec):
        ids = tuple(tok.encode_ids(ctx))
        if accept(ids):
            return {"tested": True, "reachable": True, "context": ctx}
        if first is None:
            first = (ctx, ids)
    if first is None:  # no context at all (a continuation without letters in the vocabulary)
        return {"tested": True, "reachable": False, "stage": "M", "context": None}
    ctx, ids = first
    return {"tested": True, "reachable": False, "stage": _stage(tok, ctx, facts.replacement), "instead": ids,
            "context": ctx}


def _testable(rec: dict[str, Any]) -> bool:
    """G3 applies to every entry text can spell: ordinary tokens (lookalikes and byte pieces
    included) whose surface is non-empty valid UTF-8. Not the lone ``▁`` marker: it stands for a
    space only next to text it does not merge with (``中 中``), which no context of its own shows."""
    return rec["kind"] in ("normal", "byte") and bool(rec["surface"]) and _valid_utf8(rec["surface"])


def _reachability(tok: Tokenizer, facts: TokenizerFacts, base: list[dict[str, Any]],
                  progress: ProgressFn | None, cancel: CancelToken | None) -> None:
    todo = [rec for rec in base if _testable(rec)]
    for n, rec in enumerate(todo):
        if n % _STEP == 0:
            checkpoint("reachability", n, len(todo), progress=progress, cancel=cancel)
        rec.update(_reach(tok, facts, rec))


# ---------------------------------------------------------------------- G6 fragments
def _fragments(facts: TokenizerFacts, base: list[dict[str, Any]], progress: ProgressFn | None,
               cancel: CancelToken | None) -> None:
    """Canonical parents, children and the fragment gap (`TokenizerFacts.merges`). A self-pair
    child (t, t) uses t twice, so t is not "a step to one longer token" (r50k: ÃÂ -> ÃÂÃÂ);
    the gap is counted in merge ranks (tokens), the same for a rank file and its tokenizer.json."""
    checkpoint("fragments", 0, len(base), progress=progress, cancel=cancel)
    merges = facts.merges
    if merges is None:
        return
    merges.canonical(progress=progress, cancel=cancel)
    uses = merges.children()
    rank = merges.rank
    for rec in base:
        i = rec["id"]
        if rec["kind"] not in ("normal", "byte", "marker"):
            continue
        used = uses.get(i, ())
        gap = None
        if len(used) == 1 and i in rank and used[0] in rank:
            gap = rank[used[0]] - rank[i]
        rec.update(parents=merges.parents.get(i), children=tuple(sorted(set(used))), fragment_gap=gap)
    checkpoint("fragments", len(base), len(base), progress=progress, cancel=cancel)


# ---------------------------------------------------------------------- the audit
def audit_vocabulary(
    tok: Tokenizer, *, progress: ProgressFn | None = None, cancel: CancelToken | None = None
) -> VocabAudit:
    """Audit every entry of ``tok`` (G1–G6). ``progress(stage, done, total)`` is called between
    blocks; a set ``cancel`` raises `Cancelled`. The audit holds no reference to ``tok``.

    >>> import tokviz  # doctest: +SKIP
    >>> audit_vocabulary(tokviz.load("o200k_base.tiktoken")).summary()["unreachable"]  # doctest: +SKIP
    12
    """
    facts = TokenizerFacts.of(tok)
    ranks, rank_kind = _rank_of(tok, facts)
    ids = facts.ids()
    base: list[dict[str, Any]] = []
    surfaces: dict[bytes, list[int]] = {}
    for n, id_ in enumerate(ids):
        if n % _STEP == 0:
            checkpoint("surfaces", n, len(ids), progress=progress, cancel=cancel)
        rec = _record(facts, id_, ranks.get(id_))
        if not rec["continuation"] and rec["kind"] in ("normal", "byte", "marker"):
            surfaces.setdefault(rec["surface"], []).append(id_)
        base.append(rec)
    for rec in base:
        if rec["kind"] == "byte" and any(j != rec["id"] for j in surfaces.get(rec["surface"], ())):
            rec["duplicate_byte"] = True
    _reachability(tok, facts, base, progress, cancel)
    _fragments(facts, base, progress, cancel)
    tokens = tuple(TokenAudit(**rec) for rec in base)
    checkpoint("done", len(tokens), len(tokens), progress=progress, cancel=cancel)
    return VocabAudit(tok.name, facts.family, facts.byte_level or bool(facts.byte_piece_ids), tokens, rank_kind,
                      {t.id: t for t in tokens})


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
    tok: Tokenizer, *, progress: ProgressFn | None = None, cancel: CancelToken | None = None
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
        return tok.encode_ids(s, allowed_special="all")

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
            checkpoint("magikarp", n, len(items), progress=progress, cancel=cancel)
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
