"""The difference between two tokenizers, typically two versions of one: vocabulary, merges,
specials and pipeline as a structured diff, plus the vocabulary-extension regression check.

Entries are compared by **surface** (the exact bytes, `tokviz.analysis.compare.surface_ids` at
L0), so a tiktoken rank file and a tokenizer.json of the same vocabulary, or a SentencePiece
``.model`` and its converted tokenizer.json, compare equal although their strings are spelled
differently. An entry is *added* (surface only in NEW), *deleted* (only in OLD) or *remapped*
(in both, no id in common; TokenDrift's term).

Merges are compared by the surface they produce and their position in the merge order: the
merge list of a BPE tokenizer.json, the ranks of a tiktoken file (multi-byte tokens by rank), the
scores of a SentencePiece BPE model (pieces by descending score), so the three are comparable.

The regression check (for a vocabulary extension): on a corpus, the documents that encode to other ids under
NEW, each with the first differing token; documents that round-tripped under OLD but not NEW;
special tokens whose literal or id changed.

Neighbour: `tokviz.analysis.compare` compares N tokenizers on a text; this compares two files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.cancel import CancelToken, ProgressFn, checkpoint
from ..engine.tokenizer import Tokenizer
from .compare import surface_ids
from .facts import TokenizerFacts

__all__ = [
    "EntryChange",
    "MergeChange",
    "PipelineChange",
    "VocabDiff",
    "RegressionCase",
    "RegressionReport",
    "vocab_diff",
    "merge_order",
    "special_map",
    "pipeline_tree",
    "regression_check",
    "format_diff",
]

SAMPLE = 20  # entries listed per category (the counts are always complete)


@dataclass(frozen=True, slots=True)
class EntryChange:
    """One vocabulary entry: its surface, and its ids in OLD and NEW (empty where absent)."""

    surface: bytes
    old_ids: tuple[int, ...]
    new_ids: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"surface": _show(self.surface), "old_ids": list(self.old_ids), "new_ids": list(self.new_ids)}


@dataclass(frozen=True, slots=True)
class MergeChange:
    """A merge (named by the surface it produces) and its position in each merge order."""

    surface: bytes
    old_rank: int | None
    new_rank: int | None

    def to_json(self) -> dict[str, object]:
        return {"surface": _show(self.surface), "old_rank": self.old_rank, "new_rank": self.new_rank}


@dataclass(frozen=True, slots=True)
class PipelineChange:
    """One changed value of the pipeline tree: a dotted path and its two values."""

    path: str
    old: Any
    new: Any

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class VocabDiff:
    """Counts are complete; ``*_sample`` lists the first `SAMPLE` of each kind (by id)."""

    old_name: str
    new_name: str
    old_size: int
    new_size: int
    same: int  # surfaces in both with an id in common
    added: int
    deleted: int
    remapped: int
    added_sample: tuple[EntryChange, ...]
    deleted_sample: tuple[EntryChange, ...]
    remapped_sample: tuple[EntryChange, ...]
    merges: dict[str, object]  # counts, or {"comparable": False, "why": ...}
    merges_sample: tuple[MergeChange, ...]
    specials_added: tuple[tuple[str, int], ...]
    specials_deleted: tuple[tuple[str, int], ...]
    specials_remapped: tuple[tuple[str, int, int], ...]
    pipeline: tuple[PipelineChange, ...]

    @property
    def identical_vocab(self) -> bool:
        return not (self.added or self.deleted or self.remapped)

    def to_json(self) -> dict[str, object]:
        return {
            "old": self.old_name,
            "new": self.new_name,
            "entries": {
                "unit": "surfaces (exact bytes, specials excluded)",
                "old": self.old_size,
                "new": self.new_size,
                "same": self.same,
                "added": self.added,
                "deleted": self.deleted,
                "remapped": self.remapped,
                "added_sample": [e.to_json() for e in self.added_sample],
                "deleted_sample": [e.to_json() for e in self.deleted_sample],
                "remapped_sample": [e.to_json() for e in self.remapped_sample],
            },
            "merges": {**self.merges, "changed_sample": [m.to_json() for m in self.merges_sample]},
            "specials": {
                "added": [list(x) for x in self.specials_added],
                "deleted": [list(x) for x in self.specials_deleted],
                "remapped": [{"literal": s, "old_id": a, "new_id": b} for s, a, b in self.specials_remapped],
            },
            "pipeline": [c.to_json() for c in self.pipeline],
        }

    def to_text(
        self, regression: RegressionReport | None = None, *, corpus: str = "", mode: str = "lines"
    ) -> str:
        """The human-readable diff (`format_diff`), with the regression check on ``corpus`` if given."""
        out = self.to_json()
        if regression is not None:
            out["regression"] = {"corpus": corpus, "mode": mode, **regression.to_json()}
        return format_diff(out)


def _show(b: bytes) -> str:
    """A surface for people: UTF-8 text where it decodes, ``\\xNN`` escapes where it does not."""
    return b.decode("utf-8", "backslashreplace")


# ---------------------------------------------------------------------- merges
def merge_order(tok: Tokenizer) -> dict[bytes, int] | None:
    """Position in the merge order of every merge result, keyed by its surface (the first token
    of a surface wins), from `TokenizerFacts.merge_rank`; None for models without merges
    (WordPiece, Unigram)."""
    facts = TokenizerFacts.of(tok)
    merges = facts.merges
    if merges is None:
        return None
    out: dict[bytes, int] = {}
    for i in sorted(merges.rank, key=merges.rank.__getitem__):
        out.setdefault(facts.surface(i), len(out))
    return out


def _merge_diff(old: Tokenizer, new: Tokenizer) -> tuple[dict[str, object], tuple[MergeChange, ...]]:
    a, b = merge_order(old), merge_order(new)
    if a is None or b is None:
        which = "OLD" if a is None else "NEW"
        return {"comparable": False, "why": f"{which} has no merges (WordPiece or Unigram model)"}, ()
    common = a.keys() & b.keys()
    changed = sorted((s for s in common if a[s] != b[s]), key=lambda s: b[s])
    counts = {
        "comparable": True,
        "unit": "merges, by the surface they produce; rank = position in merge order",
        "old": len(a),
        "new": len(b),
        "same_rank": len(common) - len(changed),
        "rank_changed": len(changed),
        "added": len(b.keys() - a.keys()),
        "deleted": len(a.keys() - b.keys()),
    }
    return counts, tuple(MergeChange(s, a[s], b[s]) for s in changed[:SAMPLE])


# ---------------------------------------------------------------------- specials and pipeline
def special_map(tok: Tokenizer) -> dict[str, int]:
    """Special literals and their ids (`TokenizerFacts.special_ids`): special added tokens, plus
    SentencePiece control and unknown pieces (a ``.model`` keeps ``<s>`` there, its
    tokenizer.json as an added token)."""
    facts = TokenizerFacts.of(tok)
    return {facts.token(i): i for i in sorted(facts.special_ids)}


def pipeline_tree(tok: Tokenizer) -> dict[str, Any]:
    """The pipeline as JSON values: every stage's ``to_json()``; the model's options without its
    vocabulary and merges (those are diffed as entries and merges)."""
    tree: dict[str, Any] = {}
    stages = (tok.normalizer, tok.pre_tokenizer, tok.post_processor, tok.decoder)
    for stage, comp in zip(("normalizer", "pre_tokenizer", "post_processor", "decoder"), stages):
        tree[stage] = _as_json(comp)
    model = _as_json(tok.model)
    if isinstance(model, dict):
        model = {k: v for k, v in model.items() if k not in ("vocab", "merges", "pieces", "scores")}
    tree["model"] = model
    tree["special_policy"] = tok.special_policy
    return tree


def _as_json(comp: object) -> Any:
    if comp is None:
        return None
    try:
        return comp.to_json()  # type: ignore[attr-defined]
    except (TypeError, ValueError, NotImplementedError):
        return comp.type_name  # type: ignore[attr-defined]


def _tree_diff(a: Any, b: Any, path: str = "") -> list[PipelineChange]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            out.extend(_tree_diff(a.get(k), b.get(k), f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(_tree_diff(x, y, f"{path}[{i}]"))
        return out
    return [] if a == b else [PipelineChange(path, _short(a), _short(b))]


def _short(v: Any) -> Any:
    """Big values (a precompiled charsmap) are summarised, not printed."""
    if isinstance(v, (list, dict)) and len(v) > 50:
        return f"<{type(v).__name__} of {len(v)} items>"
    if isinstance(v, str) and len(v) > 300:
        return f"<string of {len(v)} chars, starts {v[:40]!r}>"
    return v


# ---------------------------------------------------------------------- the diff
def vocab_diff(old: Tokenizer, new: Tokenizer, *, old_name: str = "old", new_name: str = "new") -> VocabDiff:
    """Entries, merges, specials and pipeline of ``new`` against ``old``."""
    sa, sb = surface_ids(old), surface_ids(new)
    added = sorted((s for s in sb.keys() - sa.keys()), key=lambda s: min(sb[s]))
    deleted = sorted((s for s in sa.keys() - sb.keys()), key=lambda s: min(sa[s]))
    common = sa.keys() & sb.keys()
    remapped = sorted((s for s in common if not set(sa[s]) & set(sb[s])), key=lambda s: min(sa[s]))

    def change(s: bytes) -> EntryChange:
        return EntryChange(s, tuple(sorted(sa.get(s, ()))), tuple(sorted(sb.get(s, ()))))

    merges, merges_sample = _merge_diff(old, new)
    spa, spb = special_map(old), special_map(new)
    return VocabDiff(
        old_name,
        new_name,
        len(sa),
        len(sb),
        len(common) - len(remapped),
        len(added),
        len(deleted),
        len(remapped),
        tuple(map(change, added[:SAMPLE])),
        tuple(map(change, deleted[:SAMPLE])),
        tuple(map(change, remapped[:SAMPLE])),
        merges,
        merges_sample,
        tuple(sorted((s, i) for s, i in spb.items() if s not in spa)),
        tuple(sorted((s, i) for s, i in spa.items() if s not in spb)),
        tuple(sorted((s, spa[s], spb[s]) for s in spa.keys() & spb.keys() if spa[s] != spb[s])),
        tuple(_tree_diff(pipeline_tree(old), pipeline_tree(new))),
    )


# ---------------------------------------------------------------------- regression check
@dataclass(frozen=True, slots=True)
class RegressionCase:
    """A document that encodes differently under NEW: the first differing token position, its char
    offset in the document, and the tokens there under OLD and NEW."""

    document: int
    preview: str
    token_index: int
    char_offset: int
    old_token: tuple[int, str] | None
    new_token: tuple[int, str] | None
    old_tokens: int
    new_tokens: int

    def to_json(self) -> dict[str, object]:
        return {
            "document": self.document,
            "preview": self.preview,
            "token_index": self.token_index,
            "char_offset": self.char_offset,
            "old_token": None
            if self.old_token is None
            else {"id": self.old_token[0], "token": self.old_token[1]},
            "new_token": None
            if self.new_token is None
            else {"id": self.new_token[0], "token": self.new_token[1]},
            "old_tokens": self.old_tokens,
            "new_tokens": self.new_tokens,
        }


@dataclass(frozen=True, slots=True)
class RegressionReport:
    documents: int
    changed: int
    roundtrip_lost: int  # lossless under OLD, not under NEW
    cases: tuple[RegressionCase, ...]
    roundtrip_cases: tuple[int, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.changed and not self.roundtrip_lost

    def to_json(self) -> dict[str, object]:
        return {
            "documents": self.documents,
            "changed": self.changed,
            "roundtrip_lost": self.roundtrip_lost,
            "passed": self.passed,
            "cases": [c.to_json() for c in self.cases],
            "roundtrip_lost_documents": list(self.roundtrip_cases),
        }


def regression_check(
    old: Tokenizer,
    new: Tokenizer,
    documents: Iterable[str],
    *,
    limit: int = 50,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> RegressionReport:
    """Re-encode every document with both; list the first ``limit`` that differ (by id), each with
    its first differing token, and count the documents whose round trip was lost.
    ``progress("documents", done, total)`` (total 0: not known) per document; a set ``cancel``
    raises `Cancelled`."""
    n = changed = lost = 0
    cases: list[RegressionCase] = []
    lost_docs: list[int] = []
    total = len(documents) if isinstance(documents, Sequence) else 0
    for d, text in enumerate(documents):
        checkpoint("documents", d, total, progress=progress, cancel=cancel)
        n += 1
        ea = old.encode(text, add_special_tokens=False)
        eb = new.encode(text, add_special_tokens=False)
        if ea.ids != eb.ids:
            changed += 1
            if len(cases) < limit:
                cases.append(_case(d, text, ea, eb))
        if old.decode(ea.ids) == text and new.decode(eb.ids) != text:
            lost += 1
            if len(lost_docs) < limit:
                lost_docs.append(d)
    return RegressionReport(n, changed, lost, tuple(cases), tuple(lost_docs))


def _case(d: int, text: str, ea, eb) -> RegressionCase:  # noqa: ANN001
    k = next((i for i, (x, y) in enumerate(zip(ea.ids, eb.ids)) if x != y), min(len(ea.ids), len(eb.ids)))

    def at(e, i: int) -> tuple[int, str] | None:  # noqa: ANN001
        return (e.ids[i], e.tokens[i]) if i < len(e.ids) else None

    offsets: Sequence[tuple[int, int]] = ea.offsets if k < len(ea.ids) else eb.offsets
    char = offsets[k][0] if k < len(offsets) else len(text)
    return RegressionCase(d, text[:80], k, char, at(ea, k), at(eb, k), len(ea.ids), len(eb.ids))


# ---------------------------------------------------------------------- text
def format_diff(out: dict[str, Any]) -> str:
    """The human-readable diff of `VocabDiff.to_json` (with an optional ``"regression"`` entry, as
    ``tokviz diff --json`` prints it): counts first, then samples, specials, pipeline, regression."""
    e, m = out["entries"], out["merges"]
    lines = [
        f"old: {out['old']}",
        f"new: {out['new']}",
        f"entries ({e['unit']}): old {e['old']:,}, new {e['new']:,}; same {e['same']:,}, "
        f"added {e['added']:,}, deleted {e['deleted']:,}, remapped {e['remapped']:,}",
    ]
    for kind in ("added", "deleted", "remapped"):
        for c in e[f"{kind}_sample"][:5]:
            lines.append(f"  {kind:<9} {_quote(c['surface']):<24} ids {c['old_ids']} -> {c['new_ids']}")
    if m.get("comparable"):
        lines.append(
            f"merges: old {m['old']:,}, new {m['new']:,}; same rank {m['same_rank']:,}, "
            f"rank changed {m['rank_changed']:,}, added {m['added']:,}, deleted {m['deleted']:,}"
        )
    else:
        lines.append(f"merges: not comparable ({m['why']})")
    sp = out["specials"]
    lines.append(
        f"specials: added {sp['added'] or '-'}, deleted {sp['deleted'] or '-'}, remapped {sp['remapped'] or '-'}"
    )
    lines.append("pipeline:" + ("" if out["pipeline"] else " unchanged"))
    for c in out["pipeline"]:
        lines.append(f"  {c['path']}: {c['old']!r} -> {c['new']!r}")
    r = out.get("regression")
    if r is not None:
        lines.append(
            f"regression on {r['corpus']} ({r['mode']}): {r['changed']:,} of {r['documents']:,} documents "
            f"encode differently, {r['roundtrip_lost']:,} lost their round trip -> "
            f"{'PASS' if r['passed'] else 'FAIL'}"
        )
        for c in r["cases"][:10]:
            lines.append(
                f"  doc {c['document']} token {c['token_index']} (char {c['char_offset']}): "
                f"{c['old_token']} -> {c['new_token']}  {c['preview'][:40]!r}"
            )
    return "\n".join(lines)


def _quote(s: str) -> str:
    return "'" + s.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "'"
