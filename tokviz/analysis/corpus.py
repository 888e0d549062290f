"""Corpus-file statistics for N tokenizers (spec C9): streamed, byte-exact, on every core.

A corpus is a file or a folder of files, read through `tokviz.io.textfile.iter_text_blocks`
(UTF-8 exactly; invalid bytes stop the run with the byte offset). It is cut into *documents* by a
mode recorded with the numbers: ``whole`` (one document per file), ``lines`` (split on ``\\n``,
the newline not encoded, empty lines skipped), ``paragraphs`` (blank-line separated) or
``jsonl:FIELD`` (one JSON object per line, the string ``FIELD``). ``lines`` and ``whole`` differ
by the newline tokens (spec 1.iii-H).

Documents go in batches to a process pool (the engine is pure Python, so threads would share one
core). Where processes can be forked the tokenizers are loaded once in this process (or taken from
the caller, the Compare tab's rows) and the workers inherit them; elsewhere each worker loads them
once. A worker counts a whole batch and sends back aggregates only (a few arrays and counters);
results merge in the parent in document order, so the numbers do not depend on the number of
workers.

Neighbour: `tokviz.analysis.compare` measures one text (cuts, atoms, F1); this module counts.

Performance notes: a batch is ~64 KB of text (fewer round trips than one document each, small
enough for a responsive cancel). A batch's documents are joined into one text, so the script
pass, the byte -> script lookups and the per-token statistics run once per batch over numpy
columns (ids, byte spans) instead of per document over Python objects; per-document work is the
encode, the lossless decode and a few list extends. Ids come back as (id, count) columns and
merge into one dense count array. Spawned workers (the first version) paid an interpreter start
and four tokenizer loads each before the first batch, which a short run never recovered.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path

import numpy as np
import regex

from ..engine.errors import TokvizFormatError
from ..io.json_text import loads
from ..io.textfile import BLOCK_BYTES, iter_text_blocks
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
    "TokenizerSpec",
    "Document",
    "TokenizerCorpusStats",
    "CorpusReport",
    "iter_documents",
    "corpus_files",
    "run_corpus",
    "CorpusCancelled",
    "CutTotals",
    "can_fork",
    "compare_report",
    "compare_json",
]

MODES = ("whole", "lines", "paragraphs", "jsonl:FIELD")
BATCH_CHARS = 64_000
_PARAGRAPH_SEP = regex.compile(r"\n(?:[ \t\r\f\v]*\n)+")


class CorpusCancelled(Exception):
    """The run was cancelled (the caller's ``cancelled()`` said so)."""


@dataclass(frozen=True, slots=True)
class TokenizerSpec:
    """How a worker process loads one tokenizer: a file and the load options."""

    name: str
    path: str
    pattern: str | None = None
    special_tokens: tuple[tuple[str, int], ...] | None = None

    def load(self):  # noqa: ANN201 - a Tokenizer
        from ..io.detect import load

        specials = dict(self.special_tokens) if self.special_tokens is not None else None
        return load(self.path, pattern=self.pattern, special_tokens=specials)


@dataclass(frozen=True, slots=True)
class Document:
    """One document: its text, the file it is in and where (byte offset, 1-based line)."""

    index: int
    text: str
    source: str
    byte_offset: int
    line: int


# ---------------------------------------------------------------------- documents
def corpus_files(path: str | os.PathLike[str]) -> list[Path]:
    """The file itself, or a folder's regular files (recursively, sorted, hidden ones skipped)."""
    p = Path(path)
    if p.is_dir():
        return sorted(
            f
            for f in p.rglob("*")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
        )
    if not p.exists():
        raise TokvizFormatError("no such file or folder", source=str(p))
    return [p]


def _check_mode(mode: str) -> str | None:
    """The jsonl field of ``mode`` (None for the other modes); ValueError for an unknown mode."""
    if mode in ("whole", "lines", "paragraphs"):
        return None
    if mode.startswith("jsonl:") and len(mode) > len("jsonl:"):
        return mode[len("jsonl:") :]
    raise ValueError(f"unknown document mode {mode!r}: expected whole, lines, paragraphs or jsonl:FIELD")


def iter_documents(
    path: str | os.PathLike[str],
    mode: str = "whole",
    *,
    progress: Callable[[int, int], None] | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[Document]:
    """Stream the documents of a file or folder in ``mode``; ``progress(done_bytes, total_bytes)``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = p.write_bytes(b"a b\\n\\nc\\n")
    >>> [d.text for d in iter_documents(p, "lines")]
    ['a b', 'c']
    """
    field_name = _check_mode(mode)
    files = corpus_files(path)
    total = sum(f.stat().st_size for f in files)
    done_before = 0
    index = 0
    for f in files:

        def prog(done: int, _total: int, base: int = done_before) -> None:
            if progress is not None:
                progress(base + done, total)

        blocks = iter_text_blocks(f, progress=prog, block_bytes=block_bytes)
        if mode == "whole":
            text = "".join(blocks)
            if text:
                yield Document(index, text, str(f), 0, 1)
                index += 1
        else:
            for text, off, line in _split(blocks, "paragraphs" if mode == "paragraphs" else "lines"):
                if field_name is not None:
                    text = _json_field(text, field_name, f, line)
                    if text is None:
                        continue
                if text:
                    yield Document(index, text, str(f), off, line)
                    index += 1
        done_before += f.stat().st_size


def _split(blocks: Iterator[str], how: str) -> Iterator[tuple[str, int, int]]:
    """(piece, byte offset, 1-based line) of each line or paragraph of a stream of blocks."""
    sep = _PARAGRAPH_SEP if how == "paragraphs" else regex.compile(r"\n")
    rest = ""
    offset = 0  # byte offset of ``rest``
    line = 1  # line number of ``rest``
    for block in blocks:
        buf = rest + block
        pos = 0
        for m in sep.finditer(buf):
            # a paragraph separator may continue in the next block: keep the tail for later
            if how == "paragraphs" and m.end() == len(buf):
                break
            piece = buf[pos : m.start()]
            yield piece, offset, line
            sep_text = buf[m.start() : m.end()]
            offset += len((piece + sep_text).encode("utf-8"))
            line += piece.count("\n") + sep_text.count("\n")
            pos = m.end()
        rest = buf[pos:]
    if rest:
        yield rest, offset, line


def _json_field(line_text: str, field_name: str, f: Path, line: int) -> str | None:
    if not line_text.strip():
        return None
    obj = loads(line_text, source=str(f), where=f"line {line}")
    value = obj.get(field_name) if isinstance(obj, dict) else None
    if not isinstance(value, str):
        return None  # counted as skipped: the object has no string field of that name
    return value


# ---------------------------------------------------------------------- per-batch work (worker side)
_WORKER_TOKS: list = []
_WORKER_ERRORS: list = []


def _load_all(specs: Sequence[TokenizerSpec], loaded: Sequence | None = None) -> tuple[list, list[str | None]]:
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


def _init_worker(specs: Sequence[TokenizerSpec]) -> None:
    """A spawned worker: load every tokenizer once, for all the batches it will count."""
    _init_loaded(*_load_all(specs))


def _init_loaded(toks: list, errors: list[str | None]) -> None:
    """A forked worker: the parent's tokenizers are inherited (fork does not pickle initargs)."""
    _WORKER_TOKS[:] = toks
    _WORKER_ERRORS[:] = errors


def can_fork() -> bool:
    """Whether pool workers are forked (Linux and the BSDs; macOS and Windows spawn)."""
    return "fork" in get_all_start_methods() and sys.platform != "darwin"


@dataclass(frozen=True, slots=True)
class _TokInfo:
    """What the final report needs from a tokenizer (so a pooled run never loads it in the parent)."""

    error: str | None
    vocab_size: int
    tokens: dict[int, str]  # the strings of the top ids


def _describe(toks: Sequence, errors: Sequence[str | None], tops: Sequence[Sequence[int]]) -> list[_TokInfo]:
    out = []
    for tok, err, ids in zip(toks, errors, tops):
        if tok is None:
            out.append(_TokInfo(err or "failed to load", 0, {}))
        else:
            out.append(_TokInfo(None, tok.vocab_size, {i: tok.id_to_token(i) or "" for i in ids}))
    return out


def _worker_describe(tops: Sequence[Sequence[int]]) -> list[_TokInfo]:
    return _describe(_WORKER_TOKS, _WORKER_ERRORS, tops)


def _top_ids(m: _Merger, top_k: int) -> list[list[int]]:
    return [_ranked(p.id_counts, top_k)[0].tolist() for p in m.parts]


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
    """One tokenizer's counts over one batch, or (in the parent) over the batches merged so far.

    Ids are counted as (id, count) columns in a batch and in one dense array indexed by id once
    merged: a batch's result pickles as a few arrays, not as a dict per id."""

    n_tok: int = 0
    per_doc: array = field(default_factory=lambda: array("I"))
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


def _encode_batch(tok, docs: Sequence[tuple[int, str]], part: _Partial, opts: _Options):  # noqa: ANN001, ANN202
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


def _count_one(tok, docs: Sequence[tuple[int, str]], batch: _BatchText, opts: _Options):  # noqa: ANN001, ANN201
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


def _worker_batch(docs: Sequence[tuple[int, str]], opts: _Options) -> _BatchResult:
    return _process_batch(docs, _WORKER_TOKS, opts)


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
    lengths: tuple[int, ...] = ()  # tokens per document, in document order
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
                "seconds": round(self.seconds, 3),
                "workers": self.workers,
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


def _percentile(sorted_values: Sequence[int], q: float) -> int:
    """Nearest-rank percentile (the smallest value with at least q of the values at or below it)."""
    if not sorted_values:
        return 0
    k = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[k]


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 6) if b else None


def _row_json(
    t: TokenizerCorpusStats, rep: CorpusReport, ref: TokenizerCorpusStats | None
) -> dict[str, object]:
    lengths = sorted(t.lengths)
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
            "min": lengths[0] if lengths else 0,
            "p50": _percentile(lengths, 0.5),
            "p90": _percentile(lengths, 0.9),
            "p99": _percentile(lengths, 0.99),
            "max": lengths[-1] if lengths else 0,
        },
        "over_budget_documents": sum(1 for n in lengths if n > rep.budget),
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


