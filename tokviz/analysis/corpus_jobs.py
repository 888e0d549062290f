"""The corpus jobs beside the statistics: the offset lint, the vocabulary-extension regression check
and the audit's token counts, each a `tokviz.io.executor.ShardJob` reduced in corpus order.

Like `tokviz.analysis.corpus` (the C9 statistics), each job maps a shard to a small partial (counts,
the first findings or cases, an id histogram) and the caller reduces the partials in shard order,
so the result is the same in this process, on the local pool or on a Dask cluster. A finding's
``line`` is its file's line (the shards' line counts are added in the reduce), and every sample
names its ``file``.

Neighbours: `tokviz.analysis.lint` lints one text, `tokviz.analysis.vocab_diff` diffs two
vocabularies and checks documents, `tokviz.analysis.audit` audits a vocabulary without a corpus.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..engine.cancel import CancelToken
from ..io.executor import (
    CorpusCancelled,
    Executor,
    ShardJob,
    ShardOutput,
    ShardPlace,
    executor_for,
    run_shards,
)
from ..io.shards import ReadOptions, ShardReader, corpus_files, describe_paths, plan_shards
from .corpus import TokenizerSpec, load_specs
from .lint import CorpusLint, lint_text
from .vocab_diff import RegressionReport, regression_check

__all__ = [
    "LINT_PIECE_BYTES",
    "TokenCounts",
    "audit_with_counts",
    "lint_corpus",
    "regression_corpus",
    "token_counts",
]

#: lint keeps ~500 bytes per byte of text: its records are cut into pieces of this size
LINT_PIECE_BYTES = 256 << 10
Progress = Callable[[str, int, int], None]


def _run(
    job: ShardJob,
    path: Any,
    reduce: Callable[[ShardOutput, ShardPlace], bool],
    *,
    executor: Executor | None,
    state: Any,
    scheduler: str | None,
    workers: int | None,
    progress: Progress | None,
    cancel: CancelToken | None,
) -> str:
    """Map ``job`` over the corpus and ``reduce(output, place)`` in order (False: stop here);
    the executor's label."""
    shards = plan_shards(corpus_files(path), job.read)
    own = executor is None
    if executor is None:
        executor = executor_for(scheduler=scheduler, workers=workers, corpus_bytes=sum(s.size for s in shards), state=state)
    try:
        for out, place in run_shards(job, shards, executor, progress=progress, cancel=cancel):
            if not reduce(out, place):
                break
        return executor.label
    finally:
        if own:
            executor.close()


def _load_one(spec: TokenizerSpec) -> Any:
    toks, errors = load_specs([spec])
    if toks[0] is None:
        raise ValueError(errors[0])
    return toks[0]


def _tokenizer_spec(tokenizer: Any, spec: TokenizerSpec | None) -> TokenizerSpec:
    if spec is not None:
        return spec
    source = getattr(tokenizer, "source", None)
    return TokenizerSpec(getattr(tokenizer, "name", "") or "tokenizer", str(source or ""))


# ---------------------------------------------------------------------- the offset lint
@dataclass(frozen=True, slots=True)
class _LintJob(ShardJob):
    spec: TokenizerSpec
    read: ReadOptions
    exact: bool
    examples: int
    add_special_tokens: bool = False

    def key(self) -> tuple[object, ...]:
        return ("tokenizers", (self.spec,))

    def prepare(self) -> Any:
        return _load_one(self.spec)

    def map(self, state: Any, records: ShardReader, cancel: CancelToken | None) -> _LintPart:
        out = _LintPart(CorpusLint(examples=self.examples, add_special_tokens=self.add_special_tokens))
        for rec in records:
            if cancel is not None and cancel.cancelled:
                out.result.cancelled = True
                break
            report = lint_text(state, rec.text, exact=self.exact, add_special_tokens=self.add_special_tokens)
            out.result.add(rec.line, report)
            for check, bucket in out.result.samples.items():
                while len(out.where.setdefault(check, [])) < len(bucket):
                    out.where[check].append((rec.part, rec.source))
        return out


@dataclass(slots=True)
class _LintPart:
    """One shard's lint: the counts, and where each sample is (part, file)."""

    result: CorpusLint
    where: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


