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

from lazyarr._array import LazyArray, wrap
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
    lazy = isinstance(indices, LazyArray)
    ie = indices._expr if lazy else None
    arr = None if lazy else _concrete(indices)
    kind = (ie if lazy else arr).dtype.kind
    if kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if (ie if lazy else arr).ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        xe, axis = _flat(xe), 0
    ndim = (ie if lazy else arr).ndim
    if ndim != xe.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis(axis, xe.ndim, "take_along_axis")
    if arr is not None:
        ix.check_index_bounds(arr, axis, xe.shape[axis])
        ie = as_expr(arr)
    return wrap(ix.take_along_axis(xe, ie, axis))


@implements("compress")
def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None) -> LazyArray:
    """Slices of ``a`` along ``axis`` where ``condition`` (1-d, may be shorter) is true."""
    _no_out("compress", out)
    cond = _concrete(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return take(a, np.nonzero(cond)[0], axis=axis)


@implements("extract")
def extract(condition: Any, arr: Any) -> LazyArray:
    """The elements of ``arr`` where ``condition`` is true, in C order (1-d)."""
    cond = _concrete(condition)
    xe = as_expr(arr)
    if cond.shape == xe.shape:
        return wrap(ix.getitem(xe, cond.astype(bool, copy=False)))
    return take(wrap(xe), np.nonzero(np.ravel(cond))[0])
