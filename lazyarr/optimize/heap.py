"""What a thread's heap holds beyond its live blocks.

Under ``memory-limit`` lazyarr fixes glibc's mmap threshold at
:data:`MMAP_THRESHOLD` (``executors/malloc.py``): larger blocks are mapped and
unmapped on their own, smaller ones come from the heap of the thread that
makes them, which keeps their memory once freed.

NumPy asks the kernel for huge pages (``madvise(MADV_HUGEPAGE)``) for every
array of 4 MiB and more. Where the kernel grants such requests
(``/sys/kernel/mm/transparent_hugepage/enabled`` is ``madvise`` or
``always``), a heap keeps that advice on its memory after the array is freed,
and the next block placed there faults its last page in whole: 2 MiB, not
4 KiB. Measured on ``bench/memory_promise.py``'s two_stored_stages (4.7 MiB
blocks, two threads, 16 runs each): 26.0 MiB on average with NumPy's advice,
24.3 without it, and in 2 of about 40 earlier runs up to 2.2 MiB above a
prediction that had no room for it. The memory model counts one huge page
per thread where a plan has blocks that a heap serves with huge pages.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

import numpy as np

__all__ = ["MMAP_THRESHOLD", "NUMPY_ADVISES_FROM", "heap_page_slack"]

MMAP_THRESHOLD = 8 << 20
"""Blocks of this size and more are mapped and unmapped on their own (freed at once)."""

NUMPY_ADVISES_FROM = 4 << 20
"""NumPy advises huge pages for arrays of this many bytes and more (``1 << 22``)."""

_THP = Path("/sys/kernel/mm/transparent_hugepage")


@functools.cache
def _thp_mode() -> str:
    """The kernel's setting: ``always``, ``madvise`` or ``never`` (``never`` if unknown)."""
    try:
        text = (_THP / "enabled").read_text()
    except OSError:
        return "never"
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else "never"


@functools.cache
def _huge_page_bytes() -> int:
    try:
        return int((_THP / "hpage_pmd_size").read_text())
    except (OSError, ValueError):
        return 2 << 20


@functools.cache
def _numpy_advises() -> bool:
    core = getattr(np, "_core", None) or np.core  # NumPy 2, NumPy 1
    get = getattr(core.multiarray, "_get_madvise_hugepage", None)
    return bool(get()) if get is not None else False


def heap_page_slack(block_sizes: Iterable[int]) -> int:
    """The bytes one thread's heap may hold beyond its blocks, for a plan whose blocks
    have these sizes: one huge page where a heap serves some of them with huge pages
    (under :data:`MMAP_THRESHOLD`, and advised by NumPy or every heap so backed), else 0."""
    mode = _thp_mode()
    if mode == "never":
        return 0
    low = 0 if mode == "always" else NUMPY_ADVISES_FROM
    if mode == "madvise" and not _numpy_advises():
        return 0
    if any(low <= b < MMAP_THRESHOLD for b in block_sizes):
        return _huge_page_bytes()
    return 0
