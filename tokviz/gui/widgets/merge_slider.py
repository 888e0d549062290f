"""The merge slider: 0..N steps with step buttons, keyboard control and play/pause.

A plain control: it emits ``value_changed(k)`` and knows nothing about training. Arrow keys
step by one (Left/Right, Up/Down), PageUp/PageDown by a tenth, Home/End jump to the ends,
Space toggles playback; the buttons do the same and say so in their tooltips.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QSpinBox, QStyle, QToolButton, QWidget

from .._compat import emit

__all__ = ["MergeSlider"]


class MergeSlider(QWidget):
    value_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None, *, unit: str = "merges") -> None:
        super().__init__(parent)
        self.unit = unit
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)

        style = self.style()

        def button(icon: QStyle.StandardPixmap, tip: str, slot) -> QToolButton:  # noqa: ANN001
            b = QToolButton()
            b.setIcon(style.standardIcon(icon))
            b.setToolTip(tip)
            b.clicked.connect(slot)
            lay.addWidget(b)
            return b

        sp = QStyle.StandardPixmap
        self.first_button = button(sp.SP_MediaSkipBackward, "First step: no merges (Home)", lambda: self.set_value(0))
        self.prev_button = button(sp.SP_MediaSeekBackward, "One step back (Left arrow)", lambda: self.step(-1))
        self.play_button = button(sp.SP_MediaPlay, "Play / pause (Space)", self.toggle_play)
        self.play_button.setCheckable(True)
        self.next_button = button(sp.SP_MediaSeekForward, "One step forward (Right arrow)", lambda: self.step(1))
        self.last_button = button(sp.SP_MediaSkipForward, "Last step: every merge (End)",
                                  lambda: self.set_value(self.slider.maximum()))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setSingleStep(1)
        self.slider.setTracking(True)
        self.slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.slider.setToolTip("Drag, or use the arrow keys (PageUp/PageDown: a tenth, Home/End: the ends)")
        self.slider.valueChanged.connect(self._on_slider)
        lay.addWidget(self.slider, 1)
        self.spin = QSpinBox()
        self.spin.setRange(0, 0)
        self.spin.setKeyboardTracking(False)
        self.spin.setToolTip(f"Number of {unit} applied")
        self.spin.valueChanged.connect(self.set_value)
        lay.addWidget(self.spin)
        self.total = QLabel(f"/ 0 {unit}")
        self.total.setMinimumWidth(90)
        lay.addWidget(self.total)
        self.timer = QTimer(self)
        self.timer.setInterval(120)
        self.timer.timeout.connect(self._tick)
        self.setFocusProxy(self.slider)
        self.slider.installEventFilter(self)

    # ------------------------------------------------------------------ value
    def value(self) -> int:
        return self.slider.value()

    def maximum(self) -> int:
        return self.slider.maximum()

    def set_maximum(self, n: int) -> None:
        self.slider.blockSignals(True)
        self.spin.blockSignals(True)
        self.slider.setRange(0, n)
        self.slider.setPageStep(max(1, n // 10))
        self.spin.setRange(0, n)
        self.slider.blockSignals(False)
        self.spin.blockSignals(False)
        self.total.setText(f"/ {n:,} {self.unit}")
        for w in (self.first_button, self.prev_button, self.play_button, self.next_button, self.last_button,
                  self.slider, self.spin):
            w.setEnabled(n > 0)

    def set_value(self, k: int) -> None:
        self.slider.setValue(max(0, min(int(k), self.slider.maximum())))

    def step(self, delta: int) -> None:
        self.set_value(self.slider.value() + delta)

    def _on_slider(self, k: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(k)
        self.spin.blockSignals(False)
        emit(self.value_changed, k)

    # ------------------------------------------------------------------ playback
    def is_playing(self) -> bool:
        return self.timer.isActive()

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.pause()
        else:
            if self.slider.value() >= self.slider.maximum():
                self.set_value(0)
            self.timer.start()
            self.play_button.setChecked(True)
            self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPause))

    def pause(self) -> None:
        self.timer.stop()
        self.play_button.setChecked(False)
        self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))

    def _tick(self) -> None:
        if self.slider.value() >= self.slider.maximum():
            self.pause()
            return
        self.step(1)

    def eventFilter(self, obj, event) -> bool:  # noqa: ANN001, N802
        # Space on the focused slider toggles playback (QSlider ignores it otherwise).
        if obj is self.slider and event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Space:
            self.toggle_play()
            return True
        return super().eventFilter(obj, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Space:
            self.toggle_play()
            return
        super().keyPressEvent(event)