class _Merger:
    """Accumulates batch results in document order."""

    def __init__(self, n_tok: int) -> None:
        self.n_char = self.n_byte = self.n_word = self.n_doc = 0
        self.script_chars: Counter = Counter()
        self.script_bytes: Counter = Counter()
        self.script_words: Counter = Counter()
        self.parts = [_Partial() for _ in range(n_tok)]
        self.cuts = CutTotals(n_tok)

    def add(self, r: _BatchResult) -> None:
        self.n_char += r.n_char
        self.n_byte += r.n_byte
        self.n_word += r.n_word
        self.n_doc += r.n_doc
        self.script_chars.update(r.script_chars)
        self.script_bytes.update(r.script_bytes)
        self.script_words.update(r.script_words)
        if r.cuts is not None:
            self.cuts.add(r.cuts)
        for acc, p in zip(self.parts, r.partials):
            if p is None:
                continue
            acc.n_tok += p.n_tok
            acc.per_doc.extend(p.per_doc)
            if p.id_values.size:
                if p.id_values[-1] >= acc.id_counts.size:  # grow the dense counts to the largest id
                    grown = np.zeros(max(int(p.id_values[-1]) + 1, 2 * acc.id_counts.size), dtype=np.int64)
                    grown[: acc.id_counts.size] = acc.id_counts
                    acc.id_counts = grown
                acc.id_counts[p.id_values] += p.id_counts
            acc.unk += p.unk
            acc.byte_fallback += p.byte_fallback
            acc.lossless_docs += p.lossless_docs
            if acc.first_loss is None:
                acc.first_loss = p.first_loss
            acc.script_tokens.update(p.script_tokens)
            acc.script_single.update(p.script_single)