def lint_corpus(
    tokenizer: Any,
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    exact: bool = False,
    examples: int = 5,
    add_special_tokens: bool = False,
    read: ReadOptions | None = None,
    spec: TokenizerSpec | None = None,
    executor: Executor | None = None,
    scheduler: str | None = None,
    workers: int | None = 1,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> CorpusLint:
    """Lint every line of a corpus (LF kept: the text is exactly the file's; a JSON line's or a
    Parquet row's field is one text), each encoded with ``add_special_tokens``: counts per check
    and the first ``examples`` findings of each.

    ``tokenizer`` lints in this process (``workers=1``, the default); other executors load
    ``spec`` in their workers. A cancelled run returns what it linted (``cancelled`` set).
    """
    read = read or ReadOptions(mode="lines", keep_newline=True, piece_bytes=LINT_PIECE_BYTES)
    job = _LintJob(_tokenizer_spec(tokenizer, spec), read, exact, examples, add_special_tokens)
    total = CorpusLint(examples=examples, add_special_tokens=add_special_tokens)

    def reduce(out: ShardOutput, place: ShardPlace) -> bool:
        part: _LintPart = out.partial
        r = part.result
        total.lines += r.lines
        for check, n in r.counts.items():
            total.counts[check] = total.counts.get(check, 0) + n
            sev = total.severities.setdefault(check, {})
            for name, k in r.severities[check].items():
                sev[name] = sev.get(name, 0) + k
            bucket = total.samples.setdefault(check, [])
            for sample, (k, source) in zip(r.samples.get(check, ()), part.where.get(check, ())):
                if len(bucket) < examples:
                    bucket.append({**sample, "line": sample["line"] + place.line_bases[k], "file": source})
        total.cancelled = r.cancelled
        return not r.cancelled

    try:
        _run(job, path, reduce, executor=executor, state=tokenizer, scheduler=scheduler, workers=workers,
             progress=progress, cancel=cancel)
    except CorpusCancelled:
        total.cancelled = True
    return total


# ---------------------------------------------------------------------- the regression check
@dataclass(frozen=True, slots=True)
class _RegressionJob(ShardJob):
    old: TokenizerSpec
    new: TokenizerSpec
    read: ReadOptions
    limit: int

    def key(self) -> tuple[object, ...]:
        return ("tokenizers", (self.old, self.new))

    def prepare(self) -> tuple[Any, Any]:
        return _load_one(self.old), _load_one(self.new)

    def map(self, state: tuple[Any, Any], records: ShardReader, cancel: CancelToken | None) -> RegressionReport:
        texts = (_polled(rec.text, cancel) for rec in records)
        return regression_check(state[0], state[1], texts, limit=self.limit)


def _polled(text: str, cancel: CancelToken | None) -> str:
    if cancel is not None and cancel.cancelled:
        raise CorpusCancelled()
    return text


def regression_corpus(
    old: Any,
    new: Any,
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    specs: tuple[TokenizerSpec, TokenizerSpec] | None = None,
    read: ReadOptions | None = None,
    limit: int = 50,
    executor: Executor | None = None,
    scheduler: str | None = None,
    workers: int | None = 1,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> RegressionReport:
    """`tokviz.analysis.vocab_diff.regression_check` over a corpus: documents numbered in corpus
    order, the first ``limit`` changed documents and lost round trips, on any executor
    (``old``/``new`` count in this process, ``specs`` in workers)."""
    read = read or ReadOptions(mode="lines")
    a, b = specs or (_tokenizer_spec(old, None), _tokenizer_spec(new, None))
    job = _RegressionJob(a, b, read, limit)
    acc = {"documents": 0, "changed": 0, "lost": 0}
    cases: list[Any] = []
    lost_docs: list[int] = []

    def reduce(out: ShardOutput, place: ShardPlace) -> bool:
        part: RegressionReport = out.partial
        acc["documents"] += part.documents
        acc["changed"] += part.changed
        acc["lost"] += part.roundtrip_lost
        first = place.first_record
        cases.extend(replace(c, document=c.document + first) for c in part.cases[: max(0, limit - len(cases))])
        lost_docs.extend(d + first for d in part.roundtrip_cases[: max(0, limit - len(lost_docs))])
        return True

    _run(job, path, reduce, executor=executor, state=(old, new), scheduler=scheduler, workers=workers,
         progress=progress, cancel=cancel)
    return RegressionReport(acc["documents"], acc["changed"], acc["lost"], tuple(cases), tuple(lost_docs))


# ---------------------------------------------------------------------- the audit's token counts
@dataclass(frozen=True, slots=True)
class TokenCounts:
    """How often each id occurs in a corpus (special tokens excluded, as everywhere in tokviz's
    corpus figures): ``counts[i]`` for every id below ``len(counts)``."""

    path: str
    mode: str
    documents: int
    tokens: int
    counts: np.ndarray
    executor: str = "in-process"

    def count(self, id_: int) -> int:
        return int(self.counts[id_]) if 0 <= id_ < self.counts.size else 0


@dataclass(frozen=True, slots=True)
class _CountJob(ShardJob):
    spec: TokenizerSpec
    read: ReadOptions

    def key(self) -> tuple[object, ...]:
        return ("tokenizers", (self.spec,))

    def prepare(self) -> Any:
        return _load_one(self.spec)

    def map(self, state: Any, records: ShardReader, cancel: CancelToken | None) -> tuple[int, np.ndarray, np.ndarray]:
        ids: list[int] = []
        counts = np.zeros(0, dtype=np.int64)
        tokens = 0
        for rec in records:
            if cancel is not None and cancel.cancelled:
                raise CorpusCancelled()
            enc = state.encode(rec.text, add_special_tokens=False)
            mask = enc.special_tokens_mask
            if any(mask):
                ids.extend(i for i, sp in zip(enc.ids, mask) if not sp)
            else:
                ids.extend(enc.ids)
            if len(ids) > 1 << 18:
                counts, tokens = _bincount(counts, ids), tokens + len(ids)
                ids = []
        counts, tokens = _bincount(counts, ids), tokens + len(ids)
        nz = np.flatnonzero(counts)
        return tokens, nz, counts[nz]


def _bincount(counts: np.ndarray, ids: list[int]) -> np.ndarray:
    if not ids:
        return counts
    new = np.bincount(np.asarray(ids, dtype=np.int64))
    if new.size > counts.size:
        new[: counts.size] += counts
        return new
    counts[: new.size] += new
    return counts


def token_counts(
    tokenizer: Any,
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    spec: TokenizerSpec | None = None,
    read: ReadOptions | None = None,
    executor: Executor | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> TokenCounts:
    """Every id's frequency over a corpus (``tokenizer`` counts here, ``spec`` in workers)."""
    read = read or ReadOptions(mode="lines")
    job = _CountJob(_tokenizer_spec(tokenizer, spec), read)
    dense = np.zeros(max(1, int(tokenizer.vocab_size)), dtype=np.int64)
    acc = [0, 0]  # tokens, documents

    def reduce(out: ShardOutput, place: ShardPlace) -> bool:
        nonlocal dense
        tokens, ids, counts = out.partial
        if ids.size and ids[-1] >= dense.size:
            grown = np.zeros(int(ids[-1]) + 1, dtype=np.int64)
            grown[: dense.size] = dense
            dense = grown
        dense[ids] += counts
        acc[0] += tokens
        acc[1] += out.records
        return True

    label = _run(job, path, reduce, executor=executor, state=tokenizer, scheduler=scheduler, workers=workers,
                 progress=progress, cancel=cancel)
    return TokenCounts(describe_paths(path), read.mode, acc[1], acc[0], dense, label)


def audit_with_counts(audit: Any, counts: TokenCounts, *, rare: int = 2, limit: int = 200) -> dict[str, Any]:
    """The audit joined with corpus frequencies: how many entries never occur (or at most ``rare``
    times), by category, and the entries themselves ordered by concern: never seen *and* a
    fragment or unreachable first (the under-trained, glitch-prone ones), then never seen and
    flagged otherwise, then never seen, then rarely seen; by count and id within each group.
    Special, added and marker entries are expected never to occur in text: counted apart."""
    rows = []
    by_cat: dict[str, dict[str, int]] = {"never": {}, "rare": {}}
    expected = 0
    never = rarely = 0
    for t in audit.tokens:
        n = counts.count(t.id)
        if n > rare:
            continue
        if t.kind in ("special", "added", "marker"):
            expected += n == 0
            continue
        cats = t.categories()
        which = "never" if n == 0 else "rare"
        never += n == 0
        rarely += n > 0
        for c in cats:
            by_cat[which][c] = by_cat[which].get(c, 0) + 1
        glitchy = t.unreachable or any(c.startswith("fragment-") for c in cats)
        group = (0 if glitchy else 1 if cats else 2) if n == 0 else 3
        rows.append((group, n, t.id, {"id": t.id, "vocab": t.vocab, "surface_hex": t.surface.hex(),
                                      "count": n, "categories": cats}))
    rows.sort(key=lambda r: r[:3])
    return {
        "path": counts.path,
        "mode": counts.mode,
        "documents": counts.documents,
        "tokens": counts.tokens,
        "distinct_ids": int(np.count_nonzero(counts.counts)),
        "rare_threshold": rare,
        "never_seen": never,
        "rarely_seen": rarely,
        "never_seen_expected": expected,
        "never_seen_by_category": dict(sorted(by_cat["never"].items())),
        "rarely_seen_by_category": dict(sorted(by_cat["rare"].items())),
        "entries": [r[3] for r in rows[:limit]],
        "entries_left_off": max(0, len(rows) - limit),
        "executor": counts.executor,
    }
