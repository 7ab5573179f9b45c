"""Transparent huge pages: what a thread's heap may hold beyond its blocks.

NumPy asks the kernel for huge pages (``madvise(MADV_HUGEPAGE)``) for every
array of 4 MiB and more. Where the kernel grants such requests
(``/sys/kernel/mm/transparent_hugepage/enabled`` is ``madvise`` or
``always``), a thread's heap keeps that advice on its memory after the array
is freed, and the next block placed there faults its last page in whole:
2 MiB, not 4 KiB. Measured on ``bench/memory_promise.py``'s two_stored_stages
(4.7 MiB blocks, two threads, 16 runs each): 26.0 MiB on average with NumPy's
advice, 24.3 without it, and in 2 of about 40 earlier runs up to 2.2 MiB above
a prediction that had no room for it. The memory model counts one huge page
per thread where that can happen.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

__all__ = ["NUMPY_ADVISES_FROM", "heap_page_slack"]

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


def heap_page_slack(largest_block: int) -> int:
    """The bytes one thread's heap may hold beyond its blocks, when the plan's largest
    block is ``largest_block`` bytes: one huge page where the kernel backs it so, else 0."""
    mode = _thp_mode()
    if mode == "always" or (
        mode == "madvise" and _numpy_advises() and largest_block >= NUMPY_ADVISES_FROM
    ):
        return _huge_page_bytes()
    return 0
