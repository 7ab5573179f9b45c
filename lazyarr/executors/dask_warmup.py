"""Workers ready Numba before the first compute: a worker plugin that, on each worker
(those that join later too), imports Numba and fills its CPU target in a background
thread (:func:`lazyarr.kernels.compile.prepare`).

Without it the first kernel a worker loads from the disk cache pays for Numba's lazy
start inside a task (measured: 0.1 to 0.3 s per worker, on the first compute only).
Registered when lazyarr starts a LocalCluster, unless ``dask.kernels`` is ``numpy``; a
worker without Numba skips it. A compute waits for it before resetting the workers'
counters, so the resident set a run is measured to add never holds Numba's start.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from distributed import Client, WorkerPlugin

from lazyarr import config

__all__ = ["PLUGIN_NAME", "WAIT_SECONDS", "NumbaWarmup", "register", "wait_on"]

PLUGIN_NAME = "lazyarr-numba-warmup"
WAIT_SECONDS = 60.0
"""The longest a run waits for a worker's warm-up to finish."""


def _prepare() -> None:
    with contextlib.suppress(ImportError):  # no Numba on this worker: NumPy kernels
        from lazyarr.kernels.compile import prepare

        prepare()


class NumbaWarmup(WorkerPlugin):
    """Readies Numba on each worker in a daemon thread (the worker starts at once)."""

    idempotent = True

    def setup(self, worker: Any) -> None:
        self.thread = threading.Thread(target=_prepare, name=PLUGIN_NAME, daemon=True)
        self.thread.start()

    def wait(self, timeout: float = WAIT_SECONDS) -> None:
        """Until the warm-up is done (a run's measurements start after it)."""
        thread = getattr(self, "thread", None)
        if thread is not None:
            thread.join(timeout)


def wait_on(dask_worker: Any) -> None:
    """Wait for ``dask_worker``'s warm-up, if it has one (called before a run's counters
    are reset, :func:`.dask_stats.reset`: what Numba's start adds to the resident set is
    the process's, not the run's)."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    if isinstance(plugin, NumbaWarmup):
        plugin.wait()


def register(client: Client) -> bool:
    """Register the warm-up on ``client``'s cluster (skipped when ``dask.kernels`` is
    ``numpy``); whether it was registered."""
    if config.get("dask.kernels") == "numpy":
        return False
    client.register_plugin(NumbaWarmup(), name=PLUGIN_NAME)
    return True
