"""Background work for the view-model: one lane per kind of job, latest request wins.

A *lane* (``"load"``, ``"encode"``, ``"trace"``) runs at most one job at a time on the shared
``QThreadPool``. A request that arrives while a job is running replaces any request still
waiting in that lane (intermediate keystrokes are dropped, never queued), and results of a job
that was superseded or cancelled are discarded. Engine calls are not interruptible, so
"cancel" means: the running job's result is thrown away and the lane's waiting request is
dropped; the GUI never waits for it.

Results come back on the GUI thread through a queued signal (`to_gui`).

Two lanes are the ones the user waits for: ``"load"`` and ``"encode"`` (`FOREGROUND_LANES`).
While one of them runs in any `Lanes` of the process, a job of any other lane (the caret
analysis, the lattice's samples, the Compare tab's loads and follow-ups of a new text) waits to
start: threads share the GIL, so running them alongside would only slow the encode the user is
looking at. Foreground jobs run on a pool of their own, so they never queue behind another
tab's job that took the shared pool's threads.

Work follows the eye: `ShownGate` runs a view-model's refresh while its tab is shown and only
remembers one asked for while it is hidden (run when the tab is shown again).

Python objects that hold Qt objects must die on the GUI thread. Two things would otherwise end
them in a worker: the last reference going away there (a job's function holds view-models), and
the cycle collector, which runs in whichever thread happens to allocate. The cycle collector
destroying a closed window's widgets from a worker deadlocked the GUI tests now and then
(Qt's object mutex against the GIL) or aborted them. So: a job's function and result travel back
to the GUI thread with its outcome, and while any background work runs, automatic collection is
off and the GUI thread collects on a timer by the interpreter's own thresholds (`_Collector`).

A collection walks every young container, and a new encoding of a long text holds many of
them; a short tick keeps each stall short, and a longer one would not walk fewer in total.
"""

from __future__ import annotations

import gc
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, QTimer, Signal
from shiboken6 import isValid

from ..engine.cancel import CancelToken
from ._compat import emit

__all__ = ["CancelToken", "FOREGROUND_LANES", "Lanes", "ShownGate", "background_done", "background_started", "to_gui"]

#: lanes whose jobs the user waits for; while one runs, the other lanes' jobs wait to start
FOREGROUND_LANES = frozenset({"load", "encode"})


