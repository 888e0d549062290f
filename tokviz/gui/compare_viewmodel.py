"""The Compare tab's view-model: N tokenizers over one text or one corpus, no widgets.

Rows are tokenizers (loaded in the background, one lane per row so eight load at once); each row
keeps its segmentation of the current text and its surface set Σ (for the overlap). Any change
(text, rows, order) schedules one analysis job (latest wins) that encodes only the rows whose
segmentation is missing and hands the segmentations to the text's
`tokviz.analysis.compare.Comparison`, which keeps every side's results and every pair's counts:
adding a fifth tokenizer encodes one text and computes one side and four pairs. Overlap (|Σ(A)∩Σ(B)|, UpSet patterns) follows in a second lane, the vocabulary
diff of two rows and the corpus statistics (`tokviz.analysis.corpus`, process pool) in their own.

A long text is analysed over its first `WINDOW_CHARS` characters (cut after a line end), and
the tab says so; `analyse_whole` (an explicit user job) analyses all of it, once, in the
background. Eight tokenizers over a 1 MB text took minutes and several GB; the window keeps the
analysis to seconds.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..analysis.compare import (
    Analysis,
    Comparison,
    Segmentation,
    membership_patterns,
    segment,
    surface_ids,
)
from ._compat import emit
from .catalog import format_tag, load_error
from .workers import CancelToken, Lanes, ShownGate, to_gui

__all__ = ["CompareViewModel", "Row", "OverlapResult", "MAX_ROWS"]

MAX_ROWS = 12
#: a longer text is analysed over its first this many characters until the user asks for all
WINDOW_CHARS = 50_000


@dataclass(frozen=True, slots=True)
class Row:
    """One tokenizer of the comparison. ``tokenizer`` is None while loading or after an error."""

    id: int
    name: str  # unique among the rows: the base name, with the format when two rows share it
    path: str | None
    tokenizer: Any = None
    error: str | None = None
    loading: bool = False
    sigma: frozenset[bytes] | None = field(default=None, repr=False)  # Σ, built by the overlap job
    base: str = ""  # the name it was added with

    @property
    def ready(self) -> bool:
        return self.tokenizer is not None


@dataclass(frozen=True, slots=True)
class OverlapResult:
    """L0 surface overlap of the ready rows (specials excluded), in row order."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    matrix: tuple[tuple[int, ...], ...]
    patterns: dict[int, int]  # bit mask of rows -> surfaces in exactly those rows


