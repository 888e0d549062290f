"""Colors and fonts of the app, light or dark, following the system palette.

Token colors come from `tokviz.gui.display.color_index` (stable per token id); this module turns a
palette slot and a shade into a QColor that keeps dark text readable on light backgrounds and
light text readable on dark ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette

from .display import PALETTE_SIZE

__all__ = ["Theme", "theme_for", "mono_font", "apply_palette", "sequence_color", "system_is_dark"]


@dataclass(frozen=True)
class Theme:
    dark: bool
    base: QColor
    text: QColor
    muted: QColor
    hex: QColor
    bracket: QColor
    separator: QColor
    hover: QColor
    selection: QColor
    special_bg: QColor
    special_fg: QColor
    chunk_bg: tuple[QColor, QColor]
    changed_bg: QColor
    literal: QColor
    error_bg: QColor
    tokens: tuple[tuple[QColor, QColor], ...]  # per slot: (shade 0, shade 1)

    def token_color(self, slot: int, shade: int) -> QColor:
        return self.tokens[slot][shade]


def _palette(dark: bool) -> tuple[tuple[QColor, QColor], ...]:
    out = []
    for i in range(PALETTE_SIZE):
        hue = (i * 137.508) % 360.0  # golden angle: consecutive slots get distant hues
        if dark:
            a = QColor.fromHslF(hue / 360.0, 0.42, 0.27)
            b = QColor.fromHslF(hue / 360.0, 0.55, 0.36)
        else:
            a = QColor.fromHslF(hue / 360.0, 0.80, 0.86)
            b = QColor.fromHslF(hue / 360.0, 0.65, 0.75)
        out.append((a, b))
    return tuple(out)


def theme_for(dark: bool) -> Theme:
    if dark:
        return Theme(
            dark=True,
            base=QColor("#1e1f22"),
            text=QColor("#e6e6e6"),
            muted=QColor("#8a8f98"),
            hex=QColor("#d7ba7d"),
            bracket=QColor("#ff8f6b"),
            separator=QColor("#1e1f22"),
            hover=QColor("#f0c674"),
            selection=QColor("#7aa2f7"),
            special_bg=QColor("#4a3b5c"),
            special_fg=QColor("#e0c8ff"),
            chunk_bg=(QColor("#2b2d31"), QColor("#34373d")),
            changed_bg=QColor("#5c4a1f"),
            literal=QColor("#ff6b6b"),
            error_bg=QColor("#5a2a2a"),
            tokens=_palette(True),
        )
    return Theme(
        dark=False,
        base=QColor("#ffffff"),
        text=QColor("#1a1a1a"),
        muted=QColor("#8a8f98"),
        hex=QColor("#7a4b00"),
        bracket=QColor("#c2410c"),
        separator=QColor("#ffffff"),
        hover=QColor("#e5a50a"),
        selection=QColor("#1c64f2"),
        special_bg=QColor("#efe3ff"),
        special_fg=QColor("#5b21b6"),
        chunk_bg=(QColor("#eef1f5"), QColor("#e1e6ee")),
        changed_bg=QColor("#fde68a"),
        literal=QColor("#dc2626"),
        error_bg=QColor("#fde2e2"),
        tokens=_palette(False),
    )


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    try:
        scheme = QGuiApplication.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Dark:
            return True
        if scheme == Qt.ColorScheme.Light:
            return False
    except AttributeError:  # Qt < 6.5
        pass
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def apply_palette(dark: bool) -> None:
    """Set a Fusion palette matching the theme (so forced light/dark also styles the chrome)."""
    app = QGuiApplication.instance()
    if app is None:
        return
    pal = QPalette()
    if dark:
        window, base, text, button, hl = "#2b2d31", "#1e1f22", "#e6e6e6", "#34373d", "#3d5a99"
        alt = "#26282c"
        mid = "#5a5f69"
    else:
        window, base, text, button, hl = "#f3f4f6", "#ffffff", "#1a1a1a", "#f8f9fb", "#9cc0ff"
        alt = "#f7f8fa"
        mid = "#c8ccd3"
    for role, c in (
        (QPalette.ColorRole.Window, window),
        (QPalette.ColorRole.WindowText, text),
        (QPalette.ColorRole.Base, base),
        (QPalette.ColorRole.AlternateBase, alt),
        (QPalette.ColorRole.Text, text),
        (QPalette.ColorRole.Button, button),
        (QPalette.ColorRole.ButtonText, text),
        (QPalette.ColorRole.Highlight, hl),
        (QPalette.ColorRole.HighlightedText, text),
        (QPalette.ColorRole.ToolTipBase, base),
        (QPalette.ColorRole.ToolTipText, text),
        (QPalette.ColorRole.PlaceholderText, "#8a8f98"),
        (QPalette.ColorRole.Mid, mid),
    ):
        pal.setColor(role, QColor(c))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#8a8f98"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#8a8f98"))
    QGuiApplication.setPalette(pal)


def mono_font(point_size: float | None = None) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    f.setStyleHint(QFont.StyleHint.Monospace)
    if point_size:
        f.setPointSizeF(point_size)
    return f


def sequence_color(theme: Theme, sequence: int | None) -> QColor:
    """The color of a model input's sequence (0: the text, 1: the pair; None: a token the
    post-processor added), the same in the window texts and the token table."""
    if sequence is None:
        return QColor(theme.special_bg)
    hue = 0.58 if sequence == 0 else 0.08  # blue for the text, orange for the pair
    return QColor.fromHslF(hue, 0.45, 0.32) if theme.dark else QColor.fromHslF(hue, 0.85, 0.85)
