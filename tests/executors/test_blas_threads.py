"""The numba executor's pool and OpenBLAS share the cores instead of multiplying threads."""

from __future__ import annotations

import os

import numpy as np
from threadpoolctl import threadpool_info

import lazyarr as la
from lazyarr.executors.blas import blas_threads_for


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_blas_gets_the_cores_the_pool_leaves_and_is_restored():
    before = _blas_threads()
    assert before  # NumPy's OpenBLAS is loaded
    cores = len(os.sched_getaffinity(0))
    with blas_threads_for(2):
        assert set(_blas_threads()) == {max(1, cores // 2)}
    with blas_threads_for(1):
        assert _blas_threads() == before
    assert _blas_threads() == before


def test_tasks_of_a_threaded_compute_see_the_limit():
    seen = []

    def record(block):
        seen.append(max(_blas_threads()))
        return block

    a = np.random.default_rng(0).random((4096, 256))  # 8 MiB: the executor uses its threads
    with la.config.set({"numba.threads": 2, "numba.compile-threshold": 0}):
        out = la.map_blocks(record, la.asarray(a, chunks=(512, 256)), dtype=a.dtype)
        np.testing.assert_array_equal(out.compute(executor="numba"), a)
        threads = la.last_run().stats.extra["threads"]
    assert threads == 2
    assert seen and set(seen) == {max(1, len(os.sched_getaffinity(0)) // 2)}
