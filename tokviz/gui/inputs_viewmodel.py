"""The model-input pane's view-model: a pair, truncation and padding over the Inspect text.

It holds the second sequence ("pair") and the `InputSettings` the controls set, and after every
Inspect encode (or a change of its own) builds the model inputs in a background lane
(`tokviz.analysis.inputs.model_inputs`: the encoding, its overflowing windows, what each covers
and the lint per window), on a copy of the tokenizer so the tokenizer shared with the other tabs
keeps its own settings. With no pair and the settings at their defaults it computes nothing
(`active` is False) and the Inspect tab shows what it always showed. A setting that cannot be
applied (a stride too long for the room left by the special tokens, ``only_second`` without a
pair) becomes `error`, a message the pane shows. Never imports widgets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..analysis.inputs import InputSettings, ModelInputs, model_inputs
from ._compat import emit
from .lint_viewmodel import LINT_MAX_CHARS
from .viewmodel import EncodingUpdate, InspectViewModel
from .workers import CancelToken, Lanes

__all__ = ["InputsViewModel"]


class InputsViewModel(QObject):
    """State of the model-input controls and pane (see the module docstring)."""

    inputs_changed = Signal(object)  # ModelInputs, or None (inactive or failed: see `error`)
    settings_changed = Signal()
    window_selected = Signal(int)
    token_selected = Signal(object)  # (sequence, (start, end)) of the chosen window's token, or None

    def __init__(self, vm: InspectViewModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self._lanes = Lanes(self)
        self.pair = ""
        self.settings = InputSettings()
        self.inputs: ModelInputs | None = None
        self.error = ""
        self.selected = 0
        self.exact = False  # lint the exact spans (the Inspect lint's HF/exact choice)
        vm.encoding_changed.connect(self._on_update)
        vm.span_mode_changed.connect(lambda mode: self.set_exact(mode == "exact"))

    # ------------------------------------------------------------------ state
    @property
    def active(self) -> bool:
        """A pair or a setting is given: there are model inputs to show."""
        return bool(self.pair) or not self.settings.is_default

    def is_busy(self) -> bool:
        return self._lanes.any_busy()

    def set_pair(self, text: str) -> None:
        if text != self.pair:
            self.pair = text
            self.refresh()

    def update_settings(self, **changes: Any) -> None:
        """Change some settings (`InputSettings` field names) and rebuild the inputs."""
        self.set_settings(replace(self.settings, **changes))

    def set_settings(self, settings: InputSettings) -> None:
        if settings != self.settings:
            self.settings = settings
            emit(self.settings_changed)
            self.refresh()

    def select_window(self, index: int) -> None:
        n = len(self.inputs.windows) if self.inputs is not None else 0
        index = max(0, min(index, n - 1)) if n else 0
        self.selected = index
        emit(self.window_selected, index)

    def set_exact(self, on: bool) -> None:
        if on != self.exact:
            self.exact = on
            self.refresh()

    def select_token(self, row: int) -> None:
        """Token ``row`` of the chosen window: its span lights up in its sequence's text, and in
        the Inspect panes when it is a token of the text."""
        inputs = self.inputs
        if inputs is None or not 0 <= self.selected < len(inputs.windows):
            return
        w = inputs.windows[self.selected]
        seq = w.sequence_of(row) if 0 <= row < len(w.encoding) else None
        span = w.encoding.offsets[row] if seq is not None else None
        emit(self.token_selected, None if span is None else (seq, span))
        if seq == 0 and span is not None:
            self.vm.hover(span)

    # ------------------------------------------------------------------ compute
    def _on_update(self, u: EncodingUpdate) -> None:
        if not u.partial:
            self.refresh()

    def refresh(self) -> None:
        tok = self.vm.tokenizer
        if tok is None or not self.active:
            self._lanes.cancel("inputs")
            self._show(None, "")
            return
        text, pair, settings = self.vm.text, self.pair or None, self.settings
        add, exact = self.vm.add_special_tokens, self.exact
        allowed = self.vm._allowed_special()  # noqa: SLF001 - the Inspect encode's own option

        def prepare():  # noqa: ANN202
            def job(cancel: CancelToken) -> ModelInputs | None:
                got = model_inputs(tok, text, pair, settings, add_special_tokens=add, allowed_special=allowed,
                                   lint_limit=LINT_MAX_CHARS, exact=exact)
                return None if cancel.cancelled else got

            return job

        def done(result: ModelInputs | None) -> None:
            if result is not None:
                self._show(result, "")

        self._lanes.submit("inputs", prepare, done, lambda msg: self._show(None, f"Model inputs: {msg}"))

    def _show(self, inputs: ModelInputs | None, error: str) -> None:
        if inputs is None and self.inputs is None and error == self.error:
            return
        self.inputs, self.error = inputs, error
        n = len(inputs.windows) if inputs is not None else 0
        self.selected = min(self.selected, max(n - 1, 0))
        emit(self.inputs_changed, inputs)
