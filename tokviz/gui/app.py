"""Start the app: ``tokviz`` / ``tokviz gui`` (interactive) or ``tokviz gui --screenshot FILE`` (render and exit).

``TOKVIZ_THEME=light|dark`` forces a theme and ``TOKVIZ_VIEW=text|vocab|bytes|ids`` picks the
token view (handy for screenshots). Screenshot mode (for docs
and bug reports) uses the offscreen platform unless one is set, waits
until the tokenizer is loaded and the text encoded, selects a token so the card is filled, saves
the window as PNG and returns 0 (2 with a one-line message when something failed).

Before opening a window, `qt_start_problem` checks that Qt can start here (Qt aborts the process
when its platform plugin cannot load); when it cannot, ``tokviz`` prints one line naming what is
missing and exits 2. ``TOKVIZ_SKIP_QT_CHECK=1`` skips the check (it costs one short subprocess).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

__all__ = ["run_app", "create_app", "qt_start_problem", "debian_package"]

# Platforms that need no display server (Qt starts them anywhere).
_HEADLESS = {"offscreen", "minimal", "vnc", "linuxfb", "eglfs", "minimalegl", "vkkhrdisplay"}
_NO_WINDOW_HINT = (
    "run without a window: tokviz gui --screenshot out.png, or set QT_QPA_PLATFORM=offscreen"
)


def debian_package(soname: str) -> str:
    """The Debian package that usually ships a shared library (Debian's naming rule).

    >>> debian_package("libxcb-icccm.so.4"), debian_package("libxkbcommon-x11.so.0"), debian_package("libEGL.so.1")
    ('libxcb-icccm4', 'libxkbcommon-x11-0', 'libegl1')
    """
    name, _, version = soname.partition(".so.")
    name = name.lower()
    version = version.split(".")[0]
    if not version:
        return name
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def _missing_xcb_libraries() -> list[str]:
    """Shared libraries Qt's xcb plugin links against that this machine lacks (by ``ldd``)."""
    import shutil
    import subprocess

    try:
        import PySide6
    except ImportError:
        return []
    qt = Path(PySide6.__file__).parent / "Qt"
    files = [qt / "plugins" / "platforms" / "libqxcb.so", *sorted((qt / "lib").glob("libQt6XcbQpa.so*"))[:1]]
    if shutil.which("ldd") is None:
        return []
    missing: list[str] = []
    for f in files:
        if not f.is_file():
            continue
        try:
            out = subprocess.run(["ldd", str(f)], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for line in out.splitlines():
            if "not found" in line:
                lib = line.split("=>")[0].strip()
                if lib not in missing:
                    missing.append(lib)
    return missing


def qt_start_problem() -> str | None:
    """Why Qt could not open a window here, in one phrase (None when it can).

    Qt aborts the whole process when its platform plugin cannot start, so this asks first: the
    display variables, then a throw-away process that starts a QGuiApplication. For the xcb
    plugin it names the missing libraries and their Debian packages (from ``ldd``).
    """
    import subprocess

    if sys.platform != "linux":
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0]
    if platform in _HEADLESS:
        return None
    x11, wayland = os.environ.get("DISPLAY"), os.environ.get("WAYLAND_DISPLAY")
    if platform == "xcb" and not x11:
        return "no X display (QT_QPA_PLATFORM=xcb but DISPLAY is not set)"
    if platform == "wayland" and not wayland:
        return "no Wayland display (QT_QPA_PLATFORM=wayland but WAYLAND_DISPLAY is not set)"
    if not platform and not x11 and not wayland:
        return "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    probe = "import sys; from PySide6.QtGui import QGuiApplication; app = QGuiApplication(sys.argv[:1]); print(app.platformName())"
    try:
        run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None  # slow, not broken: let Qt try for real
    except OSError as exc:
        return f"cannot start a Python process to check Qt ({exc})"
    if run.returncode == 0:
        return None
    err = run.stderr
    missing = _missing_xcb_libraries() if "xcb" in err else []
    if "xcb-cursor" in err and "libxcb-cursor.so.0" not in missing:
        missing.append("libxcb-cursor.so.0")
    if missing:
        pkgs = " ".join(debian_package(m) for m in missing)
        return f"Qt's xcb platform plugin needs {', '.join(missing)} (Debian/Ubuntu: apt-get install {pkgs})"
    if "could not connect to display" in err:
        return f"cannot connect to the display {x11 or wayland!r}"
    lines = [ln.strip() for ln in err.splitlines() if "plugin" in ln.lower() or "display" in ln.lower()]
    return lines[0] if lines else f"Qt exited with status {run.returncode} when starting"


def launch_error_line(problem: str) -> str:
    """The one line ``tokviz`` prints when Qt cannot start."""
    return f"tokviz: error: cannot open a window: {problem}; {_NO_WINDOW_HINT}"


def create_app(argv: list[str] | None = None):  # noqa: ANN201
    from PySide6.QtWidgets import QApplication

    from ._compat import warn_if_broken_binding

    # The GUI thread and the encoding workers share the GIL; a short switch interval lets the GUI
    # thread take it back quickly while a worker encodes (the default 5 ms makes every Qt call
    # that releases the GIL wait for the worker's time slice).
    sys.setswitchinterval(0.0005)
    warning = warn_if_broken_binding()
    if warning:
        print(warning, file=sys.stderr)
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv or [sys.argv[0]])
        app.setApplicationName("tokviz")
        app.setOrganizationName("tokviz")
        app.setApplicationDisplayName("tokviz")
        app.setStyle("Fusion")
    from ..resources import resource_path

    icon = resource_path("icons", "tokviz.svg")
    if icon.is_file():
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    return app


