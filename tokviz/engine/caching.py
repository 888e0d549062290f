"""The engine's one cache type: `BoundedCache`, a dict with a size limit (evict the older half).

Every cache in the engine is one of these: the pipeline's chunk caches (`Tokenizer`), the models'
own per-chunk caches (`Model.tokenize` for callers outside the pipeline) and the process-wide
byte-proxy cache of the stage view (`tokviz.engine.byte_alphabet`). Results never depend on a
cache; `Tokenizer.clear_caches` empties the pipeline's, its model's and the process-wide ones.

Eviction: when a put would pass ``limit``, the older half of the entries (dicts keep insertion
order) is dropped, a bounded FIFO that costs one C-level pass per half-fill. ``max_key_chars``:
keys longer than this are never stored (a whole document seen once would only pin memory).

A `BoundedCache` is a `dict`, so a lookup is ``cache.get(key)``, a C call.

Lazy tables. What a component needs only for some views or for the other backend (the id ->
token map, the Python tries and pair tables, the pure-Python scan sets, trace and audit
tables) is a `functools.cached_property`: built from the component's own data the first time
it is read, then kept as a plain attribute, so a load followed by an encode builds only what
that encode reads. `is_built` says whether one has been built (tests assert on it). Assigning
the attribute replaces the table (tests put instrumented ones in).

>>> c = BoundedCache(4)
>>> for k in "abcde":
...     c.put(k, k.upper())
>>> sorted(c)
['d', 'e']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from itertools import compress, islice, repeat
from operator import is_
from typing import Any

__all__ = ["BoundedCache", "clear_shared_caches", "is_built"]


class BoundedCache(dict):
    """``{key: value}`` holding at most ``limit`` entries (see the module docstring).

    ``shared``: a process-wide cache (not owned by one tokenizer), emptied by
    `clear_shared_caches` (which `Tokenizer.clear_caches` calls).
    """

    __slots__ = ("limit", "max_key_chars")

    def __init__(self, limit: int, *, max_key_chars: int | None = None, shared: bool = False) -> None:
        super().__init__()
        if limit < 0:
            raise ValueError(f"cache limit must be >= 0, got {limit}")
        self.limit = limit
        self.max_key_chars = max_key_chars
        if shared:
            _SHARED.append(self)

    def __repr__(self) -> str:
        return f"BoundedCache({len(self)}/{self.limit})"

    def __reduce__(self) -> tuple:  # a cache pickles as an empty one (its content is derived)
        return (_empty, (self.limit, self.max_key_chars))

    def keeps(self, key: Any) -> bool:
        """Whether ``key`` may be stored (``max_key_chars``; a zero limit stores nothing)."""
        return self.limit > 0 and (self.max_key_chars is None or len(key) <= self.max_key_chars)

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``key`` (unless `keeps` says no), first dropping the older half when full."""
        if not self.keeps(key):
            return
        if len(self) >= self.limit:
            self.evict_half()
        self[key] = value

    def evict_half(self) -> None:
        """Drop the older half of the entries."""
        # (list(islice(...)) runs in C; pop() tolerates a key another thread already dropped)
        for key in list(islice(self, len(self) // 2 + 1)):
            self.pop(key, None)

    def entries(self, keys: list, make: Callable[[Any], Any]) -> list:
        """The value of every key, in order; a missing one is ``make(key)``, computed once per
        distinct key and stored (see `put`). C-level passes only: one lookup pass, then ``make``
        over the distinct missing keys."""
        if len(keys) == 1:  # (a short line: one lookup, no column passes over one key)
            value = self.get(keys[0])
            if value is None:
                value = make(keys[0])
                self.put(keys[0], value)
            return [value]
        values = list(map(self.get, keys))
        if None in values:
            at = list(compress(range(len(keys)), map(is_, values, repeat(None))))
            missing = list(map(keys.__getitem__, at))
            fresh = dict.fromkeys(missing)  # (a key may be missing several times)
            fresh = dict(zip(fresh, map(make, fresh)))
            deque(map(values.__setitem__, at, map(fresh.__getitem__, missing)), maxlen=0)
            self._store(fresh)
        return values

    def _store(self, fresh: dict) -> None:
        if self.limit <= 0:
            return
        m = self.max_key_chars
        if m is not None and max(map(len, fresh), default=0) > m:
            fresh = {k: v for k, v in fresh.items() if len(k) <= m}
        if len(self) + len(fresh) > self.limit:
            self.evict_half()
            if len(fresh) > self.limit // 2:  # (one batch larger than the cache: keep its end)
                fresh = dict(islice(fresh.items(), len(fresh) - self.limit // 2, None))
        self.update(fresh)


_SHARED: list[BoundedCache] = []


def _empty(limit: int, max_key_chars: int | None) -> BoundedCache:
    return BoundedCache(limit, max_key_chars=max_key_chars)


def clear_shared_caches() -> None:
    """Empty every process-wide cache (``BoundedCache(..., shared=True)``)."""
    for cache in _SHARED:
        cache.clear()


def is_built(obj: object, name: str) -> bool:
    """Whether the lazy table ``name`` of ``obj`` (a `functools.cached_property`) has been built.

    >>> from functools import cached_property
    >>> class T:
    ...     @cached_property
    ...     def table(self) -> list[int]:
    ...         return [1, 2]
    >>> t = T()
    >>> is_built(t, "table"), t.table, is_built(t, "table")
    (False, [1, 2], True)
    """
    return name in vars(obj)
