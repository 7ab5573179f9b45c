"""A bounded, thread-safe cache that keeps the most recently used entries: lazyarr's one LRU.

The plan cache (``api``), the kernel sources emitted per structure
(``kernels/numba_fused.py``), the emitters' answers per op
(``kernels/numba_set.py``), the blocks a fused group reads (``graph/group.py``)
and the stage payloads a dask worker keeps (``executors/dask_tasks.py``) are
each one :class:`LRU`. It imports nothing of lazyarr, so every layer may use it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

__all__ = ["LRU"]

V = TypeVar("V")


class LRU(Generic[V]):
    """Up to ``size`` entries by key, the least recently used dropped first.

    ``get_or_make`` runs ``make`` outside the lock (it may be slow, or ask
    the cache again); when two threads make the same entry, the first one
    stored is kept and returned to both. ``size`` may be changed (the next
    store trims to it); 0 keeps nothing.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The entry for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        """Keep ``value`` for ``key`` unless an entry is already there; the entry kept."""
        with self._lock:
            kept = self._data.setdefault(key, value)
            self._data.move_to_end(key)
            while len(self._data) > max(self.size, 0):
                self._data.popitem(last=False)
            return kept

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The entry for ``key``, made by ``make()`` and kept when missing."""
        found = self.get(key)
        return found if found is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def values(self) -> list[V]:
        """The entries, least recently used first (a copy)."""
        with self._lock:
            return list(self._data.values())

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[Hashable]:
        with self._lock:
            return iter(list(self._data))
