"""Which kernels run: the optional native core or the pure-Python ones (same results).

The native core (`tokviz.engine._native`, C, built by the package's own build when a compiler
works) holds the hot loops: the BPE merge loop (byte fallback included), the WordPiece match loop,
the Unigram Viterbi, the SentencePiece ``.model``
kernels (charsmap normalization, SentencePiece BPE, unknown runs and byte fallback) and the
pipeline's column loop (`Tokenizer._emit`'s ``emit`` and the chunk cache entries). Everything else, traces
included, is Python. When the extension is missing, or ``TOKVIZ_PURE_PYTHON=1`` is set
before tokviz is imported, the models run their pure-Python kernels, which are the reference.

The scanners of the published split patterns are a second extension, `tokviz.engine._scan`
(`scan`, used by `tokviz.engine.scanners`); without it, or under ``TOKVIZ_PURE_PYTHON=1``, every
split pattern runs in the `regex` module.

Models and tokenizers look at `native` when they are built: a model built after
``monkeypatch.setattr(kernels, "native", None)`` runs pure Python in the same process (tests
compare the two that way).
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["backend", "native", "scan"]


def _load() -> ModuleType | None:
    if os.environ.get("TOKVIZ_PURE_PYTHON", "").strip() not in ("", "0"):
        return None
    try:
        from . import _native
    except ImportError:
        return None
    return _native


#: The native module, or None: pure Python.
native: ModuleType | None = _load()


def _load_scan() -> ModuleType | None:
    if os.environ.get("TOKVIZ_PURE_PYTHON", "").strip() not in ("", "0"):
        return None
    try:
        from . import _scan
    except ImportError:
        return None
    return _scan


#: The native split scanners, or None: every split pattern runs in the `regex` module.
scan: ModuleType | None = _load_scan()


def backend() -> str:
    """``"native"`` when the C kernels run, else ``"python"``.

    >>> backend() in ("native", "python")
    True
    """
    return "native" if native is not None else "python"
