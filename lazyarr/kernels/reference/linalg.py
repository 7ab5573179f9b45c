"""NumPy kernels of the linear algebra and FFT ops (see ``graph/ops/linalg.py``).

Each kernel gets the assembled input regions (whole contracted or core
axes) and calls the NumPy function itself, so results are NumPy's.
"""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.linalg import CORE_FUNCS, CoreMap, Diagonal, Einsum, Matmul, Tensordot
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _finish(result: object, expr: Expr, out: Region) -> np.ndarray:
    """``result`` as an array of the block's shape and the expression's dtype."""
    arr = np.asarray(result)
    if arr.dtype != expr.dtype:
        arr = arr.astype(expr.dtype)
    shape = tuple(s.stop - s.start for s in out)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    return arr


@register(Matmul)
def matmul(op: Matmul, expr: Expr, out: Region, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _finish(np.matmul(a, b), expr, out)


@register(Tensordot)
def tensordot(op: Tensordot, expr: Expr, out: Region, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _finish(np.tensordot(a, b, axes=(list(op.axes_a), list(op.axes_b))), expr, out)


@register(Einsum)
def einsum(op: Einsum, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    args: list[object] = []
    for arr, labels in zip(arrays, op.subscripts, strict=False):
        args += [arr, list(labels)]
    kwargs: dict[str, object] = {"casting": op.casting, "optimize": len(arrays) > 2}
    if op.dtype is not None:
        kwargs["dtype"] = op.dtype
    return _finish(np.einsum(*args, list(op.output), **kwargs), expr, out)


@register(Diagonal)
def diagonal(op: Diagonal, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return _finish(np.diagonal(x, 0, op.axis1, op.axis2), expr, out)


@register(CoreMap)
def core_map(op: CoreMap, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    result = CORE_FUNCS[op.func](*arrays, **dict(op.kwargs))
    if op.which is not None:
        result = result[op.which]
    return _finish(result, expr, out)
