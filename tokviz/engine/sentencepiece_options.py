"""SentencePiece's encode options on a tokenizer loaded from a ``.model`` file.

`SentencePieceEncoder` gives ``SentencePieceProcessor``'s Python API where it goes beyond a plain
encode: ``add_bos``/``add_eos``/``reverse``/``emit_unk_piece``, subword sampling (``enable_sampling``
with ``alpha`` and ``nbest_size``), the n-best segmentations with their scores, ``sample_encode_and_score``
and ``calculate_entropy``, with SentencePiece's results (its float32 scores). The plain encode is the
tokenizer's own (`Tokenizer.encode`); n-best, sampling and entropy come from the one Unigram lattice
(`tokviz.engine.lattice`). BPE ``.model`` files have no lattice: n-best, scores and entropy are refused
as SentencePiece refuses them, and BPE sampling (dropout) is not offered.

>>> from tokviz import load
>>> sp = SentencePieceEncoder(load("sentencepiece-test"))
>>> sp.encode("hello", out_type=str, add_bos=True, add_eos=True)
['<s>', '▁he', 'll', 'o', '</s>']
>>> sp.nbest_encode("hello", nbest_size=2)
[[39, 88, 21], [39, 31, 31, 21]]
"""

from __future__ import annotations

import math
import random
from typing import Any

from .errors import TokvizFormatError
from .lattice import Lattice, Segmentation
from .text import NormalizedText
from .tokenizer import Tokenizer

__all__ = ["SentencePieceEncoder"]

_F32_MIN_GAP = -10.0  # below it SentencePiece uses the series of the log Gumbel survival function


