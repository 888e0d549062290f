"""Model inputs as a view: a tokenizer's truncation and padding settings applied to a text (and
its pair), the rows a model receives (the encoding then its ``overflowing`` windows), and per
window the character span each sequence covers, the overlap with the window before, and the
offset-lint findings on its tokens.

The engine builds the inputs (`tokviz.engine.model_inputs`, HF's semantics); this module only
chooses the settings the way ``tokviz encode --max-length/--padding`` does (`configure`: the pad
token is the tokenizer's own when its config names one) and describes the result
(`model_inputs`). The Inspect tab's model-input pane shows it; the lint is
`tokviz.analysis.lint` over each sequence, split by window (a finding whose tokens a window edge
cuts is marked ``cut``: a byte-split character or a word whose pieces land in two windows).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.encoding import Encoding
from ..engine.model_inputs import DIRECTIONS, STRATEGIES
from .lint import Finding, LintReport, lint_encoding

__all__ = [
    "InputSettings", "PADDINGS", "SequencePart", "WindowFinding", "WindowView", "ModelInputs", "configure",
    "distinct_spans", "model_inputs",
]

#: the padding modes: none, the encoding's own length (matters for windows), ``max_length``, a multiple of K
PADDINGS = ("off", "longest", "max_length", "multiple")


@dataclass(frozen=True, slots=True)
class InputSettings:
    """Truncation and padding as the user sets them; the defaults leave the tokenizer as it is."""

    max_length: int | None = None  # None: truncation left as the tokenizer file sets it
    stride: int = 0
    strategy: str = "longest_first"
    truncation_side: str = "right"
    padding: str = "off"
    multiple: int = 8  # K of padding "multiple"
    padding_side: str = "right"

    def __post_init__(self) -> None:
        for value, allowed, what in ((self.strategy, STRATEGIES, "strategy"), (self.truncation_side, DIRECTIONS, "truncation side"),
                                     (self.padding, PADDINGS, "padding"), (self.padding_side, DIRECTIONS, "padding side")):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")

    @property
    def is_default(self) -> bool:
        """Nothing set: encodes are the tokenizer's own."""
        return self.max_length is None and self.padding == "off"


def configure(tok: Any, settings: InputSettings) -> None:
    """Apply ``settings`` to ``tok`` (on top of the file's own; ValueError: a message for the user).

    >>> import tokviz
    >>> t = tokviz.load("bert")
    >>> configure(t, InputSettings(max_length=8, stride=2, padding="max_length"))
    >>> t.truncation["stride"], t.padding["length"], t.padding["pad_token"]
    (2, 8, '[PAD]')
    """
    if settings.max_length is not None:
        tok.enable_truncation(settings.max_length, settings.stride, settings.strategy, settings.truncation_side)
    if settings.padding == "off":
        return
    length = multiple = None
    if settings.padding == "max_length":
        if settings.max_length is None:
            raise ValueError("padding to max_length needs a max length")
        length = settings.max_length
    elif settings.padding == "multiple":
        if settings.multiple < 1:
            raise ValueError(f"padding to a multiple of K needs K >= 1; got {settings.multiple}")
        multiple = settings.multiple
    pad_token = tok.config.pad_token
    pad_id = tok.token_to_id(pad_token) if pad_token else None
    kwargs: dict[str, Any] = {} if pad_id is None else {"pad_id": pad_id, "pad_token": pad_token}
    tok.enable_padding(settings.padding_side, length=length, pad_to_multiple_of=multiple, **kwargs)


@dataclass(frozen=True, slots=True)
class SequencePart:
    """The tokens of one sequence in one window."""

    sequence: int  # 0: the text, 1: the pair
    tokens: tuple[int, int]  # token range in the window
    first: int  # index of the part's first token in the sequence's own encoding
    span: tuple[int, int]  # characters of the sequence's text the part covers ((0, 0): none)
    overlap: tuple[int, int] | None  # characters shared with the window before (same sequence)
    shared_tokens: int  # tokens shared with the window before (the stride, where it cut)

    @property
    def count(self) -> int:
        return self.tokens[1] - self.tokens[0]


@dataclass(frozen=True, slots=True)
class WindowFinding:
    """A lint finding on a window's tokens: its tokens as window indices, ``cut`` when some of
    its tokens are outside the window."""

    finding: Finding
    sequence: int
    tokens: tuple[int, ...]
    cut: bool


@dataclass(frozen=True, slots=True)
class WindowView:
    """One row of the model inputs: the encoding and what it covers."""

    index: int
    encoding: Encoding
    parts: tuple[SequencePart, ...]
    findings: tuple[WindowFinding, ...]
    pads: int  # tokens with attention mask 0

    def part(self, sequence: int) -> SequencePart | None:
        return next((p for p in self.parts if p.sequence == sequence), None)

    def sequence_of(self, token: int) -> int | None:
        """The sequence token ``token`` of the row came from (None: special or padding)."""
        return next((p.sequence for p in self.parts if p.tokens[0] <= token < p.tokens[1]), None)


@dataclass(frozen=True, slots=True)
class ModelInputs:
    """The rows of one encode (the encoding, then its windows) and the texts they index."""

    texts: tuple[str, ...]  # the text, and the pair when there is one
    windows: tuple[WindowView, ...]
    linted: tuple[bool, ...]  # per sequence: linted (False: longer than the lint limit)

    @property
    def encoding(self) -> Encoding:
        return self.windows[0].encoding


