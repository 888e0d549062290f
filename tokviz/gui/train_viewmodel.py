"""The Train tab's view-model: training runs, the merge slider's step views, the rank cutoff.

Widgets call methods (``set_corpus``, ``train``, ``cancel``, ``set_step``, ``set_probe`` ...)
and listen to signals; they never touch the trainers or the engine.

* **Training** runs the trainer generator (`tokviz.training`) on a dedicated thread (a long run
  must not occupy the shared pool the Inspect tab encodes on). Events are forwarded in batches
  (at most ~20 per second) so a run with thousands of merges does not flood the GUI thread.
  ``cancel`` sets the trainer's `CancelToken`; the trainer stops between steps, the previous
  result stays on screen.
* **Stepping**: ``set_step(k)`` asks for the view "after the first k merges" in the ``step`` lane
  (latest request wins): merge k, the pair table before it, the most frequent corpus words as
  segmented after k merges, the probe text tokenized with the first k merges. All of it reads
  the recorded training history (`BpeResult` queries), nothing is retrained.
* **Rank cutoff**: the same for a real BPE tokenizer loaded in the Inspect tab
  (`tokviz.engine.cutoff.RankCutoff`): the Inspect text tokenized with only its first k merges.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal

from ..analysis.facts import TokenizerFacts
from ..training.events import (
    Cancelled,
    CancelToken as TrainCancel,
    Done,
    EMIteration,
    MergeEvent,
    Progress,
    PruneRound,
)
from ..training.words import corpus_lines
from ._compat import emit
from .workers import CancelToken, Lanes, background_done, background_started, to_gui

__all__ = [
    "ALGORITHMS",
    "TrainConfig",
    "TrainViewModel",
    "StepView",
    "WordRow",
    "CutoffView",
    "ProbeResult",
    "make_trainer",
]

#: key -> (title, tooltip)
ALGORITHMS: dict[str, tuple[str, str]] = {
    "bpe-byte": ("Byte-level BPE", "GPT-2 style: the 256 byte symbols, GPT-2 regex pre-tokenizer, merges by pair count"),
    "bpe-char": ("Character BPE", "characters as the alphabet, whitespace/punctuation words, optional </w> suffix"),
    "wordpiece": ("WordPiece", "merges by score f(xy) / (f(x) f(y)), ## continuation prefix"),
    "unigram": ("Unigram", "seed vocabulary, EM with forward-backward, pruning by likelihood loss"),
}

_PROBE_MAX_CHARS = 4000
_CUTOFF_MAX_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class TrainConfig:
    algorithm: str = "bpe-byte"
    vocab_size: int = 300
    min_frequency: int = 0
    special_tokens: tuple[str, ...] = ()
    end_of_word_suffix: str = ""  # character BPE only
    em_iterations: int = 2  # Unigram only
    shrinking_factor: float = 0.75  # Unigram only
    max_piece_length: int = 16  # Unigram only


def make_trainer(cfg: TrainConfig) -> Any:
    """The trainer for ``cfg`` (the CLI's `make_trainer`, plus the GUI-only options)."""
    from ..engine.errors import TokvizFormatError
    from ..training.factory import make_trainer as cli_trainer

    specials = list(cfg.special_tokens)
    if cfg.algorithm == "bpe-byte":
        return cli_trainer("bpe", vocab_size=cfg.vocab_size, byte_level=True, min_frequency=cfg.min_frequency,
                           special_tokens=specials)
    if cfg.algorithm == "bpe-char":
        from ..training.bpe import BpeTrainer
        from ..training.words import whitespace_spec

        suffix = cfg.end_of_word_suffix or None
        spec = whitespace_spec(decoder={"type": "BPEDecoder", "suffix": suffix} if suffix else None)
        return BpeTrainer(vocab_size=cfg.vocab_size, min_frequency=cfg.min_frequency, special_tokens=specials,
                          end_of_word_suffix=suffix, spec=spec)
    if cfg.algorithm == "wordpiece":
        return cli_trainer("wordpiece", vocab_size=cfg.vocab_size, min_frequency=cfg.min_frequency,
                           special_tokens=specials)
    if cfg.algorithm == "unigram":
        from ..training.unigram import UnigramTrainer

        return UnigramTrainer(
            vocab_size=cfg.vocab_size,
            special_tokens=specials or ["<unk>"],
            min_frequency=cfg.min_frequency,
            em_iterations=cfg.em_iterations,
            shrinking_factor=cfg.shrinking_factor,
            max_piece_length=cfg.max_piece_length,
        )
    raise TokvizFormatError(f"unknown algorithm {cfg.algorithm!r} ({', '.join(ALGORITHMS)})")


@dataclass(frozen=True, slots=True)
class WordRow:
    """One corpus word as segmented at the current step."""

    word: str
    count: int
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    touched: bool  # contains the token merge k created


@dataclass(frozen=True, slots=True)
class StepView:
    """Everything the merge slider shows at step k (= after the first k merges)."""

    k: int
    n: int
    merge: MergeEvent | None  # merge number k (1-based), i.e. the one that produced this step
    next_merge: MergeEvent | None  # the merge the pair table is deciding (merge k+1)
    table_step: int  # the pair table shows the counts after this many merges
    pair_rows: tuple[Any, ...]  # tokviz.training.bpe.PairRow
    words: tuple[WordRow, ...]
    distinct_words: int
    vocab_size: int
    corpus_tokens: int
    probe: Any  # Encoding when compute_step was given a probe text (the view-model uses its own lane)
    probe_error: str | None
    seconds: float


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """The probe text tokenized with the first k merges (Unigram: the final model)."""

    k: int
    text: str
    encoding: Any  # Encoding or None
    error: str | None
    seconds: float
    surfaces: tuple[bytes, ...] = ()  # each token's own bytes (`TokenizerFacts.surface`)


@dataclass(frozen=True, slots=True)
class CutoffView:
    k: int
    n: int
    label: str  # what merge k added
    encoding: Any
    full_tokens: int
    seconds: float


@dataclass
class TrainRun:
    """A finished training run and the events it produced."""

    config: TrainConfig
    result: Any
    merges: list[MergeEvent] = field(default_factory=list)
    em: list[EMIteration] = field(default_factory=list)
    prunes: list[PruneRound] = field(default_factory=list)
    seconds: float = 0.0
    corpus_chars: int = 0
    # caches filled by the step queries (worker thread, one step job at a time)
    word_order: list[int] | None = field(default=None, repr=False)
    final: Any = field(default=None, repr=False)

    @property
    def is_merge_based(self) -> bool:
        return hasattr(self.result, "merge_ids")

    @property
    def num_steps(self) -> int:
        return self.result.num_merges if self.is_merge_based else 0


class TrainViewModel(QObject):
    """See the module docstring."""

    corpus_changed = Signal(object)  # str: corpus replaced from outside the editor (object: a str signal drops a leading BOM)
    training_started = Signal(object)  # TrainConfig
    progress = Signal(str, float, str)  # stage, fraction, message
    events_arrived = Signal(object)  # list of MergeEvent / EMIteration / PruneRound (live logs)
    training_finished = Signal(object)  # TrainRun
    training_cancelled = Signal(str)  # stage
    busy_changed = Signal(bool)
    step_changed = Signal(object)  # StepView
    probe_changed = Signal(object)  # ProbeResult
    cutoff_changed = Signal(object)  # CutoffView
    cutoff_available = Signal(int, str)  # number of merges (0 = unavailable), description
    error_raised = Signal(str)

    def __init__(self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self.inspect = inspect  # the InspectViewModel (its tokenizer and text feed the rank cutoff)
        self._lanes = lanes or Lanes(self)
        self.corpus = ""
        self.corpus_lines: list[str] | None = None
        self.corpus_name = ""
        self.config = TrainConfig()
        self.probe_text = "The lowest newest widest hugs: tokenization replays frozen ranks."
        self.run: TrainRun | None = None
        self.step = 0
        self._awaiting_step = False
        self._awaiting_probe = False
        self.top_words = 400
        self.top_pairs = 20
        self._run_id = 0
        self._cancel: TrainCancel | None = None
        self._thread: threading.Thread | None = None
        self._pending: TrainRun | None = None
        self._cutoff: Any = None  # RankCutoff for the Inspect tokenizer
        self._cutoff_for: Any = None
        self.cutoff_k = -1
        if inspect is not None:
            inspect.tokenizer_changed.connect(lambda _p: self._reset_cutoff())
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.cancel)  # a running trainer stops at its next step

    # ------------------------------------------------------------------ corpus and options
    def set_corpus(self, text: str, *, name: str = "", from_editor: bool = True) -> None:
        self.corpus = text
        self.corpus_lines = None  # lines of the files last opened, until the corpus changes
        self.corpus_name = name
        if not from_editor:
            emit(self.corpus_changed, text)

    def load_corpus_files(self, paths: list[str | Path]) -> None:
        """Read corpus files (UTF-8 text; a bad file becomes an error message, the corpus stays)."""
        from ..training.words import read_corpus_files

        try:
            lines = read_corpus_files([Path(p) for p in paths])
        except (OSError, ValueError) as exc:
            emit(self.error_raised, f"Could not read the corpus: {exc}")
            return
        name = ", ".join(Path(p).name for p in paths)
        # the files' lines exactly as read (line ends kept); the editor shows them joined
        self.set_corpus("".join(lines), name=name, from_editor=False)
        self.corpus_lines = lines

    def load_toy_corpus(self) -> None:
        from ..resources import resource_path

        self.load_corpus_files([resource_path("corpora", "toy.txt")])

    def set_probe(self, text: str) -> None:
        if text != self.probe_text:
            self.probe_text = text
            self._request_probe()

    def report_error(self, message: str) -> None:
        """Show ``message`` in the error bar (for failures in the tab itself, e.g. an export)."""
        emit(self.error_raised, message)

    @property
    def subword_prefix(self) -> str | None:
        """The trained tokenizer's continuing-subword prefix (``##`` for WordPiece), or None."""
        run = self.run
        return getattr(run.result.trainer, "continuing_subword_prefix", None) if run is not None else None

    # ------------------------------------------------------------------ training
    def is_training(self) -> bool:
        return self._thread is not None

    def train(self, cfg: TrainConfig | None = None) -> None:
        """Start a training run (a running one is cancelled first)."""
        if cfg is not None:
            self.config = cfg
        cfg = self.config
        if not self.corpus.strip():
            emit(self.error_raised, "The corpus is empty: paste text, open a file or load the toy corpus")
            return
        if cfg.algorithm == "unigram":
            # Unigram keeps every character; a target below that count can never be reached
            # (the trainer then keeps pruning without progress), so say so up front.
            chars = len(set(self.corpus) - set(" \t\r\n")) + 1 + max(1, len(cfg.special_tokens))
            if cfg.vocab_size < chars:
                emit(self.error_raised, f"Unigram keeps every character: this corpus needs a vocab size of at "
                                        f"least about {chars:,} (it has {chars - 2:,} distinct characters)")
                return
        try:
            trainer = make_trainer(cfg)
        except (OSError, ValueError) as exc:
            emit(self.error_raised, f"Cannot train: {exc}")
            return
        self.cancel()
        self._run_id += 1
        rid = self._run_id
        token = TrainCancel()
        self._cancel = token
        lines = self.corpus_lines if self.corpus_lines is not None else corpus_lines(self.corpus)
        pending = TrainRun(cfg, None, corpus_chars=len(self.corpus))
        self._pending = pending

        def work() -> None:  # training thread
            t0 = time.perf_counter()
            batch: list[Any] = []
            last = time.monotonic()
            result = None
            error = None
            try:
                for ev in trainer.train(lines, cancel=token):
                    if isinstance(ev, Done):
                        result = ev.result
                        continue
                    batch.append(ev)
                    now = time.monotonic()
                    if isinstance(ev, Cancelled) or now - last > 0.05:
                        to_gui(self, "_on_events", rid, batch)
                        batch = []
                        last = now
            except Exception as exc:  # noqa: BLE001 - shown in the error bar, the app keeps going
                from .workers import _describe

                error = _describe(exc)
            if batch:
                to_gui(self, "_on_events", rid, batch)
            pending.seconds = time.perf_counter() - t0
            background_done(self, "_on_finished", rid, result, error)

        self._thread = threading.Thread(target=work, name="tokviz-train", daemon=True)
        emit(self.training_started, cfg)
        emit(self.busy_changed, True)
        background_started()  # cycles are collected on the GUI thread while it runs (tokviz.gui.workers)
        self._thread.start()

    def cancel(self) -> None:
        """Stop the running training (it ends at its next step); the last result stays."""
        if self._cancel is not None:
            self._cancel.cancel()

    def wait(self, timeout: float = 30.0) -> bool:
        """Block until the training thread ends (tests, closing the window)."""
        t = self._thread
        if t is not None:
            t.join(timeout)
            return not t.is_alive()
        return True

    def _on_events(self, rid: int, batch: list[Any]) -> None:
        if rid != self._run_id or self._pending is None:
            return
        run = self._pending
        live = []
        for ev in batch:
            if isinstance(ev, Progress):
                emit(self.progress, ev.stage, ev.fraction, ev.message)
            elif isinstance(ev, MergeEvent):
                run.merges.append(ev)
                live.append(ev)
            elif isinstance(ev, EMIteration):
                run.em.append(ev)
                live.append(ev)
            elif isinstance(ev, PruneRound):
                run.prunes.append(ev)
                live.append(ev)
            elif isinstance(ev, Cancelled):
                emit(self.training_cancelled, ev.stage)
        if live:
            emit(self.events_arrived, live)

    def _on_finished(self, rid: int, result: Any, error: str | None) -> None:
        if rid != self._run_id:
            return
        self._thread = None
        self._cancel = None
        run = self._pending
        self._pending = None
        emit(self.busy_changed, False)
        if error is not None:
            emit(self.error_raised, f"Training failed: {error}")
            return
        if result is None or run is None:
            return  # cancelled: the previous run stays
        run.result = result
        self.run = run
        self.step = -1
        emit(self.training_finished, run)
        if self.step == -1:  # a listener may already have asked for another step
            self.set_step(run.num_steps if run.is_merge_based else 0)

    # ------------------------------------------------------------------ the merge slider
    def set_step(self, k: int, *, force: bool = False) -> None:
        run = self.run
        if run is None:
            return
        n = run.num_steps
        k = max(0, min(int(k), n))
        if k == self.step and not force:
            return
        self.step = k
        self._awaiting_step = True
        top_words = self.top_words
        top_pairs = self.top_pairs

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> StepView:
                return compute_step(run, k, None, top_words=top_words, top_pairs=top_pairs)

            return job

        def done(view: StepView) -> None:
            self._awaiting_step = False  # (only the latest request's result arrives here)
            if self.run is run:
                emit(self.step_changed, view)

        def failed(msg: str) -> None:
            self._awaiting_step = False
            emit(self.error_raised, f"Could not show step {k}: {msg}")

        self._lanes.submit("step", prepare, done, failed)
        self._request_probe()

    def _request_probe(self) -> None:
        """Tokenize the probe with the first ``step`` merges, in its own lane: the pair table and
        the words do not wait for the (larger) cost of building the cut tokenizer."""
        run = self.run
        if run is None:
            return
        k = self.step if run.is_merge_based else None
        text = self.probe_text[:_PROBE_MAX_CHARS]
        self._awaiting_probe = True

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> ProbeResult:
                t0 = time.perf_counter()
                enc, err, surfaces = _probe(run, k, text)
                return ProbeResult(k if k is not None else 0, text, enc, err, time.perf_counter() - t0, surfaces)

            return job

        def done(res: ProbeResult) -> None:
            self._awaiting_probe = False
            if self.run is run:
                emit(self.probe_changed, res)

        def failed(msg: str) -> None:
            self._awaiting_probe = False
            emit(self.error_raised, f"Could not tokenize the probe: {msg}")

        self._lanes.submit("probe", prepare, done, failed)

    def merge_step_of(self, left_id: int, right_id: int, *, after: int = 0) -> int | None:
        """The step (1-based merge number) at which the pair of ids is merged, at or after
        merge ``after + 1``; None when training never merges it."""
        run = self.run
        if run is None or not run.is_merge_based:
            return None
        for i in range(max(after, 0), run.result.num_merges):
            a, b, _ = run.result.merge_ids[i]
            if a == left_id and b == right_id:
                return i + 1
        return None

    def step_busy(self) -> bool:
        """A step view or probe was requested and has not been shown yet."""
        return (self._awaiting_step or self._awaiting_probe or self._lanes.is_busy("step")
                or self._lanes.is_busy("probe"))

    # ------------------------------------------------------------------ export and reuse
    def save_tokenizer(self, path: str | Path) -> Path | None:
        from ..training.export import save_tokenizer_json

        if self.run is None:
            emit(self.error_raised, "Nothing to save yet: train a tokenizer first")
            return None
        try:
            return save_tokenizer_json(self.run.result, path)
        except (OSError, ValueError) as exc:
            emit(self.error_raised, f"Could not save {path}: {exc}")
            return None

    def open_in_inspect(self, *, num_merges: int | None = None) -> bool:
        """Hand the trained tokenizer (optionally cut at ``num_merges``) to the Inspect tab."""
        if self.run is None or self.inspect is None:
            return False
        res = self.run.result
        algo = ALGORITHMS[self.run.config.algorithm][0]
        try:
            if num_merges is not None and self.run.is_merge_based:
                tok = res.tokenizer(num_merges=num_merges)
                name = f"trained {algo} (first {num_merges} merges)"
            else:
                tok = res.tokenizer()
                name = f"trained {algo}, vocab {len(res.vocab):,}"
        except (OSError, ValueError) as exc:
            emit(self.error_raised, f"Could not build the trained tokenizer: {exc}")
            return False
        self.inspect.set_tokenizer(tok, name=name)
        return True

    # ------------------------------------------------------------------ rank cutoff
    def _reset_cutoff(self) -> None:
        self._cutoff = None
        self._cutoff_for = None
        self.cutoff_k = -1
        self.prepare_cutoff()

    def prepare_cutoff(self) -> None:
        """Prepare the Inspect tokenizer for the rank cutoff (in the background)."""
        vm = self.inspect
        tok = getattr(vm, "tokenizer", None)
        if tok is None:
            emit(self.cutoff_available, 0, "no tokenizer loaded in the Inspect tab")
            return
        if self._cutoff is not None and self._cutoff_for is tok:
            emit(self.cutoff_available, self._cutoff.n, self._describe_cutoff(tok))
            return
        from ..engine.cutoff import cutoff_supported

        if not cutoff_supported(tok):
            emit(self.cutoff_available, 0, f"{vm.tokenizer_name}: the rank cutoff needs a BPE model, "
                                          f"this one is {type(tok.model).__name__}")
            return

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken):  # noqa: ANN202
                from ..engine.cutoff import RankCutoff

                return RankCutoff(tok)

            return job

        def done(rc: Any) -> None:
            if getattr(self.inspect, "tokenizer", None) is tok:
                self._cutoff = rc
                self._cutoff_for = tok
                emit(self.cutoff_available, rc.n, self._describe_cutoff(tok))

        self._lanes.submit("cutoff", prepare, done, lambda m: emit(self.error_raised, f"Rank cutoff: {m}"))

    def _describe_cutoff(self, tok: Any) -> str:
        rc = self._cutoff
        kind = "tiktoken ranks" if rc.model.rank_mode else "merges list"
        return f"{self.inspect.tokenizer_name}: {rc.n:,} merges ({kind})"

    def set_cutoff(self, k: int) -> None:
        rc = self._cutoff
        if rc is None:
            return
        k = max(0, min(int(k), rc.n))
        self.cutoff_k = k
        text = (self.inspect.text or "")[:_CUTOFF_MAX_CHARS]

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> CutoffView:
                t0 = time.perf_counter()
                tok = rc.tokenizer(k, text=text)
                enc = tok.encode(text, add_special_tokens=False)
                full = rc.base.encode(text, add_special_tokens=False)
                label = rc.merge_label(k - 1) if k > 0 else "no merges: the alphabet only"
                return CutoffView(k, rc.n, label, enc, len(full.ids), time.perf_counter() - t0)

            return job

        def done(view: CutoffView) -> None:
            if self._cutoff is rc:
                emit(self.cutoff_changed, view)

        self._lanes.submit("cutoff", prepare, done, lambda m: emit(self.error_raised, f"Rank cutoff: {m}"))


