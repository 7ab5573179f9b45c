"""Worker processes of a LocalCluster lazyarr starts get ready for tasks while the cluster
starts: a worker plugin that imports what a lazyarr task runs with (Numba and its CPU
target, lazyarr's task code, zarr) on each worker, those that join later too.

Without it the first task of the first compute on each worker paid for them (measured on
the quick ``bench/pangeo.py`` monthly mean: 0.6 to 0.8 s of a loaded worker's time in
Numba's start inside the first cached kernel's load, 0.16 s importing zarr), and the
resident set the run was measured to add held Numba's ~100 MiB. The plugin's setup runs
in a thread off the worker's event loop and registering it waits for every worker, so the
cluster is ready when :meth:`.ClusterManager.client` returns: the time is the cluster
start's, once per worker process, not the first compute's. Skipped when ``dask.kernels``
is ``numpy``; a worker without Numba imports the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from typing import Any

from distributed import Client, WorkerPlugin

from lazyarr import config

__all__ = ["PLUGIN_NAME", "TASK_MODULES", "WorkerWarmup", "prepare", "register"]

PLUGIN_NAME = "lazyarr-worker-warmup"

TASK_MODULES = ("lazyarr.executors.dask_tasks", "lazyarr.kernels.numba_set", "zarr")
"""What a worker imports ahead: the task code every lazyarr task runs (its payload's
unpickling imports it), the Numba kernel set, zarr (read and write tasks unpickle arrays
of it); a module that is not installed is skipped."""


def prepare() -> list[str]:
    """Import :data:`TASK_MODULES` and ready Numba's CPU target in this process; the
    modules it imported or found imported."""
    ready = []
    for name in TASK_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
            ready.append(name)
    with contextlib.suppress(ImportError):  # no Numba here: the tasks use NumPy kernels
        from lazyarr.kernels.compile import prepare as prepare_numba

        prepare_numba()
        ready.append("numba")
    return ready


class WorkerWarmup(WorkerPlugin):
    """Runs :func:`prepare` on each worker, in a thread (the event loop keeps answering)."""

    idempotent = True

    async def setup(self, worker: Any) -> None:
        self.ready = await asyncio.to_thread(prepare)


def register(client: Client) -> bool:
    """Register the warm-up on ``client``'s cluster and wait until every worker has run it
    (skipped when ``dask.kernels`` is ``numpy``); whether it was registered."""
    if config.get("dask.kernels") == "numpy":
        return False
    client.register_plugin(WorkerWarmup(), name=PLUGIN_NAME)
    return True
