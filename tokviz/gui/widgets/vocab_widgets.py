"""Widgets of the Vocabulary tab: the token detail card and the two pyqtgraph histograms.

`VocabCard` renders a `TokenDetail` as HTML (how the token is built, what its surface encodes to
instead and at which stage it breaks, its superstrings). `VocabCharts` shows the token length
distribution (bytes) and the category counts side by side.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QTextBrowser, QWidget

from ..display import hex_bytes
from ..theme import mono_font
from .pair_table import show_piece

__all__ = ["VocabCard", "VocabCharts", "detail_html"]

_STAGE_WHY = {
    "A": "an added token's literal inside the surface is extracted first",
    "N": "the normalizer changes the surface before the model sees it",
    "P": "the pre-tokenizer splits the surface into several chunks",
    "M": "one chunk, but the model prefers other tokens (merge order, Viterbi, longest match)",
}
_FAMILY_CONTEXT = {  # keyed by `TokenizerFacts.family`
    "byte-level": "the surface on its own",
    "rank-file": "the surface on its own (no special-token extraction)",
    "metaspace": "'▁w' pieces: w at text start, then ' w'; others: after a probe stem («, the, a, …)",
    "wordpiece": "word-initial: the word; '##x': a letter a…z followed by x",
    "char": "the surface on its own; a word-inner piece: followed by a letter a…z",
}


def _vis(s: str) -> str:
    return escape(show_piece(s))


def _mono(s: str) -> str:
    return f"<code style='font-family:monospace'>{s}</code>"


def _tok(i: int, vocab_of: dict[int, str]) -> str:
    v = vocab_of.get(i)
    return f"{_mono(_vis(v))}&nbsp;<span style='color:gray'>#{i}</span>" if v is not None else f"#{i}"


def detail_html(d: Any) -> str:  # d: TokenDetail
    t = d.token
    rows = [
        ("id", str(t.id)),
        ("vocab string", _mono(_vis(t.vocab))),
        ("surface", _mono(_vis(t.surface_text)) + ("&nbsp;(continuation ##)" if t.continuation else "")),
        ("bytes", _mono(escape(hex_bytes(t.surface))) + f"&nbsp;<span style='color:gray'>{len(t.surface)} B</span>"),
        ("kind", escape(t.kind)),
    ]
    if t.rank is not None:
        rows.append((d.rank_kind or "rank", f"{t.rank:g}"))
    cats = t.categories()
    rows.append(("categories", escape(", ".join(cats)) if cats else "ordinary, reachable"))
    if d.embedding is not None:
        flag = " — <b>under-trained candidate</b>" if d.candidate else ""
        rows.append(("embedding", f"{escape(d.embedding_kind)} {d.embedding:.4f}{flag}"))
    html = ["<table cellspacing=0 cellpadding=2>"]
    html += [f"<tr><td style='color:gray'>{k}</td><td>{v}</td></tr>" for k, v in rows]
    html.append("</table>")
    html.append("<p><b>How it is built</b><br>")
    if t.parents is not None:
        a, b = t.parents
        html.append(f"{_tok(a, d.vocab_of)} + {_tok(b, d.vocab_of)} → this token")
    else:
        html.append("<span style='color:gray'>a base symbol (no merge makes it) or not a BPE model</span>")
    if t.children:
        shown = ", ".join(_tok(c, d.vocab_of) for c in t.children[:12])
        more = f" … (+{len(t.children) - 12})" if len(t.children) > 12 else ""
        html.append(f"<br>children ({len(t.children)}): {shown}{more}")
        if t.fragment_gap is not None:
            html.append(f"<br>only child learned {t.fragment_gap} rank(s) later: a merge-shadow fragment candidate")
    html.append("</p><p><b>Reachability</b><br>")
    if not t.tested:
        why = ("special / added token" if t.kind in ("special", "added") else
               "single byte" if t.byte_class else "partial UTF-8: no text has exactly these bytes" if t.partial else
               "special-token lookalike" if t.lookalike else "not tested")
        html.append(f"<span style='color:gray'>not tested ({escape(why)})</span>")
    elif t.reachable:
        html.append(f"reachable: {_mono(_vis(t.context or ''))} encodes to exactly this token")
    else:
        html.append(f"<b>unreachable</b> — stage <b>{escape(t.stage or '?')}</b>: {escape(_STAGE_WHY.get(t.stage or '', ''))}")
        if t.context is not None:
            inst = " ".join(_tok(i, d.vocab_of) for i in t.instead) or "(nothing)"
            html.append(f"<br>{_mono(_vis(t.context))} encodes to {inst}")
    html.append(f"<br><span style='color:gray'>context tried: {escape(_FAMILY_CONTEXT.get(d.family, ''))}</span></p>")
    html.append(f"<p><b>Superstrings</b> ({len(d.superstrings)}{'+' if len(d.superstrings) >= 50 else ''})<br>")
    html.append(", ".join(_tok(i, d.vocab_of) for i in d.superstrings[:50]) or "<span style='color:gray'>none</span>")
    html.append("</p>")
    return "".join(html)


class VocabCard(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setMinimumWidth(280)
        self.show_detail(None)

    def show_detail(self, d: Any) -> None:
        self._detail = d
        if d is None:
            self.setHtml("<p style='color:gray'>Select a token to see how it is built, whether a text can "
                         "produce it and, if not, at which stage it breaks.</p>")
        else:
            self.setHtml(detail_html(d))

    @property
    def detail(self) -> Any:
        return self._detail


class VocabCharts(pg.GraphicsLayoutWidget):
    """Token length (bytes) and category counts, two bar charts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(100)
        self.apply_palette()
        self.lengths = self.addPlot(title="token length (bytes; 32 = 32 or more)")
        self.cats = self.addPlot(title="tokens per category")
        for p in (self.lengths, self.cats):
            p.showGrid(x=True, y=True, alpha=0.2)
            p.setMenuEnabled(False)
            p.setMouseEnabled(x=False, y=False)
        self.lengths.setLabel("left", "tokens")
        self.cats.setLabel("bottom", "tokens")

    def apply_palette(self) -> None:
        pal = self.palette()
        self.setBackground(pal.color(QPalette.ColorRole.Base))

    def set_data(self, lengths: list[tuple[int, int]], cats: list[tuple[str, int]]) -> None:
        self.lengths.clear()
        self.cats.clear()
        if lengths:
            xs = [x for x, _ in lengths]
            ys = [y for _, y in lengths]
            self.lengths.addItem(pg.BarGraphItem(x=xs, height=ys, width=0.8, brush=QColor("#1c64f2")))
        if cats:
            n = len(cats)
            ys = list(range(n))
            counts = [c for _, c in cats]
            self.cats.addItem(pg.BarGraphItem(x0=0, y=ys, height=0.7, width=counts, brush=QColor("#d97706")))
            ax = self.cats.getAxis("left")
            ax.setTicks([[(i, f"{label} ({c:,})") for i, (label, c) in enumerate(cats)]])
            ax.setStyle(tickFont=mono_font())
            self.cats.invertY(True)
            self.cats.setYRange(-0.5, n - 0.5, padding=0)
            self.cats.setXRange(0, max(max(counts), 1) * 1.05, padding=0)
