"""Namespace functions: indexing (``take``, ``take_along_axis``, ``compress``, ``extract``).

``take``, ``compress`` and ``extract`` are ``x[index]`` under another name,
so an index or condition that is itself a lazy array is computed first (the
result's shape depends on its values, and the index becomes part of the
plan, like NumPy data). ``take_along_axis`` keeps lazy indices lazy (the
result's shape is known from theirs): each block then reads the whole axis,
and out-of-bounds indices raise ``IndexError`` when that block is computed;
NumPy indices are checked at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import manipulation as manip
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements

__all__ = ["compress", "extract", "take", "take_along_axis"]


def _concrete(value: Any) -> np.ndarray:
    """A lazy index is computed (documented in the module docstring)."""
    if isinstance(value, LazyArray):
        return value.compute()
    return value if isinstance(value, np.ndarray) else np.asarray(value)


def _flat(x: Expr) -> Expr:
    return x if x.ndim == 1 else manip.reshape(x, (-1,))


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(
            f"lazyarr.{name} does not support out= (lazy arrays are not written in place; "
            "use the returned array)"
        )


@implements("take")
def take(
    x: Any, indices: Any, /, axis: int | None = None, out: Any = None, mode: str = "raise"
) -> LazyArray:
    """Elements of ``x`` at ``indices`` along ``axis`` (flattened ``x`` if ``axis`` is None).

    ``mode`` is NumPy's: ``"raise"`` (default; negative indices count from the
    end), ``"wrap"`` or ``"clip"``. Lazy ``indices`` are computed first.
    """
    _no_out("take", out)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    xe = as_expr(x)
    if isinstance(indices, (LazyArray, np.ndarray)):
        idx = _concrete(indices)
        if idx.dtype.kind not in "iub":
            raise TypeError(
                f"Cannot cast array data from {idx.dtype!r} to {np.dtype(np.intp)!r} according "
                "to the rule 'same_kind'"
            )
        idx = idx.astype(np.intp, copy=False)
    else:
        idx = np.array(indices, dtype=np.intp)
    if axis is None:
        xe, axis = _flat(xe), 0
    axis = normalize_axis(axis, xe.ndim, "take")
    n = xe.shape[axis]
    if mode != "raise":
        if n == 0 and idx.size:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        idx = idx % n if mode == "wrap" and n else np.clip(idx, 0, max(n - 1, 0))
    return wrap(ix.getitem(xe, (slice(None),) * axis + (idx,)))


@implements("take_along_axis")
def take_along_axis(x: Any, indices: Any, /, axis: int | None = -1) -> LazyArray:
    """``numpy.take_along_axis``: values of ``x`` at ``indices`` along ``axis``."""
    xe = as_expr(x)
    is_lazy = isinstance(indices, LazyArray)
    ie = indices._expr if is_lazy else None
    arr = None if is_lazy else _concrete(indices)
    kind = (ie if is_lazy else arr).dtype.kind
    if kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if (ie if is_lazy else arr).ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        xe, axis = _flat(xe), 0
    ndim = (ie if is_lazy else arr).ndim
    if ndim != xe.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis(axis, xe.ndim, "take_along_axis")
    if arr is not None:
        ix.check_index_bounds(arr, axis, xe.shape[axis])
        ie = as_expr(arr)
    return wrap(ix.take_along_axis(xe, ie, axis))


@implements("compress")
def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None) -> LazyArray:
    """Slices of ``a`` along ``axis`` where ``condition`` (1-d, may be shorter) is true.

    Lazy: the result's length along ``axis`` is the count of true values, computed
    (that count only) when the result is computed or its shape is asked for.
    """
    from lazyarr.namespace.compaction import compress_along

    _no_out("compress", out)
    arr = lazy(a)
    if not isinstance(condition, LazyArray):
        # known values: NumPy's errors now, and only as much condition as the axis
        cond = np.asarray(condition)
        if cond.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        n = arr.size if axis is None else arr.shape[normalize_axis(axis, arr.ndim, "compress")]
        beyond = np.flatnonzero(cond[n:])
        if beyond.size:
            shown = 0 if axis is None else axis
            raise IndexError(
                f"index {n + int(beyond[0])} is out of bounds for axis {shown} with size {n}"
            )
        condition = cond[:n]
    return compress_along(lazy(condition), arr, axis)


@implements("extract")
def extract(condition: Any, arr: Any) -> LazyArray:
    """The elements of ``arr`` where ``condition`` is true, in C order (1-d, lazy).

    Like NumPy, a ``condition`` of another shape is read flattened against the
    flattened ``arr`` (it may be shorter).
    """
    from lazyarr.namespace.compaction import compress_along

    return compress_along(lazy(condition).reshape((-1,)) != 0, lazy(arr), None)