# ---------------------------------------------------------------------------- step queries
def compute_step(run: TrainRun, k: int, probe: str | None = None, *, top_words: int = 400,
                 top_pairs: int = 20) -> StepView:
    """The step view after the first ``k`` merges (worker thread; see `TrainViewModel.set_step`)."""
    t0 = time.perf_counter()
    res = run.result
    if not run.is_merge_based:
        enc, err, _ = _probe(run, None, probe)
        model = _final_tokenizer(run).model
        to_tok = model.id_to_token
        words = []
        total = 0
        for wi in _word_order(run)[:top_words]:
            ids = tuple(i for i, _, _ in model.tokenize(res.words[wi]))
            total += len(ids) * res.word_counts[wi]
            words.append(WordRow(res.words[wi], res.word_counts[wi], ids, tuple(to_tok(i) for i in ids), False))
        return StepView(0, 0, None, None, 0, (), tuple(words), len(res.words), len(res.vocab), total, enc, err,
                        time.perf_counter() - t0)
    n = res.num_merges
    merge = _merge_at(run, k - 1) if k > 0 else None
    nxt = _merge_at(run, k) if k < n else None
    # The table explains merge k: the counts as they were just before it (after k-1 merges).
    table_step = k - 1 if k > 0 else 0
    rows = tuple(res.pair_table_at(table_step, top=top_pairs)) if n else ()
    order = _word_order(run)
    t = res.id_to_token
    new_id = merge.new_id if merge is not None else -1
    words = []
    for wi in order[:top_words]:
        ids = res.word_ids_at(k, wi)
        words.append(WordRow(res.words[wi], res.word_counts[wi], ids, tuple(t[i] for i in ids), new_id in ids))
    enc, err, _ = _probe(run, k, probe)
    return StepView(
        k, n, merge, nxt, table_step, rows, tuple(words), len(res.words), res.vocab_sizes[k],
        res.corpus_tokens_at(k), enc, err, time.perf_counter() - t0,
    )


