"""Work-arounds for bugs of the Qt binding that tokviz must survive.

PySide6 6.12.0 on CPython < 3.12: ``SignalInstance.emit()`` returns ``True`` without taking a
reference, so every signal emitted from Python takes one reference from the ``True`` singleton;
after a few hundred emits the interpreter aborts ("bool_dealloc: deallocating True or False").
`emit` emits and gives the reference back, only when a probe at import time shows the leak
(so a fixed binding, or an interpreter with immortal ``True``, is left alone). Every Python-side
emit in tokviz.gui goes through `emit`.

The same release also drops a reference to ``None`` on every call of a void Qt method, which no
wrapper can repair; pyproject.toml excludes 6.12.0 and `warn_if_broken_binding` says so at start.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal

__all__ = ["emit", "LEAKS_TRUE_PER_EMIT"]

_incref = ctypes.pythonapi.Py_IncRef
_incref.argtypes = [ctypes.py_object]
_incref.restype = None


class _Probe(QObject):
    ping = Signal()


def _probe() -> int:
    p = _Probe()
    n = 16
    before = sys.getrefcount(True)
    for _ in range(n):
        p.ping.emit()
    lost = before - sys.getrefcount(True)
    for _ in range(max(lost, 0)):  # give back what the probe itself took
        _incref(True)
    return lost // n if lost > 0 and lost % n == 0 else 0


LEAKS_TRUE_PER_EMIT = _probe()


def emit(signal: Any, *args: Any) -> None:
    """``signal.emit(*args)``, compensating the binding's reference leak when it has one."""
    signal.emit(*args)
    for _ in range(LEAKS_TRUE_PER_EMIT):
        _incref(True)


def warn_if_broken_binding() -> str | None:
    """A one-line warning when the installed binding is the broken release (else None)."""
    import PySide6

    if PySide6.__version__ == "6.12.0" and sys.version_info < (3, 12):
        return (
            "tokviz: warning: PySide6 6.12.0 on Python < 3.12 corrupts reference counts and can abort "
            "the app; install PySide6-Essentials 6.11 (pip install 'PySide6-Essentials!=6.12.0')"
        )
    return None