def _script_table(m: _Merger, p: _Partial, *, strr: bool) -> dict[str, dict[str, float | int | None]]:
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
    path: str | os.PathLike[str],
    *,
    mode: str = "whole",
    workers: int | None = None,
    reference: int = 0,
    budget: int = 512,
    top_k: int = 20,
    divergent_k: int = 10,
    lossless: bool = True,
    strr: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    tokenizers: Sequence | None = None,
    cuts: bool = False,
) -> CorpusReport:
    """C9 for every tokenizer of ``specs`` over the corpus at ``path``.

    ``workers``: processes (default: every core; 1 runs in this process). Where processes can be
    forked (`can_fork`), the tokenizers are loaded here once and the workers inherit them;
    elsewhere each worker loads them once. ``tokenizers``: the specs' tokenizers when they are
    already loaded (the Compare tab's rows; a None entry is loaded from its spec). A tokenizer
    that fails to load gets its error in its row; the others go on. ``cancelled()`` is polled
    between batches and raises `CorpusCancelled`. ``strr`` adds the share of words kept as one
    token per script (off by default: it needs every token's char span). ``cuts`` adds the
    micro-averaged boundary F1 matrices (``boundary_f1``, what ``tokviz compare --file`` prints).
    """
    _check_mode(mode)
    opts = _Options(lossless=lossless, strr=strr, cuts=cuts)
    t0 = time.perf_counter()
    if workers is None:  # every core, unless the corpus is too small to pay for starting processes
        small = sum(f.stat().st_size for f in corpus_files(path)) < 2 * BATCH_CHARS
        workers = 1 if small else (os.cpu_count() or 1)
    n_workers = max(1, workers)
    merger = _Merger(len(specs))
    docs_meta = _DocIndex()
    batches = _batches(iter_documents(path, mode, progress=progress), docs_meta)
    fork = n_workers > 1 and can_fork()
    here = _load_all(specs, tokenizers) if n_workers == 1 or fork else None
    # Every object alive now (the tokenizers' vocabularies above all) is left out of the cyclic
    # GC while counting: its passes over them cost CPU in this process, and in forked workers
    # they would also write to every inherited page (copy-on-write) just to visit it. An outer
    # freeze (the caller's) is left as it was: ``gc.unfreeze`` would release all of it.
    outer = gc.get_freeze_count() > 0
    if not outer:
        gc.freeze()
    try:
        if n_workers == 1:
            _count_here(batches, here[0], opts, merger, cancelled)  # type: ignore[index]
            infos = _describe(*here, _top_ids(merger, top_k))  # type: ignore[misc]
        else:
            pooled = _run_pool(specs, batches, merger, n_workers, opts, cancelled, here, top_k)
            infos = pooled if pooled is not None else _describe(*here, _top_ids(merger, top_k))  # type: ignore[misc]
    finally:
        if not outer:
            gc.unfreeze()
    stats = tuple(
        _final_stats(s, info, merger, k, top_k, opts) for k, (s, info) in enumerate(zip(specs, infos))
    )
    ok = [k for k, t in enumerate(stats) if t.error is None]
    return CorpusReport(
        str(path),
        mode,
        merger.n_doc,
        merger.n_char,
        merger.n_byte,
        merger.n_word,
        budget,
        reference,
        stats,
        _most_divergent(stats, reference, docs_meta, divergent_k),
        time.perf_counter() - t0,
        n_workers,
        {key: merger.cuts.f1(key, ok) for key, _, _ in CUT_UNITS} if cuts else None,
    )


