"""NumPy kernels of the indexing ops: getitem, setitem, take_along_axis.

The index arithmetic (which region a block reads, the local index into it)
lives with the ops in ``graph.ops.indexing``; these kernels only apply it.
"""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.indexing import (
    GetItem,
    SetItem,
    TakeAlongAxis,
    getitem_block,
    setitem_block,
)
from lazyarr.kernels.reference.registry import register


def _shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


@register(GetItem)
def getitem(op: GetItem, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    _, local = getitem_block(op, expr, out)
    if local is None:
        return np.empty(_shape(out), dtype=expr.dtype)
    if op.virtual:
        x = np.expand_dims(x, op.virtual)
    return np.asarray(x[local])


def _as_dtype(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if v.dtype.kind == "c" and dtype.kind != "c":
        v = v.real  # NumPy warns (ComplexWarning) when the expression is written
    return v.astype(dtype, copy=False)


@register(SetItem)
def setitem(op: SetItem, expr: Expr, out: Region, x: np.ndarray, *value: np.ndarray) -> np.ndarray:
    plan = setitem_block(op, expr, out)
    if plan is None:
        return x
    result = x.copy()
    target = np.expand_dims(result, op.virtual) if op.virtual else result
    sel_shape = _shape(plan.sbox)
    if value:
        (v,) = value
        v = v.reshape(v.shape[max(v.ndim - len(sel_shape), 0) :])
        v = np.broadcast_to(_as_dtype(v, expr.dtype), sel_shape)
    else:
        v = np.broadcast_to(np.asarray(op.value, dtype=expr.dtype), sel_shape)
    if plan.mask is not None:
        v = v[(slice(None),) * plan.bpos + (plan.mask,)]
    target[plan.local] = v
    return result


@register(TakeAlongAxis)
def take_along_axis(
    op: TakeAlongAxis, expr: Expr, out: Region, arr: np.ndarray, indices: np.ndarray
) -> np.ndarray:
    n = arr.shape[op.axis]
    bad = (indices >= n) | (indices < -n)
    if bad.any():
        first = int(indices.ravel()[int(np.argmax(bad.ravel()))])
        raise IndexError(f"index {first} is out of bounds for axis {op.axis} with size {n}")
    indices = np.where(indices < 0, indices + n, indices)
    return np.take_along_axis(arr, indices, op.axis)
