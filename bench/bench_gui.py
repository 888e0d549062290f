"""GUI latency: open a 1 MB text, scroll it, and type into a 100 KB text.

Run: ``QT_QPA_PLATFORM=offscreen python bench/bench_gui.py [--tokenizer PATH] [--mb 1.0] [--keys 40]``
or, for the many-tokenizers case, ``... bench_gui.py --compare 8 --mb 1 [--held-out]``.

Prints, for the real main window and the real engine:
- open 1 MB: time until the text is shown and interactive (raw pane filled, first paint), time
  until the tokens are shown, and how much of that was GUI-thread CPU time (the rest is the
  worker encoding while the window stays responsive), waiting in a blocking event loop as the
  app does, with the longest stall a 60 Hz probe timer saw;
- scrolling the token pane of that text: GUI time per repaint while paging through it;
- typing in a 100 KB text: GUI-thread CPU time per keystroke (key handling + applying the
  re-encoded window), mean / p95 / max, and the worker's re-encode time per keystroke.
GUI-thread cost is measured with ``time.thread_time`` in the GUI thread, so time the worker
spends encoding (in another thread) does not count, but everything the GUI thread does does.

With ``--compare N`` (o200k in Inspect unless ``--tokenizer``, the first N embedded tokenizers in
Compare, Inspect shown): open the text and print seconds until the full count is shown, seconds
until every tab is idle, and the process's peak RSS; then show Compare and Inspect again and print
the same. ``--held-out`` uses text the other figures were not tuned on: a slice of the CRLF
corpora read byte-exact (CRLF kept) interleaved with seeded generated text (code, numbers, mixed
scripts, emoji).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# measure the checkout this script lives in (not whichever tokviz an editable install points at)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


PROBE_S = 0.016  # the stall probe's tick (60 Hz)


def _corpora() -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus import shared_dir

    return shared_dir() / "corpora"


def _corpus(n_chars: int) -> str:
    shared = _corpora()
    parts = []
    for name in ("botchan.txt", "wagahaiwa_nekodearu.txt"):
        p = shared / name
        if p.is_file():
            parts.append(p.read_text(encoding="utf-8"))
    src = Path(__file__).resolve().parents[1] / "tokviz" / "gui" / "viewmodel.py"
    parts.append(src.read_text(encoding="utf-8"))
    if len(parts) == 1:
        from tokviz.gui.catalog import sample_text

        parts.append(sample_text())
    text = "\n".join(parts)
    while len(text) < n_chars:
        text += "\n" + text
    cut = text.rfind("\n", 0, n_chars)
    return text[: cut + 1 if cut > 0 else n_chars]


def _held_out(n_chars: int) -> str:
    """Text not tuned on: the second half of each CRLF corpus file (read exactly) + generated text."""
    import random

    from tokviz.io.textfile import read_text_file

    shared = _corpora()
    real = []
    for name in ("wagahaiwa_nekodearu.txt", "botchan.txt"):
        p = shared / name
        if p.is_file():
            t = read_text_file(p).text
            real.append(t[len(t) // 2 :])
    rng = random.Random(24)
    words = ["token", "naïve", "Straße", "東京", "ひらがな", "данные", "مرحبا", "🙂", "👩‍💻", "x_1", "0x1F", "3.14159"]
    gen = []
    for _ in range(4000):
        kind = rng.randrange(3)
        if kind == 0:
            gen.append(f"def f{rng.randrange(999)}(a, b):\r\n    return a * {rng.randrange(10**6)} + b  # {rng.choice(words)}\r\n")
        elif kind == 1:
            gen.append(" ".join(rng.choice(words) for _ in range(rng.randrange(3, 15))) + ".\r\n")
        else:
            gen.append(",".join(str(rng.randrange(10 ** rng.randrange(1, 9))) for _ in range(8)) + "\r\n")
    parts = [*real, "".join(gen)]
    text = ""
    while len(text) < n_chars:
        text += "\r\n".join(parts)
    cut = text.rfind("\r\n", 0, n_chars)
    return text[: cut + 2 if cut > 0 else n_chars]


def _rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB."""
    import resource

    with open("/proc/self/statm") as f:
        cur = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return cur / 2**20, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def compare_case(app, win, text: str, n: int) -> None:  # noqa: ANN001
    """The many-tokenizers case (module docstring): count, idle and RSS, then after tab switches."""
    from PySide6.QtTest import QTest

    from tokviz.gui.app import wait_idle

    vm = win.vm
    win.compare_tab.add_defaults(n)
    win.tabs.setCurrentWidget(win.compare_tab)
    wait_idle(app, win, timeout=600)
    win.tabs.setCurrentWidget(win.inspect)
    wait_idle(app, win, timeout=600)
    rows = [r.name for r in win.compare_tab.vm.rows]
    print(f"Compare holds {len(rows)} tokenizers: {', '.join(rows)}; RSS now {_rss_mb()[0]:.0f} MB")
    t0 = time.perf_counter()
    c0 = time.process_time()
    vm.set_text(text, from_editor=False)
    counted = None
    while True:
        app.processEvents()
        u = vm.update
        if counted is None and u is not None and u.encoding.text == text and not u.partial:
            counted = time.perf_counter() - t0
            c_counted = time.process_time() - c0
        if counted is not None and wait_idle(app, win, timeout=0.05):
            break
        if time.perf_counter() - t0 > 900:
            break
        time.sleep(0.005)
    idle = time.perf_counter() - t0
    c_idle = time.process_time() - c0
    cur, peak = _rss_mb()
    print(
        f"open {len(text) / 1e6:.2f} MB ({text.count(chr(13) + chr(10)):,} CRLF): full count shown after {counted:.2f} s "
        f"(CPU of all threads {c_counted:.2f} s); every tab idle after {idle:.2f} s (CPU {c_idle:.2f} s); "
        f"RSS {cur:.0f} MB, peak {peak:.0f} MB"
    )
    for name, tab in (("Compare", win.compare_tab), ("Inspect", win.inspect), ("Compare", win.compare_tab), ("Inspect", win.inspect)):
        t0 = time.perf_counter()
        c0 = time.process_time()
        win.tabs.setCurrentWidget(tab)
        QTest.qWait(400)  # (debounced follow-ups start on timers)
        wait_idle(app, win, timeout=900)
        cur, peak = _rss_mb()
        print(
            f"  showing {name}: idle after {time.perf_counter() - t0:.2f} s (CPU {time.process_time() - c0:.2f} s); "
            f"RSS {cur:.0f} MB, peak {peak:.0f} MB"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", type=Path, default=None)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--keys", type=int, default=40)
    ap.add_argument("--compare", type=int, default=0, help="the many-tokenizers case with N tokenizers in Compare")
    ap.add_argument("--held-out", action="store_true", help="held-out text (CRLF corpora + generated)")
    args = ap.parse_args()

    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtTest import QTest

    from tokviz.gui.app import create_app, wait_idle
    from tokviz.gui.main_window import MainWindow
    from tokviz.resources import resource_path

    app = create_app()
    default = ("o200k_base", "o200k_base.tiktoken.gz") if args.compare else ("cl100k_base", "cl100k_base.tiktoken.gz")
    tok_path = args.tokenizer or resource_path("bundles", *default)
    win = MainWindow(settings=None)
    win.resize(1400, 900)
    win.show()
    win.load_tokenizer(tok_path)
    wait_idle(app, win)
    QTest.qWait(300)  # (the other tabs' follow-ups of the new tokenizer start on timers)
    wait_idle(app, win)
    vm = win.vm
    if not vm.tokenizer_name:
        print(f"bench_gui: {tok_path}: the window could not load it (a file or folder path is needed)", file=sys.stderr)
        return 2
    print(f"tokenizer: {vm.tokenizer_name}")

    if args.compare:
        n_chars = int(args.mb * 1_000_000)
        compare_case(app, win, _held_out(n_chars) if args.held_out else _corpus(n_chars), args.compare)
        win.close()
        from PySide6.QtCore import QThreadPool

        QThreadPool.globalInstance().waitForDone(60000)
        return 0

    stalls: list[float] = []

    def encoded() -> bool:
        """The whole current text's encoding is applied (other tabs' follow-up jobs may still run)."""
        u = vm.update
        return u is not None and u.encoding.text == vm.text and not u.partial and not vm.is_encoding()

    def wait_encoded(timeout: float = 600.0) -> float:
        """Run the event loop (blocking, as the app does: polling would take the GIL from the
        worker a thousand times a second) until the current text is encoded; a 60 Hz probe timer
        records how late each of its ticks came (a stall: the GUI thread could not respond).
        Returns the GUI-thread CPU seconds used."""
        g0 = time.thread_time()
        last = [time.perf_counter()]

        def tick() -> None:
            now = time.perf_counter()
            stalls.append(max(now - last[0] - PROBE_S, 0.0))
            last[0] = now

        probe = QTimer()
        probe.setTimerType(Qt.TimerType.PreciseTimer)
        probe.setInterval(int(PROBE_S * 1000))
        probe.timeout.connect(tick)
        probe.start()
        loop = QEventLoop()
        vm.encoding_changed.connect(loop.quit)
        vm.busy_changed.connect(loop.quit)
        deadline = time.monotonic() + timeout
        while not encoded() and time.monotonic() < deadline:
            QTimer.singleShot(int(PROBE_S * 1000), loop.quit)  # (never sleeps past a missed signal)
            loop.exec()
        vm.encoding_changed.disconnect(loop.quit)
        vm.busy_changed.disconnect(loop.quit)
        probe.stop()
        tick()
        app.processEvents()
        return time.thread_time() - g0

    # ------------------------------------------------------------------ open 1 MB
    big = _corpus(int(args.mb * 1_000_000))
    first_tokens: list[float] = []
    vm.encoding_changed.connect(lambda u: first_tokens.append(time.perf_counter()) if u.encoding.text else None)
    t0 = time.perf_counter()
    g0 = time.thread_time()
    p0 = time.process_time()
    vm.set_text(big, from_editor=False)
    win.inspect.raw.viewport().repaint()
    app.processEvents()
    t_shown = time.perf_counter() - t0
    g_shown = time.thread_time() - g0
    stalls.clear()
    g_wait = wait_encoded()
    t_tokens = time.perf_counter() - t0
    p_tokens = time.process_time() - p0  # CPU of every thread (robust to other processes' load)
    t_first = (first_tokens[0] - t0) if first_tokens else t_tokens
    longest = max(stalls, default=0.0)
    win.inspect.tokens.viewport().repaint()
    n_tok = len(vm.encoding.ids)
    wait_idle(app, win)  # the other tabs' follow-ups of the new text (caret, lattice, lint) run after it
    t_idle = time.perf_counter() - t0
    print(
        f"open {len(big) / 1e6:.2f} MB ({len(big):,} chars, {n_tok:,} tokens): text shown and editable in "
        f"{t_shown * 1000:.0f} ms (GUI thread {g_shown * 1000:.0f} ms); first tokens (preview of the start) after "
        f"{t_first:.2f} s; all tokens after {t_tokens:.2f} s (worker encode {vm.update.seconds:.2f} s); GUI-thread work "
        f"meanwhile {g_wait:.2f} s, longest GUI stall {longest * 1000:.0f} ms; CPU of all threads until all tokens {p_tokens:.2f} s; the other tabs' follow-up jobs done after {t_idle:.2f} s"
    )

    # ------------------------------------------------------------------ scroll
    view = win.inspect.tokens
    sb = view.verticalScrollBar()
    steps = 60
    times = []
    for k in range(steps):
        sb.setValue(int(sb.maximum() * k / steps))
        g = time.perf_counter()
        view.viewport().repaint()
        times.append(time.perf_counter() - g)
    print(
        f"token pane ({view._row_first[-1]:,} rows), jumping to {steps} places spread over the text: repaint mean "
        f"{statistics.mean(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms (first visit lays out and spells those lines)"
    )
    sb.setValue(sb.maximum() // 3)
    view.viewport().repaint()
    times = []
    for _k in range(steps):
        sb.setValue(sb.value() + sb.pageStep() // 4)
        g = time.perf_counter()
        view.viewport().repaint()
        times.append(time.perf_counter() - g)
    print(
        f"token pane scrolled a quarter page at a time ({steps} steps): repaint mean {statistics.mean(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms"
    )
    raw = win.inspect.raw
    rsb = raw.verticalScrollBar()
    times = []
    for k in range(steps):
        g = time.perf_counter()
        rsb.setValue(int(rsb.maximum() * k / steps))
        raw.decorate()
        raw.viewport().repaint()
        times.append(time.perf_counter() - g)
    print(f"scroll raw pane: repaint+decorate mean {statistics.mean(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms")

    # ------------------------------------------------------------------ typing in 100 KB
    text = _corpus(100_000)
    vm.set_text(text, from_editor=False)
    wait_encoded()
    raw.setFocus()
    cur = raw.textCursor()
    cur.setPosition(len(text) // 2)
    raw.setTextCursor(cur)
    raw.centerCursor()
    app.processEvents()
    def wait_blocking() -> float:
        """Wait for the re-encoded window in a blocking event loop (no polling: the GUI thread
        sleeps until the worker's result arrives), then let the panes repaint; GUI CPU seconds."""
        g0 = time.thread_time()
        if not encoded():
            loop = QEventLoop()
            vm.encoding_changed.connect(loop.quit)
            QTimer.singleShot(60000, loop.quit)
            while not encoded():
                loop.exec()
            vm.encoding_changed.disconnect(loop.quit)
        app.processEvents()
        return time.thread_time() - g0

    for _k in range(3):  # warm-up: the first keystrokes finish the lazy layout of the freshly opened text
        QTest.keyClick(raw, "w")
        wait_blocking()
    per_key = []
    worker = []
    spliced = 0
    for k in range(args.keys):
        ch = "abc d"[k % 5]
        g = time.thread_time()
        QTest.keyClick(raw, ch)
        g_key = time.thread_time() - g
        g_apply = wait_blocking()
        per_key.append(g_key + g_apply)
        worker.append(vm.update.seconds)
        spliced += vm.update.splice is not None
    QTest.keyClick(raw, Qt.Key.Key_Backspace)
    wait_encoded()
    full = vm.tokenizer.encode(vm.text)
    same = list(vm.encoding.ids) == full.ids and list(vm.encoding.offsets) == full.offsets
    per_key.sort()
    p95 = per_key[int(len(per_key) * 0.95) - 1]
    print(
        f"typing in {len(text) / 1000:.0f} KB: GUI-thread work per keystroke median {statistics.median(per_key) * 1000:.1f} ms, "
        f"mean {statistics.mean(per_key) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {per_key[-1] * 1000:.1f} ms "
        f"(budget 16 ms); worker re-encode mean "
        f"{statistics.mean(worker) * 1000:.1f} ms; {spliced}/{args.keys} keystrokes spliced; result == full encode: {same}"
    )
    win.close()
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(60000)  # (a job still running must not outlive the app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