def _word_order(run: TrainRun) -> list[int]:
    """Corpus word indices, most frequent first (computed once per run)."""
    if run.word_order is None:
        res = run.result
        run.word_order = sorted(range(len(res.words)), key=lambda i: (-res.word_counts[i], res.words[i]))
    return run.word_order


def _merge_at(run: TrainRun, i: int) -> MergeEvent:
    """Merge ``i`` (0-based) as the trainer reported it (with its score for WordPiece)."""
    if i < len(run.merges) and run.merges[i].rank == i:
        return run.merges[i]
    ev = run.result.merge_event(i)
    scores = getattr(run.result, "merge_scores", ())
    if i < len(scores):
        from dataclasses import replace

        ev = replace(ev, score=scores[i])
    return ev


def _probe(run: TrainRun, k: int | None, text: str | None) -> tuple[Any, str | None, tuple[bytes, ...]]:
    """The probe's encoding (or None and the error), with each token's own bytes
    (`TokenizerFacts.surface`): the probe view draws the token, not the text under its span."""
    if not text:
        return None, None, ()
    try:
        tok = run.result.tokenizer_at(k, text=text) if k is not None else _final_tokenizer(run)
        enc = tok.encode(text, add_special_tokens=False)
        surface = TokenizerFacts.of(tok).surface
        return enc, None, tuple(surface(i) for i in enc.ids)
    except Exception as exc:  # noqa: BLE001 - a probe failure is shown next to the probe, not fatal
        return None, f"{type(exc).__name__}: {exc}", ()


def _final_tokenizer(run: TrainRun) -> Any:
    if run.final is None:
        run.final = run.result.tokenizer()
    return run.final