def _ranges(enc: Encoding, n_sequences: int) -> list[tuple[int, int, int]]:
    """``(sequence, start, stop)`` of each sequence's tokens in a row.

    The row's ``sequence_ranges`` where it has them; else (HF leaves them out of the windows of
    a pair without a post-processor, where ``sequence_ids`` then reads all 0) the real tokens
    (no pads, no special tokens) of the sequence's type id: a pair is encoded with type id 1
    from the start, and its windows keep it."""
    known = {seq: (a, b) for seq, a, b in enc.sequence_ranges}
    mask, special, types = enc.attention_mask, enc.special_tokens_mask, enc.type_ids
    out = []
    for seq in range(n_sequences):
        if seq in known:
            out.append((seq, *known[seq]))
            continue
        idx = [i for i in range(len(enc)) if mask[i] and not special[i] and (n_sequences == 1 or types[i] == seq)]
        if idx:
            out.append((seq, idx[0], idx[-1] + 1))
    return out


class _Starts:
    """Where each (id, offsets) token occurs in a sequence's own encoding, to find a window's
    slice without scanning the whole sequence for each window."""

    def __init__(self, plain: Encoding) -> None:
        self.plain = plain
        self.at: dict[tuple[int, tuple[int, int]], list[int]] = {}
        for k, key in enumerate(zip(plain.ids, plain.offsets)):
            self.at.setdefault(key, []).append(k)

    def locate(self, win: Encoding, a: int, b: int) -> int:
        """Where tokens ``a:b`` of ``win`` start in the sequence (windows are slices of it)."""
        ids, offs = win.ids[a:b], win.offsets[a:b]
        n = b - a
        for k in self.at.get((ids[0], offs[0]), ()):
            if self.plain.ids[k:k + n] == ids and self.plain.offsets[k:k + n] == offs:
                return k
        raise ValueError("a window's tokens are not a slice of the sequence's own encoding")


def _part(starts: _Starts, win: Encoding, seq: int, a: int, b: int, before: SequencePart | None) -> SequencePart:
    k = starts.locate(win, a, b) if b > a else 0
    offs = win.offsets[a:b]
    span = (min(s for s, _ in offs), max(e for _, e in offs)) if offs else (0, 0)
    overlap, shared = None, 0
    if before is not None and b > a and before.count:
        lo, hi = max(before.span[0], span[0]), min(before.span[1], span[1])
        overlap = (lo, hi) if hi > lo else None
        shared = max(0, min(before.first + before.count, k + b - a) - max(before.first, k))
    return SequencePart(seq, (a, b), k, span, overlap, shared)


def _findings(report: LintReport, part: SequencePart) -> list[WindowFinding]:
    k0, k1 = part.first, part.first + part.count
    shift = part.tokens[0] - k0
    out = []
    for f in report.findings:
        inside = [i for i in f.tokens if k0 <= i < k1]
        if inside:
            out.append(WindowFinding(f, part.sequence, tuple(i + shift for i in inside), len(inside) < len(f.tokens)))
        elif not f.tokens and part.count and part.span[0] <= f.span[0] and f.span[1] <= part.span[1]:
            out.append(WindowFinding(f, part.sequence, (), False))  # a gap between the window's tokens
    return out


def model_inputs(
    tok: Any, text: str, pair: str | None, settings: InputSettings, *, add_special_tokens: bool = True,
    allowed_special: Any = None, lint_limit: int | None = None, exact: bool = False,
) -> ModelInputs:
    """Encode ``text`` (and ``pair``) with ``settings`` on a copy of ``tok`` (``tok`` itself is
    shared and keeps its own settings) and describe every row. Sequences longer than
    ``lint_limit`` characters are not linted; ``exact`` lints the exact spans. ValueError / TruncationError: the settings cannot
    be applied (a message for the user)."""
    # a shallow copy: the settings are the tokenizer's own attributes, the pipeline and its caches are shared
    configured = copy.copy(tok)
    configure(configured, settings)
    enc = configured.encode(text, pair, add_special_tokens=add_special_tokens, allowed_special=allowed_special)
    bare = copy.copy(tok)
    bare.no_truncation()
    bare.no_padding()
    texts = (text,) if pair is None else (text, pair)
    plains = [bare.encode(t, add_special_tokens=False, allowed_special=allowed_special) for t in texts]
    starts = [_Starts(p) for p in plains]
    linted = tuple(lint_limit is None or len(t) <= lint_limit for t in texts)
    reports = [lint_encoding(tok, p, exact=exact) if ok else None for p, ok in zip(plains, linted)]
    windows: list[WindowView] = []
    for index, win in enumerate((enc, *enc.overflowing)):
        parts, found = [], []
        for seq, a, b in _ranges(win, len(texts)):
            before = windows[-1].part(seq) if windows else None
            part = _part(starts[seq], win, seq, a, b, before)
            parts.append(part)
            if reports[seq] is not None:
                found.extend(_findings(reports[seq], part))
        windows.append(WindowView(index, win, tuple(parts), tuple(found), win.attention_mask.count(0)))
    return ModelInputs(texts, tuple(windows), linted)


def distinct_spans(windows: Sequence[WindowView], sequence: int) -> list[tuple[int, int]]:
    """The different character spans the windows cover in one sequence, in order (with a pair,
    windows repeat a part: HF combines every window of one sequence with each of the other's)."""
    out: list[tuple[int, int]] = []
    for w in windows:
        p = w.part(sequence)
        if p is not None and p.count and p.span not in out:
            out.append(p.span)
    return out
