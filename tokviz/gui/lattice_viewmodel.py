"""The Lattice tab's view-model: the Unigram lattice of a text, n-best, marginals and sampling.

It follows the Inspect tab's tokenizer (`InspectViewModel.tokenizer_changed`) and decides the
mode: **unigram** (the model is `tokviz.engine.models.unigram.Unigram`: lattice, Viterbi, n-best,
marginals, sampling with alpha, all from `tokviz.engine.lattice.Lattice`), **bpe** (a `BPE`
model: no lattice, BPE-dropout sampling with probability p: the tokenizer's own pipeline around
``BPE.replace(dropout=p)``), or **none**. The text runs through the tokenizer's own pipeline (normalizer, pre-tokenizer) and
the lattice is drawn for one pre-token chunk (SentencePiece models have one chunk per text).

All engine work runs in the ``lattice`` and ``sample`` lanes (latest request wins).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..analysis.facts import TokenizerFacts
from ..engine.lattice import Lattice
from ..engine.tokenizer import Tokenizer
from ._compat import emit
from .display import LatticePicture, show_piece
from .workers import CancelToken, Lanes, ShownGate

__all__ = ["LatticeViewModel", "LatticeResult", "SampleResult", "tokenizer_mode"]

_MAX_CHARS = 400  # the lattice of a longer text is not readable; the tab says so


def tokenizer_mode(tok: Any) -> str:
    """``"unigram"``, ``"bpe"`` or ``"none"`` for a tokenizer."""
    from ..engine.models.bpe import BPE
    from ..engine.models.unigram import Unigram

    model = getattr(tok, "model", None)
    if isinstance(model, Unigram):
        return "unigram"
    if isinstance(model, BPE):
        return "bpe"
    return "none"


@dataclass(frozen=True, slots=True)
class LatticeResult:
    mode: str
    text: str  # the text the user asked for (maybe truncated)
    chunks: tuple[str, ...]  # pre-token chunks as the model sees them
    chunk_index: int
    picture: LatticePicture | None  # unigram only
    viterbi: Any  # Segmentation (unigram) or None
    nbest: tuple[Any, ...]  # Segmentation list (unigram)
    log_z: float
    encoded_ids: tuple[int, ...]  # the pipeline's ids for the chosen chunk (unigram) / whole text (bpe)
    encoded_pieces: tuple[str, ...]
    truncated: bool
    seconds: float


@dataclass(frozen=True, slots=True)
class SampleResult:
    mode: str
    rows: tuple[tuple[str, int, bool], ...]  # (segmentation label, count, is the deterministic one)
    total: int
    distinct: int
    param: float  # alpha (unigram) or p (bpe)
    seconds: float
    description: str
    paths: tuple[tuple[int, ...], ...] = ()  # per row, the lattice path (Unigram; () for "other" rows)


def _label(pieces: tuple[str, ...]) -> str:
    return " | ".join(show_piece(p) for p in pieces)


class LatticeViewModel(QObject):
    mode_changed = Signal(str, str)  # mode, description
    lattice_changed = Signal(object)  # LatticeResult
    samples_changed = Signal(object)  # SampleResult
    error_raised = Signal(str)

    def __init__(self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self.inspect = inspect
        self._lanes = lanes or Lanes(self)
        self.text = "Hello world"
        self.chunk_index = -1  # -1: the longest chunk
        self.nbest_size = 8
        self.alpha = 0.5
        self.dropout = 0.1
        self.samples = 1000
        self.seed = 0
        self.result: LatticeResult | None = None
        self.sample_result: SampleResult | None = None
        self._dropout_tok: tuple[Any, float, Any] | None = None  # (tokenizer, p, its pipeline with dropout p)
        self._lattice: Any = None  # engine Lattice of the shown chunk (kept for sampling)
        self.text_edited = False  # once the user types here, the lattice text stops following Inspect
        self.auto_sample = True  # draw samples after every new lattice
        self._gate = ShownGate(self.refresh)  # Inspect's changes are followed while the tab is shown
        if inspect is not None:
            inspect.tokenizer_changed.connect(lambda _p: self._gate.request())
            inspect.text_replaced.connect(self._follow_inspect)

    def _follow_inspect(self, text: str) -> None:
        line = text.strip().splitlines()[0] if text.strip() else ""
        if not self.text_edited and 0 < len(line) <= 80:
            self.text = line
            self.chunk_index = -1
            self._gate.request()

    def set_active(self, on: bool) -> None:
        """The tab is shown (follow what changed in Inspect meanwhile) or hidden."""
        self._gate.set_shown(on)

    @property
    def tokenizer(self) -> Any:
        return getattr(self.inspect, "tokenizer", None)

    @property
    def unk_id(self) -> int | None:
        """The model's unknown-piece id (`TokenizerFacts.unknown_id`), or None."""
        tok = self.tokenizer
        return TokenizerFacts.of(tok).unknown_id if isinstance(tok, Tokenizer) else None

    def report_error(self, message: str) -> None:
        """Show ``message`` in the error bar (for failures in the tab itself, e.g. an export)."""
        emit(self.error_raised, message)

    @property
    def mode(self) -> str:
        tok = self.tokenizer
        return tokenizer_mode(tok) if tok is not None else "none"

    def describe_mode(self) -> str:
        tok = self.tokenizer
        name = getattr(self.inspect, "tokenizer_name", "") or "this tokenizer"
        mode = self.mode
        if tok is None:
            return "No tokenizer loaded: pick one in the Inspect tab."
        if mode == "unigram":
            return f"{name}: Unigram model · {tok.model.vocab_size:,} pieces · lattice, n-best, marginals, sampling"
        if mode == "bpe":
            return f"{name}: BPE has no lattice · BPE-dropout sampling shows its alternative segmentations"
        return f"{name}: {type(tok.model).__name__} has neither a lattice nor dropout (pick a Unigram or BPE tokenizer)"

    # ------------------------------------------------------------------ inputs
    def edit_text(self, text: str) -> None:
        """The user typed ``text`` here: from now on the lattice text stops following Inspect."""
        self.text_edited = True
        self.set_text(text)

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.chunk_index = -1
            self.refresh()

    def set_chunk(self, index: int) -> None:
        if index != self.chunk_index:
            self.chunk_index = index
            self.refresh()

    def set_nbest(self, n: int) -> None:
        if n != self.nbest_size:
            self.nbest_size = n
            self.refresh()

    def set_sampling(self, *, alpha: float | None = None, dropout: float | None = None,
                     samples: int | None = None, seed: int | None = None) -> None:
        if alpha is not None:
            self.alpha = alpha
        if dropout is not None:
            self.dropout = dropout
        if samples is not None:
            self.samples = samples
        if seed is not None:
            self.seed = seed

    def use_inspect_selection(self) -> bool:
        """Take the word around the token selected in the Inspect tab (or its first line)."""
        vm = self.inspect
        if vm is None or not vm.text:
            return False
        enc = vm.encoding
        text = vm.text
        if enc is not None and 0 <= vm.selected < len(enc.ids):
            s, e = enc.offsets[vm.selected]
            while s > 0 and not text[s - 1].isspace():
                s -= 1
            while e < len(text) and not text[e].isspace():
                e += 1
            self.set_text(text[s:e])
            return True
        self.set_text(text.strip().splitlines()[0][:80] if text.strip() else "")
        return True

    # ------------------------------------------------------------------ the lattice
    def refresh(self) -> None:
        emit(self.mode_changed, self.mode, self.describe_mode())
        tok = self.tokenizer
        mode = self.mode
        if tok is None or mode == "none":
            self.result = None
            self._lattice = None
            emit(self.lattice_changed, None)
            return
        text = self.text
        chunk_index = self.chunk_index
        nbest = self.nbest_size

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken):  # noqa: ANN202
                return compute_lattice(tok, mode, text, chunk_index=chunk_index, nbest=nbest)

            return job

        def done(out: tuple[LatticeResult, Any]) -> None:
            if self.tokenizer is not tok:
                return
            self.result, self._lattice = out
            emit(self.lattice_changed, self.result)
            if self.auto_sample:
                self.sample()

        self._lanes.submit("lattice", prepare, done, lambda m: emit(self.error_raised, f"Lattice: {m}"))

    def is_busy(self) -> bool:
        return self._lanes.is_busy("lattice") or self._lanes.is_busy("sample")

    # ------------------------------------------------------------------ sampling
    def sample(self) -> None:
        """Draw ``samples`` segmentations (Unigram: with alpha; BPE: with dropout p) -> histogram."""
        tok = self.tokenizer
        res = self.result
        lat = self._lattice
        mode = self.mode
        if tok is None or res is None or mode == "none":
            emit(self.error_raised, "Nothing to sample: pick a Unigram or BPE tokenizer and a text")
            return
        n = max(1, int(self.samples))
        seed = self.seed
        if mode == "unigram":
            alpha = self.alpha

            def run(cancel: CancelToken) -> tuple[SampleResult, Any] | None:
                t0 = time.perf_counter()
                rng = random.Random(seed)
                counts: Counter[tuple[int, ...]] = Counter()  # by path (node indices)
                for i in range(n):
                    if i % 256 == 0 and cancel.cancelled:
                        return None
                    counts[lat.sample(alpha=alpha, rng=rng).nodes] += 1
                nodes = lat.nodes
                desc = f"{n:,} samples over all segmentations, p(path) ∝ exp(α·score), α = {alpha:g}, seed {seed}"
                return _histogram(mode, counts, res.viterbi.nodes, n, alpha, time.perf_counter() - t0, desc,
                                  pieces_of=lambda path: tuple(nodes[k].piece for k in path), has_paths=True), None
        else:
            p = self.dropout
            cached = self._dropout_tok
            reuse = cached[2] if cached is not None and cached[0] is tok and cached[1] == p else None
            text = res.text
            det = res.encoded_pieces

            def run(cancel: CancelToken) -> tuple[SampleResult, Any] | None:
                t0 = time.perf_counter()
                sampler = reuse if reuse is not None else dropout_tokenizer(tok, p)
                sampler.model.seed(seed)
                counts: Counter[tuple[str, ...]] = Counter()
                for i in range(n):
                    if i % 64 == 0 and cancel.cancelled:
                        return None
                    counts[tuple(sampler.encode(text, add_special_tokens=False).tokens)] += 1
                desc = f"{n:,} encodings with BPE-dropout p = {p:g} (each merge skipped with probability p), seed {seed}"
                return _histogram(mode, counts, det, n, p, time.perf_counter() - t0, desc), (tok, p, sampler)

        def prepare():  # noqa: ANN202
            return run

        def done(out: tuple[SampleResult, Any] | None) -> None:
            if out is None or self.tokenizer is not tok:
                return
            result, model_entry = out
            if model_entry is not None:
                self._dropout_tok = model_entry  # reuse the dropout pipeline for the next draw
            self.sample_result = result
            emit(self.samples_changed, result)

        self._lanes.submit("sample", prepare, done, lambda m: emit(self.error_raised, f"Sampling: {m}"))


