"""Running lazy arrays: ``compute``, ``persist`` and plan access for several outputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr import api
from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.executors import registry
from lazyarr.planview import explain, visualize

__all__ = [
    "cluster",
    "compute",
    "dask_client",
    "explain",
    "last_run",
    "persist",
    "plan",
    "visualize",
]


def compute(
    *arrays: Any,
    executor: str | None = None,
    optimize: bool | None = None,
    passes: Sequence[str] | None = None,
    progress: Any = None,
    memory_limit: Any = None,
) -> tuple[np.ndarray, ...]:
    """Compute several arrays in one shared plan; returns a tuple of NumPy arrays.

    ``memory_limit`` is the ``memory-limit`` setting for this call. The keywords are
    spelled out (no ``**options``) so that a misspelt one
    (``executer=``) is refused by Python naming ``compute()``, not an internal function.
    """
    exprs = [as_expr(a) for a in arrays]
    return tuple(
        api.compute_exprs(
            exprs,
            executor=executor,
            optimize=optimize,
            passes=passes,
            progress=progress,
            memory_limit=memory_limit,
        )
    )


def persist(
    *arrays: Any,
    executor: str | None = None,
    optimize: bool | None = None,
    passes: Sequence[str] | None = None,
    progress: Any = None,
    memory_limit: Any = None,
) -> tuple[LazyArray, ...]:
    """Compute several arrays and keep their blocks; returns lazy arrays over them."""
    exprs = [as_expr(a) for a in arrays]
    kept = api.persist_exprs(
        exprs,
        executor=executor,
        optimize=optimize,
        passes=passes,
        progress=progress,
        memory_limit=memory_limit,
    )
    return tuple(wrap(e) for e in kept)


def dask_client() -> Any:
    """The ``distributed.Client`` the ``dask`` executor uses, starting its cluster if needed.

    The cluster at ``dask.address``, the user's own default client, or the LocalCluster
    lazyarr started (its dashboard: ``la.dask_client().dashboard_link``). Use it for
    Dask's diagnostics (``get_task_stream``, ``performance_report``) or to submit Dask
    work beside lazyarr's; lazyarr closes only a cluster it started.
    """
    return registry.get("dask").client()


def cluster() -> Any:
    """The same client as :func:`dask_client` (its older name)."""
    return dask_client()


def last_run() -> api.LastRun | None:
    """The plan and measurements of the latest compute (``.plan``, ``.stats``)."""
    return api.last_run()


def plan(*arrays: Any, executor: str | None = None, optimize: bool | None = None) -> Any:
    """The optimized :class:`~lazyarr.optimize.plan.Plan` that ``compute`` would run."""
    exprs = [as_expr(a) for a in arrays]
    ex = api.resolve_executor(executor)
    return api.make_plan(
        exprs, ex.name, api.passes_for(optimize, None), extra=api.planning_facts(ex)
    )
