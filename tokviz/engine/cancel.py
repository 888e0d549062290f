"""`CancelToken`: the one cancellation flag for long work (encoding big texts, training, loading).

The GUI (or any caller) sets it from another thread; the long-running code polls ``cancelled``
between steps and stops cleanly.
"""

from __future__ import annotations

import threading

__all__ = ["CancelToken"]


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
