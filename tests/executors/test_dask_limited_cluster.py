"""The LocalCluster lazyarr starts under ``memory-limit``: sized for the plan, never paused.

Dask pauses a worker when its whole process passes 80% of its limit, baseline included
(Python, Dask, NumPy and the Numba kernels it compiled: about 210 MiB). Under a small
``memory-limit`` that stalled plans lazyarr had already fitted: workers paused at 207 MiB
of 259 MiB and no task ran for 60 s. Now a cluster lazyarr starts under a limit gets
``memory-limit`` + ``WORKER_BASELINE`` per worker and no pausing or spilling.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from test_staged_rechunk import _cross_grid_cases  # tests/ is on pytest's pythonpath

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry
from lazyarr.executors.dask_cluster import WORKER_BASELINE
from lazyarr.graph.ops.staged import StagedRead


@contextlib.contextmanager
def _own_cluster(limit: str, scratch: str):
    """lazyarr's own 2-worker LocalCluster, started under ``limit``, closed after."""
    ex = registry.get("dask")
    ex.close()  # a cluster another test left running was started without the limit
    settings = {
        "dask.n-workers": 2,
        "dask.threads-per-worker": 1,
        "dask.address": None,
        "memory-limit": limit,
        "temporary-directory": scratch,
    }
    with config.set(settings):
        try:
            yield ex.client()
        finally:
            ex.close()


@pytest.fixture
def limited_cluster(tmp_path):
    """lazyarr's own cluster under a 6 MiB limit (a thread's zstd compressor alone keeps
    about 2 MiB for the stores these tests write)."""
    with _own_cluster("6MiB", str(tmp_path / "scratch")) as client:
        yield client


def test_workers_get_the_baseline_and_are_never_paused(limited_cluster):
    import dask

    def memory_settings():
        return [dask.config.get(f"distributed.worker.memory.{s}") for s in ("spill", "pause")]

    assert set(map(tuple, limited_cluster.run(memory_settings).values())) == {(False, False)}
    limits = {w["memory_limit"] for w in limited_cluster.scheduler_info()["workers"].values()}
    assert limits == {(6 << 20) + WORKER_BASELINE}


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


class _PeakSampler:
    """Peak RSS growth of each worker process, sampled from outside every 20 ms."""

    def __init__(self, pids: list[int]) -> None:
        import threading

        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.base = {p.pid: p.memory_info().rss for p in self.procs}
        self.peak = dict(self.base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            for p in self.procs:
                self.peak[p.pid] = max(self.peak[p.pid], p.memory_info().rss)

    def growth(self) -> dict[int, int]:
        self._stop.set()
        self._thread.join()
        return {pid: self.peak[pid] - self.base[pid] for pid in self.base}


@pytest.fixture
def cluster_of_48mib(tmp_path):
    """lazyarr's own cluster under a 48 MiB limit."""
    with _own_cluster("48MiB", str(tmp_path / "scratch")) as client:
        yield client


def test_worker_rss_stays_under_the_limit_a_naive_rechunk_breaks(cluster_of_48mib, tmp_path):
    """A 256 MiB computed input moved from row strips to column strips: the direct plan would
    hold it all (refused: its prediction is over 48 MiB per worker); staged, each worker's
    RSS grows by at most the limit, sampled from outside while it runs."""
    import os

    from lazyarr import api

    limit = 48 << 20

    def rows_to_columns(n):
        x = la.random.random((n, 1024), chunks=(256, 1024), seed=3)
        return (x * 1.5).rechunk((n, 4)).sum(axis=0)

    # the staged plan's kernels compiled (or loaded) on both workers first: not counted
    with config.set({"numba.compile-threshold": 0, "memory-limit": "16MiB"}):
        rows_to_columns(2048).compute(executor="dask")
    assert any(isinstance(s.expr.op, StagedRead) for s in la.last_run().plan.stages.values())
    total = rows_to_columns(32768)
    with config.set({"optimize.check": False}):
        ex = registry.get("dask")
        extra = ex.plan_context()
        naive = api.make_plan([total._expr], "dask", api.passes_for(None, None), extra=extra)
        predicted = api.memory_estimate(naive, api.pass_context("dask", False, extra)).peak
    assert predicted > 2 * limit  # the direct plan holds its input: refused
    pids = list(cluster_of_48mib.run(os.getpid).values())
    sampler = _PeakSampler(pids)
    got = total.compute(executor="dask")
    growth = sampler.growth()
    with config.set({"memory-limit": None}):
        want = total.compute(executor="numba")
    np.testing.assert_allclose(got, want)
    assert max(growth.values()) <= limit, growth
