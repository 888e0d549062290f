"""Worker lanes: results reach the GUI thread, and a job that outlives its owner harms nothing.

What these guard against: Qt objects destroyed in a worker thread. The GUI tests deadlocked or
aborted now and then because (1) a job held the last reference to a QObject, or (2) the cycle
collector, triggered by a job's allocations, collected a closed window's widgets in the worker
(Qt's object mutex against the GIL: seen with gdb). Both must end on the GUI thread.
"""

from __future__ import annotations

import gc
import threading

import shiboken6
from PySide6.QtCore import QObject, QThreadPool

from tokviz.gui.workers import Lanes, to_gui


class _Probe:
    """Records on which thread it was released."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __del__(self) -> None:
        self.log.append(threading.current_thread().name)


def _blocked_job(lanes: Lanes, log: list[str], results: list[object]) -> tuple[threading.Event, threading.Event]:
    started, go = threading.Event(), threading.Event()

    def prepare():  # noqa: ANN202
        probe = _Probe(log)  # held by the job's closure and returned as its result

        def job(token):  # noqa: ANN001, ANN202
            started.set()
            go.wait(20)
            return probe

        return job

    lanes.submit("x", prepare, results.append, results.append)
    assert started.wait(20)
    return started, go


def test_a_result_comes_back_on_the_gui_thread(qtbot) -> None:  # noqa: ANN001
    owner = QObject()
    lanes = Lanes(owner)
    log: list[str] = []
    results: list[object] = []
    _, go = _blocked_job(lanes, log, results)
    assert lanes.is_busy("x")
    go.set()
    qtbot.waitUntil(lambda: bool(results), timeout=20000)
    assert isinstance(results[0], _Probe) and not lanes.is_busy("x")
    results.clear()
    qtbot.waitUntil(lambda: bool(log), timeout=20000)
    assert log == [threading.main_thread().name]


def test_a_job_that_outlives_its_lanes_is_dropped_and_released_on_the_gui_thread(qtbot) -> None:  # noqa: ANN001
    owner = QObject()
    lanes = Lanes(owner)
    log: list[str] = []
    results: list[object] = []
    _, go = _blocked_job(lanes, log, results)
    shiboken6.delete(owner)  # the window closes: its lanes die with it, in the GUI thread
    assert not shiboken6.isValid(lanes)
    del owner, lanes
    go.set()
    assert QThreadPool.globalInstance().waitForDone(20000)
    qtbot.waitUntil(lambda: bool(log), timeout=20000)
    assert results == []  # nobody is left to take the result
    assert log == [threading.main_thread().name]  # what the job held died on the GUI thread


def test_to_gui_calls_the_owner_on_the_gui_thread_and_skips_a_deleted_owner(qtbot) -> None:  # noqa: ANN001
    calls: list[tuple[str, int]] = []

    class Owner(QObject):
        def report(self, n: int) -> None:
            calls.append((threading.current_thread().name, n))

    alive, gone = Owner(), Owner()
    t = threading.Thread(target=lambda: (to_gui(alive, "report", 1), to_gui(gone, "report", 2)))
    t.start()
    t.join()
    shiboken6.delete(gone)
    qtbot.waitUntil(lambda: bool(calls), timeout=20000)
    qtbot.wait(50)
    assert calls == [(threading.main_thread().name, 1)]


def test_cycles_are_collected_on_the_gui_thread_while_a_job_runs(qtbot) -> None:  # noqa: ANN001
    assert gc.isenabled()
    owner = QObject()
    lanes = Lanes(owner)
    log: list[str] = []
    results: list[object] = []
    probe = _Probe(log)
    probe.cycle = probe  # only the cycle collector can free it
    del probe

    started, go = threading.Event(), threading.Event()

    def prepare():  # noqa: ANN202
        def job(token):  # noqa: ANN001, ANN202
            enabled = gc.isenabled()
            keep = [[] for _ in range(20 * gc.get_threshold()[0])]  # an enabled collector would run here
            started.set()
            go.wait(20)
            return enabled, len(keep)

        return job

    lanes.submit("x", prepare, results.append, results.append)
    assert started.wait(20)
    qtbot.waitUntil(lambda: bool(log), timeout=20000)  # the GUI thread's timer collected the cycle
    assert log == [threading.main_thread().name]
    go.set()
    qtbot.waitUntil(lambda: bool(results), timeout=20000)
    assert results[0][0] is False  # automatic collection was off while the job ran
    assert gc.isenabled()  # and back on once nothing runs


def test_other_lanes_wait_while_a_foreground_lane_runs(qtbot) -> None:  # noqa: ANN001
    owner = QObject()
    lanes = Lanes(owner)
    order: list[str] = []
    go = threading.Event()
    started = threading.Event()

    def encode_prepare():  # noqa: ANN202
        def job(token):  # noqa: ANN001, ANN202
            started.set()
            go.wait(20)
            order.append("encode ran")
            return "encoded"

        return job

    def caret_prepare():  # noqa: ANN202
        order.append("caret prepared")
        return lambda token: "caret"  # noqa: ARG005

    results: list[object] = []
    lanes.submit("encode", encode_prepare, results.append, results.append)
    assert started.wait(20)
    lanes.submit("caret", caret_prepare, results.append, results.append)
    qtbot.wait(100)
    assert order == [] and lanes.is_busy("caret")  # held back (and busy) while the encode runs
    go.set()
    qtbot.waitUntil(lambda: len(results) == 2, timeout=20000)
    assert order == ["encode ran", "caret prepared"] and results == ["encoded", "caret"]
    qtbot.waitUntil(lambda: not lanes.any_busy(), timeout=20000)
    # a lane that is not held starts at once; a foreground lane is never held
    lanes.submit("caret", caret_prepare, results.append, results.append)
    qtbot.waitUntil(lambda: len(results) == 3, timeout=20000)
