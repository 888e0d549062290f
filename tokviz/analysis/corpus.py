"""Corpus statistics for N tokenizers (spec C9): streamed, byte-exact, on any executor.

A corpus is files, folders or glob patterns of text, JSON lines or Parquet, read by
`tokviz.io.shards` (UTF-8 exactly; invalid bytes stop the run with the byte offset) and cut into
*documents* by a mode recorded with the numbers: ``whole`` (one document per file, a file over
1 MiB cut into pieces at line ends), ``lines`` (split on ``\\n``, the newline not encoded, empty
lines skipped), ``paragraphs`` (blank-line separated); a JSON line or Parquet row is one
document (its ``field``). ``lines`` and ``whole`` differ by the newline tokens (spec 1.iii-H).

The work is a `tokviz.io.executor.ShardJob`: each worker loads the tokenizers once from their
files (`TokenizerSpec`) and counts whole shards into aggregates (a few arrays and counters, a
histogram of tokens per document, its most divergent documents); the shards' counts are reduced
here in corpus order, so the report is the same on one process, a local pool or a Dask cluster
(only ``seconds``, ``workers`` and ``executor`` say which ran it).

Neighbour: `tokviz.analysis.compare` measures one text (cuts, atoms, F1); this module counts.

Performance notes: a batch is ~64 KB of text (fewer calls than one document each, small enough
for a responsive cancel). A batch's documents are joined into one text, so the script pass, the
byte -> script lookups and the per-token statistics run once per batch over numpy columns (ids,
byte spans) instead of per document over Python objects; per-document work is the encode, the
lossless decode and a few list extends. Ids come back as (id, count) columns and merge into one
dense count array. Tokens per document are kept as a histogram (exact percentiles, memory that
does not grow with the number of documents). Forked workers (an earlier version) inherited the
caller's tokenizers for free but forked a GUI process with threads; workers now start clean and
load the tokenizers themselves, which costs a second or so per worker and run.
"""

from __future__ import annotations

import gc
import math
import os
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from ..engine.cancel import CancelToken
from ..engine.errors import TokvizFormatError
from ..io.executor import (
    CorpusCancelled,
    Executor,
    InProcess,
    ShardJob,
    ShardPlace,
    executor_for,
    run_shards,
)
from ..io.shards import (
    MAX_RECORD_BYTES,
    ReadOptions,
    Record,
    ShardReader,
    corpus_files,
    describe_paths,
    iter_records,
    plan_shards,
)
from .compare import (
    CUT_UNITS,
    WORD_PATTERN,
    ScriptMap,
    ScriptStats,
    Side,
    TextIndex,
    collapse_positions,
    count_words,
    overlap_matrix,
    per_script_spans,
    text_by_script,
)
from .facts import TokenizerFacts

__all__ = [
    "MODES",
    "CorpusCancelled",
    "CorpusReport",
    "CorpusStatsJob",
    "CutTotals",
    "Document",
    "TokenizerCorpusStats",
    "TokenizerSpec",
    "as_token",
    "compare_json",
    "compare_report",
    "corpus_files",
    "iter_documents",
    "load_specs",
    "run_corpus",
]

MODES = ("whole", "lines", "paragraphs", "jsonl:FIELD")
BATCH_CHARS = 64_000


@dataclass(frozen=True, slots=True)
class TokenizerSpec:
    """How a worker process loads one tokenizer: a file and the load options."""

    name: str
    path: str
    pattern: str | None = None
    special_tokens: tuple[tuple[str, int], ...] | None = None

    def load(self):
        from ..io.detect import load

        specials = dict(self.special_tokens) if self.special_tokens is not None else None
        return load(self.path, pattern=self.pattern, special_tokens=specials)


@dataclass(frozen=True, slots=True)
class Document:
    """One document: its text, the file it is in and where (byte offset, 1-based line), and which
    piece of its record it is (0 unless the record was cut: `tokviz.io.shards`)."""

    index: int
    text: str
    source: str
    byte_offset: int | None
    line: int
    piece: int = 0


# ---------------------------------------------------------------------- documents
def iter_documents(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    mode: str = "whole",
    *,
    field: str = "text",
    max_record: int = MAX_RECORD_BYTES,
    progress: Callable[[str, int, int], None] | None = None,
) -> Iterator[Document]:
    """Stream the documents of a corpus in ``mode``, in this process; ``progress("bytes", done,
    total)`` as files are read.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = p.write_bytes(b"a b\\n\\nc\\n")
    >>> [d.text for d in iter_documents(p, "lines")]
    ['a b', 'c']
    """
    read = ReadOptions(mode=mode, field=field, max_record=max_record)
    files = corpus_files(path)
    total = sum(f.stat().st_size for f in files)
    for k, (rec, done) in enumerate(iter_records(files, read)):
        if progress is not None:
            progress("bytes", done, total)
        yield Document(k, rec.text, rec.source, rec.byte_offset, rec.line, rec.piece)
    if progress is not None:
        progress("bytes", total, total)


