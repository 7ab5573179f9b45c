"""``la.reduction``: dask's user-defined tree reduction (``dask.array.reduction``).

The op is :class:`~lazyarr.graph.ops.userreduce.UserReduce`; NumPy's own monoid
reductions given as ``chunk`` and ``aggregate`` become the built-in reduction (fused and
compiled like ``x.sum()``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops.userreduce import check_split_every, user_reduction

__all__ = ["reduction"]


def reduction(
    x: Any,
    chunk: Callable[..., Any],
    aggregate: Callable[..., Any],
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    dtype: Any = None,
    split_every: int | dict[int, int] | None = None,
    combine: Callable[..., Any] | None = None,
    name: str | None = None,
    out: Any = None,
    concatenate: bool = True,
    output_size: int = 1,
    meta: Any = None,
    weights: Any = None,
) -> LazyArray:
    """A reduction of ``x`` over ``axis`` with the user's functions, as in dask.

    ``chunk(block, axis=axes, keepdims=True)`` makes each block's state;
    ``combine`` (``aggregate`` when None) joins states with ``keepdims=True``;
    ``aggregate(states, axis=axes, keepdims=keepdims)`` makes the output. With
    ``concatenate=True`` those get the states concatenated along the first
    reduced axis, else nested lists of them (one level per reduced axis).
    ``dtype`` is required (dask's rule) and is passed to ``chunk`` and
    ``aggregate`` when they take it. ``split_every`` (dask's: an int, or a dict
    of axis -> int) is how many states one combine step of a cluster's tree
    joins; the local executors combine a block's states in one task, two at a
    time, so the functions must be associative (as dask's results for
    different ``split_every`` already require). ``weights`` are broadcast to
    ``x`` and handed to ``chunk`` after each block (``chunk(block, weights,
    axis=, keepdims=)``). ``name`` and ``meta`` are accepted and unused;
    ``out=`` is not supported.
    """
    if out is not None:
        raise TypeError("reduction: out= is not supported by lazy arrays")
    check_split_every(split_every)
    w = None if weights is None else as_expr(weights)
    e = user_reduction(
        as_expr(x),
        chunk,
        aggregate,
        axis,
        keepdims,
        dtype,
        combine,
        concatenate,
        output_size,
        w,
        split_every,
    )
    return wrap(e)
