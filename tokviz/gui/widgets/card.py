"""The token card, the stats bar and the error bar.

The token card shows everything about the selected token: id, vocab string, bytes, its offsets
in the three units (chars, UTF-8 bytes, UTF-16 units) and how the model produced it (BPE merges
in the order they were applied, with ranks; the Unigram score; the WordPiece match).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QTextBrowser, QToolButton, QWidget

from ...engine.encoding import BpeTrace, UnigramTrace, WordPieceTrace
from .._compat import emit
from ..display import counted, hex_bytes, label_text, visible_runs
from ..viewmodel import InspectViewModel, Stats, TokenDetails
from .form import ElidedLabel

__all__ = ["TokenCard", "StatsBar", "ErrorBar", "card_html", "stats_text"]


def _vis(s: str) -> str:
    return html.escape(label_text(tuple(visible_runs(s))))


def _mono(s: str) -> str:
    return f"<code>{s}</code>"


def _span_text(text_bytes: bytes, piece: bytes) -> str:
    try:
        decoded = piece.decode("utf-8")
    except UnicodeDecodeError:
        return "<i>part of a character</i>"
    return _mono(_vis(decoded)) if decoded else "<i>no text</i>"


def card_html(d: TokenDetails, *, total: int, pattern: str | None = None) -> str:
    t = d.token
    piece = d.text_bytes[t.byte_start : t.byte_end]
    own = d.surface if d.surface is not None else piece
    differs = d.surface is not None and d.surface != piece
    rows = [
        ("id", _mono(str(t.id)) + (" &nbsp;<b>special</b>" if t.special else "")
         + (" &nbsp;<b style='color:#d32f2f'>UNKNOWN</b>" if d.unknown else "")),
        ("vocab string", _mono(_vis(t.value))),
        ("token text", _span_text(d.text_bytes, own) if not differs else
         f"<b style='color:#c2410c'>{_span_text(d.text_bytes, own)}</b>"),
        ("token bytes", _mono(hex_bytes(own) or "—") + f" &nbsp;({len(own)} B)"),
    ]
    if differs:
        rows.append(("HF span", _mono(f"{t.start} – {t.end}") + " covers " + _span_text(d.text_bytes, piece)
                     + f" ({_mono(hex_bytes(piece) or '—')}): <b>not this token's text</b>"))
    else:
        rows.append(("chars", _mono(f"{t.start} – {t.end}") + f" &nbsp;({counted(t.end - t.start, 'char')})"))
    if d.exact_span is not None and (differs or d.exact_span != (t.start, t.end)):
        a, b = d.exact_span
        rows.append(("exact span", _mono(f"{a} – {b}") + " "
                     + (_mono(_vis(d.exact_text)) if b > a else "<i>zero-width: the token covers no text</i>")))
    rows += [
        ("UTF-8 bytes", _mono(f"{t.byte_start} – {t.byte_end}")),
        ("UTF-16 units", _mono(f"{d.utf16[0]} – {d.utf16[1]}")),
    ]
    if differs or (d.exact_span is not None and d.exact_span != (t.start, t.end)):
        rows.append(("", "<a href='lint:token'>Why? Open the offset lint</a>"))
    def _short(c: str) -> str:
        return c if len(c) <= 160 else c[:100] + f" … ({counted(len(c), 'char')})"

    if d.chunk_original is not None:
        rows.append(("chunk", _mono(_vis(_short(d.chunk_original)))))
    if d.chunk is not None and d.chunk != d.chunk_original:
        rows.append(("pre-tokenized", _mono(_vis(_short(d.chunk)))))
    if pattern is not None:
        rows.append(("pattern", html.escape(pattern)))
    if t.word is not None:
        rows.append(("word", _mono(str(t.word))))
    body = "".join(f"<tr><td class='k'>{k}</td><td>{v}</td></tr>" for k, v in rows)
    out = [
        "<style>td{padding:1px 6px 1px 0;vertical-align:top} td.k{color:palette(mid);white-space:nowrap}"
        " h3{margin:0 0 4px 0} ol{margin:2px 0 0 -18px}</style>",
        f"<h3>Token #{t.index} <span style='font-weight:normal; color:gray; font-size:small'>of "
        f"{counted(total, 'token')}, numbered from 0 as in the lint and <code>tokviz lint</code></span></h3>"
        f"<table>{body}</table>",
        "<h4 style='margin:8px 0 2px 0'>How the model produced it</h4>",
        _trace_html(d),
    ]
    return "".join(out)


def _trace_html(d: TokenDetails) -> str:
    t = d.token
    if d.unknown:
        return ("<p><b style='color:#d32f2f'>The model's unknown token.</b> The characters it covers are not in the "
                "vocabulary (and no byte fallback applies): a model sees only this one id for them.</p>")
    if t.special:
        return "<p>An added special token: matched as a literal or inserted by the post-processor; the model is not consulted.</p>"
    if d.traced is None:
        return "<p><i>tracing…</i></p>"
    tr = d.traced.trace
    if tr is None:
        return "<p>No trace: the token was looked up whole (an added token or a vocabulary hit that needed no merges).</p>"
    if isinstance(tr, BpeTrace):
        init = " ".join(_mono(_vis(s)) for s in tr.initial)
        if not tr.merges:
            if len(tr.initial) == 1:
                return f"<p>BPE: the whole chunk {init} is a vocabulary entry and was taken as is (no merges applied).</p>"
            return f"<p>BPE: initial symbols {init}; no merges applied.</p>"
        items = "".join(
            f"<li>rank {_mono(str(m.rank))}: {_mono(_vis(m.left))} + {_mono(_vis(m.right))} → {_mono(_vis(m.merged))}</li>"
            for m in tr.merges
        )
        return f"<p>BPE, starting from {counted(len(tr.initial), 'symbol')}: {init}</p><p>merges in the order applied:</p><ol>{items}</ol>"
    if isinstance(tr, UnigramTrace):
        return f"<p>Unigram: on the best (Viterbi) path with log-probability score {_mono(f'{tr.score:.4f}')}.</p>"
    if isinstance(tr, WordPieceTrace):
        tried = ", ".join(_mono(_vis(s)) for s in tr.tried) or "—"
        if tr.matched is None:
            return f"<p>WordPiece: no vocabulary entry matched (tried {tried}); the word became the unknown token.</p>"
        return f"<p>WordPiece greedy longest match: {_mono(_vis(tr.matched))} (candidates tried, longest first: {tried}).</p>"
    return f"<p>{html.escape(repr(tr))}</p>"


class TokenCard(QTextBrowser):
    """Details of the selected token (see `card_html`)."""

    lint_requested = Signal(int)  # token index: its "Why? Open the offset lint" link was clicked

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_link)
        self.setMinimumWidth(240)
        self._details: TokenDetails | None = None
        self.show_placeholder()
        vm.details_changed.connect(self.show_details)

    def show_placeholder(self) -> None:
        self.setHtml(
            "<p style='color:gray'>Click a token (or a character in the raw text) to see its id, bytes, "
            "offsets and the merges that built it.<br><br>Keyboard: focus the token pane and use ← →.</p>"
        )

    def show_details(self, d: TokenDetails | None) -> None:
        self._details = d
        if d is None:
            self.show_placeholder()
            return
        total = len(self.vm.encoding.ids) if self.vm.encoding is not None else 0
        self.setHtml(card_html(d, total=total, pattern=self.vm.pattern_label))

    def _on_link(self, url) -> None:  # noqa: ANN001
        if url.toString() == "lint:token" and self._details is not None:
            emit(self.lint_requested, self._details.token.index)

    @property
    def details(self) -> TokenDetails | None:
        return self._details


def stats_text(s: Stats) -> str:
    return (
        f"{counted(s.tokens, 'token')} · {counted(s.chars, 'char')} · {counted(s.bytes, 'byte')} · {counted(s.words, 'word')} · "
        f"{s.bytes_per_token:.2f} bytes/token · {s.tokens_per_char:.3f} tokens/char"
    )


class StatsBar(ElidedLabel):
    """The Inspect numbers in the status bar (elided with a tooltip when the window is narrow)."""

    def __init__(self, vm: InspectViewModel, parent: QWidget | None = None) -> None:
        super().__init__("no encoding yet", parent)
        vm.encoding_changed.connect(self._on_update)

    def _on_update(self, u) -> None:  # noqa: ANN001
        ms = u.seconds * 1000
        if u.partial:
            self.setText(f"preview: the first {counted(u.stats.chars, 'char')} ({counted(u.stats.tokens, 'token')}) — encoding the whole text…")
            return
        how = "re-encoded window" if u.splice is not None else "encoded"
        self.setText(stats_text(u.stats) + f"   ({how} in {ms:.1f} ms)")


class ErrorBar(QFrame):
    """A dismissable, non-blocking message bar; repeated errors update it instead of stacking."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ErrorBar")
        self.setFrameShape(QFrame.Shape.NoFrame)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 5, 6, 5)
        self.icon = QLabel("⚠")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss (Esc)")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        lay.addWidget(self.icon)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.close_button)
        self.count = 0
        self._last = ""
        self.hide()
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.dismiss, context=Qt.ShortcutContext.WindowShortcut)

    def set_colors(self, bg: str, fg: str) -> None:
        self.setStyleSheet(f"#ErrorBar {{ background: {bg}; border-radius: 4px; }} #ErrorBar QLabel {{ color: {fg}; }}")

    def show_error(self, message: str) -> None:
        """Show ``message``; an error already shown is not counted again."""
        if self.isHidden() or message != self._last:
            self.count += 1
        self._last = message
        extra = f"  (the latest of {self.count} errors; Esc dismisses)" if self.count > 1 else ""
        self.label.setText(message + extra)
        self.setToolTip(message)
        self.show()

    def dismiss(self) -> None:
        self.count = 0
        self._last = ""
        self.hide()
        emit(self.dismissed)

    @property
    def message(self) -> str:
        return self.label.text() if self.isVisible() else ""