def _count_here(batches: Iterator[list[tuple[int, str]]], toks: list, opts: _Options, merger: _Merger, cancelled) -> None:  # noqa: ANN001
    for batch in batches:
        if cancelled is not None and cancelled():
            raise CorpusCancelled()
        merger.add(_process_batch(batch, toks, opts))


# ---------------------------------------------------------------------- tokviz compare --json
def compare_report(sides: Sequence[Side], documents: Iterable[str]) -> dict[str, object]:
    """The ``tokviz compare --json`` object over one text or a few documents, in this process
    (`compare_json` of a `run_corpus` report is the same object for a corpus file, on every core).

    ``tokens`` exclude special tokens (encoded with ``add_special_tokens=False``); every matrix is
    in the order of ``sides``, with None in the rows and columns of a side that failed to load.
    """
    toks = [s.tokenizer for s in sides]
    merger = _Merger(len(sides))
    docs = (Document(k, text, "", 0, 1) for k, text in enumerate(documents))
    _count_here(_batches(docs, _DocIndex()), toks, _Options(lossless=False, strr=False, cuts=True), merger, None)
    ok = [k for k, t in enumerate(toks) if t is not None]
    rows = [
        _compare_row(merger.n_char, merger.n_byte, s, merger.parts[k], _script_table(merger, merger.parts[k], strr=False))
        for k, s in enumerate(sides)
    ]
    f1 = {key: merger.cuts.f1(key, ok) for key, _, _ in CUT_UNITS}
    text = {"chars": merger.n_char, "bytes": merger.n_byte, "words": merger.n_word, "documents": merger.n_doc}
    return _compare_object(sides, text, rows, f1)


