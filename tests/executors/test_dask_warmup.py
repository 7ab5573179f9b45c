"""Workers of a cluster lazyarr starts ready Numba before the first compute
(``executors/dask_warmup.py``)."""

from __future__ import annotations

import sys

import numpy as np

import lazyarr as la
from lazyarr import config
from lazyarr.executors import dask_warmup


def _warmed(dask_worker):
    """(plugin present, its thread finished, Numba imported) on one worker."""
    plugin = dask_worker.plugins.get(dask_warmup.PLUGIN_NAME)
    if plugin is None:
        return (False, False, "numba" in sys.modules)
    plugin.thread.join(60)
    return (True, not plugin.thread.is_alive(), "numba" in sys.modules)


def test_each_worker_readies_numba_in_the_background(dask_ex):
    client = dask_ex.client()
    got = client.run(_warmed)
    assert len(got) == 2
    assert all(v == (True, True, True) for v in got.values()), got
    with config.set({"executor": "dask", "numba.compile-threshold": 0}):
        x = np.arange(40.0).reshape(8, 5)
        np.testing.assert_allclose(la.asarray(x, chunks=4).sum(axis=0).compute(), x.sum(axis=0))


def test_no_warmup_when_the_tasks_run_numpy_kernels():
    with config.set({"dask.kernels": "numpy"}):
        assert dask_warmup.register(None) is False  # the client is not even asked


def test_a_run_waits_for_the_warmup_before_its_counters_start():
    """``dask_stats.reset`` waits for the worker's warm-up: the resident set Numba's start
    adds is not counted as the run's."""
    import threading
    import time
    from types import SimpleNamespace

    from lazyarr.executors import dask_stats

    plugin = dask_warmup.NumbaWarmup()
    plugin.thread = threading.Thread(target=time.sleep, args=(0.3,), daemon=True)
    plugin.thread.start()
    worker = SimpleNamespace(plugins={dask_warmup.PLUGIN_NAME: plugin})
    dask_stats._reset_on(worker)  # no stats plugin on this stand-in: only the wait
    assert not plugin.thread.is_alive()