def _parse_size(size: str | None) -> tuple[int, int]:
    if not size:
        return (1280, 820)
    try:
        w, h = size.lower().split("x")
        return (max(int(w), 320), max(int(h), 240))
    except ValueError:
        raise ValueError(f"--size must look like 1280x800, not {size!r}") from None


def wait_idle(app, window, timeout: float = 120.0) -> bool:  # noqa: ANN001
    """Process events until the view-model has nothing running (and an encoding if a tokenizer is set)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.processEvents()
        vm = window.vm
        tabs_busy = any(getattr(window.tabs.widget(i), "is_busy", lambda: False)() for i in range(window.tabs.count()))
        tabs_busy = tabs_busy or getattr(getattr(window, "lint_vm", None), "is_busy", lambda: False)()  # own lanes
        if not vm.is_busy() and not tabs_busy and (vm.tokenizer is None or vm.update is not None or vm.text == ""):
            app.processEvents()
            return True
        time.sleep(0.01)
    return False


def initial_text(args: argparse.Namespace) -> str | None:
    """The text ``--file`` (read byte-exact: CR, CRLF and a BOM stay) or ``--text`` gives, if any."""
    file: Path | None = getattr(args, "file", None)
    if file is not None:
        from ..io.textfile import read_text_file

        return read_text_file(file).text
    return getattr(args, "text", None)


def run_app(args: argparse.Namespace) -> int:
    """Start the window from the ``gui`` options: check that Qt can start, build the window with
    the tokenizer, text, theme, view and tab asked for, then run the event loop or, with
    ``--screenshot``, wait until every job is idle and save the PNG. One straight sequence of
    option handling, read top to bottom."""
    screenshot: Path | None = getattr(args, "screenshot", None)
    if screenshot is not None and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    width, height = _parse_size(getattr(args, "size", None))
    text = initial_text(args)
    if screenshot is None and not os.environ.get("TOKVIZ_SKIP_QT_CHECK"):
        problem = qt_start_problem()
        if problem is not None:
            print(launch_error_line(problem), file=sys.stderr)
            return 2

    app = create_app()
    from ..io.embedded import resolve_tokenizer
    from .catalog import sample_text
    from .main_window import MainWindow, default_settings

    settings = None if screenshot is not None else default_settings()
    window = MainWindow(settings=settings)
    window.resize(width, height)
    errors: list[str] = []
    window.vm.error_raised.connect(errors.append)

    restored = False
    if screenshot is None and getattr(args, "tokenizer", None) is None and text is None:
        restored = window.restore_settings()
    elif screenshot is None:
        window.restore_settings()
    if text is not None:
        window.vm.set_text(text, from_editor=False)
        if getattr(args, "file", None) is not None:  # what the reader kept, as Open… says it
            from ..io.textfile import read_text_file
            from .main_window import text_file_summary

            window.show_message(text_file_summary(read_text_file(args.file)), seconds=15)
    elif not window.vm.text:
        window.vm.set_text(sample_text(), from_editor=False)
    tok = getattr(args, "tokenizer", None)
    tok_path = None if tok is None else resolve_tokenizer(tok)
    if tok_path is not None:
        window.load_tokenizer(tok_path, name=Path(tok).name)
    elif not restored:
        window.load_default()
    forced = os.environ.get("TOKVIZ_THEME", "").lower()
    if forced in ("light", "dark", "system"):
        window.apply_theme(forced)
    view = os.environ.get("TOKVIZ_VIEW", "").lower()
    if view:
        from .display import ViewMode

        if view not in {m.value for m in ViewMode}:
            raise ValueError(f"TOKVIZ_VIEW must be one of {', '.join(m.value for m in ViewMode)}, not {view!r}")
        window.vm.set_view_mode(view)
    tab = getattr(args, "tab", None)
    if tab:
        names = [window.tabs.tabText(i).lower() for i in range(window.tabs.count())]
        if tab.lower() not in names:
            raise ValueError(f"no tab named {tab!r}; tabs: {', '.join(names)}")
        window.tabs.setCurrentIndex(names.index(tab.lower()))
        if tab.lower() == "compare" and not window.compare_tab.vm.rows:
            if tok_path is not None:  # the tokenizer asked for comes first, then the embedded ones
                window.compare_tab.vm.add_tokenizer(tok_path, name=Path(tok).name)
            window.compare_tab.add_defaults(8)

    if screenshot is None:
        window.show()
        app.aboutToQuit.connect(hand_clipboard_to_qt)
        return app.exec()

    window.show()
    if not wait_idle(app, window):
        print("tokviz: error: timed out waiting for the tokenizer", file=sys.stderr)
        return 2
    if errors:
        print(f"tokviz: error: {errors[-1]}", file=sys.stderr)
        return 2
    _select_interesting_token(window)
    wait_idle(app, window, timeout=30.0)
    app.processEvents()
    pix = window.grab()
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    if not pix.save(str(screenshot), "PNG"):
        print(f"tokviz: error: could not write {screenshot}", file=sys.stderr)
        return 2
    window.close()
    return 0


def _select_interesting_token(window) -> None:  # noqa: ANN001
    """Fill the token card for the screenshot: the first multi-merge word token, else the first token."""
    enc = window.vm.encoding
    if enc is None or not enc.ids:
        return
    best = 0
    for i, (s, e) in enumerate(enc.offsets[:400]):
        if not enc.special_tokens_mask[i] and e - s >= 5 and enc.text[s:e].strip().isalpha():
            best = i
            break
    window.vm.select_token(best)


def hand_clipboard_to_qt() -> None:
    """Before quitting, put text the editors copied back on the clipboard as data Qt made itself.

    The exact editors copy through a QMimeData made in Python (it carries the user's characters as
    UTF-8 bytes); Qt deletes the clipboard's data while the process exits, after that wrapper is
    gone, which crashed the app on quit after a copy. ``QClipboard.setText`` makes its own copy
    (a leading BOM is lost there, as in any Qt string hand-off; the app itself is closing).
    """
    from PySide6.QtGui import QGuiApplication

    from .widgets.exact_edit import ExactTextEdit, mime_text

    cb = QGuiApplication.clipboard()
    md = cb.mimeData()
    if md is not None and any(md is ours for ours in ExactTextEdit.copied):
        text = mime_text(md)
        cb.setText(text or "")
    ExactTextEdit.copied.clear()
