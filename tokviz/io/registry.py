"""One tokenizer per file, shared: the process's loaded tokenizers, least recently used evicted.

Every view that needs the tokenizer of a file (Inspect, Compare's rows, Vocabulary, Lint, Chat,
which read Inspect's) asks `TokenizerRegistry.get`; a file already loaded is handed out again,
the same object, so eight Compare rows and Inspect showing one of them hold it once. The key is
the resolved path with its size and modification time (a file rewritten on disk is loaded anew)
and the load options.

Memory: each entry's size is the resident memory its load added (measured around the load, at
least the file's size). Beyond ``budget_bytes`` the least recently used entries are let go: the
registry keeps only a weak reference, so one still shown by a view is handed out again (never a
second copy), and one nobody holds any more is loaded again, transparently, when next asked for.
The default budget (`DEFAULT_BUDGET_MB`, or ``$TOKVIZ_TOKENIZER_BUDGET_MB``) fits an 8 GB
laptop: a quarter of its memory for tokenizers kept for later.

>>> reg = TokenizerRegistry(budget_mb=512)
>>> reg.budget_bytes
536870912
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_BUDGET_MB", "RegistryStats", "TokenizerRegistry", "shared_registry"]

#: tokenizers kept for later beyond what the views show, in MB (a quarter of an 8 GB laptop)
DEFAULT_BUDGET_MB = 2048


@dataclass(frozen=True, slots=True)
class RegistryStats:
    """What the registry holds: entries kept, their estimated bytes, loads and hits so far."""

    kept: int
    kept_bytes: int
    loads: int
    hits: int
    evictions: int


@dataclass(slots=True)
class _Entry:
    ref: weakref.ref[Any]
    strong: Any  # None once evicted (the weak reference may still reach it)
    size: int


def _rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _key(path: Path, pattern: str | None, special_tokens: dict[str, int] | None) -> tuple:
    p = path.resolve()
    st = p.stat()
    specials = tuple(sorted(special_tokens.items())) if special_tokens else None
    return (str(p), st.st_size, st.st_mtime_ns, pattern, specials)


def _file_size(path: Path) -> int:
    if path.is_dir():
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    return path.stat().st_size


class TokenizerRegistry:
    """Thread-safe cache of loaded tokenizers by file (module docstring)."""

    def __init__(self, *, budget_mb: float | None = None) -> None:
        if budget_mb is None:
            budget_mb = float(os.environ.get("TOKVIZ_TOKENIZER_BUDGET_MB", DEFAULT_BUDGET_MB))
        self.budget_bytes = int(budget_mb * 1024 * 1024)
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Lock] = {}  # one load per key at a time
        self._loads = self._hits = self._evictions = 0

    def set_budget(self, *, mb: float) -> None:
        """Change the budget; entries beyond it are let go now."""
        with self._lock:
            self.budget_bytes = int(mb * 1024 * 1024)
            self._evict()

    def get(
        self, path: str | os.PathLike[str], *, pattern: str | None = None, special_tokens: dict[str, int] | None = None
    ) -> Any:
        """The tokenizer of ``path``: the one already loaded, or loaded now (errors as `tokviz.load`)."""
        from .detect import load

        path = Path(path)
        key = _key(path, pattern, special_tokens)
        tok = self._lookup(key)
        if tok is not None:
            return tok
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:  # a second view asking while the first load runs waits for it, not a second copy
            tok = self._lookup(key)
            if tok is not None:
                return tok
            before = _rss()
            tok = load(path, pattern=pattern, special_tokens=special_tokens)
            size = max(_rss() - before, _file_size(path))
            with self._lock:
                self._loads += 1
                self._entries[key] = _Entry(weakref.ref(tok), tok, size)
                self._loading.pop(key, None)
                self._evict()
            return tok

    def _lookup(self, key: tuple) -> Any:
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                return None
            tok = e.ref()
            if tok is None:  # evicted and no view held it: load again
                del self._entries[key]
                return None
            e.strong = tok
            self._entries.move_to_end(key)
            self._hits += 1
            self._evict()
            return tok

    def _evict(self) -> None:  # under the lock
        total = sum(e.size for e in self._entries.values() if e.strong is not None)
        for key, e in list(self._entries.items()):
            if total <= self.budget_bytes:
                break
            if e.strong is None:
                continue
            if key == next(reversed(self._entries)):
                break  # the one just asked for stays
            e.strong = None
            total -= e.size
            self._evictions += 1
        for key in [k for k, e in self._entries.items() if e.strong is None and e.ref() is None]:
            del self._entries[key]

    def holds(
        self, path: str | os.PathLike[str], *, pattern: str | None = None, special_tokens: dict[str, int] | None = None
    ) -> bool:
        """Whether the tokenizer that `get` with these options would return is kept (not let go):
        a rank file kept with a chosen pattern is not held for a load without one."""
        key = _key(Path(path), pattern, special_tokens)
        with self._lock:
            e = self._entries.get(key)
            return e is not None and e.strong is not None

    def stats(self) -> RegistryStats:
        with self._lock:
            kept = [e for e in self._entries.values() if e.strong is not None]
            return RegistryStats(len(kept), sum(e.size for e in kept), self._loads, self._hits, self._evictions)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_shared: TokenizerRegistry | None = None
_shared_lock = threading.Lock()


def shared_registry() -> TokenizerRegistry:
    """The process's registry (made on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = TokenizerRegistry()
        return _shared
