"""The LocalCluster lazyarr starts under ``memory-limit``: sized for the plan, never paused.

Dask pauses a worker when its whole process passes 80% of its limit, baseline included
(Python, Dask, NumPy and the Numba kernels it compiled: about 210 MiB). Under a small
``memory-limit`` that stalled plans lazyarr had already fitted: workers paused at 207 MiB
of 259 MiB and no task ran for 60 s. Now a cluster lazyarr starts under a limit gets
``memory-limit`` + ``WORKER_BASELINE`` per worker and no pausing or spilling.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_staged_rechunk import _cross_grid_cases  # tests/ is on pytest's pythonpath

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry
from lazyarr.executors.dask_cluster import WORKER_BASELINE


@pytest.fixture
def limited_cluster(tmp_path):
    """lazyarr's own 2-worker LocalCluster, started under a 3 MiB limit, closed after."""
    ex = registry.get("dask")
    ex.close()  # a cluster another test left running was started without the limit
    settings = {
        "dask.n-workers": 2,
        "dask.threads-per-worker": 1,
        "dask.address": None,
        "memory-limit": "3MiB",
        "temporary-directory": str(tmp_path / "scratch"),
    }
    with config.set(settings):
        try:
            yield ex.client()
        finally:
            ex.close()


def test_workers_get_the_baseline_and_are_never_paused(limited_cluster):
    import dask

    def memory_settings():
        return [dask.config.get(f"distributed.worker.memory.{s}") for s in ("spill", "pause")]

    assert set(map(tuple, limited_cluster.run(memory_settings).values())) == {(False, False)}
    limits = {w["memory_limit"] for w in limited_cluster.scheduler_info()["workers"].values()}
    assert limits == {(3 << 20) + WORKER_BASELINE}


def test_movements_across_grids_run_under_a_small_limit(limited_cluster, tmp_path):
    """Every case of the cross-grid test completes on the limited cluster (before: the
    third stalled with both workers paused)."""
    import zarr

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2048, 256)), rng.standard_normal((2048, 256))
    with config.set({"memory-limit": None}):
        la.to_zarr(la.asarray(a, chunks=(64, 256)), str(tmp_path / "a.zarr"))
        la.to_zarr(la.asarray(b, chunks=(2048, 8)), str(tmp_path / "b.zarr"))
    with config.set({"array.chunk-size": "128KiB"}):
        x, y = la.from_zarr(str(tmp_path / "a.zarr")), la.from_zarr(str(tmp_path / "b.zarr"))
        for case, (expr, want) in _cross_grid_cases(x, y, a, b).items():
            out = str(tmp_path / f"{case}.zarr")
            la.to_zarr(expr, out, executor="dask")
            np.testing.assert_array_equal(zarr.open_array(out)[:], want, err_msg=case)
