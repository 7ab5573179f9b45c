"""The huge page a thread's heap may hold beyond its blocks (``optimize/heap.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.optimize import heap
from lazyarr.optimize.memory import estimate

MiB = 1 << 20


@pytest.fixture
def kernel(monkeypatch):
    """Set the kernel's huge page mode and NumPy's advice as a test needs them."""

    def set_(mode: str, numpy_advises: bool = True) -> None:
        monkeypatch.setattr(heap, "_thp_mode", lambda: mode)
        monkeypatch.setattr(heap, "_numpy_advises", lambda: numpy_advises)
        monkeypatch.setattr(heap, "_huge_page_bytes", lambda: 2 * MiB)

    return set_


@pytest.mark.parametrize(
    ("mode", "numpy_advises", "block", "slack"),
    [
        ("madvise", True, 4 * MiB, 2 * MiB),  # NumPy asks for huge pages from 4 MiB on
        ("madvise", True, 4 * MiB - 1, 0),
        ("madvise", True, 8 * MiB, 0),  # mapped on its own, not from a heap
        ("madvise", False, 5 * MiB, 0),  # NUMPY_MADVISE_HUGEPAGE=0
        ("always", False, 1024, 2 * MiB),  # every heap, whatever asks
        ("always", False, 8 * MiB, 0),
        ("never", True, 5 * MiB, 0),
    ],
)
def test_one_huge_page_per_thread_where_the_kernel_backs_blocks_with_them(
    kernel, mode, numpy_advises, block, slack
):
    kernel(mode, numpy_advises)
    assert heap.heap_page_slack([block]) == slack
    if mode == "madvise":  # small blocks beside change nothing
        assert heap.heap_page_slack([1024, block]) == slack


@pytest.mark.parametrize("rows", [124, 8, 256])  # blocks of 4.7, 0.3 and 9.8 MiB
def test_the_estimate_counts_the_huge_page_per_thread_only_for_large_blocks(kernel, rows):
    x = la.random.random((rows * 40, 4992), chunks=(rows, -1), seed=4)
    y = la.map_blocks(np.sin, x, dtype=x.dtype) + la.map_blocks(np.cos, x, dtype=x.dtype)
    plan = api.make_plan([y.sum(axis=1)._expr], "numba", ())
    kernel("never")
    without = estimate(plan, 2, 1, True, False).peak
    kernel("madvise")
    with_pages = estimate(plan, 2, 1, True, False).peak
    assert with_pages - without == (2 * 2 * MiB if 4 * MiB <= rows * 4992 * 8 < 8 * MiB else 0)


def test_the_kernel_setting_is_read_from_sysfs():
    """The bracketed word of ``/sys/kernel/mm/transparent_hugepage/enabled`` (``never``
    where there is no such file)."""
    heap._thp_mode.cache_clear()
    mode = heap._thp_mode()
    path = heap._THP / "enabled"
    if path.exists():
        assert f"[{mode}]" in path.read_text()
    else:
        assert mode == "never"
