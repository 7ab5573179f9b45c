"""Moving windows: ``sliding_window_view`` (NumPy's ``lib.stride_tricks`` name).

NumPy returns a strided view; a lazy array has no memory to view, so each
window axis is built from the ``w`` shifted slices of the input stacked
along a new last axis: ``out[..., i, ..., j] == x[..., i + j, ...]``. Every
slice is a plain lazy slice and the stack fuses with what reads it, so a
rolling reduction (xarray's ``rolling(...).mean()``) reads each input block
and its neighbour's edge, never a materialized ``w``-times-larger copy.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import asarray, zeros
from lazyarr.namespace.manipulation import stack

__all__ = ["sliding_window_view"]


@implements("lib.stride_tricks.sliding_window_view")
def sliding_window_view(
    x: Any,
    window_shape: Any,
    axis: Any = None,
    *,
    subok: bool = False,
    writeable: bool = False,
    automatic_rechunk: bool = True,
) -> LazyArray:
    """NumPy's ``sliding_window_view``: the window axes appended last, in ``axis`` order.

    ``subok`` and ``writeable`` are accepted for NumPy's signature (lazy
    arrays are never writeable views); ``automatic_rechunk`` for Dask's.
    """
    if writeable:
        raise ValueError("lazy arrays cannot be writeable views: use writeable=False")
    x = asarray(x)
    windows = tuple(window_shape) if np.iterable(window_shape) else (operator.index(window_shape),)
    if axis is None:
        axes = tuple(range(x.ndim))
        if len(windows) != x.ndim:
            raise ValueError(
                f"Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                f"got {len(windows)} window_shape elements and `x.ndim` is {x.ndim}."
            )
    else:
        axes = tuple(axis) if np.iterable(axis) else (axis,)
        if len(windows) != len(axes):
            raise ValueError(
                f"Must provide matching length window_shape and axis; got {len(windows)} "
                f"window_shape elements and {len(axes)} axes elements."
            )
    axes = tuple(np.lib.array_utils.normalize_axis_index(a, x.ndim) for a in axes)
    if any(w < 0 for w in windows):
        raise ValueError("`window_shape` cannot contain negative values")
    out = x
    for ax, w in zip(axes, windows):
        n = out.shape[ax]
        if n < w:
            raise ValueError("window shape cannot be larger than input array shape")
        count = n - w + 1
        parts = []
        for j in range(w):
            index = [slice(None)] * out.ndim
            index[ax] = slice(j, j + count)
            parts.append(out[tuple(index)])
        out = stack(parts, axis=-1) if parts else _empty_window(out, ax, count)
    return out


def _empty_window(x: LazyArray, ax: int, count: int) -> LazyArray:
    """A window of size 0: shape ``(..., count, ..., 0)`` (NumPy allows it)."""
    shape = (*x.shape[:ax], count, *x.shape[ax + 1 :], 0)
    return zeros(shape, dtype=x.dtype)
