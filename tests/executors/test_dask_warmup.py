"""Workers of a cluster lazyarr starts are ready for tasks when the cluster is
(``executors/dask_warmup.py``): Numba's CPU target filled, task code and zarr imported."""

from __future__ import annotations

import sys

import numpy as np

import lazyarr as la
from lazyarr import config
from lazyarr.executors import dask_warmup
from lazyarr.executors.dask_cluster import ClusterManager


def _warmed(dask_worker):
    """What the warm-up readied on one worker (None: no warm-up) and what is imported."""
    plugin = dask_worker.plugins.get(dask_warmup.PLUGIN_NAME)
    imported = tuple(m for m in ("numba", "zarr") if m in sys.modules)
    return (getattr(plugin, "ready", None), imported)


def test_each_worker_is_ready_when_the_cluster_is(dask_ex):
    client = dask_ex.client()
    got = client.run(_warmed)  # asked at once: registering waited for every worker
    assert len(got) == 2
    want = [*dask_warmup.TASK_MODULES, "numba"]
    assert all(ready == want and imported == ("numba", "zarr") for ready, imported in got.values())
    with config.set({"executor": "dask", "numba.compile-threshold": 0}):
        x = np.arange(40.0).reshape(8, 5)
        np.testing.assert_allclose(la.asarray(x, chunks=4).sum(axis=0).compute(), x.sum(axis=0))


def test_prepare_readies_this_process():
    from numba.core.registry import cpu_target

    assert dask_warmup.prepare() == [*dask_warmup.TASK_MODULES, "numba"]
    assert cpu_target.target_context._registries  # Numba's lowering registries were loaded


def test_no_warmup_when_the_tasks_run_numpy_kernels():
    with config.set({"dask.kernels": "numpy"}):
        assert dask_warmup.register(None) is False  # the client is not even asked
        manager = ClusterManager()
        settings = {"dask.n-workers": 1, "dask.processes": False, "dask.address": None}
        with config.set(settings):
            try:
                got = manager.client().run(_warmed)
            finally:
                manager.close()
    assert [ready for ready, _ in got.values()] == [None]
