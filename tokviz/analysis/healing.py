"""Prefix instability and token healing at a caret: which tokens of a prompt are final.

For a prompt P (the text up to the caret) the tokens of ``encode(P)`` split into a *stable
prefix* S, which every continuation of P keeps, and an *unstable suffix* U (bytes), which a
continuation may re-tokenize. Two rules:

* regex byte-level BPE (tiktoken and HF ByteLevel pipelines): tiktoken's own rule
  (``encode_with_unstable``): U is the last regex piece, extended back over all-whitespace
  tokens when it starts with one; the completions are tiktoken's set (every token starting
  with U, every re-encode of ``U[:i] + token`` for a token starting with ``U[i:]``, and the split
  before a final whitespace character);
* SentencePiece / Unigram / WordPiece: U is the last whitespace-delimited word (from the last
  token that starts with a space or is word-initial) plus the whitespace tokens after it; this
  rule is checked by probes (``encode(P + x)`` must start with S for every probe x) and shown as
  "verified" or not.

Healing previews follow llama.cpp's modes: ``1`` rolls back one token and lists the tokens that
extend its bytes; ``d1`` rolls back the most tokens for which some single token still covers
the removed bytes. Unlike `tokviz.analysis.specials` this module looks at one position, not at
literals in the whole text.

Performance notes: the sorted surface table (all vocabulary bytes) is built once per tokenizer
and kept in a weak map; lookups are bisections in it. The completion search re-encodes one short
string per candidate token (tiktoken does the same); probes encode only a window of the prompt
that starts at a stable token boundary, not the whole prompt.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from weakref import WeakKeyDictionary

from ..engine.byte_alphabet import bytes_to_proxy
from ..engine.tokenizer import Tokenizer
from .chat import encode_as_text
from .facts import TokenizerFacts

__all__ = ["Healing", "HealPreview", "SurfaceIndex", "analyze_caret", "format_healing", "surface_index", "unstable_split"]

#: most tokens listed per candidate list (counts are always complete)
LIST_LIMIT = 200
_PROBES = ("", " ", "\n", "a", "A", "1", ".", "é", "中")
_WINDOW_CHARS = 256  # the probe window starts at a token boundary at most this far back


# ---------------------------------------------------------------------------- surfaces
class SurfaceIndex:
    """Every ordinary model token's exact bytes (`TokenizerFacts.surface`), and the tokens sorted by
    them (for prefix searches). Added, control and unknown tokens are not in it.

    ``family`` is the rule this module applies: ``byte_level`` (byte-level pipelines and rank
    files), ``wordpiece`` (``##`` continuations), ``sentencepiece`` (every other family).
    """

    def __init__(self, tok: Tokenizer) -> None:
        facts = TokenizerFacts.of(tok)
        self.family: Literal["byte_level", "sentencepiece", "wordpiece"] = (
            "byte_level" if facts.byte_level else "wordpiece" if facts.family == "wordpiece" else "sentencepiece"
        )
        self.surface: dict[int, bytes] = {i: facts.surface(i) for i in facts.ordinary_ids()}
        self.continuation: set[int] = {i for i in self.surface if facts.is_continuation(i)}
        pairs = sorted((s, i) for i, s in self.surface.items() if s)
        self._sorted = [s for s, _ in pairs]
        self._ids = [i for _, i in pairs]
        ordered = sorted(self.surface)
        self.sample_ids = ordered[:: max(1, len(ordered) // 200)]  # ~200 probes spread over the ids

    def starting_with(self, prefix: bytes) -> list[int]:
        """Ids of the tokens whose bytes start with ``prefix`` (in byte order)."""
        lo = bisect_left(self._sorted, prefix)
        hi = lo
        n = len(self._sorted)
        while hi < n and self._sorted[hi].startswith(prefix):
            hi += 1
        return self._ids[lo:hi]

    def prefixes_of(self, data: bytes) -> list[int]:
        """Ids of the non-empty tokens whose bytes are a prefix of ``data`` (shortest first)."""
        out = []
        for k in range(1, len(data) + 1):
            lo = bisect_left(self._sorted, data[:k])
            while lo < len(self._sorted) and self._sorted[lo] == data[:k]:
                out.append(self._ids[lo])
                lo += 1
        return out


_INDEX: WeakKeyDictionary[Tokenizer, SurfaceIndex] = WeakKeyDictionary()


def surface_index(tok: Tokenizer) -> SurfaceIndex:
    """The `SurfaceIndex` of ``tok`` (built once per tokenizer object)."""
    index = _INDEX.get(tok)
    if index is None:
        index = _INDEX[tok] = SurfaceIndex(tok)
    return index


def _token_bytes(tok: Tokenizer, index: SurfaceIndex, id_: int) -> bytes:
    surf = index.surface.get(id_)
    if surf is not None:
        return surf
    return TokenizerFacts.of(tok).surface(id_)  # an added, control or unknown token: its literal


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class HealPreview:
    """Roll back ``k`` tokens: the removed bytes and the tokens that start with them."""

    mode: str
    k: int
    removed: bytes
    kept: tuple[int, ...]
    candidates: tuple[int, ...]  # first `LIST_LIMIT`, in byte order
    candidate_count: int

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "k": self.k, "removed_hex": self.removed.hex(), "kept": list(self.kept),
                "candidates": list(self.candidates), "candidate_count": self.candidate_count}


@dataclass(frozen=True, slots=True)
class Healing:
    """The analysis at one caret position (see the module docstring)."""

    ids: tuple[int, ...]
    stable: tuple[int, ...]
    unstable: bytes
    rule: Literal["tiktoken", "word"]
    completions: frozenset[tuple[int, ...]]
    single_token_completions: tuple[int, ...]  # sorted ids
    prefix_pieces: tuple[int, ...]
    verified: bool | None  # the word rule checked by probes; None for the tiktoken rule
    rollback_one: HealPreview | None
    rollback_covering: HealPreview | None
    warnings: tuple[str, ...] = field(default=())
    #: always False: the prompt is encoded without the post-processor's tokens (no BOS), as a
    #: continuation is; ``ids`` and ``stable`` number the prompt's own tokens
    special_tokens_added: bool = False

    def completion_examples(self, n: int = 20) -> list[tuple[int, ...]]:
        """The first ``n`` completions, shortest first, then by ids (ranks for tiktoken files)."""
        return sorted(self.completions, key=lambda c: (len(c), c))[:n]

    def to_json(self) -> dict[str, Any]:
        return {
            "special_tokens_added": self.special_tokens_added,
            "ids": list(self.ids),
            "stable": list(self.stable),
            "unstable_hex": self.unstable.hex(),
            "rule": self.rule,
            "completions": len(self.completions),
            "completion_examples": [list(c) for c in self.completion_examples()],
            "single_token_completions": list(self.single_token_completions),
            "prefix_pieces": list(self.prefix_pieces),
            "verified": self.verified,
            "healing": {
                "rollback_one": self.rollback_one.to_json() if self.rollback_one else None,
                "rollback_covering": self.rollback_covering.to_json() if self.rollback_covering else None,
            },
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------------------- the split
def _is_all_space(data: bytes) -> bool:
    # tiktoken's test: every byte is a space, a newline or a tab
    return bool(data) and all(b in b" \n\t" for b in data)


def unstable_split(tok: Tokenizer, enc: Any, index: SurfaceIndex) -> tuple[int, Literal["tiktoken", "word"]]:
    """How many trailing tokens of ``enc`` form the unstable suffix, and by which rule."""
    ids = list(enc.ids)
    if not ids or enc.special_tokens_mask[-1] or tok.is_special_id(ids[-1]) or ids[-1] not in index.surface:
        return 0, "tiktoken" if index.family == "byte_level" else "word"  # ends with an added token
    if index.family == "byte_level":
        last_word = enc.word_ids[-1]
        n = 0
        while n < len(ids) and enc.word_ids[-1 - n] == last_word:
            n += 1
        # tiktoken's fix for unstable splits of \s*[\r\n]+: a block that starts with an
        # all-whitespace token grows back over the all-whitespace tokens before it
        if _is_all_space(_token_bytes(tok, index, ids[-n])):
            while n < len(ids) and _is_all_space(_token_bytes(tok, index, ids[-n - 1])):
                n += 1
        return n, "tiktoken"
    n = 0
    while n < len(ids) and _token_bytes(tok, index, ids[-1 - n]).isspace():
        n += 1  # trailing whitespace tokens
    while n < len(ids):
        id_ = ids[-1 - n]
        n += 1
        surf = _token_bytes(tok, index, id_)
        if index.family == "wordpiece":
            if id_ not in index.continuation:
                break
        elif surf.startswith(b" ") or id_ not in index.surface:
            break
    return n, "word"


# ---------------------------------------------------------------------------- completions
def _raw_bpe(tok: Tokenizer, data: bytes) -> list[int]:
    """tiktoken's ``byte_pair_encode``: the model on the bytes, no regex split. (tokviz's rank
    BPE returns a piece that is itself a token whole, where tiktoken would merge pair by pair;
    the two agree for every token reachable by merges.)"""
    if not data:
        return []
    return [t[0] for t in tok.model.tokenize(bytes_to_proxy(data))]


def _encode_bytes(tok: Tokenizer, data: bytes) -> list[int]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _raw_bpe(tok, data)
    return encode_as_text(tok, text)


def tiktoken_completions(tok: Tokenizer, unstable: bytes, index: SurfaceIndex) -> set[tuple[int, ...]]:
    """tiktoken's completion set for ``unstable`` (see the module docstring)."""
    out: set[tuple[int, ...]] = set()
    if not unstable:
        return out
    out.update((i,) for i in index.starting_with(unstable))
    for i in range(1, len(unstable)):
        head, tail = unstable[:i], unstable[i:]
        for id_ in index.starting_with(tail):
            seq: list[int] = []
            covered = 0
            for t in _encode_bytes(tok, head + index.surface[id_]):
                seq.append(t)
                covered += len(_token_bytes(tok, index, t))
                if covered >= len(unstable):
                    break
            out.add(tuple(seq))
    if len(unstable) > 1:
        last = _last_char(unstable)
        if last is not None and len(last) < len(unstable) and last.decode("utf-8").isspace():
            out.add(tuple(_raw_bpe(tok, unstable[: -len(last)]) + _raw_bpe(tok, last)))
    return out


