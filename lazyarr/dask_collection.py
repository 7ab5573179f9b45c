"""Lazy arrays as Dask collections: ``dask.compute``, ``dask.persist`` and ``tokenize``.

Dask asks a collection for a graph, its output keys and how to finish
(the protocol of ``dask.typing.DaskCollection``). A lazy array's graph is
one task that runs lazyarr on its expression: lazyarr plans, fuses and
runs its blocks itself, on its own executor (the one configured when Dask
asks for the graph). Dask arrays computed in the same call keep their own
graph and scheduler.

Each array gets an optimizer of its own (:func:`optimizer`), so Dask never
merges two lazy arrays' graphs: Dask 2026.8 returns the results of merged
collections in the wrong order when other collections sit between them
(``dask.compute(delayed_a, dask_array, delayed_b)`` gives ``(a, b, array)``),
and a wrong answer is worse than a second plan. ``lazyarr.compute(a, b)``
is the call that runs several arrays in one shared plan.

A lazyarr task that lands on a Dask worker (a user's ``distributed.Client``
schedules it) runs the blocks there with the ``numba`` executor instead of
starting a cluster inside the worker.

``tokenize(a)`` is the structural key of the expression: equal
expressions have equal tokens, in any process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import dask.threaded
import numpy as np
from dask.highlevelgraph import HighLevelGraph
from dask.task_spec import DataNode, Task

from lazyarr import api, config
from lazyarr._convert import source_expr
from lazyarr.executors import registry
from lazyarr.graph.expr import Expr

__all__ = [
    "DaskCollection",
    "dask_graph",
    "dask_keys",
    "dask_name",
    "dask_token",
    "optimizer",
    "postcompute",
    "postpersist",
    "scheduler",
]

scheduler = dask.threaded.get
"""Dask's default scheduler for lazy arrays: a local thread runs the lazyarr task."""


def dask_name(expr: Expr) -> str:
    """The Dask key of ``expr``'s result: its structural key, so equal expressions share it."""
    return f"lazyarr-{expr.key}"


def dask_token(expr: Expr) -> tuple[str, str]:
    """What ``dask.base.tokenize`` hashes: deterministic, equal for equal expressions."""
    return ("lazyarr", expr.key)


def dask_keys(expr: Expr) -> list[str]:
    """The output keys: one per array (its result is the whole NumPy array)."""
    return [dask_name(expr)]


def dask_graph(expr: Expr) -> HighLevelGraph:
    """One layer with one task that computes ``expr`` with lazyarr."""
    name = dask_name(expr)
    # the caller's scoped settings travel with the task (Dask's threads and workers
    # do not run in the caller's context)
    task = Task(name, _compute_one, DataNode(None, expr), config.get("executor"), config.scoped())
    return HighLevelGraph.from_collections(name, {name: task}, dependencies=())


def _first(results: Sequence[Any]) -> Any:
    return results[0]


def postcompute() -> tuple[Callable[..., Any], tuple]:
    """How Dask turns the results of :func:`dask_keys` into the value: the one array."""
    return _first, ()


def postpersist(
    expr: Expr, rebuild: Callable[[Expr], Any]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """How Dask makes the persisted collection: a lazy array over the computed values,
    in the array's chunks (a ``distributed`` client's future is fetched into this process).

    ``rebuild`` wraps an expression into the user-facing array (the top
    level passes it; this module never sees the array class).
    """
    return _persisted, (dask_name(expr), expr, rebuild)


def _persisted(
    dsk: Any, name: str, expr: Expr, rebuild: Callable[[Expr], Any], rename: Any = None
) -> Any:
    value = dsk[name]
    result = getattr(value, "result", None)  # a distributed future: fetch it here
    arr = np.asarray(result() if callable(result) else value)
    return rebuild(source_expr(arr, expr.chunks, owned=True))


def _executor_here(name: str | None) -> str | None:
    """``name``, unless it would start a cluster from inside a Dask worker (then ``numba``)."""
    if config.resolve("executor", name) != "dask":
        return name
    inside = getattr(registry.get("dask"), "inside_worker", None)
    return "numba" if inside is not None and inside() else name


def _compute_one(expr: Expr, executor: str | None, scoped: dict[str, Any]) -> np.ndarray:
    with config.set(scoped):  # the settings of the caller's ``with config.set`` blocks
        (result,) = api.compute_exprs([expr], executor=_executor_here(executor))
    return result


def _unchanged(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    return dsk


def optimizer() -> Callable[..., Any]:
    """``__dask_optimize__``: leaves the one task as it is, and is a new object each time.

    Dask groups collections whose optimizers are equal; a fresh object per
    array keeps every lazy array in a group of its own (see the module note).
    """
    return functools.partial(_unchanged)


class DaskCollection:
    """The protocol's methods for a class whose instances hold an expression in ``_expr``.

    ``LazyArray`` inherits them; persisted arrays are rebuilt as the same class.
    """

    __slots__ = ()
    _expr: Expr

    def __dask_graph__(self) -> HighLevelGraph:
        return dask_graph(self._expr)

    def __dask_keys__(self) -> list[str]:
        return dask_keys(self._expr)

    def __dask_layers__(self) -> tuple[str, ...]:
        return (dask_name(self._expr),)

    def __dask_tokenize__(self) -> tuple[str, str]:
        return dask_token(self._expr)

    def __dask_postcompute__(self) -> tuple[Callable[..., Any], tuple]:
        return postcompute()

    def __dask_postpersist__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return postpersist(self._expr, functools.partial(_rebuilt, type(self)))

    @property
    def __dask_optimize__(self) -> Callable[..., Any]:
        return optimizer()

    __dask_scheduler__ = staticmethod(scheduler)


def _rebuilt(cls: type, expr: Expr) -> Any:
    obj = cls.__new__(cls)
    obj._expr = expr
    return obj
