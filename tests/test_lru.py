"""lazyarr's one LRU cache (``lazyarr/_lru.py``): bounded, most recently used kept."""

from __future__ import annotations

import threading

from lazyarr._lru import LRU


def test_the_least_recently_used_entry_goes_first():
    cache: LRU[int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recently used
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2 and cache.values() == [1, 3]


def test_the_first_entry_stored_is_kept_and_made_once():
    cache: LRU[list] = LRU(4)
    first = cache.put("k", [1])
    assert cache.put("k", [2]) is first
    calls = []
    assert cache.get_or_make("k", lambda: calls.append(1) or [3]) is first
    assert cache.get_or_make("new", lambda: calls.append(1) or [4]) == [4]
    assert calls == [1]


def test_size_changes_and_zero_keeps_nothing():
    cache: LRU[int] = LRU(3)
    for i in range(3):
        cache.put(i, i)
    cache.size = 1
    cache.put(9, 9)
    assert list(cache) == [9]
    cache.size = 0
    assert cache.put(10, 10) == 10 and len(cache) == 0
    cache.size = 2
    cache.put(1, 1)
    cache.clear()
    assert len(cache) == 0 and cache.get(1) is None


def test_threads_share_one_entry_per_key():
    cache: LRU[object] = LRU(8)
    got: list[object] = []

    def worker() -> None:
        got.append(cache.get_or_make("key", object))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)