def _last_char(data: bytes) -> bytes | None:
    """The last UTF-8 character's bytes, or None when the end is not a whole character."""
    for k in range(1, min(4, len(data)) + 1):
        try:
            data[-k:].decode("utf-8")
            return data[-k:]
        except UnicodeDecodeError:
            continue
    return None


# ---------------------------------------------------------------------------- healing previews
def _preview(tok: Tokenizer, index: SurfaceIndex, ids: Sequence[int], k: int, mode: str) -> HealPreview:
    removed = b"".join(_token_bytes(tok, index, i) for i in ids[len(ids) - k:])
    cands = index.starting_with(removed) if removed else []
    return HealPreview(mode, k, removed, tuple(ids[: len(ids) - k]), tuple(cands[:LIST_LIMIT]), len(cands))


def _previews(tok: Tokenizer, index: SurfaceIndex, ids: Sequence[int]) -> tuple[HealPreview | None, HealPreview | None]:
    if not ids or ids[-1] not in index.surface:
        return None, None
    one = _preview(tok, index, ids, 1, "1")
    k = 1
    while k < len(ids) and ids[-k - 1] in index.surface:
        removed = b"".join(_token_bytes(tok, index, i) for i in ids[len(ids) - k - 1:])
        if not index.starting_with(removed):
            break
        k += 1
    return one, _preview(tok, index, ids, k, "d1")


