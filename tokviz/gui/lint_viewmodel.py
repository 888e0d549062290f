"""The lint panel's view-model: the offset linter (`tokviz.analysis.lint`) over the Inspect text.

After every full encode of the Inspect tab it lints the text in a background lane of its own
(latest request wins; a new encode of the Inspect tab cancels it, so the lint never makes the tab
look busy): HF-compatible and exact findings of ``encode(text, add_special_tokens=False)``, and
the exact spans of the Inspect encoding itself (for the HF/exact toggle of the highlights). A
text longer than `LINT_MAX_CHARS` is linted over its first lines only (``LintView.linted`` says
how far; the panel says so). It hands
the panes their marks through `InspectViewModel.set_lint_marks` (token indexes of the *Inspect*
encoding, so the marks sit on the tokens shown even when special tokens were added), answers
"which stage moved this offset" for a token, and runs corpus lints with progress and cancel.
Never imports widgets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..analysis.corpus import as_token
from ..analysis.corpus_jobs import lint_corpus
from ..analysis.lint import CorpusLint, Finding, LintReport, dumps, lint_encoding, regression_case
from ..engine.encoding import Encoding
from ._compat import emit
from .viewmodel import EncodingUpdate, InspectViewModel
from .workers import CancelToken, Lanes, to_gui

__all__ = ["LintViewModel", "LintView", "LintMarks", "StageRow", "SEVERITY_RANK", "LINT_MAX_CHARS", "lint_cut"]

SEVERITY_RANK = {"error": 0, "warn": 1, "info": 2}

#: the Inspect lint covers at most this many characters of the text (cut at a line end): the
#: lint costs a few times an encode, and on a long text its marks matter where one is looking
LINT_MAX_CHARS = 20_000

#: how far past an unmatched lint token `_index_map` looks for its Inspect token (the Inspect
#: encoding holds a few post-processor or special tokens more, never many in a row)
_MATCH_WINDOW = 16


def lint_cut(text: str, limit: int = LINT_MAX_CHARS) -> int:
    """Where the Inspect lint stops: the whole text, or the end of the last line that fits in
    ``limit`` characters (``limit`` itself when the first line is longer).

    >>> lint_cut("ab\ncd\nef", 7), lint_cut("abcdef", 4), lint_cut("ab", 4)
    (6, 4, 2)
    """
    if len(text) <= limit:
        return len(text)
    cut = text.rfind("\n", 0, limit)
    return cut + 1 if cut > 0 else limit


@dataclass(frozen=True, slots=True)
class LintMarks:
    """What the panes draw: original spans and Inspect token indexes with their worst severity,
    and groups of Inspect tokens that share a character (byte splits: one bracket each)."""

    spans: tuple[tuple[int, int, str], ...]
    tokens: dict[int, str]
    brackets: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class LintView:
    """One lint run: both reports, the linted encoding and the map to the Inspect tokens."""

    hf: LintReport
    exact: LintReport
    encoding: Encoding  # encode(text, add_special_tokens=False)
    to_inspect: tuple[int, ...]  # lint token index -> Inspect token index (-1: not shown)
    inspect: Encoding | None  # the Inspect encoding the map refers to
    inspect_exact: list[tuple[int, int]] | None  # exact spans of the Inspect tokens
    total: int = 0  # characters of the Inspect text (the lint covers ``len(encoding.text)`` of them)

    @property
    def linted(self) -> int:
        """Characters linted (the start of the text; all of it unless it was too long)."""
        return len(self.encoding.text)

    @property
    def partial(self) -> bool:
        return self.linted < self.total

    def report(self, exact: bool) -> LintReport:
        return self.exact if exact else self.hf


@dataclass(frozen=True, slots=True)
class StageRow:
    """One stage of "which stage moved this offset": its span (HF / exact) and its text."""

    stage: str
    hf: tuple[int, int] | None
    exact: tuple[int, int] | None
    text: str
    note: str = ""

    @property
    def moved(self) -> bool:
        return self.hf is not None and self.exact is not None and self.hf != self.exact


def _index_map(lint_enc: Encoding, shown: Encoding | None) -> tuple[int, ...]:
    """Lint tokens -> Inspect tokens, matching (id, span) in order (the Inspect encoding may
    hold post-processor tokens the lint encoding has not)."""
    if shown is None:
        return tuple([-1] * len(lint_enc.ids))
    out: list[int] = []
    j = 0
    n = len(shown.ids)
    for i, id_ in enumerate(lint_enc.ids):
        k = j
        stop = min(n, j + _MATCH_WINDOW)
        while k < stop and (shown.ids[k], shown.offsets[k]) != (id_, lint_enc.offsets[i]):
            k += 1
        if k == stop:
            k = n
        if k < n:
            out.append(k)
            j = k + 1
        else:
            out.append(-1)
    return tuple(out)


class LintViewModel(QObject):
    """State of the lint panel (see the module docstring)."""

    view_changed = Signal(object)  # LintView or None
    busy_changed = Signal(bool)
    corpus_progress = Signal(float, str)  # fraction, message
    corpus_finished = Signal(object)  # CorpusLint
    error_raised = Signal(str)

    def __init__(self, vm: InspectViewModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        # lanes of its own: the lint never makes the Inspect tab (vm.is_busy) look busy
        self._lanes = Lanes(self)
        self._lanes.busy_changed.connect(lambda _lane, _b: emit(self.busy_changed, self._lanes.any_busy()))
        self.exact = False
        self.enabled = True
        self.max_chars = LINT_MAX_CHARS
        self.view: LintView | None = None
        self.corpus: CorpusLint | None = None
        self._corpus_cancel = CancelToken()
        vm.encoding_changed.connect(self._on_update)
        vm.tokenizer_changed.connect(lambda _t: self.refresh())
        inspect_lanes = getattr(vm, "_lanes", None)  # the Inspect tab's own lanes: which job started
        if inspect_lanes is not None:
            inspect_lanes.busy_changed.connect(self._on_inspect_busy)

    def is_busy(self) -> bool:
        """A lint of the Inspect text or of a corpus is running or waiting."""
        return self._lanes.any_busy()

    # ------------------------------------------------------------------ lint of the Inspect text
    def _on_update(self, u: EncodingUpdate) -> None:
        if self.view is not None and self.view.inspect is not u.encoding and self.vm.lint_marks is not None:
            self.vm.set_lint_marks(None)  # the marks belong to the encoding before: off until the next lint
        if not u.partial:
            self.refresh()

    def _on_inspect_busy(self, lane: str, busy: bool) -> None:
        # a new encode (or load) supersedes the lint of the old text: drop it (the next full
        # encode lints again), so the two never compete for the CPU
        if busy and lane in ("encode", "load"):
            self._lanes.cancel("lint")

    def refresh(self) -> None:
        tok, text = self.vm.tokenizer, self.vm.text
        if not self.enabled or tok is None:
            return
        shown = self.vm.encoding
        add = self.vm.add_special_tokens
        allowed = self.vm._allowed_special()  # noqa: SLF001 - the Inspect encode's own option
        part = text[: lint_cut(text, self.max_chars)]

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> LintView | None:
                return _lint_view(tok, text, part, shown, add, allowed, cancel)

            return job

        def done(view: LintView | None) -> None:
            if view is None or view.inspect is not self.vm.encoding or self.vm.text != text:
                return
            self.view = view
            self._publish()
            emit(self.view_changed, view)

        self._lanes.submit("lint", prepare, done, lambda msg: emit(self.error_raised, f"Lint failed: {msg}"))

    def set_exact(self, on: bool) -> None:
        """Lint and highlight exact spans (True) or the HF-compatible ones (False)."""
        self.exact = bool(on)
        self._publish()
        emit(self.view_changed, self.view)

    def _publish(self) -> None:
        view = self.view
        exact_spans = None
        if view is not None and view.inspect is not None and view.inspect_exact is not None:
            exact_spans = (view.inspect, view.inspect_exact)
        self.vm.set_span_mode("exact" if self.exact else "hf", exact_spans)
        self.vm.set_lint_marks(self.marks())

    def marks(self) -> LintMarks | None:
        view = self.view
        if view is None:
            return None
        report = view.report(self.exact)
        spans: list[tuple[int, int, str]] = []
        tokens: dict[int, str] = {}
        brackets: list[tuple[int, ...]] = []
        for f in report.findings:
            shown = tuple(view.to_inspect[i] for i in f.tokens if view.to_inspect[i] >= 0)
            if f.check == "U1":  # a byte split is drawn as one bracket, not as a finding
                if len(shown) > 1:
                    brackets.append(shown)
                continue
            if f.severity == "info" and f.check in ("O1", "D1"):
                continue  # byte-split / expansion duplicates: the bracket or the N1 badge says it
            spans.append((f.span[0], f.span[1], f.severity))
            for i in shown:
                old = tokens.get(i)
                if old is None or SEVERITY_RANK[f.severity] < SEVERITY_RANK[old]:
                    tokens[i] = f.severity
        return LintMarks(tuple(spans), tokens, tuple(brackets))

    def select_finding(self, finding: Finding) -> None:
        """Select the finding's first token in the Inspect panes and highlight its span."""
        view = self.view
        if view is None:
            return
        shown = [view.to_inspect[i] for i in finding.tokens if view.to_inspect[i] >= 0]
        if shown:
            self.vm.select_token(shown[0])
        self.vm.hover(finding.span if finding.span[1] > finding.span[0] else None)

    def lint_index(self, inspect_index: int) -> int:
        """The lint token shown as Inspect token ``inspect_index`` (-1: none)."""
        view = self.view
        if view is None or inspect_index < 0:
            return -1
        try:
            return view.to_inspect.index(inspect_index)
        except ValueError:
            return -1

    # ------------------------------------------------------------------ which stage moved it
    def stage_rows(self, inspect_index: int) -> list[StageRow]:
        """The token's span through raw -> normalized -> pre-token -> token, HF beside exact."""
        view = self.view
        i = self.lint_index(inspect_index)
        if view is None or i < 0:
            return []
        enc = view.encoding
        ex = enc.exact_alignment
        origin = ex.origins[i]
        text = enc.text
        rows: list[StageRow] = []
        hf_final, ex_final = enc.offsets[i], ex.offsets[i]
        notes = "; ".join(f"{f.check}: {f.reason.split(':')[0]}" for f in view.hf.for_token(i) if f.check != "U1")
        if origin is None or enc.stages is None:
            return [StageRow("token", hf_final, ex_final, enc.tokens[i], notes)]
        norm = enc.stages.normalized
        a, b = origin.normalized or (0, 0)
        src = [ex.char_sources[c] for c in range(a, b)]
        ex_norm = (min(s for s, _ in src), max(e for _, e in src)) if src else ex_final
        rows.append(StageRow("raw", None, None, text[min(hf_final[0], ex_final[0]) : max(hf_final[1], ex_final[1])]))
        rows.append(StageRow("normalized", norm.original_span(a, b) if b > a else None, ex_norm, norm.text[a:b],
                             _normalization_note(ex, a, b)))
        if origin.chunk is not None and origin.chunk < len(enc.stages.pre_tokens):
            c = enc.stages.pre_tokens[origin.chunk]
            rows.append(StageRow("pre-token", (c.start, c.end), None, c.text,
                                 f"{origin.synthetic} char inserted by the {origin.inserted_by}" if origin.synthetic else ""))
        rows.append(StageRow("model token", None, origin.raw, enc.tokens[i],
                             "range re-anchored on the token's value" if origin.reanchored else ""))
        rows.append(StageRow("token (final)", hf_final, ex_final, enc.tokens[i], notes))
        return rows

    # ------------------------------------------------------------------ corpus and export
    def _corpus_progress(self, fraction: float, message: str) -> None:  # GUI thread (to_gui)
        emit(self.corpus_progress, fraction, message)

    def lint_corpus(self, path: str | Path, *, examples: int = 5) -> None:
        tok = self.vm.tokenizer
        if tok is None:
            emit(self.error_raised, "Load a tokenizer first")
            return
        exact = self.exact
        self._corpus_cancel.cancel()  # a run still going is superseded by this one
        self._corpus_cancel = run = CancelToken()

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> CorpusLint:
                def progress(stage: str, done: int, total: int) -> None:
                    if stage == "bytes":
                        to_gui(self, "_corpus_progress", done / total if total else 1.0, f"{done:,} of {total:,} bytes")

                stop = as_token(lambda: cancel.cancelled or run.cancelled)
                return lint_corpus(tok, path, exact=exact, examples=examples, progress=progress, cancel=stop)

            return job

        def done(result: CorpusLint) -> None:
            self.corpus = result
            emit(self.corpus_finished, result)

        self._lanes.submit("lint-corpus", prepare, done, lambda msg: emit(self.error_raised, f"Corpus lint failed: {msg}"))

    def cancel_corpus(self) -> None:
        self._corpus_cancel.cancel()

    def export_report(self, path: str | Path) -> None:
        """The current findings (or the last corpus lint) as JSON."""
        if self.view is None:
            raise ValueError("nothing to export yet: no lint")
        data: dict[str, Any] = self.view.report(self.exact).to_json()
        data["tokenizer"] = str(self.vm.tokenizer_path or self.vm.tokenizer_name)
        if self.corpus is not None:
            data["corpus"] = self.corpus.to_json()
        Path(path).write_text(dumps(data), encoding="utf-8")

    def regression_json(self, finding: Finding) -> dict[str, Any]:
        if self.view is None:
            raise ValueError("nothing to export yet: no lint")
        return regression_case(str(self.vm.tokenizer_path or self.vm.tokenizer_name), self.view.encoding, finding)

    def export_regression(self, finding: Finding, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.regression_json(finding), ensure_ascii=False, indent=2), encoding="utf-8")