class CompareViewModel(QObject):
    rows_changed = Signal(object)  # tuple[Row, ...]
    analysis_changed = Signal(object)  # Analysis or None (fewer than one ready row)
    overlap_changed = Signal(object)  # OverlapResult or None
    diff_changed = Signal(object)  # VocabDiff or None
    hover_changed = Signal(object)  # (start, end) chars, or None
    error_raised = Signal(str)
    corpus_progress = Signal(int, int)  # done bytes, total bytes
    corpus_done = Signal(object)  # CorpusReport
    corpus_failed = Signal(str)  # message ("cancelled" when cancelled)
    inspect_requested = Signal(object, int, int)  # path, char start, char end

    def __init__(
        self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None
    ) -> None:
        super().__init__(parent)
        self.inspect = inspect
        self._lanes = lanes or Lanes(self)
        self.scheduler: str | None = None  # a Dask scheduler address for corpus runs (the settings')
        self.corpus_documents = 0  # documents read so far by the running corpus job
        self._ids = itertools.count(1)
        self.rows: list[Row] = []
        self.text = getattr(inspect, "text", "") or ""
        self.analysis: Analysis | None = None
        self.overlap: OverlapResult | None = None
        self.hovered: tuple[int, int] | None = None
        self._segs: dict[int, tuple[str, Segmentation]] = {}  # row id -> (text, segmentation)
        self._comparison: Comparison | None = None  # per-side results and pairs of this text
        self._pending_inspect: tuple[int, int] | None = None
        self.corpus_running = False
        self.whole = False  # the user asked for the whole text, not the window
        # the analysis of the text runs while the tab is shown (corpus runs and diffs always run)
        self._gate = ShownGate(self._analyse_now)
        if inspect is not None:
            inspect.encoding_changed.connect(self._on_inspect_encoding)

    # ------------------------------------------------------------------ rows
    def add_tokenizer(self, path: str | Path, *, name: str | None = None) -> int:
        """Load ``path`` in the background as a new row; returns the row id (-1 when full)."""
        if len(self.rows) >= MAX_ROWS:
            emit(self.error_raised, f"Compare holds at most {MAX_ROWS} tokenizers; remove one first")
            return -1
        path = Path(path)
        row = Row(next(self._ids), name or path.name, str(path), loading=True, base=name or path.name)
        self.rows.append(row)
        self._emit_rows()

        def prepare():  # noqa: ANN202
            def job(_token: CancelToken):  # noqa: ANN202
                from ..io.registry import shared_registry

                return shared_registry().get(path)  # the same object Inspect holds for this file

            return job

        self._lanes.submit(
            f"compare-load-{row.id}",
            prepare,
            lambda tok: self._loaded(row.id, tok),
            lambda msg: self._failed(row.id, msg),
        )
        return row.id

    def add_loaded(self, tok: Any, *, name: str, path: str | None = None) -> int:
        """Add an already loaded tokenizer (tests, the Inspect tab's current one)."""
        if len(self.rows) >= MAX_ROWS:
            emit(self.error_raised, f"Compare holds at most {MAX_ROWS} tokenizers; remove one first")
            return -1
        row = Row(next(self._ids), name, path, tok, base=name)
        self.rows.append(row)
        self._emit_rows()
        self._schedule()
        return row.id

    def _index_of(self, row_id: int) -> int:
        return next((k for k, r in enumerate(self.rows) if r.id == row_id), -1)

    def _loaded(self, row_id: int, tok: Any) -> None:
        k = self._index_of(row_id)
        if k < 0:
            return  # removed while loading
        self.rows[k] = replace(self.rows[k], tokenizer=tok, loading=False)
        self._emit_rows()
        self._schedule()

    def _failed(self, row_id: int, msg: str) -> None:
        k = self._index_of(row_id)
        if k < 0:
            return
        self.rows[k] = replace(self.rows[k], error=msg, loading=False)
        self._emit_rows()
        emit(self.error_raised, load_error(self.rows[k].path or self.rows[k].name, msg))

    def remove(self, index: int) -> None:
        if 0 <= index < len(self.rows):
            row = self.rows.pop(index)
            self._segs.pop(row.id, None)
            self._lanes.cancel(f"compare-load-{row.id}")
            self._emit_rows()
            self._schedule()

    def move(self, index: int, delta: int) -> None:
        """Move row ``index`` up (-1) or down (+1)."""
        j = index + delta
        if 0 <= index < len(self.rows) and 0 <= j < len(self.rows):
            self.rows[index], self.rows[j] = self.rows[j], self.rows[index]
            self._emit_rows()
            self._schedule()

    def ready_rows(self) -> list[Row]:
        return [r for r in self.rows if r.ready]

    def _emit_rows(self) -> None:
        self._name_rows()
        emit(self.rows_changed, tuple(self.rows))

    def _name_rows(self) -> None:
        """Give rows that share a name the file format ("Mistral 7B v0.1 · json" / "· .model"),
        and a number when that is shared too (the same file twice)."""
        def tagged(r: Row) -> str:
            base = r.base or r.name
            if sum((o.base or o.name) == base for o in self.rows) < 2:
                return base
            return f"{base} · {format_tag(r.path) if r.path else 'in memory'}"

        names = [tagged(r) for r in self.rows]
        seen: dict[str, int] = {}
        for k, r in enumerate(self.rows):
            n = names[k]
            if names.count(n) > 1:
                seen[n] = seen.get(n, 0) + 1
                n = f"{n} ({seen[n]})"
            if n != r.name:
                self.rows[k] = replace(r, name=n)

    # ------------------------------------------------------------------ text and analysis
    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.whole = False  # a new text is windowed again until asked
            self._schedule()

    def analysed_text(self) -> str:
        """The part of the text analysed: all of it, or its first `WINDOW_CHARS` (module docstring)."""
        text = self.text
        if self.whole or len(text) <= WINDOW_CHARS:
            return text
        cut = text.rfind("\n", 0, WINDOW_CHARS)
        return text[: cut + 1] if cut >= WINDOW_CHARS // 2 else text[:WINDOW_CHARS]

    @property
    def windowed(self) -> bool:
        """Whether the analysis covers only the start of the text."""
        return len(self.analysed_text()) < len(self.text)

    def analyse_whole(self) -> None:
        """Analyse the whole text (an explicit job: it runs even while the tab is hidden)."""
        if not self.whole and self.windowed:
            self.whole = True
            self._analyse_now()

    def set_active(self, on: bool) -> None:
        """The tab is shown (analyse the text if it changed meanwhile) or hidden (analyses wait)."""
        self._gate.set_shown(on)

    @property
    def stale(self) -> bool:
        """Whether the shown analysis is not of the current rows and text (the tab was hidden)."""
        return self._gate.stale

    def _schedule(self) -> None:
        if not self._gate.request():
            self._lanes.cancel("compare-analysis")  # a hidden tab's older analysis is not wanted

    def _analyse_now(self) -> None:
        rows = self.ready_rows()
        text = self.analysed_text()
        if not rows:
            self.analysis = None
            emit(self.analysis_changed, None)
            self._schedule_overlap()
            return
        cached = {
            r.id: self._segs[r.id][1] for r in rows if r.id in self._segs and self._segs[r.id][0] == text
        }
        if self._comparison is None or self._comparison.text != text:
            self._comparison = Comparison(text)
        comparison = self._comparison

        def prepare():  # noqa: ANN202
            def job(token: CancelToken):  # noqa: ANN202
                segs = []
                for r in rows:
                    if token.cancelled:
                        return None
                    seg = cached.get(r.id)
                    if seg is None:
                        seg = segment(r.tokenizer, text, name=r.name)
                    segs.append(seg if seg.name == r.name else replace(seg, name=r.name))
                # only the new rows' results and their pairs are computed (see Comparison)
                return rows, segs, comparison.analyze(segs)

            return job

        self._lanes.submit("compare-analysis", prepare, self._analysed, self._job_failed)

    def _analysed(self, result: Any) -> None:
        if result is None:
            return
        rows, segs, analysis = result
        for r, s in zip(rows, segs):
            self._segs[r.id] = (analysis.text, s)
        self.analysis = analysis
        emit(self.analysis_changed, analysis)
        self._schedule_overlap()

    def _job_failed(self, msg: str) -> None:
        emit(self.error_raised, f"Compare: {msg}")

    def _schedule_overlap(self) -> None:
        """|Σ(A)∩Σ(B)| of the ready rows; a row's Σ is built here the first time (an o200k
        vocabulary takes a while: never on the GUI thread, never before the rows' analysis)."""
        rows = self.ready_rows()

        def prepare():  # noqa: ANN202
            def job(token: CancelToken) -> tuple[OverlapResult, dict[int, frozenset[bytes]]] | None:
                sets, built = [], {}
                for r in rows:
                    if token.cancelled:
                        return None
                    sigma = r.sigma if r.sigma is not None else frozenset(surface_ids(r.tokenizer))
                    if r.sigma is None:
                        built[r.id] = sigma
                    sets.append(sigma)
                matrix = tuple(
                    tuple(len(a & b) if i != j else len(a) for j, b in enumerate(sets)) for i, a in enumerate(sets)
                )
                patterns = dict(membership_patterns(sets)) if sets else {}
                res = OverlapResult(tuple(r.name for r in rows), tuple(len(s) for s in sets), matrix, patterns)
                return res, built

            return job

        def done(result: tuple[OverlapResult, dict[int, frozenset[bytes]]] | None) -> None:
            if result is None:
                return
            res, built = result
            for k, r in enumerate(self.rows):
                if r.id in built and r.sigma is None:
                    self.rows[k] = replace(r, sigma=built[r.id])
            self.overlap = res
            emit(self.overlap_changed, res)

        self._lanes.submit("compare-overlap", prepare, done, self._job_failed)

    def segmentation(self, row_index: int) -> Segmentation | None:
        """The current text's segmentation of row ``row_index`` (None until analysed)."""
        if not 0 <= row_index < len(self.rows):
            return None
        hit = self._segs.get(self.rows[row_index].id)
        return hit[1] if hit is not None and hit[0] == self.analysed_text() else None

    # ------------------------------------------------------------------ hover and Inspect
    def hover(self, span: tuple[int, int] | None) -> None:
        if span != self.hovered:
            self.hovered = span
            emit(self.hover_changed, span)

    def open_in_inspect(self, row_index: int, start: int, end: int) -> None:
        """Show row ``row_index``'s tokenizer in the Inspect tab on this text, token at ``start`` selected."""
        if not 0 <= row_index < len(self.rows) or self.inspect is None:
            return
        row = self.rows[row_index]
        insp = self.inspect
        self._pending_inspect = (start, end)
        if insp.text != self.text:
            insp.set_text(self.text, from_editor=False)
        same = row.tokenizer is not None and getattr(insp, "tokenizer", None) is row.tokenizer
        if not same:
            if row.path is not None:
                insp.load_tokenizer(row.path, name=row.name)
            else:
                insp.set_tokenizer(row.tokenizer, name=row.name)
        else:
            self._select_pending()
        emit(self.inspect_requested, row.path, start, end)

    def _on_inspect_encoding(self, _update: Any) -> None:
        if self._pending_inspect is not None:
            self._select_pending()

    def _select_pending(self) -> None:
        insp = self.inspect
        if insp is None or self._pending_inspect is None or insp.encoding is None or insp.text != self.text:
            return
        start, _end = self._pending_inspect
        self._pending_inspect = None
        i = insp.token_at(start)
        if i >= 0:
            insp.select_token(i)

    # ------------------------------------------------------------------ diff of two rows
    def compute_diff(self, a: int, b: int, *, corpus: str | None = None, mode: str = "lines") -> None:
        """Vocabulary diff of rows ``a`` (old) and ``b`` (new), with the regression check on ``corpus``."""
        if not (0 <= a < len(self.rows) and 0 <= b < len(self.rows)) or not (
            self.rows[a].ready and self.rows[b].ready
        ):
            emit(self.error_raised, "Diff needs two loaded tokenizers")
            return
        old, new = self.rows[a], self.rows[b]
        text = self.text

        def prepare():  # noqa: ANN202
            def job(token: CancelToken):  # noqa: ANN202
                from ..analysis.corpus import iter_documents
                from ..analysis.vocab_diff import regression_check, vocab_diff

                d = vocab_diff(old.tokenizer, new.tokenizer, old_name=old.name, new_name=new.name)
                docs = (x.text for x in iter_documents(corpus, mode)) if corpus else [text]
                reg = regression_check(old.tokenizer, new.tokenizer, docs, cancel=token)
                return d, reg

            return job

        self._lanes.submit("compare-diff", prepare, lambda r: emit(self.diff_changed, r), self._job_failed)

    # ------------------------------------------------------------------ corpus mode
    def _corpus_progress(self, done: int, total: int) -> None:  # GUI thread (to_gui)
        emit(self.corpus_progress, done, total)

    def _corpus_documents(self, documents: int) -> None:  # GUI thread (to_gui), just before _corpus_progress
        self.corpus_documents = documents

    def _corpus_report(self, stage: str, done: int, total: int) -> None:  # worker thread
        if stage == "documents":
            to_gui(self, "_corpus_documents", done)
        elif stage == "bytes":
            to_gui(self, "_corpus_progress", done, total)

    def run_corpus(self, path: str | Path, *, mode: str = "lines", workers: int | None = None) -> bool:
        """C9 statistics of every row with a file over ``path`` (processes, progress, cancel)."""
        from ..analysis.corpus import TokenizerSpec, run_corpus

        rows = [r for r in self.rows if r.ready and r.path is not None]
        specs = [TokenizerSpec(r.name, r.path) for r in rows]  # type: ignore[arg-type]
        loaded = [r.tokenizer for r in rows]  # counted with in this process; pool workers load their own
        if not specs:
            emit(self.error_raised, "Corpus statistics need tokenizers opened from files")
            return False
        self.corpus_running = True
        self.corpus_documents = 0
        scheduler = self.scheduler

        def prepare():  # noqa: ANN202
            def job(token: CancelToken):  # noqa: ANN202
                return run_corpus(
                    specs,
                    path,
                    mode=mode,
                    workers=workers,
                    scheduler=scheduler if workers is None else None,
                    progress=self._corpus_report,
                    cancelled=lambda: token.cancelled,
                    tokenizers=loaded,
                )

            return job

        def done(report: Any) -> None:
            self.corpus_running = False
            emit(self.corpus_done, report)

        def failed(msg: str) -> None:
            self.corpus_running = False
            emit(self.corpus_failed, msg)

        self._lanes.submit("compare-corpus", prepare, done, failed)
        return True

    def cancel_corpus(self) -> None:
        if self.corpus_running:
            self._lanes.cancel("compare-corpus")
            self.corpus_running = False
            emit(self.corpus_failed, "cancelled")

    def is_busy(self) -> bool:
        return any(r.loading for r in self.rows) or any(
            self._lanes.is_busy(lane)
            for lane in ("compare-analysis", "compare-overlap", "compare-diff", "compare-corpus")
        )