# ---------------------------------------------------------------------------- probes
def _verify(tok: Tokenizer, prompt: str, enc: Any, n_stable: int, index: SurfaceIndex,
            extensions: Sequence[int], allowed: Any) -> bool:
    """Does ``encode(P + x)`` start with the stable ids for every probe x? Checked on a window of
    P that starts at a stable token boundary (see the performance notes)."""
    if n_stable == 0:
        return True
    start_tok = n_stable - 1
    while start_tok > 0 and len(prompt) - enc.offsets[start_tok][0] < _WINDOW_CHARS:
        start_tok -= 1
    start = enc.offsets[start_tok][0]
    window, expect = prompt[start:], list(enc.ids[start_tok:n_stable])
    probes = list(_PROBES)
    for id_ in list(extensions[:LIST_LIMIT]) + index.sample_ids:
        try:
            probes.append(index.surface[id_].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    for x in probes:
        got = tok.encode_ids(window + x, allowed_special=allowed)
        if got[: len(expect)] != expect:
            return False
    return True


def analyze_caret(tok: Tokenizer, text: str, caret: int | None = None, *, allowed_special: Any = None,
                  verify: bool = True) -> Healing:
    """Stable prefix, unstable suffix, completions and healing previews of ``text[:caret]``.

    ``allowed_special`` as in `Tokenizer.encode`; the default is the tokenizer's own convention
    (tiktoken: no special literal honoured, as ``encode_with_unstable``; HF: all added tokens).

    >>> h = analyze_caret(tokviz.load("r50k_base.tiktoken"), "hello fanta")  # doctest: +SKIP
    >>> h.stable, h.unstable, len(h.completions)                            # doctest: +SKIP
    ((31373,), b' fanta', 1432)
    """
    prompt = text if caret is None else text[:caret]
    index = surface_index(tok)
    enc = tok.encode(prompt, add_special_tokens=False, allowed_special=allowed_special)
    ids = tuple(enc.ids)
    n, rule = unstable_split(tok, enc, index)
    stable = ids[: len(ids) - n]
    unstable = b"".join(_token_bytes(tok, index, i) for i in ids[len(ids) - n:])
    singles = index.starting_with(unstable) if unstable else []
    completions = tiktoken_completions(tok, unstable, index) if rule == "tiktoken" else {(i,) for i in singles}
    verified = _verify(tok, prompt, enc, len(stable), index, singles, allowed_special) if verify and rule == "word" else None
    one, covering = _previews(tok, index, ids)
    warnings = []
    if unstable and unstable.isspace():
        warnings.append(f"the prompt ends in whitespace {unstable.decode('utf-8', 'replace')!r}: {len(singles):,} "
                        "tokens start with it, and the model rarely saw it as a token of its own")
    elif prompt[-1:].isspace():
        warnings.append(f"the prompt ends in whitespace {prompt[-1]!r}")
    return Healing(
        ids=ids, stable=stable, unstable=unstable, rule=rule, completions=frozenset(completions),
        single_token_completions=tuple(sorted(singles)), prefix_pieces=tuple(index.prefixes_of(unstable)),
        verified=verified, rollback_one=one, rollback_covering=covering, warnings=tuple(warnings),
    )


# ---------------------------------------------------------------------------- text
def _shown(data: bytes) -> str:
    """Bytes as a quoted string: UTF-8 where it decodes, ``\\xNN`` for a byte that does not."""
    return repr(data.decode("utf-8", errors="backslashreplace"))


def format_healing(h: Healing, tok: Tokenizer, *, examples: int = 20) -> str:
    """The human-readable ``tokviz heal`` report: the split, the first ``examples`` completions
    with their text, and each healing preview with its first candidates.

    >>> import tokviz
    >>> from tokviz.io.embedded import embedded_path
    >>> tok = tokviz.load(embedded_path("r50k"))
    >>> print(format_healing(analyze_caret(tok, "hello wor"), tok, examples=2).splitlines()[3])
      ' wor'  ids [476]
    """
    index = surface_index(tok)

    def text_of(ids: tuple[int, ...]) -> str:
        return _shown(b"".join(_token_bytes(tok, index, i) for i in ids))

    check = "" if h.verified is None else ", verified" if h.verified else ", unverified"
    lines = [
        f"stable:   {' '.join(map(str, h.stable))}",
        f"unstable: {h.unstable!r} ({h.rule} rule{check})",
        f"completions: {len(h.completions):,} ({len(h.single_token_completions):,} single tokens)",
    ]
    shown = h.completion_examples(examples)
    lines += [f"  {text_of(c)}  ids {list(c)}" for c in shown]
    if len(h.completions) > len(shown):
        lines.append(f"  ... {len(h.completions) - len(shown):,} more")
    for p in (h.rollback_one, h.rollback_covering):
        if p is not None:
            first = ", ".join(text_of((i,)) for i in p.candidates[:10])
            more = ", ..." if p.candidate_count > 10 else ""
            lines.append(f"heal {p.mode}: roll back {p.k} token(s) {p.removed!r}: {p.candidate_count:,} candidates"
                         + (f": {first}{more}" if first else ""))
    lines += [f"warning: {w}" for w in h.warnings]
    return "\n".join(lines)
