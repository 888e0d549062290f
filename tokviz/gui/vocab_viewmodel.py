"""The Vocabulary tab's view-model: the audit of the Inspect tab's tokenizer, filtered and sorted.

It follows `InspectViewModel.tokenizer_changed`; the audit (`tokviz.analysis.audit`) runs in the
``audit`` lane with progress and cancel, only while the tab is shown (``set_active``), so loading
a tokenizer never pays for it otherwise. The table is a `VocabTableModel` over the filtered id
list: rows are computed on demand (no per-row objects beyond the audit's own records), so 200k
rows scroll like 20. Search matches the vocab string, the surface text, the surface hex or the id;
facets keep the tokens of any checked category. Export writes the filtered list as CSV or JSON.
Corpus counts (`load_corpus_counts`: `tokviz.analysis.corpus_jobs.token_counts` in the ``corpus``
lane, on the local pool or the Dask scheduler of ``scheduler``) add each entry's frequency (the
``corpus`` column) and the never / rarely seen facets.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal

from ..analysis.audit import TokenAudit, VocabAudit, audit_vocabulary, superstrings
from ..engine.cancel import Cancelled
from ._compat import emit
from .display import hex_bytes, show_piece
from .workers import CancelToken, Lanes, to_gui

__all__ = ["VocabViewModel", "VocabTableModel", "FACETS", "TokenDetail", "COLUMNS"]

#: facet key -> (label, test); a token is shown when it passes any checked facet
FACETS: dict[str, str] = {
    "partial-utf8": "partial UTF-8",
    "single-byte": "single byte",
    "never-valid": "never-valid byte",
    "duplicate-byte": "duplicate byte",
    "unreachable": "unreachable",
    "stage-N": "N normalizer",
    "stage-P": "P pre-tokenizer",
    "stage-A": "A added token",
    "stage-M": "M model",
    "lookalike": "special lookalike",
    "fragment-k1": "fragment F₁",
    "fragment-k64": "fragment F₆₄",
    "special": "special / added",
    "embedding-candidate": "embedding candidate",
    "never-seen": "never seen in the corpus",
    "rarely-seen": "rarely seen in the corpus",
}
COLUMNS: tuple[str, ...] = (
    "id", "vocab string", "surface", "bytes", "len", "rank", "categories", "parents", "children", "embedding",
    "corpus",
)
#: entries seen at most this often (and at least once) are "rarely seen" (as ``tokviz audit --rare``)
RARE = 2
_BADGE = {
    "partial-utf8": "partial", "single-byte": "1B", "ascii": "ascii", "utf8-lead": "lead",
    "utf8-continuation": "cont", "never-valid": "never-valid", "duplicate-byte": "dup-byte",
    "lookalike-added": "lookalike", "lookalike-ordinary": "lookalike!", "unreachable": "unreachable",
    "fragment-k1": "F₁", "fragment-k64": "F₆₄", "special": "special", "added": "added", "marker": "marker",
}


def _label(audit: VocabAudit, id_: int) -> str:
    """How a token is named in the card and the parents column: its surface text for byte-level
    vocabularies (``Ġ``/``Ċ`` strings are unreadable for CJK), else its vocab string (``▁``, ``##``)."""
    t = audit.get(id_)
    if t is None:
        return str(id_)
    return t.surface_text if audit.byte_level else t.vocab


def _facet_keys(t: TokenAudit) -> set[str]:
    cats = set(t.categories())
    keys = {c for c in cats if c in FACETS}
    if any(c.startswith("lookalike") for c in cats):
        keys.add("lookalike")
    if t.kind in ("special", "added"):
        keys.add("special")
    return keys


@dataclass(frozen=True, slots=True)
class TokenDetail:
    """What the detail card shows for one token."""

    token: TokenAudit
    vocab_of: dict[int, str]  # vocab strings of the ids the card mentions (parents, children, instead)
    superstrings: tuple[int, ...]
    rank_kind: str | None
    family: str
    embedding: float | None = None  # the G8 indicator when embeddings are loaded
    embedding_kind: str = ""
    candidate: bool = False


class VocabViewModel(QObject):
    audit_started = Signal(str)  # tokenizer name
    audit_progress = Signal(str, int, int)  # phase, done, total
    audit_changed = Signal(object)  # VocabAudit or None
    rows_changed = Signal()  # filter / search / sort changed the visible rows
    detail_changed = Signal(object)  # TokenDetail or None
    error_raised = Signal(str)
    busy_changed = Signal(bool)
    embeddings_changed = Signal(object)  # EmbeddingReport or None
    counts_changed = Signal(object)  # TokenCounts of the current audit's tokenizer, or None
    counts_progress = Signal(int, int)  # bytes read, bytes in the corpus
    tensor_needed = Signal(str, object)  # path, [(name, shape)]: no known embedding tensor, pick one

    def __init__(self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self.inspect = inspect
        self._lanes = lanes or Lanes(self)
        self._lanes.busy_changed.connect(self._on_busy)
        self.audit: VocabAudit | None = None
        self._audited: Any = None  # the tokenizer the audit belongs to
        self.active = False
        self.search = ""
        self.facets: set[str] = set()
        self.sort_column = 0
        self.sort_descending = False
        self.rows: list[int] = []  # indices into audit.tokens, in display order
        self.counts: Counter[str] = Counter()
        self._facet_sets: dict[str, frozenset[int]] = {}
        self.embeddings: Any = None  # EmbeddingReport of the current audit
        self.corpus_counts: Any = None  # TokenCounts of the current audit's tokenizer
        self.scheduler: str | None = None  # a Dask scheduler address for corpus jobs (the settings')
        self.table = VocabTableModel(self)
        if inspect is not None:
            inspect.tokenizer_changed.connect(lambda _p: self._tokenizer_changed())

    # ------------------------------------------------------------------ audit
    @property
    def tokenizer(self) -> Any:
        return getattr(self.inspect, "tokenizer", None)

    def is_busy(self) -> bool:
        return self._lanes.is_busy("audit")

    def set_active(self, on: bool) -> None:
        """The tab is shown (audit the current tokenizer if not done yet) or hidden."""
        self.active = on
        if on and self.tokenizer is not None and self._audited is not self.tokenizer and not self.is_busy():
            self.refresh()

    def _tokenizer_changed(self) -> None:
        if self.is_busy():
            self._lanes.cancel("audit")
        self._set_audit(None, None)
        if self.active:
            self.refresh()

    def refresh(self) -> None:
        tok = self.tokenizer
        if tok is None:
            return
        name = getattr(self.inspect, "tokenizer_name", "") or getattr(tok, "name", "")
        emit(self.audit_started, name)

        def prepare():  # noqa: ANN202
            def job(token: CancelToken) -> tuple[Any, VocabAudit | None]:
                try:
                    return tok, audit_vocabulary(tok, progress=lambda *p: to_gui(self, "_on_progress", *p), cancel=token)
                except Cancelled:
                    return tok, None

            return job

        def done(result: tuple[Any, VocabAudit | None]) -> None:
            t, audit = result
            if audit is not None and t is self.tokenizer:
                self._set_audit(audit, t)

        def failed(msg: str) -> None:
            emit(self.error_raised, f"audit: {msg}")

        self._lanes.submit("audit", prepare, done, failed)

    def _on_progress(self, phase: str, done: int, total: int) -> None:
        emit(self.audit_progress, phase, done, total)

    def cancel(self) -> None:
        self._lanes.cancel("audit")
        self._lanes.cancel("corpus")

    def _on_busy(self, lane: str, busy: bool) -> None:
        if lane in ("audit", "embeddings", "corpus"):
            emit(self.busy_changed, self.is_busy() or self._lanes.is_busy("embeddings") or self._lanes.is_busy("corpus"))

    # ------------------------------------------------------------------ corpus counts
    def load_corpus_counts(self, path: str | Path, *, mode: str = "lines") -> None:
        """Count every entry over a corpus (file, folder or glob) in a worker: on the Dask
        scheduler of ``scheduler`` when set, else the local pool (in this process for a
        tokenizer without a file the workers could load)."""
        tok, audit = self._audited, self.audit
        if audit is None or tok is None:
            emit(self.error_raised, "corpus counts: run the audit first")
            return
        from ..analysis.corpus import TokenizerSpec, as_token
        from ..analysis.corpus_jobs import token_counts
        from ..io.shards import ReadOptions

        source = getattr(tok, "source", None)
        loadable = bool(source) and Path(str(source)).exists()
        spec = TokenizerSpec(getattr(tok, "name", "") or "tokenizer", str(source or ""))
        scheduler = self.scheduler

        def prepare():  # noqa: ANN202
            def job(token: CancelToken) -> Any:
                def progress(stage: str, done: int, total: int) -> None:
                    if stage == "bytes":
                        to_gui(self, "_on_counts_progress", done, total)

                return tok, token_counts(tok, path, spec=spec, read=ReadOptions(mode=mode), progress=progress,
                                         scheduler=scheduler if loadable else None,
                                         workers=None if loadable else 1, cancel=as_token(lambda: token.cancelled))

            return job

        def done(result: tuple[Any, Any]) -> None:
            if result[0] is self._audited:
                self._set_counts(result[1])

        self._lanes.submit("corpus", prepare, done, lambda msg: emit(self.error_raised, f"corpus counts: {msg}"))

    def _on_counts_progress(self, done: int, total: int) -> None:
        emit(self.counts_progress, done, total)

    def cancel_corpus_counts(self) -> None:
        self._lanes.cancel("corpus")

    def _set_counts(self, counts: Any) -> None:  # noqa: ANN401 - TokenCounts or None
        self.corpus_counts = counts
        never: set[int] = set()
        rare: set[int] = set()
        if counts is not None and self.audit is not None:
            for n, t in enumerate(self.audit.tokens):
                if t.kind in ("special", "added", "marker"):
                    continue  # (expected never to occur in text: not counted as never seen)
                c = counts.count(t.id)
                (never if c == 0 else rare if c <= RARE else set()).add(n)
        for key, picked in (("never-seen", never), ("rarely-seen", rare)):
            self._facet_sets[key] = frozenset(picked)
            self.counts[key] = len(picked)
        emit(self.counts_changed, counts)
        self._refilter()

    def corpus_count(self, id_: int) -> int | None:
        c = self.corpus_counts
        return None if c is None else c.count(id_)

    # ------------------------------------------------------------------ embeddings (G8)
    def load_embeddings(self, path: str | Path, *, tensor: str | None = None) -> None:
        """Read the embedding indicator from a safetensors file (or index json) in a worker."""
        audit = self.audit
        if audit is None:
            emit(self.error_raised, "embeddings: run the audit first")
            return
        from ..analysis.embeddings import EmbeddingTensorNotFound, embedding_report

        def prepare():  # noqa: ANN202
            def job(token: CancelToken) -> Any:
                try:
                    return audit, embedding_report(path, audit, tensor=tensor)
                except EmbeddingTensorNotFound as exc:
                    return audit, exc

            return job

        def done(result: tuple[VocabAudit, Any]) -> None:
            a, report = result
            if a is not self.audit:
                return
            if isinstance(report, Exception):
                emit(self.tensor_needed, str(path), list(getattr(report, "tensors", [])))
                return
            self._set_embeddings(report)

        self._lanes.submit("embeddings", prepare, done, lambda msg: emit(self.error_raised, f"embeddings: {msg}"))

    def _set_embeddings(self, report: Any) -> None:
        self.embeddings = report
        audit = self.audit
        if audit is not None:
            row_of = {t.id: n for n, t in enumerate(audit.tokens)}
            picked = frozenset(row_of[i] for i in (report.candidates if report is not None else ()) if i in row_of)
            self._facet_sets["embedding-candidate"] = picked
            self.counts["embedding-candidate"] = len(picked)
        emit(self.embeddings_changed, report)
        self._refilter()

    def embedding_value(self, id_: int) -> float | None:
        r = self.embeddings
        return r.values[id_] if r is not None and 0 <= id_ < len(r.values) else None

    def _set_audit(self, audit: VocabAudit | None, tok: Any) -> None:
        self.audit = audit
        self._audited = tok
        self._facet_sets = {}
        self.counts = Counter()
        self.embeddings = None
        self.corpus_counts = None
        if audit is not None:
            sets: dict[str, set[int]] = {k: set() for k in FACETS}
            for n, t in enumerate(audit.tokens):
                for k in _facet_keys(t):
                    sets[k].add(n)
            self._facet_sets = {k: frozenset(v) for k, v in sets.items()}
            self.counts = Counter({k: len(v) for k, v in sets.items()})
        emit(self.detail_changed, None)
        emit(self.embeddings_changed, None)
        emit(self.counts_changed, None)
        emit(self.audit_changed, audit)
        self._refilter()

    # ------------------------------------------------------------------ filter and sort
    def set_search(self, text: str) -> None:
        if text != self.search:
            self.search = text
            self._refilter()

    def set_facet(self, key: str, on: bool) -> None:
        if key not in FACETS:
            raise ValueError(f"unknown facet {key!r}")
        if on != (key in self.facets):
            (self.facets.add if on else self.facets.discard)(key)
            self._refilter()

    def set_sort(self, column: int, descending: bool) -> None:
        self.sort_column, self.sort_descending = column, descending
        self._resort()
        self.table.reset_rows()
        emit(self.rows_changed)

    def _refilter(self) -> None:
        audit = self.audit
        if audit is None:
            self.rows = []
        else:
            keep: Sequence[int] = range(len(audit.tokens))
            if self.facets:
                chosen: set[int] = set()
                for k in self.facets:
                    chosen |= self._facet_sets.get(k, frozenset())
                keep = sorted(chosen)
            q = self.search
            if q:
                keep = [n for n in keep if _matches(audit.tokens[n], q)]
            self.rows = list(keep)
            self._resort()
        self.table.reset_rows()
        emit(self.rows_changed)

    def _resort(self) -> None:
        if self.audit is None:
            return
        toks = self.audit.tokens
        if self.sort_column == 0 and not self.sort_descending:
            self.rows.sort()
            return
        if self.sort_column == len(_SORT_KEYS) + 1:  # the corpus count (rows without one first)
            count = self.corpus_count
            self.rows.sort(key=lambda n: (count(toks[n].id) or 0, toks[n].id), reverse=self.sort_descending)
            return
        if self.sort_column == len(_SORT_KEYS):  # the embedding indicator (rows without one last)
            value = self.embedding_value
            self.rows.sort(key=lambda n: (_num(value(toks[n].id)), toks[n].id), reverse=self.sort_descending)
            return
        key = _SORT_KEYS[self.sort_column]
        self.rows.sort(key=lambda n: key(toks[n]), reverse=self.sort_descending)

    def token_at_row(self, row: int) -> TokenAudit | None:
        if self.audit is None or not 0 <= row < len(self.rows):
            return None
        return self.audit.tokens[self.rows[row]]

    def visible_tokens(self) -> list[TokenAudit]:
        return [self.audit.tokens[n] for n in self.rows] if self.audit is not None else []

    # ------------------------------------------------------------------ details and actions
    def select_row(self, row: int) -> None:
        t = self.token_at_row(row)
        emit(self.detail_changed, self.detail(t.id) if t is not None else None)

    def detail(self, id_: int) -> TokenDetail | None:
        audit = self.audit
        t = audit.get(id_) if audit is not None else None
        if t is None:
            return None
        sup = tuple(superstrings(audit, id_, limit=50))
        ids = set(t.parents or ()) | set(t.children) | set(t.instead) | set(sup)
        vocab_of = {i: _label(audit, i) for i in ids if audit.get(i) is not None}
        r = self.embeddings
        return TokenDetail(t, vocab_of, sup, audit.rank_kind, audit.family, self.embedding_value(id_),
                           r.indicator if r is not None else "", r is not None and id_ in r.candidates)

    def surface_for_inspect(self, id_: int) -> str | None:
        """The token's surface as text (None when it is not valid UTF-8)."""
        t = self.audit.get(id_) if self.audit is not None else None
        if t is None:
            return None
        try:
            return t.surface.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def open_in_inspect(self, id_: int) -> bool:
        text = self.surface_for_inspect(id_)
        if text is None or self.inspect is None:
            return False
        self.inspect.set_text(text, from_editor=False)
        return True

    def export(self, path: str | Path) -> int:
        """Write the visible rows as CSV or JSON (by suffix); returns the number of rows."""
        path = Path(path)
        rows = [export_row(t) for t in self.visible_tokens()]
        if self.embeddings is not None:
            for r in rows:
                r["embedding"] = self.embedding_value(r["id"])
        if path.suffix.lower() == ".json":
            summary = self.audit.summary() if self.audit is not None else {}
            data = json.dumps({"tokenizer": getattr(self.audit, "name", ""), "summary": summary,
                               "filter": {"search": self.search, "facets": sorted(self.facets)}, "tokens": rows},
                              ensure_ascii=False, indent=1)
            path.write_bytes(data.encode("utf-8"))
        else:
            buf = io.StringIO(newline="")
            fields = list(_EXPORT_FIELDS) + (["embedding"] if self.embeddings is not None else [])
            w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\r\n")
            w.writeheader()
            for r in rows:
                w.writerow({k: (" ".join(map(str, v)) if isinstance(v, list) else v) for k, v in r.items()})
            path.write_bytes(buf.getvalue().encode("utf-8"))
        return len(rows)

    def histograms(self) -> tuple[list[tuple[int, int]], list[tuple[str, int]]]:
        """(token length in bytes -> count, facet label -> count) for the charts."""
        if self.audit is None:
            return [], []
        lengths = Counter(min(len(t.surface), 32) for t in self.audit.tokens)
        cats = [(FACETS[k], self.counts[k]) for k in FACETS]
        return sorted(lengths.items()), cats


_EXPORT_FIELDS = ("id", "vocab", "surface_hex", "surface_text", "length", "rank", "kind", "categories", "stage",
                  "instead", "parents", "children")


def export_row(t: TokenAudit) -> dict[str, Any]:
    return {
        "id": t.id, "vocab": t.vocab, "surface_hex": t.surface.hex(), "surface_text": t.surface_text,
        "length": len(t.surface), "rank": t.rank, "kind": t.kind, "categories": t.categories(),
        "stage": t.stage, "instead": list(t.instead), "parents": list(t.parents or ()), "children": list(t.children),
    }


def _matches(t: TokenAudit, q: str) -> bool:
    if q.isdigit() and int(q) == t.id:
        return True
    ql = q.lower()
    return ql in t.vocab.lower() or ql in t.surface_text.lower() or ql.replace(" ", "") in t.surface.hex()


def _num(x: float | None) -> float:
    return float("inf") if x is None else float(x)


_SORT_KEYS = (
    lambda t: t.id,
    lambda t: t.vocab,
    lambda t: t.surface,
    lambda t: t.surface,
    lambda t: (len(t.surface), t.id),
    lambda t: (_num(t.rank), t.id),
    lambda t: (len(t.categories()), t.id),
    lambda t: (t.parents or (-1, -1)),
    lambda t: (len(t.children), t.id),
)


class VocabTableModel(QAbstractTableModel):
    """The whole (filtered) vocabulary as a table; cells are made on demand from the audit records."""

    def __init__(self, vm: VocabViewModel) -> None:
        super().__init__(vm)
        self.vm = vm

    def reset_rows(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.vm.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if section == 5 and self.vm.audit is not None and self.vm.audit.rank_kind:
                return self.vm.audit.rank_kind
            if section == 9 and self.vm.embeddings is not None:
                return self.vm.embeddings.indicator
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        t = self.vm.token_at_row(index.row())
        if t is None:
            return None
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return _cell(t, c, self.vm)
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (0, 4, 5, 8, 9, 10):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and c == 6:
            return ", ".join(t.categories()) or "ordinary, reachable"
        if role == Qt.ItemDataRole.UserRole:
            return t.id
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.vm.set_sort(column, order == Qt.SortOrder.DescendingOrder)


def _cell(t: TokenAudit, c: int, vm: VocabViewModel) -> str:
    if c == 0:
        return str(t.id)
    if c == 1:
        return show_piece(t.vocab)
    if c == 2:
        return show_piece(t.surface_text)
    if c == 3:
        return hex_bytes(t.surface[:12]) + (" …" if len(t.surface) > 12 else "")
    if c == 4:
        return str(len(t.surface))
    if c == 5:
        r = t.rank
        return "" if r is None else (f"{r:.4f}" if isinstance(r, float) and not r.is_integer() else f"{int(r)}")
    if c == 6:
        return " ".join(_BADGE.get(x, x) for x in t.categories() if not x.startswith("stage-")) + (
            f" [{t.stage}]" if t.unreachable else "")
    if c == 7:
        if t.parents is None:
            return ""
        audit = vm.audit
        return " + ".join(show_piece(_label(audit, i)) if audit and audit.get(i) else str(i) for i in t.parents)
    if c == 8:
        return str(len(t.children)) if t.children else ""
    if c == 9:
        v = vm.embedding_value(t.id)
        return "" if v is None else f"{v:.4f}"
    if c == 10:
        n = vm.corpus_count(t.id)
        return "" if n is None else f"{n:,}"
    return ""
