"""NumPy kernels of the blocked scan (cumulative sum/product) and ``diff``.

Floating-point overflow/invalid warnings are silenced in the scan: a block
scanned on its own may meet ``inf - inf`` where NumPy's single pass had
already reached NaN (and warned nothing).
"""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.statistics import (
    SCAN_FUNCS,
    Diff,
    ScanBlocks,
    ScanCarry,
    ScanCombine,
    ScanTotals,
)
from lazyarr.kernels.reference.registry import register

__all__ = ["diff", "scan_blocks", "scan_carry", "scan_combine", "scan_totals"]


def _region_shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


def _ufunc_dtype(expr: Expr) -> np.dtype | None:
    """The scan's ``dtype=``: None for timedeltas (a ufunc's ``dtype=`` may not name a unit)."""
    return None if expr.dtype.kind in "mM" else expr.dtype


def _identity(func: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.full(shape, SCAN_FUNCS[func][2], dtype=dtype)


@register(ScanBlocks)
def scan_blocks(op: ScanBlocks, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return _scanned(op, expr, x)


def _scanned(op: ScanBlocks | ScanTotals | ScanCombine, expr: Expr, x: np.ndarray) -> np.ndarray:
    # a block may start past the NaN that kept NumPy's whole-array scan quiet
    with np.errstate(over="ignore", invalid="ignore"):
        return SCAN_FUNCS[op.func][0](x, axis=op.axis, dtype=_ufunc_dtype(expr))


@register(ScanTotals)
def scan_totals(op: ScanTotals, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    n = x.shape[op.axis]
    if n == 0:
        return _identity(op.func, _region_shape(out), expr.dtype)
    # the block's scan, its last value: the same sums, in the same order, as the combine's
    return np.take(_scanned(op, expr, x), [n - 1], axis=op.axis)


@register(ScanCarry)
def scan_carry(op: ScanCarry, expr: Expr, out: Region, totals: np.ndarray) -> np.ndarray:
    scan, _, _ = SCAN_FUNCS[op.func]
    ax = op.axis
    first = _identity(op.func, (*totals.shape[:ax], 1, *totals.shape[ax + 1 :]), expr.dtype)
    head = np.take(totals, np.arange(totals.shape[ax] - 1), axis=ax)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.concatenate([first, scan(head, axis=ax, dtype=_ufunc_dtype(expr))], axis=ax)


@register(ScanCombine)
def scan_combine(op: ScanCombine, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    local = _scanned(op, expr, arrays[0])
    if len(arrays) == 2:
        with np.errstate(over="ignore", invalid="ignore"):
            local = SCAN_FUNCS[op.func][1](local, arrays[1], dtype=_ufunc_dtype(expr))
    if op.include_initial and out[op.axis].start == 0:
        shape = (*local.shape[: op.axis], 1, *local.shape[op.axis + 1 :])
        local = np.concatenate([_identity(op.func, shape, expr.dtype), local], axis=op.axis)
    return local


@register(Diff)
def diff(op: Diff, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    if x.shape[op.axis] <= op.n:
        return np.empty(_region_shape(out), dtype=expr.dtype)
    return np.diff(x, n=op.n, axis=op.axis)
