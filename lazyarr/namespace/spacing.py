"""``logspace``, ``geomspace`` and ``indices``: spaced and index grids from lazy ops."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import manipulation as m
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, is_py_scalar, take
from lazyarr.namespace.creation import arange, full, linspace
from lazyarr.namespace.shape_editing import linspace_nd

__all__ = ["geomspace", "indices", "logspace"]


def _linspace(start: Any, stop: Any, num: int, endpoint: bool, axis: int) -> LazyArray:
    if is_py_scalar(start) and is_py_scalar(stop):
        normalize_axis(axis, 1, "linspace")
        return linspace(start, stop, num, endpoint=endpoint)
    return linspace_nd(start, stop, num, endpoint=endpoint, axis=axis)


@implements("logspace")
def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> LazyArray:
    """``base ** linspace(start, stop, num)`` (array ``start``/``stop``/``base`` broadcast)."""
    if not isinstance(base, (float, int)) and np.ndim(base):
        shapes = [np.shape(v) if not isinstance(v, LazyArray) else v.shape for v in (start, stop)]
        ndmax = len(np.broadcast_shapes(*shapes, np.shape(base)))
        start, stop, b = (
            (lambda v: v.reshape((1,) * (ndmax - v.ndim) + v.shape))(lazy(v))
            for v in (start, stop, base)
        )
        base = wrap(m.expand_dims(b._expr, axis))
    y = _linspace(start, stop, num, endpoint, axis)
    out = (lazy(base) if not is_py_scalar(base) else base) ** y
    return out if dtype is None else out.astype(dtype)


@implements("geomspace")
def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0
) -> LazyArray:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (NumPy's steps).

    Lazy ``start``/``stop`` are computed when called (NumPy checks them for zeros).
    """
    start = np.asanyarray(computed(start) if isinstance(start, LazyArray) else start)
    stop = np.asanyarray(computed(stop) if isinstance(stop, LazyArray) else stop)
    if np.any(start == 0) or np.any(stop == 0):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(start, stop, float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    start = start.astype(dt, copy=True)
    stop = stop.astype(dt, copy=True)
    sign = np.sign(start)
    start = start / sign
    stop = stop / sign
    result = logspace(np.log10(start), np.log10(stop), num, endpoint, 10.0, dt)
    shape = result.shape[1:]
    if num > 0:
        parts: list[LazyArray | None] = [lazy(np.broadcast_to(start, shape)[None])]
        end = num - 1 if (num > 1 and endpoint) else num
        parts.append(take(result, slice(1, end), 0) if end > 1 else None)
        if num > 1 and endpoint:
            parts.append(lazy(np.broadcast_to(stop, shape)[None]))
        result = concat(parts, 0)
    result = result * lazy(sign)
    if axis != 0:
        result = wrap(m.moveaxis(result._expr, 0, axis))
    return result.astype(dtype) if result.dtype != dtype else result


@implements("indices")
def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index grid of shape ``dimensions`` (stacked, or a sparse tuple)."""
    dims = tuple(operator.index(d) for d in dimensions)
    n = len(dims)
    parts = []
    for i, d in enumerate(dims):
        r = arange(d, dtype=dtype).reshape((1,) * i + (d,) + (1,) * (n - i - 1))
        parts.append(r if sparse else wrap(m.broadcast_to(r._expr, dims)))
    if sparse:
        return tuple(parts)
    if not parts:
        return full((0,), 0, dtype=dtype)
    return wrap(m.stack([p._expr for p in parts], 0))
