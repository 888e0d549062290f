"""Model inputs as HF tokenizers builds them: truncation windows, pair merging, padding.

One home for what happens to encodings between the model and what a network receives:

* `TruncationParams` / `PaddingParams`: the settings (HF's names, the Python getters' dicts and
  tokenizer.json's ``"truncation"``/``"padding"`` objects both ways);
* `truncate`: HF ``Encoding::truncate``, the kept tokens plus the ``overflowing`` windows cut
  ``max_length`` long and ``stride`` tokens apart from the right or the left;
* `truncate_encodings`: HF's strategies over a sequence and its pair (``longest_first`` splits
  the budget, ``only_first``/``only_second`` cut one sequence and refuse when it is too short);
* `merge_with` / `merge`: HF ``Encoding::merge_with``: tokens concatenated, sequence ranges
  shifted, and the overflowing windows of both sides combined (every window of the first with
  the second and with each window of the second, then the first with each window of the second);
* `pad` / `pad_encodings`: HF ``Encoding::pad`` (windows first, left padding shifts the ranges)
  and the batch rule (``length`` fixed or the longest, rounded up to ``pad_to_multiple_of``);
* `overflow_rows`: transformers' ``return_overflowing_tokens`` layout over a batch.

Every function returns new values (encodings are frozen).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain, repeat
from typing import Any

from .columns import TokenColumns, int_column
from .encoding import Encoding, SequenceRanges
from .fields import MAX_ID

__all__ = [
    "inputs_json", "PaddingParams", "STRATEGIES", "TruncationError", "TruncationParams", "merge", "merge_with", "overflow_rows",
    "pad", "pad_encodings", "pretokenized_encoding", "set_sequence_id", "truncate", "truncate_encodings", "window",
]

STRATEGIES = ("longest_first", "only_first", "only_second")
#: The longest encoding padding may ask for (``length``, ``pad_to_multiple_of``): a padded
#: encoding holds several columns of that many tokens, so a file or caller asking for more is
#: refused rather than allowed to exhaust memory.
MAX_PADDED_LENGTH = 1 << 24
DIRECTIONS = ("right", "left")
_JSON_STRATEGY = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}


class TruncationError(ValueError):
    """Truncation cannot respect the settings (HF raises the same cases)."""


def _choice(value: object, allowed: Sequence[str], what: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def _count(value: object, what: str, *, minimum: int = 0, maximum: int = MAX_ID) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ValueError(f"{what} must be an integer from {minimum} to {maximum:,}; got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TruncationParams:
    """HF ``TruncationParams``: cut to ``max_length`` tokens, windows ``stride`` tokens apart."""

    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    def __post_init__(self) -> None:
        _count(self.max_length, "max_length")
        _count(self.stride, "stride")
        _choice(self.strategy, STRATEGIES, "strategy")
        _choice(self.direction, DIRECTIONS, "direction")

    def to_dict(self) -> dict[str, Any]:
        """The dict of HF's ``Tokenizer.truncation``."""
        return {"max_length": self.max_length, "stride": self.stride, "strategy": self.strategy, "direction": self.direction}

    def to_json(self) -> dict[str, Any]:
        """tokenizer.json's ``"truncation"`` object."""
        return {
            "direction": self.direction.capitalize(), "max_length": self.max_length,
            "strategy": _JSON_STRATEGY[self.strategy], "stride": self.stride,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TruncationParams:
        strategies = {v: k for k, v in _JSON_STRATEGY.items()}
        strategy = obj.get("strategy", "LongestFirst")
        direction = obj.get("direction", "Right")
        return cls(
            max_length=obj.get("max_length", 512), stride=obj.get("stride", 0),
            strategy=strategies.get(strategy, strategy),
            direction=direction.lower() if isinstance(direction, str) else direction,
        )


@dataclass(frozen=True, slots=True)
class PaddingParams:
    """HF ``PaddingParams``: ``length`` None pads a batch to its longest encoding."""

    direction: str = "right"
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"
    length: int | None = None
    pad_to_multiple_of: int | None = None

    def __post_init__(self) -> None:
        _choice(self.direction, DIRECTIONS, "direction")
        _count(self.pad_id, "pad_id")
        _count(self.pad_type_id, "pad_type_id")
        if not isinstance(self.pad_token, str):
            raise ValueError(f"pad_token must be a string; got {self.pad_token!r}")
        if self.length is not None:
            _count(self.length, "length", maximum=MAX_PADDED_LENGTH)
        if self.pad_to_multiple_of is not None:
            _count(self.pad_to_multiple_of, "pad_to_multiple_of", maximum=MAX_PADDED_LENGTH)

    def to_dict(self) -> dict[str, Any]:
        """The dict of HF's ``Tokenizer.padding``."""
        return {
            "length": self.length, "pad_to_multiple_of": self.pad_to_multiple_of, "pad_id": self.pad_id,
            "pad_token": self.pad_token, "pad_type_id": self.pad_type_id, "direction": self.direction,
        }

    def to_json(self) -> dict[str, Any]:
        """tokenizer.json's ``"padding"`` object."""
        return {
            "strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
            "direction": self.direction.capitalize(), "pad_to_multiple_of": self.pad_to_multiple_of,
            "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PaddingParams:
        strategy = obj.get("strategy", "BatchLongest")
        if isinstance(strategy, Mapping) and set(strategy) == {"Fixed"}:
            length = strategy["Fixed"]
        elif strategy == "BatchLongest":
            length = None
        else:
            raise ValueError(f'strategy must be "BatchLongest" or {{"Fixed": N}}; got {strategy!r}')
        direction = obj.get("direction", "Right")
        return cls(
            direction=direction.lower() if isinstance(direction, str) else direction,
            pad_id=obj.get("pad_id", 0), pad_type_id=obj.get("pad_type_id", 0),
            pad_token=obj.get("pad_token", "[PAD]"), length=length, pad_to_multiple_of=obj.get("pad_to_multiple_of"),
        )


# ---------------------------------------------------------------------- sequences and windows
def set_sequence_id(enc: Encoding, sequence_id: int) -> Encoding:
    """HF ``set_sequence_id``: the whole encoding is sequence ``sequence_id``."""
    ranges = tuple(r for r in enc.sequence_ranges if r[0] != sequence_id)
    return replace(enc, sequence_ranges=ranges + ((sequence_id, 0, len(enc)),), overflowing=enc.overflowing)


def window(enc: Encoding, start: int, stop: int) -> Encoding:
    """Tokens ``start:stop`` of ``enc`` as an encoding with no ranges and no windows."""
    traces = enc.traces[start:stop] if enc.traces is not None else None
    return Encoding(enc.text, enc.columns.window(start, stop), enc.stages, traces, enc.source)


def _window_spans(n: int, max_length: int, stride: int, direction: str) -> list[tuple[int, int]]:
    step = max_length - stride
    spans: list[tuple[int, int]] = []
    if direction == "right":
        for start in range(0, n, step):
            spans.append((start, min(start + max_length, n)))
            if spans[-1][1] == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            stop = last + 1
            spans.append((max(stop - max_length, 0), stop))
            if spans[-1][0] == 0:
                break
    return spans


def truncate(enc: Encoding, max_length: int, *, stride: int = 0, direction: str = "right") -> Encoding:
    """HF ``Encoding::truncate``: keep one window of ``max_length`` tokens, the rest overflowing.

    Windows start ``max_length - stride`` tokens apart (``stride`` tokens overlap), from the
    start (``"right"``: the end is cut) or from the end (``"left"``). The kept encoding and its
    windows lose their sequence ranges and any earlier windows, as HF's do. ``max_length`` 0
    keeps nothing: the whole encoding becomes the one window. Another direction is refused (HF's
    ValueError), also when nothing is cut.
    """
    _choice(direction, DIRECTIONS, "direction")
    n = len(enc)
    if max_length >= n:
        return enc
    if max_length == 0:
        return replace(Encoding(enc.text, TokenColumns.empty(), enc.stages, [] if enc.traces is not None else None,
                                enc.source), overflowing=(enc,))
    if stride >= max_length:
        raise TruncationError(
            f"stride ({stride}) must be less than the length to truncate to ({max_length}; the max length minus"
            " the special tokens the post-processor adds)"
        )
    spans = _window_spans(n, max_length, stride, direction)
    kept = window(enc, *spans[0])
    return replace(kept, overflowing=tuple(window(enc, s, e) for s, e in spans[1:]))


def _longest_first(n1: int, n2: int, max_length: int) -> tuple[int, int]:
    """HF's split of ``max_length`` over two sequences: the shorter kept whole when it fits
    beside the longer's share, else half each (the second gets the odd token)."""
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    n2 = n1 if n1 > max_length else max(n1, max_length - n1)
    if n1 + n2 > max_length:
        n1 = max_length // 2
        n2 = n1 + max_length % 2
    return (n2, n1) if swap else (n1, n2)


def truncate_encodings(
    enc: Encoding, pair: Encoding | None, params: TruncationParams,
) -> tuple[Encoding, Encoding | None]:
    """HF ``truncate_encodings``: ``params.max_length`` over the sequence and its pair together."""
    stride, direction = params.stride, params.direction
    if params.max_length == 0:
        return (truncate(enc, 0, stride=stride, direction=direction),
                None if pair is None else truncate(pair, 0, stride=stride, direction=direction))
    total = len(enc) + (len(pair) if pair is not None else 0)
    if total <= params.max_length:
        return enc, pair
    to_remove = total - params.max_length
    if params.strategy == "longest_first":
        if pair is None:
            return truncate(enc, params.max_length, stride=stride, direction=direction), None
        n1, n2 = _longest_first(len(enc), len(pair), params.max_length)
        return (truncate(enc, n1, stride=stride, direction=direction),
                truncate(pair, n2, stride=stride, direction=direction))
    if params.strategy == "only_second" and pair is None:
        raise TruncationError("truncation only_second needs a second sequence, and none was given")
    target = enc if params.strategy == "only_first" else pair
    assert target is not None
    if len(target) <= to_remove:
        raise TruncationError(
            f"the {'first' if target is enc else 'second'} sequence ({len(target)} tokens) is too short to remove"
            f" {to_remove} tokens and respect max_length {params.max_length}"
        )
    cut = truncate(target, len(target) - to_remove, stride=stride, direction=direction)
    return (cut, pair) if target is enc else (enc, cut)


# ---------------------------------------------------------------------- merging
def _joined(a: Encoding, b: Encoding) -> Encoding:
    """``a`` then ``b`` (no windows): columns concatenated, ``b``'s ranges shifted by ``len(a)``."""
    n = len(a)
    ranges = {seq: (s, e) for seq, s, e in a.sequence_ranges}
    ranges.update({seq: (n + s, n + e) for seq, s, e in b.sequence_ranges})
    traces = None
    if a.traces is not None or b.traces is not None:
        traces = list(chain(a.traces if a.traces is not None else [None] * n,
                            b.traces if b.traces is not None else [None] * len(b)))
    return Encoding(
        a.text, TokenColumns.concat([a.columns, b.columns]), a.stages, traces, a.source,
        sequence_ranges=tuple((seq, s, e) for seq, (s, e) in ranges.items()),
    )


def merge_with(a: Encoding, b: Encoding) -> Encoding:
    """HF ``Encoding::merge_with`` (offsets not shifted), windows combined as HF does."""
    windows: list[Encoding] = []
    for own in a.overflowing:
        windows.append(merge_with(own, b))
        windows.extend(merge_with(own, other) for other in b.overflowing)
    windows.extend(merge_with(a, other) for other in b.overflowing)
    return replace(_joined(a, b), overflowing=tuple(windows))


def merge(encodings: Sequence[Encoding]) -> Encoding:
    """HF ``Encoding::merge``: the encodings merged one after the other."""
    out = encodings[0]
    for enc in encodings[1:]:
        out = merge_with(out, enc)
    return out


def pretokenized_encoding(words: Sequence[str], encodings: Sequence[Encoding]) -> Encoding:
    """HF's encode of a pre-tokenized sequence from the encodings of its ``words``: every token's
    word id is its word's index, offsets stay into each word (HF's), ``text`` is the words joined
    by spaces."""
    parts = [
        Encoding(enc.text, replace(enc.columns, word_ids=int_column(repeat(i, len(enc)))), None, enc.traces)
        for i, enc in enumerate(encodings)
    ]
    if not parts:
        return Encoding("", TokenColumns.empty())
    return replace(merge(parts), text=" ".join(words))


# ---------------------------------------------------------------------- padding
def pad(enc: Encoding, length: int, params: PaddingParams) -> Encoding:
    """HF ``Encoding::pad``: the windows padded, then ``enc`` itself up to ``length`` tokens."""
    windows = tuple(pad(w, length, params) for w in enc.overflowing)
    n = len(enc)
    if n >= length:
        return replace(enc, overflowing=windows) if enc.overflowing else enc
    k = length - n
    pads = TokenColumns.of_padding(k, pad_id=params.pad_id, pad_type_id=params.pad_type_id, pad_token=params.pad_token)
    ranges: SequenceRanges = enc.sequence_ranges
    traces = enc.traces
    if params.direction == "left":
        columns = TokenColumns.concat([pads, enc.columns])
        ranges = tuple((seq, s + k, e + k) for seq, s, e in ranges)
        traces = [None] * k + list(traces) if traces is not None else None
    else:
        columns = TokenColumns.concat([enc.columns, pads])
        traces = list(traces) + [None] * k if traces is not None else None
    return Encoding(enc.text, columns, enc.stages, traces, enc.source, overflowing=windows, sequence_ranges=ranges)


def pad_encodings(encodings: Sequence[Encoding], params: PaddingParams) -> list[Encoding]:
    """HF ``pad_encodings``: all to ``params.length`` (or the batch's longest), rounded up to a
    multiple of ``pad_to_multiple_of``."""
    if not encodings:
        return []
    length = params.length if params.length is not None else max(len(e) for e in encodings)
    multiple = params.pad_to_multiple_of
    if multiple and length % multiple:
        length += multiple - length % multiple
    return [pad(e, length, params) for e in encodings]


# ---------------------------------------------------------------------- views
def inputs_json(enc: Encoding) -> dict[str, Any]:
    """Every model-input field of ``enc`` as JSON-ready values, its windows included (what
    ``tokviz encode --json`` prints)."""
    return {
        "ids": enc.ids,
        "tokens": enc.tokens,
        "offsets": [list(o) for o in enc.offsets],
        "type_ids": enc.type_ids,
        "attention_mask": enc.attention_mask,
        "special_tokens_mask": enc.special_tokens_mask,
        "sequence_ids": enc.sequence_ids,
        "word_ids": enc.word_ids,
        "overflowing": [inputs_json(w) for w in enc.overflowing],
    }


# ---------------------------------------------------------------------- transformers' rows
def overflow_rows(encodings: Sequence[Encoding]) -> tuple[list[Encoding], list[int]]:
    """transformers' ``return_overflowing_tokens=True`` layout of a batch: each encoding then its
    windows (one level, as transformers reads them) as rows, and ``overflow_to_sample_mapping``,
    the batch index each row came from."""
    rows: list[Encoding] = []
    mapping: list[int] = []
    for i, enc in enumerate(encodings):
        rows.append(enc)
        rows.extend(enc.overflowing)
        mapping.extend([i] * (1 + len(enc.overflowing)))
    return rows, mapping