def _histogram(mode: str, counts: Counter, best: tuple, n: int, param: float, seconds: float, desc: str, *,
               pieces_of=None, has_paths: bool = False) -> SampleResult:  # noqa: ANN001
    """Rows for the most common segmentations (keys are piece tuples, or lattice paths with ``pieces_of``)."""
    top = counts.most_common(60)
    rows = tuple(
        (_label(pieces_of(key) if pieces_of else key), c, tuple(key) == tuple(best)) for key, c in top
    )
    paths = tuple(tuple(key) for key, _ in top) if has_paths else ()
    other = n - sum(c for _, c, _ in rows)
    if other:
        rows += ((f"… {len(counts) - 60:,} other segmentations", other, False),)
        if has_paths:
            paths += ((),)
    return SampleResult(mode, rows, n, len(counts), param, seconds, desc, paths)


def dropout_tokenizer(tok: Any, p: float) -> Any:
    """``tok``'s pipeline around a copy of its `BPE` with dropout ``p`` (each merge skipped with
    probability p, so every encode samples)."""
    return tok.with_model(tok.model.replace(dropout=p), name=f"{tok.name} (BPE-dropout {p:g})")


def compute_lattice(tok: Any, mode: str, text: str, *, chunk_index: int = -1, nbest: int = 8) -> tuple[LatticeResult, Any]:
    """The lattice result for ``text`` (worker thread). Returns (result, engine Lattice or None)."""
    t0 = time.perf_counter()
    truncated = len(text) > _MAX_CHARS
    text = text[:_MAX_CHARS]
    enc = tok.encode(text, add_special_tokens=False)
    pre = list(enc.stages.pre_tokens) if enc.stages is not None else []
    chunks = tuple(c.text for c in pre)
    if mode == "bpe" or not chunks:
        return LatticeResult(mode, text, chunks, -1, None, None, (), 0.0, tuple(enc.ids), tuple(enc.tokens),
                             truncated, time.perf_counter() - t0), None
    if not 0 <= chunk_index < len(chunks):
        chunk_index = max(range(len(chunks)), key=lambda i: len(chunks[i]))
    chunk = pre[chunk_index]
    lat = Lattice.build(tok.model, chunk.text)
    vit = lat.viterbi()
    best = tuple(lat.nbest(nbest)) if nbest > 0 else ()
    marg = tuple(lat.marginals())
    # the pipeline's tokens for this chunk: those whose original span lies inside the chunk's
    ids, pieces = [], []
    for i, (s, e) in enumerate(enc.offsets):
        if chunk.start <= s and e <= chunk.end and (e > s or s < chunk.end) and not enc.special_tokens_mask[i]:
            ids.append(enc.ids[i])
            pieces.append(enc.tokens[i])
    pic = LatticePicture(chunk.text, lat.nodes, marg, vit.nodes, ())
    return LatticeResult(mode, text, chunks, chunk_index, pic, vit, best, lat.log_z(), tuple(ids), tuple(pieces),
                         truncated, time.perf_counter() - t0), lat
