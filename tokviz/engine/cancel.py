"""The long-work protocol: `ProgressFn`, `CancelToken`, `Cancelled`, and `checkpoint`.

Every long job in tokviz (loading big files, encoding big texts, audits, lints, corpus runs,
training) takes the same two keyword-only options and raises the same exception:

* ``progress: ProgressFn | None`` is called as ``progress(stage, done, total)``: ``stage`` is a
  short human word ("surfaces", "reachability", "lines", "merges"), ``done`` and ``total`` are
  counts in that stage's own unit (tokens, bytes, merges); ``total`` is 0 when unknown.
* ``cancel: CancelToken | None`` is set by the caller (often from another thread) and polled by
  the work between steps.
* A cancelled job raises `Cancelled` (with the stage it stopped in) and leaves no half-updated
  state behind; work whose prefix is a result of its own (the lines of a corpus linted so far)
  hands it over as ``partial``. Generators (the trainers) may instead yield their own final
  event; they poll the same token.

`checkpoint` is the one call a loop makes between steps: it polls the token, then reports.

>>> token = CancelToken()
>>> seen = []
>>> checkpoint("scan", 1, 2, progress=lambda *a: seen.append(a), cancel=token)
>>> seen
[('scan', 1, 2)]
>>> token.cancel()
>>> try:
...     checkpoint("scan", 2, 2, cancel=token)
... except Cancelled as exc:
...     print(exc.stage)
scan
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["CancelToken", "Cancelled", "ProgressFn", "checkpoint"]

#: ``progress(stage, done, total)``; ``total`` is 0 when the amount of work is not known
ProgressFn = Callable[[str, int, int], None]


class Cancelled(Exception):
    """Long work stopped because its `CancelToken` was set; ``stage`` says where, ``partial`` is
    the result of the work done until then (None when a part means nothing)."""

    def __init__(self, stage: str = "", *, partial: object = None) -> None:
        super().__init__(f"cancelled during {stage}" if stage else "cancelled")
        self.stage = stage
        self.partial = partial


class CancelToken:
    """Thread-safe flag: set by the caller, polled by the work between steps."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self, stage: str = "") -> None:
        """Raise `Cancelled` (naming ``stage``) when the token was set."""
        if self._event.is_set():
            raise Cancelled(stage)


def checkpoint(
    stage: str,
    done: int,
    total: int,
    *,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> None:
    """Between two steps of long work: raise `Cancelled` if asked to stop, else report progress."""
    if cancel is not None and cancel.cancelled:
        raise Cancelled(stage)
    if progress is not None:
        progress(stage, done, total)