class _Collector(QObject):
    """Cycle collection on the GUI thread only, while background work runs (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.running = 0
        self._paused = False  # whether this collector turned automatic collection off
        self._timer = QTimer(self)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self.collect_due)

    def started(self) -> None:
        if self.running == 0 and gc.isenabled():
            gc.disable()
            self._paused = True
            self._timer.start()
        self.running += 1

    def done(self) -> None:
        self.running = max(self.running - 1, 0)
        if self.running == 0 and self._paused:
            self._paused = False
            self._timer.stop()
            self.collect_due()
            gc.enable()

    def collect_due(self) -> None:
        """Collect the generations the interpreter itself would have collected by now."""
        (c0, c1, c2), (t0, t1, t2) = gc.get_count(), gc.get_threshold()
        if t0 and c0 >= t0:
            gc.collect(2 if c1 >= t1 and c2 >= t2 else 1 if c1 >= t1 else 0)


class _Relay(QObject):
    """Carries calls from worker threads to the GUI thread: one per process, never deleted.

    A QObject must be destroyed in its own thread, and a queued call must not reach an object
    being destroyed. Relays owned by view-models broke both when a window closed while one of its
    jobs ran (the job held the last reference, so the relay died in the worker). This one outlives
    every job; a call names its owner by a weak reference and is dropped when the owner is gone.
    """

    # a one-item list: (weakref to the owner, method name, args, finished, baggage released here)
    posted = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.collector = _Collector()
        self.collector.setParent(self)

    def deliver(self, box: list) -> None:  # GUI thread
        owner, method, args, finished, _baggage = box.pop()  # the worker keeps only the empty list
        try:
            target = owner()
            if target is not None and isValid(target):
                getattr(target, method)(*args)
        finally:
            if finished:
                self.collector.done()


_relay: _Relay | None = None


def _the_relay() -> _Relay:
    global _relay
    if _relay is None:
        app = QCoreApplication.instance()
        relay = _Relay()
        if app is not None:
            relay.moveToThread(app.thread())
        relay.posted.connect(relay.deliver)
        _relay = relay
    return _relay


def to_gui(owner: QObject, method: str, *args: Any) -> None:
    """Call ``owner.<method>(*args)`` on the GUI thread, unless ``owner`` is gone by then.

    Safe from any thread: worker threads report progress this way. The arguments should be plain
    values (a job's result goes back through `Lanes`, which releases it on the GUI thread).
    """
    _post(owner, method, args, finished=False)


def background_started() -> None:
    """GUI thread: a thread not run by `Lanes` starts Python work (pair with `background_done`)."""
    _the_relay().collector.started()


def background_done(owner: QObject, method: str, *args: Any) -> None:
    """From the finishing thread, its last call: ``to_gui`` that also ends `background_started`."""
    _post(owner, method, args, finished=True)


def _post(owner: QObject, method: str, args: tuple, *, finished: bool) -> None:
    emit(_the_relay().posted, [(weakref.ref(owner), method, args, finished, None)])


class _Job(QRunnable):
    def __init__(self, owner: Lanes, lane: str, generation: int, fn: Callable[[CancelToken], Any], token: CancelToken):
        super().__init__()
        self.setAutoDelete(True)
        self._owner = weakref.ref(owner)
        self._lane = lane
        self._generation = generation
        self._fn: Callable[[CancelToken], Any] | None = fn
        self._token = token

    def run(self) -> None:  # worker thread
        fn, self._fn = self._fn, None
        assert fn is not None
        try:
            result = fn(self._token)
            error = None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message for the error bar
            result = None
            error = _describe(exc)
        # the function (with the view-models it holds) and the result go to the GUI thread, and
        # this thread keeps no reference to them (see _Relay)
        box = [(self._owner, "_on_done", (self._lane, self._generation, result, error), True, fn)]
        del fn, result
        emit(_the_relay().posted, box)


def _describe(exc: BaseException) -> str:
    from ..engine.errors import TokvizFormatError

    if isinstance(exc, (TokvizFormatError, OSError, ValueError, UnicodeError)):
        return str(exc) or type(exc).__name__
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


_all_lanes: weakref.WeakSet[Lanes] = weakref.WeakSet()  # every Lanes of the process (GUI thread)
_foreground: QThreadPool | None = None


def _foreground_pool() -> QThreadPool:
    """The pool of the load and encode jobs: two threads, never taken by another tab's job."""
    global _foreground
    if _foreground is None:
        _foreground = QThreadPool()
        _foreground.setMaxThreadCount(2)
    return _foreground


def _foreground_running() -> bool:
    """Whether a load or encode runs in a live `Lanes` (one whose QObject is gone never hears
    from its last job: the relay drops the call, so its lane would look busy for ever)."""
    return any(
        st.running is not None
        for lanes in [x for x in _all_lanes if isValid(x)]
        for f, st in lanes._lanes.items()
        if f in FOREGROUND_LANES
    )


class ShownGate:
    """Work follows the eye: ``request()`` runs ``refresh`` now while shown, else marks it stale;
    ``set_shown(True)`` runs a stale refresh. Starts shown (a view-model used without its tab)."""

    __slots__ = ("_refresh", "shown", "stale")

    def __init__(self, refresh: Callable[[], None], *, shown: bool = True) -> None:
        self._refresh = refresh
        self.shown = shown
        self.stale = False

    def request(self) -> bool:
        """Run the refresh (True) or remember it for when the tab is shown (False)."""
        if not self.shown:
            self.stale = True
            return False
        self.stale = False
        self._refresh()
        return True

    def set_shown(self, on: bool) -> None:
        self.shown = on
        if on and self.stale:
            self.request()


@dataclass
class _Lane:
    generation: int = 0
    running: int | None = None  # generation of the running job
    running_token: CancelToken | None = None
    waiting: tuple[int, Callable[[], Callable[[CancelToken], Any]], Callable[[Any], None], Callable[[str], None]] | None = None
    callbacks: dict[int, tuple[Callable[[Any], None], Callable[[str], None]]] = field(default_factory=dict)


class Lanes(QObject):
    """Per-lane single-flight job runner (see the module docstring)."""

    busy_changed = Signal(str, bool)  # lane, busy

    def __init__(self, parent: QObject | None = None, *, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._fg_pool = pool or _foreground_pool()
        _the_relay()  # made here, on the GUI thread
        self._lanes: dict[str, _Lane] = {}
        _all_lanes.add(self)

    def submit(
        self,
        lane: str,
        prepare: Callable[[], Callable[[CancelToken], Any]],
        on_result: Callable[[Any], None],
        on_error: Callable[[str], None],
    ) -> int:
        """Queue a job in ``lane``; returns its generation. Older waiting requests are dropped.

        ``prepare()`` runs on the GUI thread when the job actually starts and returns the function
        the worker runs; so a job that waited sees the state left by the job before it (the
        incremental encoder needs the latest applied encoding as its base).
        """
        st = self._lanes.setdefault(lane, _Lane())
        st.generation += 1
        gen = st.generation
        if st.running_token is not None:
            st.running_token.cancel()
        if st.running is None and not self._held(lane):
            self._start(lane, st, gen, prepare, on_result, on_error)
        else:
            if st.running is None and st.waiting is None:
                emit(self.busy_changed, lane, True)  # (held back: waiting counts as busy)
            st.waiting = (gen, prepare, on_result, on_error)
        return gen

    def _held(self, lane: str) -> bool:
        """Whether a job of ``lane`` must wait: a foreground job runs (in any `Lanes`)."""
        if lane in FOREGROUND_LANES:
            return False
        return _foreground_running()

    def cancel(self, lane: str) -> None:
        """Drop the waiting request and discard the running job's result."""
        st = self._lanes.get(lane)
        if st is None:
            return
        st.generation += 1
        st.waiting = None
        if st.running_token is not None:
            st.running_token.cancel()
        emit(self.busy_changed, lane, False)

    def is_busy(self, lane: str) -> bool:
        st = self._lanes.get(lane)
        return bool(st and (st.running is not None or st.waiting is not None))

    def any_busy(self) -> bool:
        return any(st.running is not None or st.waiting is not None for st in self._lanes.values())

    def _start(self, lane: str, st: _Lane, gen: int, prepare, on_result, on_error) -> None:  # noqa: ANN001
        try:
            fn = prepare()
        except Exception as exc:  # noqa: BLE001
            on_error(_describe(exc))
            return
        token = CancelToken()
        st.running = gen
        st.running_token = token
        st.callbacks[gen] = (on_result, on_error)
        emit(self.busy_changed, lane, True)
        background_started()  # ended by the job's "finished" delivery (see _Job.run)
        pool = self._fg_pool if lane in FOREGROUND_LANES else self._pool
        pool.start(_Job(self, lane, gen, fn, token))

    def _on_done(self, lane: str, gen: int, result: object, error: object) -> None:  # GUI thread
        st = self._lanes[lane]
        on_result, on_error = st.callbacks.pop(gen)
        st.running = None
        st.running_token = None
        latest = gen == st.generation
        if latest:
            if error is None:
                on_result(result)
            else:
                on_error(str(error))
        self._advance(lane, st)
        if lane in FOREGROUND_LANES and not _foreground_running():  # the lanes held back may start now
            for lanes in [x for x in _all_lanes if isValid(x)]:
                for other, ost in list(lanes._lanes.items()):
                    if ost.running is None and ost.waiting is not None:
                        lanes._advance(other, ost)

    def _advance(self, lane: str, st: _Lane) -> None:
        """Start the lane's waiting job unless it is held back; say when the lane fell idle."""
        if st.waiting is not None:
            if not self._held(lane):
                wgen, fn, r, e = st.waiting
                st.waiting = None
                self._start(lane, st, wgen, fn, r, e)
        elif st.running is None:
            emit(self.busy_changed, lane, False)
