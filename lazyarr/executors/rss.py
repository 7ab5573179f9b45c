"""The resident memory a run adds to its process, measured while it runs.

The memory check predicts how much a run adds to a process (or a dask worker);
this measures it. One daemon thread per process samples the resident set every
few milliseconds while any run is being watched, and sleeps otherwise. A short
spike between two samples is caught by the kernel's own high-water mark
(``ru_maxrss``) whenever the run set a new one, so a watch's peak is the larger
of the two. The growth is that peak less the resident set when the run began.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["RssWatch", "high_water_bytes", "resident_bytes", "watched"]

INTERVAL_S = 0.005
"""Seconds between samples while a run is watched (reading ``/proc/self/statm`` costs ~10 µs)."""

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process's resident set now."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        import psutil  # a dependency of distributed, which lazyarr requires

        return int(psutil.Process().memory_info().rss)


def high_water_bytes() -> int:
    """The largest resident set this process ever had (0 where the platform keeps none)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0
    most = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(most) if sys.platform == "darwin" else int(most) * 1024  # bytes / KiB


class RssWatch:
    """What one run added to the resident set: started by :meth:`begin`, read by
    :attr:`growth` (while it runs or after :meth:`end`)."""

    def __init__(self) -> None:
        self.start = 0
        self.peak = 0
        self._high_water = 0
        self._ended_high_water: int | None = None

    def begin(self) -> RssWatch:
        self.start = self.peak = resident_bytes()
        self._high_water = high_water_bytes()
        self._ended_high_water = None
        _SAMPLER.add(self)
        return self

    def end(self) -> None:
        _SAMPLER.discard(self)
        self.sample(resident_bytes())
        self._ended_high_water = high_water_bytes()

    def sample(self, rss: int) -> None:
        if rss > self.peak:
            self.peak = rss

    @property
    def growth(self) -> int:
        """Bytes the run's peak resident set lay above the one it started with."""
        high = self._ended_high_water if self._ended_high_water is not None else high_water_bytes()
        peak = max(self.peak, high if high > self._high_water else 0)
        return max(0, peak - self.start)


class _Sampler:
    """The one thread per process that samples the resident set for every watch running."""

    def __init__(self) -> None:
        self._watches: set[RssWatch] = set()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, watch: RssWatch) -> None:
        with self._wake:
            self._watches.add(watch)
            if self._thread is None or not self._thread.is_alive():  # a forked child has none
                self._thread = threading.Thread(target=self._loop, name="lazyarr-rss", daemon=True)
                self._thread.start()
            self._wake.notify()

    def discard(self, watch: RssWatch) -> None:
        with self._wake:
            self._watches.discard(watch)

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._watches:
                    self._wake.wait()
                watches = list(self._watches)
            rss = resident_bytes()
            for w in watches:
                w.sample(rss)
            with self._wake:
                self._wake.wait(INTERVAL_S)


_SAMPLER = _Sampler()


@contextlib.contextmanager
def watched() -> Iterator[RssWatch]:
    """Watch the resident set while the block runs."""
    watch = RssWatch().begin()
    try:
        yield watch
    finally:
        watch.end()
