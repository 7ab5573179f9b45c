"""Trailing moving-window reductions along one axis: xarray's ``rolling(...).mean()`` in one stage.

xarray reduces a rolling window of a chunked array by building every window
(``sliding_window_view``: for a window of 7, seven shifted copies stacked on a
new axis, 7x the data) and reducing the new axis. Here each output block reads
its own input block widened by the ``window - 1`` positions before it (a
``map_overlap`` halo: a block rule, no copy of the array) and adds the
``window`` shifted slices of it in place: one stage, one pass per window
position over one block, nothing stored but the result. The meaning is
xarray's: NaN is skipped (filled with the reduction's identity), and a window
with fewer than ``min_periods`` valid values is NaN, as are the first
``window - 1`` positions when ``min_periods`` is the window.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr._convert import as_expr
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace.creation import asarray
from lazyarr.namespace.userfuncs import map_overlap

__all__ = ["MOVING_FUNCS", "moving_reduce"]

MOVING_FUNCS = ("sum", "mean", "count", "max", "min", "prod")
"""The reductions :func:`moving_reduce` computes (xarray's rolling names)."""

_FILL = {"sum": 0, "mean": 0, "count": 0, "prod": 1}
_UFUNC = {"max": np.maximum, "min": np.minimum, "prod": np.multiply}

SHORT_WINDOW = 32
"""float32 windows up to this long sum in float32 (xarray's sum of the window's values), longer
ones in float64."""


def moving_reduce(
    x: Any, window: int, axis: int, func: str, min_periods: int | None = None
) -> LazyArray:
    """``func`` over the trailing ``window`` positions along ``axis`` at every position
    (positions before the start count as missing), NaN where fewer than ``min_periods``
    (default: ``window``) values are valid: xarray's ``rolling(dim=window).func()``."""
    if func not in MOVING_FUNCS:
        raise NotImplementedError(f"moving_reduce: {func!r} is not one of {MOVING_FUNCS}")
    arr = asarray(x) if not isinstance(x, LazyArray) else x
    axis = normalize_axis(int(axis), as_expr(arr).ndim, "moving_reduce")
    window = int(window)
    if window < 1:
        raise ValueError(f"moving_reduce: window must be at least 1, got {window}")
    min_periods = window if min_periods is None else int(min_periods)
    if not 1 <= min_periods <= window:
        raise ValueError(f"moving_reduce: min_periods must be in 1..{window}, got {min_periods}")
    dtype = np.dtype(arr.dtype)
    if dtype.kind not in "iuf":
        raise NotImplementedError(f"moving_reduce: {dtype} data (integers and floats only)")
    kernel = _MovingKernel(window, axis, func, min_periods, _result_dtype(func, dtype))
    return map_overlap(
        kernel,
        arr,
        depth={axis: (window - 1, 0)},
        boundary="none",
        trim=False,
        dtype=kernel.dtype,
    )


def _result_dtype(func: str, dtype: np.dtype) -> np.dtype:
    """xarray's: the window's reduction masked by ``where`` (which promotes integers as
    xarray's ``maybe_promote``: up to 16 bits to float32, wider to float64); counts float64."""
    if dtype.kind == "f" and func != "count":
        return dtype
    if func in ("max", "min") and dtype.itemsize <= 2:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


class _MovingKernel:
    """One output block from its input block and the ``window - 1`` positions before it."""

    def __init__(
        self, window: int, axis: int, func: str, min_periods: int, dtype: np.dtype
    ) -> None:
        self.window, self.axis, self.func = window, axis, func
        self.min_periods, self.dtype = min_periods, dtype

    def __call__(self, block: np.ndarray, block_info: Any = None) -> np.ndarray:
        size = block_info[None]["chunk-shape"][self.axis] if block_info else block.shape[self.axis]
        ext = np.moveaxis(block, self.axis, 0)
        halo = ext.shape[0] - size
        nan = np.isnan(ext) if ext.dtype.kind in "fc" else None
        if nan is not None and not nan.any():
            nan = None
        if nan is None:  # every position counts: the first ones have shorter windows
            seen = np.minimum(self.window, halo + np.arange(1, size + 1))
            counts = seen.reshape(-1, *[1] * (ext.ndim - 1))
        else:
            counts = self._moving(np.add, ~nan, halo, size, np.int32)
        enough = counts >= self.min_periods
        if self.func == "count":
            got = np.broadcast_to(counts, (size, *ext.shape[1:]))
        else:
            fill = _FILL.get(self.func, -np.inf if self.func == "max" else np.inf)
            data = ext if nan is None else np.where(nan, np.asarray(fill, ext.dtype), ext)
            ufunc = _UFUNC.get(self.func, np.add)
            got = self._moving(ufunc, data, halo, size, self._accumulate(ext.dtype))
            with np.errstate(invalid="ignore", divide="ignore"):  # no value: masked below
                if self.func == "mean" and got.dtype == self.dtype:
                    np.divide(got, counts, out=got, casting="unsafe")  # the sum's own buffer
                elif self.func == "mean":
                    got = got / counts.astype(self.dtype, copy=False)
        out = got if enough.all() else np.where(enough, got, np.nan)
        out = np.asarray(out, dtype=self.dtype)
        return np.moveaxis(out, 0, self.axis)

    def _accumulate(self, dtype: np.dtype) -> np.dtype:
        """What the window's values combine in: NumPy's sum dtype for integers, float64 for
        float32 windows longer than :data:`SHORT_WINDOW`, else their own."""
        if self.func in ("max", "min"):
            return dtype
        if dtype.kind in "biu":
            return (
                np.add.reduce(np.zeros(1, dtype)).dtype
                if self.func != "prod"
                else np.prod(np.zeros(1, dtype)).dtype
            )
        if dtype.kind == "f" and dtype.itemsize < 8 and self.window > SHORT_WINDOW:
            return np.dtype(np.float64)
        return dtype

    def _moving(self, ufunc: Any, data: np.ndarray, halo: int, size: int, dtype: Any) -> np.ndarray:
        """``ufunc`` over each position's trailing window: ``window`` shifted slices combined
        (positions before the array's start are left out)."""
        acc = data[halo : halo + size].astype(dtype, copy=True)
        for k in range(1, self.window):
            start = max(0, k - halo)  # the first output row whose k-th predecessor exists
            if start >= size:
                break
            ufunc(acc[start:], data[halo + start - k : halo + size - k], out=acc[start:])
        return acc

    def __repr__(self) -> str:  # what plan pictures call the stage
        return f"moving_{self.func}"