class as_token:
    """A `CancelToken`-like view of a ``cancelled()`` callable (the GUI's lanes give one)."""

    __slots__ = ("_poll",)

    def __init__(self, poll: Callable[[], bool]) -> None:
        self._poll = poll

    @property
    def cancelled(self) -> bool:
        return bool(self._poll())


# ---------------------------------------------------------------------- loading
def load_specs(specs: Sequence[TokenizerSpec], loaded: Sequence | None = None) -> tuple[list, list[str | None]]:
    """The tokenizers of ``specs`` (None where loading failed) and the error messages; an entry
    of ``loaded`` that is not None is that spec's tokenizer, already in memory."""
    toks: list = []
    errors: list[str | None] = []
    for k, spec in enumerate(specs):
        if loaded is not None and k < len(loaded) and loaded[k] is not None:
            toks.append(loaded[k])
            errors.append(None)
            continue
        try:
            toks.append(spec.load())
            errors.append(None)
        except (TokvizFormatError, OSError, ValueError) as exc:
            toks.append(None)
            errors.append(str(exc))
    return toks, errors


def _ranked(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k most frequent ids and their counts (ties: the smaller id first)."""
    ids = np.flatnonzero(counts)
    order = np.lexsort((ids, -counts[ids]))[:k]
    return ids[order], counts[ids[order]]


@dataclass(frozen=True, slots=True)
class _Options:
    lossless: bool  # decode every document and compare (tokenizer-arena's check)
    strr: bool  # count the words kept as one token (needs every token's char span)
    cuts: bool = False  # count |A|, |A∩B| of the cut sets (boundary F1 of `tokviz compare --file`)
    reference: int = 0  # the tokenizer the most divergent documents are measured against
    divergent_k: int = 10


class CutTotals:
    """Running |A| and |A∩B| of every pair of tokenizers, per cut unit (`CUT_UNITS`), summed over
    documents: the micro-averaged boundary F1 (the cuts of all documents pooled) without keeping
    any cut set."""

    def __init__(self, n: int) -> None:
        self.size = {key: np.zeros(n, dtype=np.int64) for key, _, _ in CUT_UNITS}
        self.common = {key: np.zeros((n, n), dtype=np.int64) for key, _, _ in CUT_UNITS}

    def add(self, other: CutTotals) -> None:
        for key in self.size:
            self.size[key] += other.size[key]
            self.common[key] += other.common[key]

    def f1(self, key: str, ok: Sequence[int]) -> list[list[float | None]]:
        """The F1 matrix of unit ``key`` (None in the rows and columns not in ``ok``)."""
        n = self.size[key].size
        size, common = self.size[key].tolist(), self.common[key].tolist()
        out: list[list[float | None]] = [[None] * n for _ in range(n)]
        for i in ok:
            for j in ok:
                total = size[i] + size[j]
                out[i][j] = 1.0 if i == j or not total else round(2 * common[i][j] / total, 6)
        return out


@dataclass(slots=True)
class _Partial:
    """One tokenizer's counts over one batch, or over the batches of a shard or corpus so far.

    Ids are counted as (id, count) columns in a batch (and in a shard's result, which pickles as
    a few arrays, not as a dict per id) and in one dense array indexed by id while merging.
    ``per_doc`` (tokens per document) is a batch's; merged counts keep ``lengths``, a histogram."""

    n_tok: int = 0
    per_doc: array = field(default_factory=lambda: array("I"))
    lengths: Counter = field(default_factory=Counter)
    id_values: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    id_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    unk: int = 0
    byte_fallback: int = 0
    lossless_docs: int = 0
    first_loss: tuple[int, int] | None = None  # (document index, first differing char)
    script_tokens: Counter = field(default_factory=Counter)
    script_single: Counter = field(default_factory=Counter)


@dataclass(slots=True)
class _BatchResult:
    n_char: int
    n_byte: int
    n_word: int
    n_doc: int
    script_chars: Counter
    script_bytes: Counter
    script_words: Counter
    partials: list[_Partial | None]
    cuts: CutTotals | None = None


@dataclass(frozen=True, slots=True)
class _BatchText:
    """A batch's documents joined by ``\\n`` into one text (one index, one script pass for the
    batch): tokens never cross a document, the separator is Common and in no word, so every
    per-script figure is the sum over the documents once the separators' chars are taken off."""

    index: TextIndex
    script_map: ScriptMap
    char_base: np.ndarray  # char offset of each document in the joined text
    byte_base: np.ndarray  # byte offset of each document in the joined text
    byte_edges: np.ndarray  # every document's first and end byte (never a cut)

    @classmethod
    def of(cls, texts: Sequence[str]) -> _BatchText:
        ix = TextIndex("\n".join(texts))
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        char_base = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
        bounds = ix.bounds_array()
        edges = np.concatenate((bounds[char_base], bounds[char_base + lengths]))
        return cls(ix, ScriptMap(ix), char_base, bounds[char_base], edges)

    def cut_arrays(self, s: np.ndarray, e: np.ndarray) -> dict[str, np.ndarray]:
        """The cut sets (`CUT_UNITS`) of tokens with byte spans [s, e) in the joined text: the
        union of every document's cuts, each as `tokviz.analysis.compare` defines them."""
        ix = self.index
        byte = np.unique(np.concatenate((s, e)))
        byte = byte[~np.isin(byte, self.byte_edges)]  # 0 and the end of a document are no cuts
        p = ix.floor_array()[byte]
        char = p[ix.bounds_array()[p] == byte]
        out = {"char_raw": char, "byte": byte}
        for key, unit, collapse in CUT_UNITS:
            if collapse:
                raw = char if unit == "char" else byte
                base = self.char_base if unit == "char" else self.byte_base
                moved = collapse_positions(raw, ix, unit=unit)
                # a White_Space run may go on through the separator into the neighbour document:
                # a cut moved to its document's start (or before) is none, as in the document alone
                start = base[np.searchsorted(base, raw, side="right") - 1]
                out[key] = np.unique(moved[moved > start])
        return out


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _process_batch(docs: Sequence[tuple[int, str]], toks: Sequence, opts: _Options) -> _BatchResult:
    """Count one batch of (document index, text) for every tokenizer (None = failed to load)."""
    texts = [text for _, text in docs]
    batch = _BatchText.of(texts)
    ix = batch.index
    seps = len(texts) - 1
    chars, nbytes, words = text_by_script(ix, batch.script_map)
    chars, nbytes = Counter(chars), Counter(nbytes)
    chars["Common"] -= seps
    nbytes["Common"] -= seps
    res = _BatchResult(
        ix.n_chars - seps, ix.n_bytes - seps, count_words(ix.text), len(docs), +chars, +nbytes, Counter(words), []
    )
    cuts: dict[int, dict[str, np.ndarray]] = {}
    for k, tok in enumerate(toks):
        if tok is None:
            res.partials.append(None)
            continue
        part, cuts[k] = _count_one(tok, docs, batch, opts)
        res.partials.append(part)
    if opts.cuts:
        res.cuts = _cut_totals(cuts, len(toks))
    return res


def _cut_totals(cuts: dict[int, dict[str, np.ndarray]], n: int) -> CutTotals:
    totals = CutTotals(n)
    for key in totals.size:
        for i, a in cuts.items():
            totals.size[key][i] = a[key].size
            for j, b in cuts.items():
                if j > i:
                    c = np.intersect1d(a[key], b[key], assume_unique=True).size
                    totals.common[key][i, j] = totals.common[key][j, i] = c
    return totals


def _encode_batch(tok, docs: Sequence[tuple[int, str]], part: _Partial, opts: _Options):
    """Encode every document; (ids, byte spans, special mask, tokens per document) as columns.
    The per-document Python work is a few list extends (C loops over the token lists)."""
    ids: list[int] = []
    spans: list[int] = []
    mask: list[int] = []
    sizes = array("q")
    for doc_index, text in docs:
        enc = tok.encode(text, add_special_tokens=False)
        ids.extend(enc.ids)
        spans.extend(chain.from_iterable(enc.byte_offsets))
        mask.extend(enc.special_tokens_mask)
        sizes.append(len(enc.ids))
        if opts.lossless:
            back = tok.decode(enc.ids)
            if back == text:
                part.lossless_docs += 1
            elif part.first_loss is None:
                part.first_loss = (doc_index, _first_difference(back, text))
    n = len(ids)
    return (
        np.array(ids, dtype=np.int64),
        np.array(spans, dtype=np.int64).reshape(n, 2),
        np.array(mask, dtype=bool),
        np.frombuffer(sizes, dtype=np.int64),
    )


def _count_one(tok, docs: Sequence[tuple[int, str]], batch: _BatchText, opts: _Options):
    """One tokenizer's `_Partial` of the batch, and its cut sets when ``opts.cuts``."""
    part = _Partial()
    ids, spans, special, sizes = _encode_batch(tok, docs, part, opts)
    doc_of = np.repeat(np.arange(len(docs)), sizes)
    spans += batch.byte_base[doc_of][:, None]  # into the joined text's coordinates
    keep = ~special
    counted = ids[keep]
    part.n_tok = int(counted.size)
    part.per_doc = array("I", np.bincount(doc_of[keep], minlength=len(docs)).astype(np.uint32).tobytes())
    part.id_values, part.id_counts = np.unique(counted, return_counts=True)
    facts = TokenizerFacts.of(tok)
    unk = facts.unknown_ids
    if unk:
        part.unk = int(np.isin(counted, list(unk)).sum())
    fallback = facts.byte_piece_ids
    if fallback:
        part.byte_fallback = int(np.isin(counted, list(fallback)).sum())
    keep &= spans[:, 0] != spans[:, 1]
    s, e = spans[keep, 0], spans[keep, 1]
    for name, st in per_script_spans(batch.index, s, e, script_map=batch.script_map, strr=opts.strr).items():
        if st.tokens:
            part.script_tokens[name] += st.tokens
        if st.single_token_words:
            part.script_single[name] += st.single_token_words
    return part, (batch.cut_arrays(s, e) if opts.cuts else None)


# ---------------------------------------------------------------------- merged results
@dataclass(frozen=True, slots=True)
class TokenizerCorpusStats:
    """C9 for one tokenizer over the whole corpus. Special tokens are excluded from every count."""

    name: str
    path: str
    error: str | None
    n_tok: int = 0
    vocab_size: int = 0
    distinct_ids: int = 0
    unk: int = 0
    byte_fallback: int = 0
    lossless_docs: int = 0
    first_loss: tuple[int, int] | None = None
    length_counts: tuple[tuple[int, int], ...] = ()  # (tokens in a document, documents), by length
    top_ids: tuple[tuple[int, str, int], ...] = ()  # (id, token, count)
    renyi_efficiency: float | None = None
    per_script: dict[str, dict[str, float | int | None]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CorpusReport:
    """Everything a corpus run measured, with the mode and units recorded."""

    path: str
    mode: str
    n_doc: int
    n_char: int
    n_byte: int
    n_word: int
    budget: int
    reference: int
    tokenizers: tuple[TokenizerCorpusStats, ...]
    divergent: tuple[dict[str, object], ...]
    seconds: float
    workers: int
    boundary_f1: dict[str, list[list[float | None]]] | None = None  # `CUT_UNITS` key -> N×N, if counted
    executor: str = "in-process"
    skipped: int = 0  # JSON lines / Parquet rows without the string field
    split: int = 0  # records longer than a piece, cut into pieces (`tokviz.io.shards`)
    field: str | None = None  # the JSON / Parquet field read, when the corpus has such files

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; every ratio's unit is in its name."""
        ref = self.tokenizers[self.reference] if self.tokenizers else None
        rows = []
        for t in self.tokenizers:
            if t.error is not None:
                rows.append({"name": t.name, "path": t.path, "error": t.error})
                continue
            rows.append(_row_json(t, self, ref))
        return {
            "corpus": {
                "path": self.path,
                "mode": self.mode,
                "documents": self.n_doc,
                "chars": self.n_char,
                "bytes": self.n_byte,
                "words": self.n_word,
                "token_budget": self.budget,
                "reference": ref.name if ref is not None else None,
                "field": self.field,
                "skipped_records": self.skipped,
                "split_records": self.split,
                "seconds": round(self.seconds, 3),
                "workers": self.workers,
                "executor": self.executor,
            },
            "tokenizers": rows,
            "most_divergent_documents": list(self.divergent),
        }

    def to_csv(self) -> str:
        """One row per tokenizer (the scalar columns of `to_json`)."""
        import csv
        import io

        rows = self.to_json()["tokenizers"]
        cols = [
            "name",
            "path",
            "error",
            "tokens",
            "chars_per_token",
            "bytes_per_token",
            "tokens_per_word",
            "tokens_per_1k_chars",
            "premium_vs_reference",
            "distinct_ids",
            "vocab_utilisation",
            "unk_rate",
            "byte_fallback_rate",
            "lossless_rate",
            "over_budget_documents",
            "renyi_efficiency_2_5",
        ]
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:  # type: ignore[union-attr]
            w.writerow({c: r.get(c, "") for c in cols})  # type: ignore[union-attr]
        return buf.getvalue()


def _percentile(histogram: Sequence[tuple[int, int]], q: float) -> int:
    """Nearest-rank percentile of a histogram of (value, count) sorted by value: the smallest
    value with at least q of the values at or below it.

    >>> _percentile([(1, 2), (5, 1), (9, 1)], 0.5), _percentile([(1, 2), (5, 1), (9, 1)], 0.75)
    (1, 5)
    """
    n = sum(c for _, c in histogram)
    if not n:
        return 0
    k = max(0, math.ceil(q * n) - 1)  # the index of the value in the sorted list of all values
    seen = 0
    for value, count in histogram:
        seen += count
        if seen > k:
            return value
    return histogram[-1][0]


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 6) if b else None


def _row_json(
    t: TokenizerCorpusStats, rep: CorpusReport, ref: TokenizerCorpusStats | None
) -> dict[str, object]:
    lengths = t.length_counts
    return {
        "name": t.name,
        "path": t.path,
        "tokens": t.n_tok,
        "chars_per_token": _ratio(rep.n_char, t.n_tok),
        "bytes_per_token": _ratio(rep.n_byte, t.n_tok),
        "tokens_per_word": _ratio(t.n_tok, rep.n_word),
        "tokens_per_1k_chars": _ratio(1000 * t.n_tok, rep.n_char),
        "premium_vs_reference": _ratio(t.n_tok, ref.n_tok) if ref is not None and ref.error is None else None,
        "distinct_ids": t.distinct_ids,
        "vocab_size": t.vocab_size,
        "vocab_utilisation": _ratio(t.distinct_ids, t.vocab_size),
        "unk_rate": _ratio(t.unk, t.n_tok),
        "byte_fallback_rate": _ratio(t.byte_fallback, t.n_tok),
        "lossless_rate": _ratio(t.lossless_docs, rep.n_doc),
        "first_lossy_document": (
            None if t.first_loss is None else {"document": t.first_loss[0], "char": t.first_loss[1]}
        ),
        "tokens_per_document": {
            "min": lengths[0][0] if lengths else 0,
            "p50": _percentile(lengths, 0.5),
            "p90": _percentile(lengths, 0.9),
            "p99": _percentile(lengths, 0.99),
            "max": lengths[-1][0] if lengths else 0,
        },
        "over_budget_documents": sum(c for n, c in lengths if n > rep.budget),
        "top_ids": [{"id": i, "token": s, "count": c} for i, s, c in t.top_ids],
        "renyi_efficiency_2_5": t.renyi_efficiency,
        "per_script": t.per_script,
    }


def _renyi(counts: np.ndarray, vocab_size: int, alpha: float = 2.5) -> float | None:
    """Rényi entropy (order α) of the unigram id distribution over log2 |V| (Zouhar et al. 2023)."""
    total = int(counts.sum())
    if not total or vocab_size < 2:
        return None
    p = counts[counts > 0] / total
    h = math.log2(float(np.sum(p**alpha))) / (1 - alpha)
    return round(h / math.log2(vocab_size), 6)


# ---------------------------------------------------------------------- sums of batches and shards
@dataclass(frozen=True, slots=True)
class _Divergent:
    """A document whose token counts differ most from the reference's (``document`` and ``line``
    are the shard's until `_Counts.add` places them in the corpus)."""

    delta: int
    document: int
    file: str
    byte_offset: int | None
    line: int
    part: int
    piece: int
    preview: str
    tokens: tuple[int | None, ...]  # per tokenizer (None: failed to load)

    def key(self) -> tuple[int, int]:
        return (-self.delta, self.document)  # largest delta first, then corpus order


class _Counts:
    """Sums of batch results: a shard's (in its worker) or the corpus's (here, shard by shard in
    corpus order). Every figure is a sum, a histogram or a first/best-k in document order, so the
    sum does not depend on how the documents were grouped."""

    def __init__(self, n_tok: int) -> None:
        self.n_char = self.n_byte = self.n_word = self.n_doc = 0
        self.script_chars: Counter = Counter()
        self.script_bytes: Counter = Counter()
        self.script_words: Counter = Counter()
        self.parts = [_Partial() for _ in range(n_tok)]
        self.cuts = CutTotals(n_tok)
        self.divergent: list[_Divergent] = []

    def _add_sums(self, r: _BatchResult | _Counts) -> None:
        self.n_char += r.n_char
        self.n_byte += r.n_byte
        self.n_word += r.n_word
        self.n_doc += r.n_doc
        self.script_chars.update(r.script_chars)
        self.script_bytes.update(r.script_bytes)
        self.script_words.update(r.script_words)
        if r.cuts is not None:
            self.cuts.add(r.cuts)

    def add_batch(self, r: _BatchResult, docs: Sequence[Record], first: int, opts: _Options) -> None:
        """A batch's result (its documents ``docs``, the first numbered ``first`` in the shard)."""
        self._add_sums(r)
        for acc, p in zip(self.parts, r.partials):
            if p is None:
                continue
            values, counts = np.unique(np.frombuffer(p.per_doc, dtype=np.uint32), return_counts=True)
            acc.lengths.update(dict(zip(values.tolist(), counts.tolist())))
            _add_partial(acc, p, 0)
        if opts.divergent_k:
            self._keep(_divergent_of(r, docs, first, opts), opts.divergent_k)

    def add(self, other: _Counts, place: ShardPlace, k: int) -> None:
        """A shard's counts, placed in the corpus; ``k``: the most divergent documents kept."""
        self._add_sums(other)
        for acc, p in zip(self.parts, other.parts):
            acc.lengths.update(p.lengths)
            _add_partial(acc, p, place.first_record)
        moved = [
            _Divergent(d.delta, d.document + place.first_record, d.file, d.byte_offset,
                       d.line + place.line_bases[d.part], d.part, d.piece, d.preview, d.tokens)
            for d in other.divergent
        ]
        self._keep(moved, k)

    def _keep(self, new: list[_Divergent], k: int) -> None:
        if new:
            self.divergent = sorted(self.divergent + new, key=_Divergent.key)[:k]

    def sparse(self) -> _Counts:
        """The same counts with ids as (id, count) columns (what a shard sends back)."""
        for p in self.parts:
            if p.id_counts.size and not p.id_values.size:
                ids = np.flatnonzero(p.id_counts)
                p.id_values, p.id_counts = ids, p.id_counts[ids]
        return self


def _add_partial(acc: _Partial, p: _Partial, first: int) -> None:
    """Add ``p`` (ids as columns) to ``acc`` (ids dense); ``first``: where p's documents start."""
    acc.n_tok += p.n_tok
    if p.id_values.size:
        if p.id_values[-1] >= acc.id_counts.size:  # grow the dense counts to the largest id
            grown = np.zeros(max(int(p.id_values[-1]) + 1, 2 * acc.id_counts.size), dtype=np.int64)
            grown[: acc.id_counts.size] = acc.id_counts
            acc.id_counts = grown
        acc.id_counts[p.id_values] += p.id_counts
    acc.unk += p.unk
    acc.byte_fallback += p.byte_fallback
    acc.lossless_docs += p.lossless_docs
    if acc.first_loss is None and p.first_loss is not None:
        acc.first_loss = (p.first_loss[0] + first, p.first_loss[1])
    acc.script_tokens.update(p.script_tokens)
    acc.script_single.update(p.script_single)


def _divergent_of(r: _BatchResult, docs: Sequence[Record], first: int, opts: _Options) -> list[_Divergent]:
    """The batch's documents that differ from the reference, best ``opts.divergent_k`` first."""
    ok = [k for k, p in enumerate(r.partials) if p is not None]
    ref = opts.reference
    if len(ok) < 2 or ref not in ok:
        return []
    per = {k: np.frombuffer(r.partials[k].per_doc, dtype=np.uint32).astype(np.int64) for k in ok}
    delta = np.max([np.abs(per[k] - per[ref]) for k in ok], axis=0)
    picked = np.flatnonzero(delta)
    picked = picked[np.lexsort((picked, -delta[picked]))][: opts.divergent_k]
    out = []
    for d in picked.tolist():
        rec = docs[d]
        tokens = tuple(int(per[k][d]) if k in per else None for k in range(len(r.partials)))
        out.append(_Divergent(int(delta[d]), first + d, rec.source, rec.byte_offset, rec.line, rec.part,
                              rec.piece, rec.text.split("\n", 1)[0][:80], tokens))
    return out


def _batches(records: Iterable[Record]) -> Iterator[list[Record]]:
    batch: list[Record] = []
    size = 0
    for rec in records:
        batch.append(rec)
        size += len(rec.text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _count_records(
    records: Iterable[Record], toks: Sequence, opts: _Options, cancel: CancelToken | None
) -> _Counts:
    """Every batch of ``records`` counted for every tokenizer (None = failed to load)."""
    counts = _Counts(len(toks))
    first = 0
    for batch in _batches(records):
        if cancel is not None and cancel.cancelled:
            raise CorpusCancelled()
        r = _process_batch([(first + k, rec.text) for k, rec in enumerate(batch)], toks, opts)
        counts.add_batch(r, batch, first, opts)
        first += len(batch)
    return counts


@dataclass(frozen=True, slots=True)
class CorpusStatsJob(ShardJob):
    """The corpus statistics as a shard job: the tokenizers of ``specs`` count each shard."""

    specs: tuple[TokenizerSpec, ...]
    read: ReadOptions
    opts: _Options

    def key(self) -> tuple[object, ...]:
        return ("tokenizers", self.specs)

    def prepare(self) -> tuple[list, list[str | None]]:
        return load_specs(self.specs)

    def map(self, state: tuple[list, list[str | None]], records: ShardReader, cancel: CancelToken | None) -> _Counts:
        return _count_records(records, state[0], self.opts, cancel).sparse()


def _script_table(m: _Counts, p: _Partial, *, strr: bool) -> dict[str, dict[str, float | int | None]]:
    out = {}
    for name in sorted(set(m.script_chars) | set(p.script_tokens), key=lambda n: (-m.script_chars[n], n)):
        st = ScriptStats(
            name,
            p.script_tokens[name],
            m.script_chars[name],
            m.script_bytes[name],
            m.script_words[name],
            p.script_single[name],
        )
        out[name] = st.to_json()
        if not strr:
            out[name]["strr"] = None  # not computed (run_corpus(strr=True) computes it)
    return out


def run_corpus(
    specs: Sequence[TokenizerSpec],
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    mode: str = "whole",
    field: str = "text",
    max_record: int = MAX_RECORD_BYTES,
    workers: int | None = None,
    scheduler: str | None = None,
    executor: Executor | None = None,
    reference: int = 0,
    budget: int = 512,
    top_k: int = 20,
    divergent_k: int = 10,
    lossless: bool = True,
    strr: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    cancel: CancelToken | None = None,
    cancelled: Callable[[], bool] | None = None,
    tokenizers: Sequence | None = None,
    cuts: bool = False,
) -> CorpusReport:
    """C9 for every tokenizer of ``specs`` over the corpus at ``path`` (files, folders, globs).

    The executor is ``executor``, else `tokviz.io.executor.executor_for` of ``scheduler`` (a Dask
    address or ``local:N``) and ``workers`` (processes; 1 runs here; default every core, or here
    for a small corpus). ``tokenizers``: the specs' tokenizers when they are already loaded (the
    Compare tab's rows; a None entry is loaded from its spec): the report's token strings come
    from them and the in-process executor uses them. A tokenizer that fails to load gets its
    error in its row; the others go on. ``cancel`` (or ``cancelled()``) is polled between
    batches and shards and raises `CorpusCancelled`; ``progress(stage, done, total)`` reports
    ``bytes`` and ``documents`` as shards finish. ``strr`` adds the share of words kept as one
    token per script (it needs every token's char span); ``cuts`` the micro-averaged boundary F1
    matrices (``boundary_f1``, what ``tokviz compare --file`` prints).
    """
    t0 = time.perf_counter()
    read = ReadOptions(mode=mode, field=field, max_record=max_record)
    files = corpus_files(path)
    shards = plan_shards(files, read)
    opts = _Options(lossless=lossless, strr=strr, cuts=cuts, reference=reference, divergent_k=divergent_k)
    job = CorpusStatsJob(tuple(specs), read, opts)
    here = load_specs(specs, tokenizers)
    if cancel is None and cancelled is not None:
        cancel = as_token(cancelled)  # type: ignore[assignment]
    own = executor is None
    if executor is None:
        executor = executor_for(scheduler=scheduler, workers=workers, corpus_bytes=sum(s.size for s in shards), state=here)
    total = _Counts(len(specs))
    outputs = [0, 0]
    try:
        with _gc_frozen(isinstance(executor, InProcess)):
            for out, place in run_shards(job, shards, executor, progress=progress, cancel=cancel):
                total.add(out.partial, place, divergent_k)
                outputs[0] += sum(st.skipped for st in out.stats)
                outputs[1] += sum(st.split for st in out.stats)
    finally:
        if own:
            executor.close()
    stats = tuple(_final_stats(s, tok, err, total, k, top_k, opts) for k, (s, tok, err) in enumerate(zip(specs, *here)))
    ok = [k for k, t in enumerate(stats) if t.error is None]
    return CorpusReport(
        describe_paths(path), mode, total.n_doc, total.n_char, total.n_byte, total.n_word, budget, reference, stats,
        _divergent_json(total, stats, reference), time.perf_counter() - t0, executor.workers,
        {key: total.cuts.f1(key, ok) for key, _, _ in CUT_UNITS} if cuts else None,
        executor=executor.label, skipped=outputs[0], split=outputs[1],
        field=read.json_field if any(read.kind_of(str(f))[0] != "text" for f in files) else None,
    )


class _gc_frozen:
    """Every object alive now (the tokenizers' vocabularies above all) left out of the cyclic GC
    while counting in this process: its passes over them cost CPU for nothing. An outer freeze
    (the caller's) is left as it was: ``gc.unfreeze`` would release all of it."""

    def __init__(self, on: bool) -> None:
        self.on = on and gc.get_freeze_count() == 0

    def __enter__(self) -> None:
        if self.on:
            gc.freeze()

    def __exit__(self, *exc: object) -> None:
        if self.on:
            gc.unfreeze()


def _final_stats(
    spec: TokenizerSpec, tok: Any, error: str | None, m: _Counts, k: int, top_k: int, opts: _Options
) -> TokenizerCorpusStats:
    if tok is None:
        return TokenizerCorpusStats(spec.name, spec.path, error or "failed to load")
    p = m.parts[k]
    size = tok.vocab_size
    ids, counts = _ranked(p.id_counts, top_k)
    top = tuple((i, tok.id_to_token(i) or "", c) for i, c in zip(ids.tolist(), counts.tolist()))
    return TokenizerCorpusStats(
        spec.name,
        spec.path,
        None,
        n_tok=p.n_tok,
        vocab_size=size,
        distinct_ids=int(np.count_nonzero(p.id_counts)),
        unk=p.unk,
        byte_fallback=p.byte_fallback,
        lossless_docs=p.lossless_docs,
        first_loss=p.first_loss,
        length_counts=tuple(sorted(p.lengths.items())),
        top_ids=top,
        renyi_efficiency=_renyi(p.id_counts, size),
        per_script=_script_table(m, p, strr=opts.strr),
    )


def _divergent_json(m: _Counts, stats: Sequence[TokenizerCorpusStats], reference: int) -> tuple[dict[str, object], ...]:
    ok = [k for k, s in enumerate(stats) if s.error is None]
    if len(ok) < 2 or not (0 <= reference < len(stats)) or stats[reference].error is not None:
        return ()
    return tuple(
        {
            "document": d.document,
            "file": d.file,
            "byte_offset": d.byte_offset,
            "line": d.line,
            "piece": d.piece,
            "preview": d.preview,
            "max_token_delta": d.delta,
            "tokens": {stats[k].name: d.tokens[k] for k in ok},
        }
        for d in m.divergent
    )


# ---------------------------------------------------------------------- tokviz compare --json
def compare_report(sides: Sequence[Side], documents: Iterable[str]) -> dict[str, object]:
    """The ``tokviz compare --json`` object over one text or a few documents, in this process
    (`compare_json` of a `run_corpus` report is the same object for a corpus, on any executor).

    ``tokens`` exclude special tokens (encoded with ``add_special_tokens=False``); every matrix is
    in the order of ``sides``, with None in the rows and columns of a side that failed to load.
    """
    toks = [s.tokenizer for s in sides]
    records = (Record(text, "", 0, 1) for text in documents if text)
    m = _count_records(records, toks, _Options(lossless=False, strr=False, cuts=True, divergent_k=0), None)
    ok = [k for k, t in enumerate(toks) if t is not None]
    rows = [
        _compare_row(m.n_char, m.n_byte, s, m.parts[k], _script_table(m, m.parts[k], strr=False))
        for k, s in enumerate(sides)
    ]
    f1 = {key: m.cuts.f1(key, ok) for key, _, _ in CUT_UNITS}
    text = {"chars": m.n_char, "bytes": m.n_byte, "words": m.n_word, "documents": m.n_doc}
    return _compare_object(sides, text, rows, f1)


def compare_json(sides: Sequence[Side], report: CorpusReport) -> dict[str, object]:
    """The ``tokviz compare --json`` object of a `run_corpus` report counted with ``cuts=True``."""
    if report.boundary_f1 is None:
        raise ValueError("the corpus run did not count cut sets (run_corpus(cuts=True))")
    rows = [_compare_row(report.n_char, report.n_byte, s, t, t.per_script) for s, t in zip(sides, report.tokenizers)]
    text = {"chars": report.n_char, "bytes": report.n_byte, "words": report.n_word, "documents": report.n_doc}
    return _compare_object(sides, text, rows, report.boundary_f1)


def _compare_row(n_char: int, n_byte: int, side: Side, counts, scripts: dict) -> dict[str, object]:
    """One tokenizer's row; ``counts`` has ``n_tok`` (a `_Partial` or `TokenizerCorpusStats`)."""
    error = side.error if side.tokenizer is None else getattr(counts, "error", None)
    if error is not None or side.tokenizer is None:
        return {"name": side.name, "path": side.path, "error": error or "failed to load"}
    n = counts.n_tok
    return {
        "name": side.name,
        "path": side.path,
        "tokens": n,
        "chars_per_token": round(n_char / n, 6) if n else None,
        "bytes_per_token": round(n_byte / n, 6) if n else None,
        "per_script": {k: {"tokens": v["tokens"], "chars": v["chars"], "bytes": v["bytes"]} for k, v in scripts.items()},
    }


def _compare_object(sides: Sequence[Side], text: dict, rows: list, f1: dict) -> dict[str, object]:  # type: ignore[type-arg]
    ok = [k for k, s in enumerate(sides) if s.tokenizer is not None]
    overlap = overlap_matrix([sides[k].tokenizer for k in ok])  # type: ignore[misc]
    pos = {k: n for n, k in enumerate(ok)}
    n = len(sides)
    return {
        "text": text,
        "units": {"chars": "code points", "bytes": "UTF-8 bytes", "words": WORD_PATTERN},
        "tokenizers": rows,
        "boundary_f1": f1,
        "vocab_overlap_l0": [
            [overlap[pos[i]][pos[j]] if i in pos and j in pos else None for j in range(n)] for i in range(n)
        ],
    }
