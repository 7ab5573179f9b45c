"""Cumulative sums and products (a blocked scan) and n-th differences.

A cumulative op along an axis with several blocks is a classic scan, built
from four small map ops so that no block ever reads more than its own
input block plus one value per block before it:

1. :class:`ScanBlocks` - the cumulative op inside each block;
2. :class:`ScanTotals` - the last value of each block (one per block);
3. :class:`ScanCarry` - the exclusive scan of those totals (tiny: one value
   per block along the axis, whole along it);
4. :class:`ScanCombine` - each block's local scan combined with its carry
   (and the initial identity value prepended for ``include_initial``).

With one block along the axis only steps 1 (and 4 for ``include_initial``)
remain. Floating-point results match NumPy's sequential scan to rounding.

:class:`Diff` is ``numpy.diff``: an output block reads its input block plus
the next ``n`` elements along the axis.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import normalize_axis

__all__ = [
    "SCAN_FUNCS",
    "check_scan_options",
    "Diff",
    "ScanBlocks",
    "ScanCarry",
    "ScanCombine",
    "ScanTotals",
    "cumulative",
    "diff",
]

# scan name -> (NumPy cumulative function, the binary op that combines, identity)
SCAN_FUNCS: dict[str, tuple[Any, Any, int]] = {
    "sum": (np.cumsum, np.add, 0),
    "prod": (np.cumprod, np.multiply, 1),
}


def _with(region: Region, axis: int, sl: slice) -> Region:
    return (*region[:axis], sl, *region[axis + 1 :])


@dataclasses.dataclass(frozen=True)
class ScanBlocks(MapOp):
    """The cumulative ``func`` of each block on its own along ``axis``."""

    name = "scan_blocks"
    func: str = "sum"
    axis: int = 0

    def label(self) -> str:
        return f"cum{self.func}-blocks"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (out,)


@dataclasses.dataclass(frozen=True)
class ScanTotals(MapOp):
    """One value per input block along ``axis``: the block's last scanned value, scanned
    here from the input block (the combine scans it again: holding the scanned blocks for
    both readers took the whole array, and a scan costs one pass over a block).

    Empty blocks give the identity (their region is empty).
    """

    name = "scan_totals"
    func: str = "sum"
    axis: int = 0

    def label(self) -> str:
        return f"cum{self.func}-totals"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        o = offsets(x.chunks[self.axis])
        j = out[self.axis].start
        return (_with(out, self.axis, slice(o[j], o[j + 1])),)


@dataclasses.dataclass(frozen=True)
class ScanCarry(MapOp):
    """The exclusive scan of the block totals: what comes before each block."""

    name = "scan_carry"
    func: str = "sum"
    axis: int = 0

    def label(self) -> str:
        return f"cum{self.func}-carry"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (_with(out, self.axis, slice(0, expr.shape[self.axis])),)


@dataclasses.dataclass(frozen=True)
class ScanCombine(MapOp):
    """Each block scanned and combined with its carry (inputs: the input[, carry]).

    With ``include_initial`` the output is one longer along ``axis``: its
    first block holds the identity and then the input's first block.
    """

    name = "scan_combine"
    func: str = "sum"
    axis: int = 0
    include_initial: bool = False

    def label(self) -> str:
        return f"cum{self.func}"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        ax = self.axis
        a = expr.inputs[0]
        s, e = out[ax].start, out[ax].stop
        if self.include_initial:
            lo = max(s - 1, 0)
            hi = max(e - 1, lo)
        else:
            lo, hi = s, e
        result = [_with(out, ax, slice(lo, hi))]
        if len(expr.inputs) == 2:
            o = offsets(a.chunks[ax])
            j = min(max(bisect.bisect_right(o, lo) - 1, 0), len(o) - 2)
            result.append(_with(out, ax, slice(j, j + 1)))
        return tuple(result)


def check_scan_options(name: str, out: Any, method: str) -> None:
    """Refuse ``out=`` and scan methods dask does not know (dask's two give one plan here)."""
    if out is not None:
        raise TypeError(f"{name}: out= is not supported by lazy arrays")
    if method not in ("", "sequential", "blelloch"):
        raise ValueError(
            f'Invalid method for {name}.  Expected "sequential" or "blelloch".  Got: {method!r}'
        )


def _scan_dtype(name: str, x: Expr, dtype: Any) -> np.dtype:
    fn = SCAN_FUNCS[name][0]
    return fn(np.empty((0,), dtype=x.dtype), dtype=dtype).dtype


def _flatten(x: Expr) -> Expr:
    from lazyarr.graph.ops.manipulation import reshape

    return reshape(x, (x.size,))


def cumulative(
    func: str,
    x: Expr,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
) -> Expr:
    """The cumulative ``func`` ("sum" or "prod") of ``x`` along ``axis``.

    NumPy semantics: ``axis=None`` scans the flattened array, 0-d input is
    treated as 1-d, small integers and bools accumulate in the platform
    integer. ``include_initial`` prepends the identity (Array API
    ``cumulative_sum``), so the axis grows by one.
    """
    if func not in SCAN_FUNCS:
        raise ValueError(f"unknown cumulative function {func!r} (known: {sorted(SCAN_FUNCS)})")
    opname = f"cum{func}"
    out_dtype = _scan_dtype(func, x, dtype)
    if axis is None:
        if x.ndim != 1:
            x = _flatten(x)
        ax = 0
    else:
        if x.ndim == 0:
            x = _flatten(x)
        ax = normalize_axis(axis, x.ndim, opname)
    op_args = {"func": func, "axis": ax}
    nb = x.numblocks[ax]
    inputs: tuple[Expr, ...] = (x,)
    if nb > 1:
        shape = _with_len(x.shape, ax, nb)
        totals = Expr(
            ScanTotals(**op_args),
            (x,),
            shape,
            out_dtype,
            _with_chunks(x.chunks, ax, (1,) * nb),
        )
        carry = Expr(
            ScanCarry(**op_args), (totals,), shape, out_dtype, _with_chunks(x.chunks, ax, (nb,))
        )
        inputs = (x, carry)
    elif not include_initial:
        return Expr(ScanBlocks(**op_args), (x,), x.shape, out_dtype, x.chunks)
    chunks = x.chunks
    shape = x.shape
    if include_initial:
        first = x.chunks[ax]
        axis_chunks = (1,) if x.shape[ax] == 0 else (first[0] + 1, *first[1:])
        chunks = _with_chunks(chunks, ax, axis_chunks)
        shape = _with_len(shape, ax, x.shape[ax] + 1)
    op = ScanCombine(**op_args, include_initial=bool(include_initial))
    return Expr(op, inputs, shape, out_dtype, chunks)


def _with_len(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return (*shape[:axis], n, *shape[axis + 1 :])


def _with_chunks(
    chunks: tuple[tuple[int, ...], ...], axis: int, c: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return (*chunks[:axis], c, *chunks[axis + 1 :])


@dataclasses.dataclass(frozen=True)
class Diff(MapOp):
    """``numpy.diff(x, n, axis)``: each block reads ``n`` more elements after it."""

    name = "diff"
    n: int = 1
    axis: int = -1

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        sl = out[self.axis]
        if sl.stop == sl.start:
            return (out,)
        return (_with(out, self.axis, slice(sl.start, sl.stop + self.n)),)


def _trim_end(blocks: tuple[int, ...], n: int) -> tuple[int, ...]:
    """``blocks`` with ``n`` elements taken off the end (empty blocks dropped)."""
    out = list(blocks)
    while n > 0 and out:
        take = min(n, out[-1])
        out[-1] -= take
        n -= take
        if out[-1] == 0:
            out.pop()
    return tuple(out) or (0,)


def diff(x: Expr, n: int = 1, axis: int = -1) -> Expr:
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff`` without pads)."""
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    n = int(n) if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else n
    if not isinstance(n, int):
        raise TypeError(f"diff: n must be an integer, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    ax = normalize_axis(axis, x.ndim, "diff")
    if n == 0:
        return x
    length = x.shape[ax]
    dtype = np.diff(np.zeros((n + 1,), dtype=x.dtype), n=n).dtype
    out_len = max(length - n, 0)
    chunks = _with_chunks(x.chunks, ax, _trim_end(x.chunks[ax], length - out_len))
    return Expr(Diff(n=n, axis=ax), (x,), _with_len(x.shape, ax, out_len), dtype, chunks)
