"""Freed blocks leave the process: glibc's allocator kept from holding them under a limit.

glibc serves allocations of 128 KiB and more by ``mmap`` at first, but after
such a block is freed it raises that threshold (up to 32 MiB) and serves
later blocks from its heaps, which keep freed memory and split it per
thread. A run that allocates and frees many blocks of a few MiB then grows
its RSS to about twice what it holds: measured on a rechunk under a 64 MiB
limit, 66 MiB of RSS for 32 MiB of live blocks. Fixing the threshold (which
stops the raising) keeps the heaps to what blocks under it take at once.
It was 1 MiB; every larger block then came as fresh pages, and faulting
them in cost 2.9 ms per 3.7 MiB block: 30% of an xarray area mean under
``memory-limit`` (0.67 s against 0.42 s without). At 8 MiB such blocks are
reused from the heaps, and the resident set against the prediction did not
change on ``bench/memory_promise.py`` (every case kept) or
``bench/rechunk.py`` (123 MiB for 136 predicted on the pencil). Done only
for a compute under ``memory-limit``, once per process; elsewhere (not
glibc) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from lazyarr.optimize.heap import MMAP_THRESHOLD

__all__ = ["MMAP_THRESHOLD", "bound_allocator"]


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter numbers (malloc.h)


@functools.cache
def bound_allocator() -> bool:
    """Tell glibc to map blocks of :data:`MMAP_THRESHOLD` and more on their own, once per
    process. Returns whether it did (False where the C library is not glibc)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