def _lint_view(tok: Any, text: str, part: str, shown: Encoding | None, add: bool, allowed: str | None,
               cancel: CancelToken) -> LintView | None:
    """Both lints of ``part`` (the start of ``text``), mapped onto the Inspect encoding ``shown``;
    None as soon as ``cancel`` says the request was superseded (checked between the steps)."""
    enc = tok.encode(part, add_special_tokens=False)
    steps = (lambda: enc.exact_alignment, lambda: lint_encoding(tok, enc), lambda: lint_encoding(tok, enc, exact=True))
    results = []
    for step in steps:
        if cancel.cancelled:
            return None
        results.append(step())
    _, hf, exact = results
    if cancel.cancelled:
        return None
    to_inspect = _index_map(enc, shown)
    inspect_exact = None
    if shown is not None and shown.text == text:
        if part == text:
            full = tok.encode(text, add_special_tokens=add, allowed_special=allowed)
            if full.ids == shown.ids and full.offsets == shown.offsets:
                inspect_exact = full.exact_offsets
        else:  # the linted start: its exact spans; the rest keeps the HF-compatible ones
            inspect_exact = list(shown.offsets)
            for i, k in enumerate(to_inspect):
                if k >= 0:
                    inspect_exact[k] = enc.exact_offsets[i]
    return LintView(hf, exact, enc, to_inspect, shown, inspect_exact, len(text))


def _normalization_note(ex: Any, a: int, b: int) -> str:
    notes = []
    absorbed = [cp for cp, c in ex.absorbed.items() if a <= c < b]
    if absorbed:
        notes.append(f"composition: also holds code point{'s' if len(absorbed) > 1 else ''} {', '.join(map(str, sorted(absorbed)))}")
    inserted = [c for c in ex.inserted if a <= c < b]
    if inserted:
        notes.append("prepended marker (no source)")
    return "; ".join(notes)
