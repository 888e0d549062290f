"""Background work for the view-model: one lane per kind of job, latest request wins.

A *lane* (``"load"``, ``"encode"``, ``"trace"``) runs at most one job at a time on the shared
``QThreadPool``. A request that arrives while a job is running replaces any request still
waiting in that lane (intermediate keystrokes are dropped, never queued), and results of a job
that was superseded or cancelled are discarded. Engine calls are not interruptible, so
"cancel" means: the running job's result is thrown away and the lane's waiting request is
dropped; the GUI never waits for it.

Results come back on the GUI thread through a queued signal.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from ..engine.cancel import CancelToken
from ._compat import emit

__all__ = ["CancelToken", "Lanes"]




class _Relay(QObject):
    done = Signal(str, int, object, object)  # lane, generation, result, error text (or None)


class _Job(QRunnable):
    def __init__(self, relay: _Relay, lane: str, generation: int, fn: Callable[[CancelToken], Any], token: CancelToken):
        super().__init__()
        self.setAutoDelete(True)
        self._relay = relay
        self._lane = lane
        self._generation = generation
        self._fn = fn
        self._token = token

    def run(self) -> None:  # worker thread
        try:
            result = self._fn(self._token)
            error = None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message for the error bar
            result = None
            error = _describe(exc)
        try:
            emit(self._relay.done, self._lane, self._generation, result, error)
        except RuntimeError:  # the view-model went away (window closed) while this job ran
            pass


def _describe(exc: BaseException) -> str:
    from ..engine.errors import TokvizFormatError

    if isinstance(exc, (TokvizFormatError, OSError, ValueError, UnicodeError)):
        return str(exc) or type(exc).__name__
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


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
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._lanes: dict[str, _Lane] = {}

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
        if st.running is None:
            self._start(lane, st, gen, prepare, on_result, on_error)
        else:
            st.waiting = (gen, prepare, on_result, on_error)
        return gen

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
        self._pool.start(_Job(self._relay, lane, gen, fn, token))

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
        if st.waiting is not None:
            wgen, fn, r, e = st.waiting
            st.waiting = None
            self._start(lane, st, wgen, fn, r, e)
        elif st.running is None:
            emit(self.busy_changed, lane, False)
