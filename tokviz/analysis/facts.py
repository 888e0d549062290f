"""`TokenizerFacts`: the one answer to the basic questions about a tokenizer.

Every analysis (compare, corpus, lint, audit, healing, specials, chat, vocab_diff) and every GUI
view-model asks the same questions, and reads the answers here:

* **family** — how vocabulary strings spell bytes: ``"byte-level"`` (GPT-2 proxy characters,
  found anywhere in the pre-tokenizer or decoder tree, Sequences included), ``"rank-file"`` (a
  tiktoken rank table: byte-level with ranks), ``"metaspace"`` (a replacement character such as
  ``▁`` stands for the space: Metaspace, a ``Replace(" ", "▁")`` normalizer, a SentencePiece
  ``.model``), ``"wordpiece"`` (``##`` continuations), ``"char"`` (plain strings);
* **surface(id)** — the exact bytes a token stands for: proxies decoded, ``<0xNN>`` as one byte
  only when byte fallback is on, the configured replacement character as a space, the model's
  continuation prefix (and BPE end-of-word suffix) removed; added, control and unknown tokens are
  their literal text. Never the decoder's output (decoders strip spaces and print U+FFFD);
* the **unknown** id (what the model emits for text it has no token for), **added**, **special**,
  **control**, **unused**, **user-defined** (SentencePiece pieces matched whole) and
  **byte-piece** ids;
* **merges** — for BPE models, the canonical merge of each token (the merge that makes it when
  its own symbols are merged by the model's rule, whatever order the file lists its merges in)
  and its merge rank (when it first enters the vocabulary, counted in tokens);
* **components()** — the one walk of the pipeline tree, through Sequences.

`TokenizerFacts.of(tok)` is memoised in a weak map: the facts hold the tokenizer's components,
never the tokenizer, so a tokenizer nobody else holds is freed with its facts.

>>> from tokviz.engine.models.wordpiece import WordPiece
>>> from tokviz.engine.tokenizer import Tokenizer
>>> facts = TokenizerFacts.of(Tokenizer(WordPiece({"[UNK]": 0, "un": 1, "##able": 2}, unk_token="[UNK]")))
>>> facts.family, facts.surface(2), facts.is_continuation(2), facts.unknown_ids
('wordpiece', b'able', True, frozenset({0}))

Performance notes: surfaces are computed per id on first use and kept; `surfaces()` builds them
all at once. The merge facts (a small merge loop per token) are built on first use only, once
per tokenizer, under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal
from weakref import WeakKeyDictionary

from ..engine.byte_alphabet import CHAR_TO_BYTE
from ..engine.cancel import CancelToken, ProgressFn, checkpoint
from ..engine.decoders import basic as _decoders
from ..engine.decoders.byte_level import ByteLevel as _ByteLevelDecoder
from ..engine.decoders.metaspace import Metaspace as _MetaspaceDecoder
from ..engine.models._spm import PieceType
from ..engine.models.bpe import BPE
from ..engine.models.sentencepiece_bpe import SentencePieceBPE
from ..engine.models.unigram import Unigram
from ..engine.models.wordlevel import WordLevel
from ..engine.models.wordpiece import WordPiece
from ..engine.normalizers import basic as _normalizers
from ..engine.normalizers.precompiled import SentencePieceNormalizer
from ..engine.pre_tokenizers.byte_level import ByteLevel as _ByteLevelPre
from ..engine.pre_tokenizers.metaspace import Metaspace as _MetaspacePre
from ..engine.pre_tokenizers.sequence import Sequence as _PreSequence
from ..engine.processors.sequence import Sequence as _ProcessorSequence
from ..engine.reference import BYTE_PIECES
from ..engine.tokenizer import Tokenizer

__all__ = ["FAMILIES", "Component", "Family", "MergeFacts", "TokenizerFacts", "facts_of"]

Family = Literal["byte-level", "rank-file", "metaspace", "wordpiece", "char"]
FAMILIES: tuple[Family, ...] = ("byte-level", "rank-file", "metaspace", "wordpiece", "char")
STAGES = ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder")


@dataclass(frozen=True, slots=True)
class Component:
    """One node of the pipeline tree: its stage, its place inside Sequences, its type."""

    stage: str  # one of STAGES
    path: tuple[int, ...]  # indices inside nested Sequences; () for the stage's root
    type_name: str
    component: Any


def _children(component: object) -> tuple[Any, ...]:
    """The members of a Sequence of any stage (no other component has children)."""
    if isinstance(component, _PreSequence):
        return tuple(component.pretokenizers)
    if isinstance(component, _normalizers.Sequence):
        return tuple(component.normalizers)
    if isinstance(component, _decoders.Sequence):
        return tuple(component.decoders)
    if isinstance(component, _ProcessorSequence):
        return tuple(component.processors)
    return ()


def _walk(stage: str, component: object, path: tuple[int, ...] = ()) -> Iterator[Component]:
    if component is None:
        return
    yield Component(stage, path, component.type_name, component)  # type: ignore[attr-defined]
    for k, child in enumerate(_children(component)):
        yield from _walk(stage, child, (*path, k))


# ---------------------------------------------------------------------- the facts
class TokenizerFacts:
    """The facts of one tokenizer (see the module docstring); build with `TokenizerFacts.of`."""

    __slots__ = (
        "_added",
        "_components",
        "_continuation",
        "_lock",
        "_merges",
        "_parts",
        "_surface",
        "_vocab",
        "added_ids",
        "added_per_sequence",
        "byte_fallback",
        "byte_piece_ids",
        "continuation_prefix",
        "control_ids",
        "end_of_word_suffix",
        "family",
        "model",
        "replacement",
        "special_ids",
        "unknown_ids",
        "unused_ids",
        "user_defined_ids",
    )

    def __init__(self, tok: Tokenizer) -> None:
        # what the facts depend on, by identity: `of` rebuilds them when one of these was replaced
        self._parts = _parts(tok)
        self.model = tok.model
        stages = (tok.normalizer, tok.pre_tokenizer, tok.model, tok.post_processor, tok.decoder)
        self._components = tuple(c for stage, root in zip(STAGES, stages) for c in _walk(stage, root))
        self._vocab: dict[int, str] = {i: s for s, i in tok.model.get_vocab().items()}
        self._added: dict[int, str] = {t.id: t.content for t in tok.added_tokens if t.content}
        model = tok.model
        self.continuation_prefix: str | None = (
            model.continuing_subword_prefix or None if isinstance(model, (WordPiece, BPE)) else None
        )
        self.end_of_word_suffix: str | None = (model.end_of_word_suffix or None) if isinstance(model, BPE) else None
        self.family: Family = self._family()
        self.replacement: str | None = self._replacement() if self.family == "metaspace" else None
        self.byte_fallback = bool(isinstance(model, (BPE, Unigram, SentencePieceBPE)) and model.byte_fallback)
        types = _piece_types(model)
        if types is not None:
            self.byte_piece_ids = frozenset(i for i, t in enumerate(types) if t == PieceType.BYTE)
            self.control_ids = frozenset(i for i, t in enumerate(types) if t == PieceType.CONTROL)
            self.unused_ids = frozenset(i for i, t in enumerate(types) if t == PieceType.UNUSED)
            self.user_defined_ids = frozenset(i for i, t in enumerate(types) if t == PieceType.USER_DEFINED)
        else:
            pieces = {i for i, s in self._vocab.items() if s in BYTE_PIECES} if self.byte_fallback else set()
            self.byte_piece_ids = frozenset(pieces)
            self.control_ids = self.unused_ids = self.user_defined_ids = frozenset()
        self.unknown_ids = _unknown_ids(model)
        self.added_ids = frozenset(self._added)
        # a .model's reserved pieces (control, unknown) are its special tokens; its converted
        # tokenizer.json lists them as special added tokens
        reserved = self.control_ids | self.unknown_ids if types is not None else frozenset()
        self.special_ids = frozenset(t.id for t in tok.added_tokens if t.special) | reserved
        #: special tokens the post-processor adds to one sequence (BOS, CLS+SEP ...) when asked
        self.added_per_sequence = tok.post_processor.added_tokens(False) if tok.post_processor is not None else 0
        self._surface: dict[int, bytes] = {}
        self._continuation: set[int] = set()
        self._merges: MergeFacts | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ memo
    @classmethod
    def of(cls, tok: Tokenizer) -> TokenizerFacts:
        """The facts of ``tok``, built once per tokenizer object (and again if a stage of it was
        replaced); the memo holds the tokenizer weakly."""
        with _MEMO_LOCK:
            facts = _MEMO.get(tok)
            if facts is None or any(a is not b for a, b in zip(facts._parts, _parts(tok))):
                facts = _MEMO[tok] = cls(tok)
        return facts

    # ------------------------------------------------------------------ pipeline
    def components(self, stage: str | None = None) -> tuple[Component, ...]:
        """Every component of the pipeline (or of one stage), Sequences and their members, in order."""
        if stage is None:
            return self._components
        return tuple(c for c in self._components if c.stage == stage)

    def has(self, type_name: str, *, stage: str | None = None) -> bool:
        """Does a component of this ``"type"`` name occur (anywhere inside Sequences)?"""
        return any(c.type_name == type_name for c in self.components(stage))

    @property
    def byte_level(self) -> bool:
        """Vocabulary strings are GPT-2 byte proxies (a byte-level pipeline or a rank file)."""
        return self.family in ("byte-level", "rank-file")

    @property
    def model_type(self) -> str:
        return self.model.type_name

    def _family(self) -> Family:
        model = self.model
        if isinstance(model, WordPiece):
            return "wordpiece"
        if isinstance(model, BPE) and model.rank_mode:
            return "rank-file"
        if any(isinstance(c.component, (_ByteLevelPre, _ByteLevelDecoder)) for c in self._components):
            return "byte-level"
        if self._replacement() is not None:
            return "metaspace"
        return "char"

    def _replacement(self) -> str | None:
        """The character that stands for a space, from the component that configures it: the
        pre-tokenizer's (Metaspace) first, then the normalizer's (``Replace(" ", "▁")``,
        SentencePiece's own), then the decoder's (Metaspace, ``Replace("▁", " ")``)."""
        found = {stage: ch for stage, ch in reversed([_space_mark(c) for c in self._components]) if ch}
        for stage in ("pre_tokenizer", "normalizer", "decoder"):
            if stage in found:
                return found[stage]
        return None

    # ------------------------------------------------------------------ ids
    def adds_special_tokens(self, add_special_tokens: bool = True) -> bool:
        """Does ``encode(text, add_special_tokens=...)`` put post-processor tokens (BOS, CLS ...)
        into the encoding? (A SentencePiece ``.model`` adds none, as ``sp.encode`` does not.)"""
        return add_special_tokens and self.added_per_sequence > 0

    @property
    def unknown_id(self) -> int | None:
        """The model's unknown token, or None (one rule for every view: `unknown_ids`)."""
        return min(self.unknown_ids) if self.unknown_ids else None

    def ids(self) -> list[int]:
        """Every id of the vocabulary (model entries and added tokens), ascending."""
        return sorted(self._vocab.keys() | self._added.keys())

    def model_ids(self) -> list[int]:
        """The model's own entries, ascending."""
        return sorted(self._vocab)

    def token(self, id_: int) -> str:
        """The vocabulary string of ``id_`` (an added token's content wins over a model entry)."""
        s = self._added.get(id_)
        if s is None:
            s = self._vocab.get(id_)
        if s is None:
            raise KeyError(f"id {id_} is not in the vocabulary")
        return s

    def is_ordinary(self, id_: int) -> bool:
        """A model entry that text can spell: not added, control, unused or unknown."""
        return (
            id_ in self._vocab
            and id_ not in self._added
            and id_ not in self.control_ids
            and id_ not in self.unused_ids
            and id_ not in self.unknown_ids
        )

    def ordinary_ids(self) -> list[int]:
        return [i for i in self.model_ids() if self.is_ordinary(i)]

    # ------------------------------------------------------------------ surfaces
    def surface(self, id_: int) -> bytes:
        """The exact bytes token ``id_`` stands for (see the module docstring).

        >>> from tokviz.engine.models.bpe import BPE
        >>> from tokviz.engine.pre_tokenizers.byte_level import ByteLevel
        >>> tok = Tokenizer(BPE({"Ġ": 0, "h": 1, "Ġh": 2}, [("Ġ", "h")]), pre_tokenizer=ByteLevel())
        >>> TokenizerFacts.of(tok).surface(2)
        b' h'
        """
        got = self._surface.get(id_)
        if got is None:
            got = self._surface[id_] = self._compute(id_)
        return got

    def is_continuation(self, id_: int) -> bool:
        """A ``##x``-style token: it continues a word (the prefix is not part of its surface)."""
        self.surface(id_)
        return id_ in self._continuation

    def is_byte_piece(self, id_: int) -> bool:
        return id_ in self.byte_piece_ids

    def surfaces(self) -> dict[int, bytes]:
        """``surface`` of every id (model entries and added tokens)."""
        return {i: self.surface(i) for i in self.ids()}

    def _compute(self, id_: int) -> bytes:
        added = self._added.get(id_)
        if added is not None:
            return added.encode("utf-8", "surrogatepass")
        s = self._vocab.get(id_)
        if s is None:
            raise KeyError(f"id {id_} is not in the vocabulary")
        if id_ in self.unknown_ids or id_ in self.control_ids or id_ in self.unused_ids:
            return s.encode("utf-8", "surrogatepass")
        if id_ in self.byte_piece_ids:
            return bytes((int(s[3:5], 16),))
        prefix, suffix = self.continuation_prefix, self.end_of_word_suffix
        if prefix and s.startswith(prefix) and len(s) > len(prefix):
            self._continuation.add(id_)
            s = s[len(prefix):]
        if suffix and s.endswith(suffix) and len(s) > len(suffix):
            s = s[: -len(suffix)]
        if self.byte_level and all(c in CHAR_TO_BYTE for c in s):
            return bytes(map(CHAR_TO_BYTE.__getitem__, s))
        if self.replacement is not None:
            s = s.replace(self.replacement, " ")
        return s.encode("utf-8", "surrogatepass")

    # ------------------------------------------------------------------ merges
    @property
    def merges(self) -> MergeFacts | None:
        """The merge facts of a BPE model (merges list, rank file or SentencePiece scores), else None."""
        if not isinstance(self.model, (BPE, SentencePieceBPE)):
            return None
        if self._merges is None:
            with self._lock:
                if self._merges is None:
                    self._merges = MergeFacts.build(self.model, self.continuation_prefix, self.end_of_word_suffix)
        return self._merges

    def canonical_merge(self, id_: int) -> tuple[int, int] | None:
        """The (left, right) ids whose merge makes ``id_``, or None (not a BPE merge result)."""
        m = self.merges
        if m is None or id_ not in m.rank:
            return None
        return m.parents.get(id_)

    def merge_rank(self, id_: int) -> int | None:
        """When ``id_`` first enters the vocabulary by a merge, counted in tokens (0: the first)."""
        m = self.merges
        return None if m is None else m.rank.get(id_)


def facts_of(tok: Tokenizer) -> TokenizerFacts:
    """`TokenizerFacts.of` as a function."""
    return TokenizerFacts.of(tok)


_MEMO: WeakKeyDictionary[Tokenizer, TokenizerFacts] = WeakKeyDictionary()
_MEMO_LOCK = threading.Lock()


def _parts(tok: Tokenizer) -> tuple[object, ...]:
    """The objects the facts are read from (held, so compared by identity)."""
    return (tok.model, tok.normalizer, tok.pre_tokenizer, tok.post_processor, tok.decoder, tok.added_tokens)


def _space_mark(c: Component) -> tuple[str, str | None]:
    """(stage, the character this component puts for a space or reads as one), or None."""
    comp = c.component
    mark: str | None = None
    if isinstance(comp, (_MetaspacePre, _MetaspaceDecoder)):
        mark = comp.replacement
    elif isinstance(comp, SentencePieceNormalizer):
        mark = "\u2581" if comp.escape_whitespaces else None
    elif isinstance(comp, _normalizers.Replace) and not comp.is_regex and comp.pattern == " ":
        mark = comp.content if len(comp.content) == 1 else None
    elif isinstance(comp, _decoders.Replace) and not comp.regex_pattern and comp.content == " ":
        mark = comp.pattern if len(comp.pattern) == 1 else None
    return c.stage, (mark if mark != " " else None)


def _piece_types(model: object) -> tuple[int, ...] | None:
    """SentencePiece piece types of a ``.model`` (None for tokenizer.json models)."""
    if isinstance(model, SentencePieceBPE):
        return model.types
    if isinstance(model, Unigram) and model.spm is not None:
        return model.piece_types
    return None


def _unknown_ids(model: object) -> frozenset[int]:
    """What the model emits for text it has no token for: ``unk_id`` (Unigram, SentencePiece) or
    the id of ``unk_token`` (BPE, WordPiece, WordLevel); a tokenizer_config ``unk_token`` does
    not count (GPT-2's names ``<|endoftext|>``, which no text is ever unknown as)."""
    if isinstance(model, (Unigram, SentencePieceBPE)):
        uid = model.unk_id
        return frozenset((uid,)) if isinstance(uid, int) and uid >= 0 else frozenset()
    if isinstance(model, (BPE, WordPiece, WordLevel)) and model.unk_token:
        uid = model.token_to_id(model.unk_token)
        return frozenset((uid,)) if uid is not None else frozenset()
    return frozenset()


# ---------------------------------------------------------------------- merges
class MergeFacts:
    """The merges of a BPE vocabulary, the same whichever file format it came in.

    ``kind``: ``"merges"`` (a tokenizer.json merges list), ``"ranks"`` (a tiktoken rank file: a
    pair's priority is the rank of its concatenation), ``"scores"`` (a SentencePiece BPE
    ``.model``: the highest-scoring piece merges first).

    ``rank[t]``: when token t first enters the vocabulary by a merge, counted in tokens — the
    order of first appearance in a merges list; in a rank file (or ``.model``) the order by rank
    (score) of the tokens that split into two vocabulary tokens. HF's converters list exactly
    those tokens' splits ordered by rank (score), so the same vocabulary gives the same ranks in
    either format.

    ``parents[t]`` (`canonical`): the canonical merge of t: t's own symbols merged by the model's
    rule (lowest rank first, leftmost on ties) until one symbol is left; its last merge. Not the
    first merge listed for t: HF's conversion of a rank file lists every split (``Ġ`` +
    ``overview`` before ``overview`` itself exists), and only the merge the rule reaches makes t.
    Absent when the rule does not end in t. Built on first use (a merge loop per token).
    """

    __slots__ = ("_lock", "_parents", "_solve", "kind", "rank")

    def __init__(self, kind: str, rank: Mapping[int, int], solve: Callable[[int], tuple[int, int] | None]) -> None:
        self.kind = kind
        self.rank = rank
        self._solve = solve
        self._parents: Mapping[int, tuple[int, int]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def build(cls, model: BPE | SentencePieceBPE, prefix: str | None, suffix: str | None) -> MergeFacts:
        if isinstance(model, SentencePieceBPE):
            return _from_scores(model)
        if model.rank_mode:
            return _from_ranks(model.get_vocab())
        return _from_merges(model.get_vocab(), model.merges, prefix or "", suffix or "")

    @property
    def parents(self) -> Mapping[int, tuple[int, int]]:
        return self.canonical()

    def canonical(
        self, *, progress: ProgressFn | None = None, cancel: CancelToken | None = None
    ) -> Mapping[int, tuple[int, int]]:
        """``parents``, built once (``progress("merges", done, total)``; a set ``cancel`` raises
        `Cancelled` and keeps nothing)."""
        with self._lock:
            if self._parents is None:
                out: dict[int, tuple[int, int]] = {}
                total = len(self.rank)
                for n, i in enumerate(self.rank):
                    if n % 4096 == 0:
                        checkpoint("merges", n, total, progress=progress, cancel=cancel)
                    pair = self._solve(i)
                    if pair is not None:
                        out[i] = pair
                self._parents = out
            return self._parents

    def children(self) -> dict[int, list[int]]:
        """parent id -> the tokens whose canonical merge uses it, once per use (a self-pair
        ``(t, t)`` lists its child twice)."""
        out: dict[int, list[int]] = {}
        for child, (a, b) in self.parents.items():
            out.setdefault(a, []).append(child)
            out.setdefault(b, []).append(child)
        return out


_NO_MERGE = float("inf")


def _final_merge(symbols: list[str], priority: Mapping[Any, float], *, by_pair: bool, plen: int = 0) -> tuple[str, str] | None:
    """Merge ``symbols`` by the BPE rule until no pair merges: each step joins the adjacent pair of
    lowest priority, the leftmost on ties. ``priority`` is keyed by the pair (``by_pair``: a
    merges list, whose right part loses ``plen`` prefix characters when joined) or by the joined
    string (ranks, scores). Returns the last pair merged when one symbol is left, else None."""
    get = priority.get
    if by_pair:
        keys = [get(p, _NO_MERGE) for p in pairwise(symbols)]
    else:
        keys = [get(a + b, _NO_MERGE) for a, b in pairwise(symbols)]
    last = None
    while keys:
        best = min(keys)
        if best == _NO_MERGE:
            return None
        at = keys.index(best)
        a, b = last = symbols[at], symbols[at + 1]
        symbols[at : at + 2] = [a + b[plen:]]
        del keys[at]
        if at > 0:
            x, y = symbols[at - 1], symbols[at]
            keys[at - 1] = get((x, y) if by_pair else x + y, _NO_MERGE)
        if at < len(keys):
            x, y = symbols[at], symbols[at + 1]
            keys[at] = get((x, y) if by_pair else x + y, _NO_MERGE)
    return last if len(symbols) == 1 else None


def _from_merges(vocab: dict[str, int], merges: list[tuple[str, str]], prefix: str, suffix: str) -> MergeFacts:
    plen = len(prefix)
    pair_rank = {pair: r for r, pair in enumerate(merges)}
    rank: dict[int, int] = {}
    for a, b in merges:
        i = vocab.get(a + b[plen:])
        if i is not None and i not in rank:
            rank[i] = len(rank)
    by_id = {i: s for s, i in vocab.items()}

    def solve(i: int) -> tuple[int, int] | None:
        s = by_id[i]
        pair = _final_merge(_initial_symbols(s, prefix, suffix), pair_rank, by_pair=True, plen=plen)
        return (vocab[pair[0]], vocab[pair[1]]) if pair is not None and pair[0] + pair[1][plen:] == s else None

    return MergeFacts("merges", rank, solve)


def _initial_symbols(s: str, prefix: str, suffix: str) -> list[str]:
    """HF BPE's symbols of a word spelled ``s``: characters, every one after the first carrying the
    continuation prefix, the last one the end-of-word suffix (a token that is itself a
    continuation starts with a prefixed symbol)."""
    cont = bool(prefix) and s.startswith(prefix) and len(s) > len(prefix)
    core = s[len(prefix):] if cont else s
    end = bool(suffix) and core.endswith(suffix) and len(core) > len(suffix)
    if end:
        core = core[: -len(suffix)]
    out = [c if (k == 0 and not cont) or not prefix else prefix + c for k, c in enumerate(core)]
    if end and out:
        out[-1] += suffix
    return out


def _from_ranks(vocab: dict[str, int]) -> MergeFacts:
    order = sorted(
        (r, s) for s, r in vocab.items()
        if len(s) > 1 and any(s[:k] in vocab and s[k:] in vocab for k in range(1, len(s)))
    )
    rank = {r: n for n, (r, _) in enumerate(order)}
    by_rank = dict(order)

    def solve(r: int) -> tuple[int, int] | None:
        pair = _final_merge(list(by_rank[r]), vocab, by_pair=False)
        return None if pair is None else (vocab[pair[0]], vocab[pair[1]])

    return MergeFacts("ranks", rank, solve)


def _from_scores(model: SentencePieceBPE) -> MergeFacts:
    pieces, scores, types = model.pieces, model.scores, model.types
    mergeable = {
        p: i for i, (p, t) in enumerate(zip(pieces, types))
        if t in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
    }
    priority = {p: -scores[i] for p, i in mergeable.items()}  # the highest score merges first
    ids = {p: i for i, p in enumerate(pieces)}
    order = sorted(
        (-scores[i], i) for i, (p, t) in enumerate(zip(pieces, types))
        if t == PieceType.NORMAL and len(p) > 1 and any(p[:k] in ids and p[k:] in ids for k in range(1, len(p)))
    )
    rank = {i: n for n, (_, i) in enumerate(order)}

    def solve(i: int) -> tuple[int, int] | None:
        pair = _final_merge(list(pieces[i]), priority, by_pair=False)
        if pair is None or pair[0] not in mergeable or pair[1] not in mergeable:
            return None
        return (mergeable[pair[0]], mergeable[pair[1]])

    return MergeFacts("scores", rank, solve)