class SentencePieceEncoder:
    """``SentencePieceProcessor``'s encode options over a `Tokenizer` of a ``.model`` file."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        extra = tokenizer.config.extra
        if extra.get("format") != "sentencepiece":
            raise ValueError(f"{tokenizer.name or 'this tokenizer'} is not a SentencePiece .model tokenizer")
        self.tokenizer = tokenizer
        self.bos_id: int = extra["bos_id"]
        self.eos_id: int = extra["eos_id"]
        self.unk_id: int = extra["unk_id"]
        self.unigram = extra["model_type"] == "UNIGRAM"

    # ------------------------------------------------------------------ encode
    def encode(
        self, text: str, *, out_type: type = int, add_bos: bool = False, add_eos: bool = False,
        reverse: bool = False, emit_unk_piece: bool = False, enable_sampling: bool = False,
        alpha: float = 0.1, nbest_size: int = -1, rng: random.Random | None = None,
    ) -> list[Any]:
        """``SentencePieceProcessor.encode``: ids (``out_type=int``) or pieces (``str``).
        ``enable_sampling``: a draw ``∝ exp(alpha * score)`` over all segmentations
        (``nbest_size < 0``) or over the ``nbest_size`` best (``> 1``); 0 and 1 do not sample."""
        if enable_sampling and nbest_size not in (0, 1):
            lat, norm = self._lattice(text)
            if lat is None:
                return self._rewrite([], out_type, add_bos, add_eos, reverse, emit_unk_piece)
            seg = (lat.sample(alpha=alpha, rng=rng) if nbest_size < 0
                   else lat.sample_nbest(nbest_size=nbest_size, alpha=alpha, rng=rng))
            return self._rewrite(self._finish(norm, lat, seg, out_type), out_type, add_bos, add_eos, reverse,
                                 emit_unk_piece)
        enc = self.tokenizer.encode(text, keep_stages=False)
        out = list(enc.ids) if out_type is int else list(enc.tokens)
        return self._rewrite(out, out_type, add_bos, add_eos, reverse, emit_unk_piece)

    def nbest_encode(
        self, text: str, *, nbest_size: int, out_type: type = int, add_bos: bool = False, add_eos: bool = False,
        reverse: bool = False, emit_unk_piece: bool = False,
    ) -> list[list[Any]]:
        """``SentencePieceProcessor.nbest_encode``: the ``nbest_size`` best segmentations, best first."""
        return [self._rewrite(seq, out_type, add_bos, add_eos, reverse, emit_unk_piece)
                for seq, _ in self.nbest_encode_with_scores(text, nbest_size=nbest_size, out_type=out_type)]

    def nbest_encode_with_scores(
        self, text: str, *, nbest_size: int, out_type: type = int
    ) -> list[tuple[list[Any], float]]:
        """The n-best with their scores (``NBestEncodeAsImmutableProto``'s ``nbests[i].score``):
        float32 sums of the piece scores; ``nbest_size`` is clamped to 1..1024, and a single best
        has score 0.0 as in SentencePiece."""
        self._need_lattice("NBestEncode")
        lat, norm = self._lattice(text)
        if lat is None:
            return [([], 0.0)]
        n = max(1, min(nbest_size, 1024))
        if n == 1:
            return [(self.encode(text, out_type=out_type), 0.0)]
        return [(self._finish(norm, lat, seg, out_type), _f32(seg.score)) for seg in lat.nbest(n)]

    def sample_encode_and_score(
        self, text: str, *, num_samples: int = 1, alpha: float = 1.0, wor: bool = False, include_best: bool = False,
        out_type: type = int, add_bos: bool = False, add_eos: bool = False, reverse: bool = False,
        emit_unk_piece: bool = False, rng: random.Random | None = None,
    ) -> list[tuple[list[Any], float]]:
        """``SentencePieceProcessor.sample_encode_and_score``: ``num_samples`` segmentations drawn
        ``∝ exp(alpha * score)``, each with its log probability (``wor=False``: drawn with
        replacement) or its log inclusion probability (``wor=True``: distinct paths; with
        ``include_best`` the best one comes first with 0.0)."""
        self._need_lattice("SampleEncodeAndScore")
        if num_samples <= 0:
            raise ValueError("num_samples must be positive")
        if include_best and not wor:
            raise ValueError("include_best needs wor=True")
        lat, norm = self._lattice(text)
        if lat is None:
            return []
        marginal = lat.forward32(alpha)[-1]
        if wor:
            scored = _without_replacement(lat, num_samples, alpha, include_best, marginal, rng)
        else:
            rng = rng or random.Random()
            scored = []
            for _ in range(num_samples):
                seg = lat.sample(alpha=alpha, rng=rng)
                scored.append((seg, _f32(lat.path_score32(seg.nodes, alpha) - marginal)))
        return [(self._rewrite(self._finish(norm, lat, seg, out_type), out_type, add_bos, add_eos, reverse,
                               emit_unk_piece), score) for seg, score in scored]

    def calculate_entropy(self, text: str, *, alpha: float) -> float:
        """``SentencePieceProcessor.CalculateEntropy``: the entropy of the segmentations of the
        normalized text under ``∝ exp(alpha * score)``, in float32 as SentencePiece computes it."""
        self._need_lattice("CalculateEntropy")
        lat, _ = self._lattice(text)
        return -0.0 if lat is None else lat.entropy(alpha)

    # ------------------------------------------------------------------ helpers
    def _need_lattice(self, what: str) -> None:
        if not self.unigram:
            raise TokvizFormatError(f"{what} needs a Unigram model; this .model file is BPE (as in SentencePiece)",
                                    source=self.tokenizer.source)

    def _lattice(self, text: str) -> tuple[Lattice | None, str]:
        """The lattice of the normalized ``text`` (None when it normalizes to nothing)."""
        norm = self.tokenizer.normalizer
        normalized = norm.normalize(NormalizedText.identity(text)).text if norm is not None else text
        if not normalized:
            return None, ""
        if not self.unigram:
            raise TokvizFormatError("subword sampling of a BPE .model (BPE-dropout) is not offered",
                                    source=self.tokenizer.source)
        return Lattice.build(self.tokenizer.model, normalized), normalized

    def _finish(self, norm: str, lat: Lattice, seg: Segmentation, out_type: type) -> list[Any]:
        """A lattice path after SentencePiece's processor step (unknown runs merged, or byte
        fallback), as ids or pieces (an unknown piece is the text it covers)."""
        model = self.tokenizer.model
        raw = [(lat.nodes[k].id, lat.nodes[k].start, lat.nodes[k].end) for k in seg.nodes]
        done = model.spm.finish(norm, raw)
        if out_type is int:
            return [i for i, _, _ in done]
        return [norm[s:e] if i == self.unk_id else model.pieces[i] for i, s, e in done]

    def _rewrite(self, seq: list[Any], out_type: type, add_bos: bool, add_eos: bool, reverse: bool,
                 emit_unk_piece: bool) -> list[Any]:
        """SentencePiece's ``RewriteIds``: reverse, then BOS/EOS; pieces of unknown text become
        the unk piece with ``emit_unk_piece`` (ids are unchanged by it)."""
        if out_type not in (int, str):
            raise ValueError(f"out_type must be int or str, got {out_type!r}")
        if reverse:
            seq = seq[::-1]
        if add_bos:
            seq = [self._control("bos", self.bos_id, out_type), *seq]
        if add_eos:
            seq = [*seq, self._control("eos", self.eos_id, out_type)]
        if emit_unk_piece and out_type is str:
            tok = self.tokenizer
            unk = tok.model.pieces[self.unk_id]
            seq = [unk if tok.model.token_to_id(p) in (None, self.unk_id) else p for p in seq]
        return seq

    def _control(self, what: str, id_: int, out_type: type) -> Any:
        if id_ < 0:
            raise ValueError(f"add_{what}: this model has no {what.upper()} piece ({what}_id is {id_})")
        return id_ if out_type is int else self.tokenizer.model.pieces[id_]


def _f32(x: float) -> float:
    from .lattice import _F32

    return _F32.round(x)


def _without_replacement(
    lat: Lattice, num_samples: int, alpha: float, include_best: bool, marginal: float, rng: random.Random | None
) -> list[tuple[Segmentation, float]]:
    """``SampleEncodeAndScore(wor=True)``: ``num_samples + 1`` Gumbel top-k paths; the last one's
    perturbed score is the threshold of the others' log inclusion probabilities. A text with
    fewer paths gives fewer samples (all of them but the threshold one)."""
    samples = lat.nbest_sample(num_samples + 1, alpha, rng)
    out: list[tuple[Segmentation, float]] = []
    if include_best:
        best = lat.viterbi()
        out.append((best, 0.0))
        where = next((k for k, s in enumerate(samples) if s.nodes == best.nodes), None)
        if where is not None:
            del samples[where]
        else:
            samples.pop()
    if not samples:  # fewer paths than asked for (SentencePiece reads past its list here)
        return out
    kappa = samples.pop().score
    for seg in samples:
        x = _f32(lat.path_score32(seg.nodes, alpha) - marginal) - kappa
        if x <= _F32_MIN_GAP:
            y = math.exp(x)
            inclusion = x - y / 2 + y ** 2 / 24 - y ** 4 / 2880
        else:
            inclusion = math.log(-math.expm1(-math.exp(x)))
        out.append((seg, _f32(inclusion)))
    return out