def compare_json(sides: Sequence[Side], report: CorpusReport) -> dict[str, object]:
    """The ``tokviz compare --json`` object of a `run_corpus` report counted with ``cuts=True``."""
    if report.boundary_f1 is None:
        raise ValueError("the corpus run did not count cut sets (run_corpus(cuts=True))")
    rows = [_compare_row(report.n_char, report.n_byte, s, t, t.per_script) for s, t in zip(sides, report.tokenizers)]
    text = {"chars": report.n_char, "bytes": report.n_byte, "words": report.n_word, "documents": report.n_doc}
    return _compare_object(sides, text, rows, report.boundary_f1)


def _compare_row(n_char: int, n_byte: int, side: Side, counts, scripts: dict) -> dict[str, object]:  # noqa: ANN001
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


class _DocIndex:
    """Where each document is (file, byte offset, line) in compact arrays: a 100 MB corpus in
    ``lines`` mode has millions of documents; previews are read back only for the ones reported."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.file_of = array("I")
        self.offset = array("Q")
        self.line = array("Q")

    def append(self, d: Document) -> None:
        if not self.files or self.files[-1] != d.source:
            self.files.append(d.source)
        self.file_of.append(len(self.files) - 1)
        self.offset.append(d.byte_offset)
        self.line.append(d.line)

    def where(self, k: int) -> tuple[str, int, int, str]:
        """(file, byte offset, line, a preview of up to 80 chars) of document k."""
        src, off = self.files[self.file_of[k]], self.offset[k]
        try:
            with open(src, "rb") as fh:
                fh.seek(off)
                head = fh.read(400).decode("utf-8", "ignore")
        except OSError:
            head = ""
        return src, off, self.line[k], head.split("\n", 1)[0][:80]


def _batches(docs: Iterator[Document], meta: _DocIndex) -> Iterator[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    size = 0
    for d in docs:
        meta.append(d)
        batch.append((d.index, d.text))
        size += len(d.text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _run_pool(
    specs: Sequence[TokenizerSpec],
    batches: Iterator[list[tuple[int, str]]],
    merger: _Merger,
    n_workers: int,
    opts: _Options,
    cancelled: Callable[[], bool] | None,
    loaded: tuple[list, list[str | None]] | None,
    top_k: int,
) -> list[_TokInfo] | None:
    """Count the batches on ``n_workers`` processes, at most two batches each in flight (memory
    stays flat however long the corpus), merged here in document order. ``loaded``: tokenizers
    the forked workers inherit; None: spawned workers load ``specs`` themselves, and one of them
    describes them at the end (returned; the parent never loaded them)."""
    if loaded is not None:
        # Forking from a process with other threads (the GUI's) is safe enough here: the child
        # only runs the pool's worker loop over pure-Python/numpy code, never Qt, and leaves
        # with os._exit (multiprocessing's fork start), so no inherited lock is ever taken.
        pool = ProcessPoolExecutor(
            max_workers=n_workers, mp_context=get_context("fork"), initializer=_init_loaded, initargs=loaded
        )
    else:
        pool = ProcessPoolExecutor(
            max_workers=n_workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(list(specs),)
        )
    pending: dict[int, Future] = {}
    done: dict[int, _BatchResult] = {}
    next_merge = submitted = 0
    try:
        exhausted = False
        while True:
            while not exhausted and len(pending) < 2 * n_workers:
                b = next(batches, None)
                if b is None:
                    exhausted = True
                    break
                pending[submitted] = pool.submit(_worker_batch, b, opts)
                submitted += 1
            if not pending:
                break
            finished, _ = wait(list(pending.values()), timeout=0.2, return_when=FIRST_COMPLETED)
            if cancelled is not None and cancelled():
                raise CorpusCancelled()
            for k in [k for k, f in pending.items() if f in finished]:
                try:
                    done[k] = pending.pop(k).result()
                except BrokenProcessPool:
                    raise TokvizFormatError(
                        "a worker process died (out of memory?); try fewer workers", source="corpus statistics"
                    ) from None
            while next_merge in done:  # merge in document order
                merger.add(done.pop(next_merge))
                next_merge += 1
        return None if loaded is not None else pool.submit(_worker_describe, _top_ids(merger, top_k)).result()
    finally:
        for f in pending.values():
            f.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _final_stats(
    spec: TokenizerSpec, info: _TokInfo, m: _Merger, k: int, top_k: int, opts: _Options
) -> TokenizerCorpusStats:
    if info.error is not None:
        return TokenizerCorpusStats(spec.name, spec.path, info.error)
    p = m.parts[k]
    size = info.vocab_size
    ids, counts = _ranked(p.id_counts, top_k)
    top = tuple((i, info.tokens.get(i, ""), c) for i, c in zip(ids.tolist(), counts.tolist()))
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
        lengths=tuple(p.per_doc),
        top_ids=top,
        renyi_efficiency=_renyi(p.id_counts, size),
        per_script=_script_table(m, p, strr=opts.strr),
    )


def _most_divergent(stats, reference: int, meta: _DocIndex, k: int) -> tuple[dict[str, object], ...]:  # noqa: ANN001
    ok = [s for s in stats if s.error is None]
    if len(ok) < 2 or not (0 <= reference < len(stats)) or stats[reference].error is not None:
        return ()
    ref = np.asarray(stats[reference].lengths, dtype=np.int64)
    delta = np.max([np.abs(np.asarray(s.lengths, dtype=np.int64) - ref) for s in ok], axis=0)
    picked = np.flatnonzero(delta)
    picked = picked[np.lexsort((picked, -delta[picked]))][:k]  # largest delta first, then document order
    scored = [(-int(delta[d]), int(d)) for d in picked]
    out = []
    for neg, d in scored:
        src, off, line, preview = meta.where(d)
        out.append(
            {
                "document": d,
                "file": src,
                "byte_offset": off,
                "line": line,
                "preview": preview,
                "max_token_delta": -neg,
                "tokens": {s.name: s.lengths[d] for s in ok},
            }
        )
    return tuple(out)
