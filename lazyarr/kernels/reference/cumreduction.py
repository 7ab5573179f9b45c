"""NumPy kernels of the user's scan (``cumreduction``): totals, carries and combine with ``binop``.

The user's ``binop`` sees the carry first and the block second, as in dask's
sequential scan; carries keep their own dtype (wider than the scan's where the
identity needs it), combined blocks are cast to the scan's dtype.
"""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.cumreduction import UserScanCarry, UserScanCombine, UserScanTotals
from lazyarr.kernels.reference.registry import register

__all__ = ["user_scan_carry", "user_scan_combine", "user_scan_totals"]


def _one_along(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return (*shape[:axis], 1, *shape[axis + 1 :])


@register(UserScanTotals)
def user_scan_totals(op: UserScanTotals, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    if x.shape[op.axis] == 0:
        return np.full(tuple(s.stop - s.start for s in out), op.ident, dtype=expr.dtype)
    return x.astype(expr.dtype, copy=False)


@register(UserScanCarry)
def user_scan_carry(op: UserScanCarry, expr: Expr, out: Region, totals: np.ndarray) -> np.ndarray:
    ax = op.axis
    binop = op.binop.fn  # type: ignore[union-attr]
    carry = np.full(_one_along(totals.shape, ax), op.ident, dtype=expr.dtype)
    parts = [carry]
    for i in range(totals.shape[ax] - 1):
        last = np.take(totals, [i], axis=ax)
        carry = np.asarray(binop(carry, last)).astype(expr.dtype, copy=False)
        parts.append(np.broadcast_to(carry, last.shape))
    return np.concatenate(parts, axis=ax)


@register(UserScanCombine)
def user_scan_combine(
    op: UserScanCombine, expr: Expr, out: Region, local: np.ndarray, carry: np.ndarray
) -> np.ndarray:
    if out[op.axis].start == 0:
        return local
    got = np.asarray(op.binop.fn(carry, local))  # type: ignore[union-attr]
    want = tuple(s.stop - s.start for s in out)
    if got.shape != want:
        raise ValueError(
            f"cumreduction: binop returned shape {got.shape} for a block of shape {want}"
        )
    return got.astype(expr.dtype, copy=False)
