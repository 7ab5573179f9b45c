"""NumPy kernels of sort/argsort, searchsorted and isin."""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.sorting import IsIn, SearchSorted, Sort
from lazyarr.kernels.reference.registry import register

__all__ = ["isin", "searchsorted", "sort"]


@register(Sort)
def sort(op: Sort, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    ax, kind = op.axis, op.algorithm or None
    fn = np.argsort if op.arg else np.sort
    if not op.descending:
        return fn(x, axis=ax, kind=kind)
    result = np.flip(fn(np.flip(x, axis=ax), axis=ax, kind=kind), axis=ax)
    if op.arg:
        result = (x.shape[ax] - 1) - result
    return np.ascontiguousarray(result)


@register(SearchSorted)
def searchsorted(
    op: SearchSorted, expr: Expr, out: Region, a: np.ndarray, v: np.ndarray, *rest: np.ndarray
) -> np.ndarray:
    sorter = rest[0] if rest else None
    return np.asarray(np.searchsorted(a, v, side=op.side, sorter=sorter), dtype=expr.dtype)


@register(IsIn)
def isin(op: IsIn, expr: Expr, out: Region, element: np.ndarray, test: np.ndarray) -> np.ndarray:
    return np.isin(
        element, test, assume_unique=op.assume_unique, invert=op.invert, kind=op.method or None
    )
