"""The caret panel's view-model: prefix stability and special literals at the Inspect caret.

It follows the Inspect view-model (tokenizer, text, the "honour special literals" option) and
the caret position the Raw pane reports (Qt UTF-16 units, converted here with the encoding's
`OffsetMap`: the widgets do no index arithmetic). Work runs in the ``caret`` lane (latest
request wins): `tokviz.analysis.healing.analyze_caret` on the text before the caret and
`tokviz.analysis.specials.analyze_specials` on the text around it. Long texts are analysed in a
window (the last `PROMPT_WINDOW` characters before the caret, `SPECIALS_WINDOW` around it); the
result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from shiboken6 import isValid

from ._compat import emit
from .workers import CancelToken, Lanes

__all__ = ["CaretView", "CaretViewModel", "PROMPT_WINDOW", "SPECIALS_WINDOW"]

PROMPT_WINDOW = 4000
SPECIALS_WINDOW = 20000


@dataclass(frozen=True, slots=True)
class CaretView:
    caret: int  # code points
    text_length: int
    window_start: int  # the prompt analysed is text[window_start:caret]
    healing: Any  # tokviz.analysis.healing.Healing
    specials: Any  # tokviz.analysis.specials.SpecialsReport (offsets relative to specials_start)
    specials_start: int
    pieces: dict[int, str] = field(default_factory=dict)  # display text of the ids the panel shows


def _display_pieces(tok: Any, ids: set[int]) -> dict[int, str]:
    from ..analysis.healing import surface_index

    index = surface_index(tok)
    out = {}
    for i in ids:
        surf = index.surface.get(i)
        out[i] = surf.decode("utf-8", "backslashreplace") if surf is not None else (tok.id_to_token(i) or f"#{i}")
    return out


def analyze_at(tok: Any, text: str, caret: int, allowed: Any) -> CaretView:
    """The panel's whole computation (worker thread; also called directly by tests)."""
    from ..analysis.healing import LIST_LIMIT, analyze_caret
    from ..analysis.specials import analyze_specials

    start = max(0, caret - PROMPT_WINDOW)
    healing = analyze_caret(tok, text[start:caret], allowed_special=allowed)
    s_start = max(0, caret - SPECIALS_WINDOW // 2)
    specials = analyze_specials(tok, text[s_start:s_start + SPECIALS_WINDOW])
    shown = set(healing.ids[-12:]) | {i for c in healing.completion_examples(12) for i in c} | set(healing.single_token_completions[:LIST_LIMIT]) | set(healing.prefix_pieces)
    for p in (healing.rollback_one, healing.rollback_covering):
        if p is not None:
            shown |= set(p.candidates)
    return CaretView(caret, len(text), start, healing, specials, s_start, _display_pieces(tok, shown))


class CaretViewModel(QObject):
    result_changed = Signal(object)  # CaretView
    error_raised = Signal(str)

    def __init__(self, parent: QObject | None = None, *, inspect: Any = None, lanes: Lanes | None = None) -> None:
        super().__init__(parent)
        self.inspect = inspect
        self._lanes = lanes or getattr(inspect, "_lanes", None) or Lanes(self)
        self.caret: int | None = None  # code points; None = the text end
        self.view: CaretView | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(120)  # typing moves the caret on every key: analyse once it rests
        self._timer.timeout.connect(self.refresh)
        if inspect is not None:
            inspect.tokenizer_changed.connect(lambda _p: self._timer.start())
            inspect.encoding_changed.connect(lambda _u: self._timer.start())

    def set_caret_utf16(self, pos: int) -> None:
        """The Raw pane's cursor position (UTF-16 units) -> code points."""
        u = getattr(self.inspect, "update", None)
        text = getattr(self.inspect, "text", "")
        if u is not None and u.encoding.text == text:
            self.caret = u.offset_map.from_utf16(pos)
        else:
            from ..engine.text import OffsetMap

            # the first ``pos`` characters hold unit ``pos`` (each is one or two units): a map of
            # that prefix converts it (a new text puts the cursor at 0: no map of all of it)
            self.caret = OffsetMap(text[:pos]).from_utf16(pos)
        self._timer.start()

    def set_caret(self, caret: int | None) -> None:
        self.caret = caret
        self._timer.start()

    def refresh(self) -> None:
        tok = getattr(self.inspect, "tokenizer", None)
        if tok is None:
            return
        text = getattr(self.inspect, "text", "")
        caret = len(text) if self.caret is None else max(0, min(self.caret, len(text)))
        allowed_of = getattr(self.inspect, "_allowed_special", None)
        allowed = allowed_of() if callable(allowed_of) else None

        def prepare():  # noqa: ANN202
            def job(_token: CancelToken) -> CaretView:
                return analyze_at(tok, text, caret, allowed)

            return job

        self._lanes.submit("caret", prepare, self._done, self._fail)

    def _fail(self, message: str) -> None:
        if isValid(self):
            emit(self.error_raised, message)

    def _done(self, view: CaretView) -> None:
        if not isValid(self):
            return  # the panel was closed while the analysis ran (the lanes belong to Inspect)
        self.view = view
        emit(self.result_changed, view)
