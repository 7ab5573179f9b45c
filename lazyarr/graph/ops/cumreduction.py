"""A scan with the user's functions (dask's ``cumreduction``), built from the blocked scan's ops.

``func`` scans each block on its own (a :class:`~lazyarr.graph.ops.userfunc.BlockFunc`);
then, as in :mod:`lazyarr.graph.ops.statistics`, each block's last value is cut
(:class:`UserScanTotals`), the carries are folded with ``binop`` from ``ident``
(:class:`UserScanCarry`: ``carry[i] = binop(carry[i-1], last[i-1])``, dask's
sequential order), and every block after the first becomes ``binop(carry, block)``
(:class:`UserScanCombine`). No block reads more than its own block and one carry.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.manipulation import reshape
from lazyarr.graph.ops.statistics import ScanCarry, ScanCombine, ScanTotals, _with
from lazyarr.graph.ops.userfunc import UserFunc, blockwise, user_func

__all__ = ["UserScanCarry", "UserScanCombine", "UserScanTotals", "cumreduction", "takes_dtype"]


@dataclasses.dataclass(frozen=True)
class UserScanTotals(ScanTotals):
    """Each block's last scanned value along ``axis``; an empty block gives ``ident``."""

    name = "user_scan_totals"
    ident: Any = None

    def label(self) -> str:
        return f"{self.func}-totals"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        """The last scanned value of the block (the user's scan is its own stage)."""
        (x,) = expr.inputs
        o = offsets(x.chunks[self.axis])
        j = out[self.axis].start
        hi = o[j + 1]
        return (_with(out, self.axis, slice(max(o[j], hi - 1), hi)),)


@dataclasses.dataclass(frozen=True)
class UserScanCarry(ScanCarry):
    """What comes before each block: ``ident``, then ``binop`` folded over the block totals."""

    name = "user_scan_carry"
    binop: UserFunc | None = None
    ident: Any = None

    def label(self) -> str:
        return f"{self.func}-carry"


@dataclasses.dataclass(frozen=True)
class UserScanCombine(ScanCombine):
    """``binop(carry, block)`` for every block but the first (inputs: blocks, carry)."""

    name = "user_scan_combine"
    binop: UserFunc | None = None
    # its first input is the user's scanned blocks (a stage of their own): the kernel
    # (kernels/reference/cumreduction.py) does not scan again

    def label(self) -> str:
        return self.func


def takes_dtype(func: Any) -> bool:
    """Whether ``func`` takes ``dtype=`` (dask's test; a ufunc's ``accumulate`` does)."""
    try:
        return "dtype" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        owner = getattr(func, "__self__", None)
        return isinstance(owner, np.ufunc) and getattr(func, "__name__", "") == "accumulate"


def _carry_dtype(ident: Any, dtype: np.dtype) -> np.dtype:
    """The dtype of the carries: the scan's, or wider where ``ident`` does not fit in it
    (NaN, the identity of xarray's fill, on integers: the carry stays exact)."""
    value = np.asarray(ident)
    if value.dtype.kind in "OUSV":
        raise TypeError(f"cumreduction: the identity must be a number, not {ident!r}")
    if np.can_cast(value.dtype, dtype, casting="same_kind"):
        return dtype
    return np.result_type(dtype, value.dtype)


def cumreduction(
    func: Any, binop: Any, ident: Any, x: Expr, axis: int | None = None, dtype: Any = None
) -> Expr:
    """The scan of ``x`` along ``axis`` by ``func`` per block and ``binop`` across blocks.

    ``axis=None`` scans the flattened array; ``dtype`` defaults to what ``func``
    gives an empty array of ``x``'s dtype (dask's rule). ``func`` is called as
    ``func(block, axis=axis)``, with ``dtype=dtype`` too when it takes it.
    """
    fn = user_func(func)
    bin_fn = user_func(binop)
    if axis is None:
        if x.ndim != 1:
            x = reshape(x, (x.size,))
        ax = 0
    else:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"cumreduction: axis must be an integer or None, not {axis!r}")
        ax = normalize_axis(int(axis), x.ndim, "cumreduction")
    if dtype is None:
        dtype = getattr(func(np.ones((0,), dtype=x.dtype)), "dtype", None)
        if dtype is None:
            raise TypeError(f"cumreduction: cannot tell the dtype {fn.label} returns; pass dtype=")
    dtype = np.dtype(dtype)
    kwargs: dict[str, Any] = {"axis": ax}
    if takes_dtype(func):
        kwargs["dtype"] = dtype
    ind = tuple(range(x.ndim))
    blocks = blockwise(fn, ind, [(x, ind)], dtype, kwargs=kwargs, op="cumreduction")
    nb = x.numblocks[ax]
    if nb == 1:
        return blocks
    carry_dtype = _carry_dtype(ident, dtype)
    value = np.asarray(ident, dtype=carry_dtype)[()]
    along = (*x.shape[:ax], nb, *x.shape[ax + 1 :])
    totals = Expr(
        UserScanTotals(func=fn.label, axis=ax, ident=value),
        (blocks,),
        along,
        carry_dtype,
        (*x.chunks[:ax], (1,) * nb, *x.chunks[ax + 1 :]),
    )
    carry = Expr(
        UserScanCarry(func=fn.label, axis=ax, binop=bin_fn, ident=value),
        (totals,),
        along,
        carry_dtype,
        (*x.chunks[:ax], (nb,), *x.chunks[ax + 1 :]),
    )
    op = UserScanCombine(func=fn.label, axis=ax, binop=bin_fn)
    return Expr(op, (blocks, carry), x.shape, dtype, x.chunks)
