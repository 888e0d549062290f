"""Corpus words as segmented at a training step, and a tokenized probe text, in token colors.

Both reuse the Inspect tab's `SpanView` (same painter, same per-id colors and neighbour shades
from `tokviz.gui.display`), so a token looks the same in every tab.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..display import Style, ViewMode, counted, token_label, token_line_ends, visible_runs
from .span_view import FLAG_NEUTRAL, FLAG_SPECIAL, FLAG_UNKNOWN, SpanView

__all__ = ["WordsView", "ProbeView"]


class WordsView(SpanView):
    """One corpus word per line: its count, then its pieces (colored by token id)."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.placeholder = "Train on a corpus to see its words split by the merges."
        self._item_word: list[int] = []
        self._rows: Sequence[Any] = ()
        self._item_piece: list[str] = []
        self.set_tooltip_provider(self._tip)

    def set_words(self, rows: Sequence[Any]) -> None:
        labels, keys, flags, breaks, item_word, pieces = [], [], [], [], [], []
        width = max((len(f"{r.count:,}") for r in rows), default=1)
        for wi, r in enumerate(rows):
            mark = "▸" if r.touched else " "
            labels.append(((f"{mark}{r.count:>{width},}×", Style.MARK),))
            keys.append(-1)
            flags.append(FLAG_NEUTRAL)
            breaks.append(False)
            item_word.append(wi)
            pieces.append("")
            for j, (i, p) in enumerate(zip(r.ids, r.pieces)):
                labels.append(tuple(visible_runs(p)) or (("∅", Style.MARK),))
                keys.append(i)
                flags.append(0)
                breaks.append(j == len(r.ids) - 1)
                item_word.append(wi)
                pieces.append(p)
            if not r.ids:
                breaks[-1] = True
        self._rows = rows
        self._item_word = item_word
        self._item_piece = pieces
        self.set_items(labels, keys, flags, breaks, lambda i: (0, 0))

    def _tip(self, i: int) -> str:
        if not 0 <= i < len(self._item_word):
            return ""
        r = self._rows[self._item_word[i]]
        seg = " | ".join(r.pieces)
        if not self._item_piece[i]:
            return f"{r.word!r} occurs {counted(r.count, 'time')}\n{counted(len(r.ids), 'token')}: {seg}"
        k = self._keys[i]
        return f"{self._item_piece[i]!r} (id {k})\nin {r.word!r}: {seg}"


class ProbeView(SpanView):
    """A probe text tokenized by the trained (or cut) tokenizer, in the Inspect tab's colors."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.placeholder = "Type a probe text above."
        self._enc: Any = None
        self.set_tooltip_provider(self._tip)

    def set_encoding(self, enc: Any, *, unk_id: int | None = None) -> None:
        """Show ``enc``; tokens with id ``unk_id`` (the model's unknown token) are styled apart."""
        self._enc = enc
        if enc is None:
            self.set_items([], [], [], [], lambda i: (0, 0))
            return
        text_bytes = enc.text.encode("utf-8")
        om = enc.offset_map
        # the Inspect pane's rule: a newline in the token or in the gap before the next one
        ends = set(token_line_ends(enc.byte_offsets, text_bytes))
        labels, keys, flags, breaks = [], [], [], []
        for i, tid in enumerate(enc.ids):
            special = bool(enc.special_tokens_mask[i])
            labels.append(token_label(ViewMode.TEXT, token_id=tid, vocab=enc.tokens[i], special=special,
                                      text_bytes=text_bytes, byte_span=enc.byte_offsets[i], offset_map=om))
            keys.append(tid)
            flags.append(FLAG_SPECIAL if special else FLAG_UNKNOWN if tid == unk_id else 0)
            breaks.append(i in ends)
        offs = enc.offsets
        self.set_items(labels, keys, flags, breaks, lambda i: offs[i])

    def _tip(self, i: int) -> str:
        enc = self._enc
        if enc is None or not 0 <= i < len(enc.ids):
            return ""
        s, e = enc.offsets[i]
        return f"{enc.tokens[i]!r}  id {enc.ids[i]}\nchars {s}–{e}: {enc.text[s:e]!r}"
