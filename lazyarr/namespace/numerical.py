"""``gradient``, ``interp`` and ``convolve``: NumPy's numerical routines from lazy ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import indexing as ix
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, take
from lazyarr.namespace.creation import full
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.searching import searchsorted

__all__ = ["convolve", "gradient", "interp"]


# -- gradient / interp --------------------------------------------------------------------------


def _spacing(varargs: tuple[Any, ...], axes: tuple[int, ...], shape: tuple[int, ...]) -> list[Any]:
    """NumPy's spacing per axis: a scalar, or the differences of a coordinate array."""
    values = [np.asanyarray(computed(v) if isinstance(v, LazyArray) else v) for v in varargs]
    if not values:
        return [1.0] * len(axes)
    if len(values) == 1 and values[0].ndim == 0:
        return [values[0][()]] * len(axes)
    if len(values) != len(axes):
        raise TypeError("invalid number of arguments")
    out = []
    for d, ax in zip(values, axes):
        if d.ndim == 0:
            out.append(d[()])
            continue
        if d.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(d) != shape[ax]:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        if d.dtype.kind in "iu":
            d = d.astype(np.float64)
        dx = np.diff(d)
        out.append(dx[0] if (dx == dx[0]).all() else dx)
    return out


def _grad_axis(f: LazyArray, ax: int, dx: Any, edge_order: int) -> LazyArray:
    n = f.shape[ax]

    def sl(start: int, stop: int | None) -> LazyArray:
        return take(f, slice(start, n if stop is None else stop), ax)

    def col(v: np.ndarray) -> LazyArray:
        shape = [1] * f.ndim
        shape[ax] = v.shape[0]
        return lazy(v.reshape(shape))

    uniform = np.ndim(dx) == 0
    if uniform:
        mid = (sl(2, None) - sl(0, n - 2)) / (2.0 * dx)
    else:
        dx1, dx2 = dx[:-1], dx[1:]
        a = -(dx2) / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        mid = col(a) * sl(0, n - 2) + col(b) * sl(1, n - 1) + col(c) * sl(2, None)
    if edge_order == 1:
        d0 = dx if uniform else dx[0]
        dn = dx if uniform else dx[-1]
        first = (sl(1, 2) - sl(0, 1)) / d0
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dn
    else:
        if uniform:
            a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
        else:
            dx1, dx2 = dx[0], dx[1]
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
        first = a * sl(0, 1) + b * sl(1, 2) + c * sl(2, 3)
        if uniform:
            a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
        else:
            dx1, dx2 = dx[-2], dx[-1]
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * sl(n - 3, n - 2) + b * sl(n - 2, n - 1) + c * sl(n - 1, n)
    return concat([first, mid, last], ax)


@implements("gradient")
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Second-order central differences inside, one-sided (order 1 or 2) at the edges.

    Spacings are scalars or 1-d coordinate arrays (lazy ones are computed
    when called: NumPy picks the formula from their values).
    """
    x = lazy(f)
    axes = (
        tuple(range(x.ndim))
        if axis is None
        else tuple(np.lib.array_utils.normalize_axis_tuple(axis, x.ndim))
    )
    spacing = _spacing(varargs, axes, x.shape)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if x.dtype.kind in "iu":
        x = x.astype(np.float64)
    out = []
    for ax, dx in zip(axes, spacing):
        if x.shape[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."
            )
        g = _grad_axis(x, ax, dx, edge_order)
        out.append(g.astype(x.dtype) if g.dtype != x.dtype else g)
    return out[0] if len(axes) == 1 else tuple(out)


@implements("interp")
def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> LazyArray:
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) at ``x`` (lazy in ``x``).

    Blocks follow ``x``; each reads all of ``xp`` and ``fp``. ``period`` is
    not supported.
    """
    if period is not None:
        raise NotImplementedError("lazyarr.interp does not support period=")
    xe, xpe, fpe = lazy(x), lazy(xp), lazy(fp)
    if xpe.ndim != 1 or fpe.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xpe.shape[0] != fpe.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xpe.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    out_dtype = np.complex128 if fpe.dtype.kind == "c" else np.float64
    xf = xe.astype(np.float64)
    xpf = xpe.astype(np.float64)
    fpf = fpe.astype(out_dtype)
    n = xpe.shape[0]
    flat = xf.reshape(-1)
    j = np.clip(searchsorted(xpf, flat, side="right") - 1, 0, max(n - 2, 0))

    def at(arr: LazyArray, i: LazyArray) -> LazyArray:
        return wrap(ix.take_along_axis(arr._expr, i._expr, 0))

    x0, f0 = at(xpf, j), at(fpf, j)
    first_x, last_x = take(xpf, 0, 0), take(xpf, n - 1, 0)
    first_f, last_f = take(fpf, 0, 0), take(fpf, n - 1, 0)
    low = first_f if left is None else left
    high = last_f if right is None else right
    if n == 1:  # NumPy's special case: NaN ``x`` gives ``fp[0]`` too
        value = where(flat < first_x, low, where(flat > first_x, high, first_f))
    else:
        x1, f1 = at(xpf, j + 1), at(fpf, j + 1)
        span = x1 - x0
        slope = (f1 - f0) / where(span == 0, 1.0, span)
        value = slope * (flat - x0) + f0
        other = slope * (flat - x1) + f1
        other = where(np.isnan(other) & (f0 == f1), f0, other)
        value = where(np.isnan(value), other, value)
        value = where(flat == x0, f0, value)
        value = where(flat == last_x, last_f, value)
        value = where(flat < first_x, low, value)
        value = where(flat > last_x, high, value)
        value = where(np.isnan(flat), flat, value)
    value = value.astype(out_dtype) if value.dtype != out_dtype else value
    return value.reshape(xe.shape)


# -- convolve -----------------------------------------------------------------------------

CONVOLVE_MAX_TERMS = 512


@implements("convolve")
def convolve(a: Any, v: Any, mode: str = "full") -> LazyArray:
    """Discrete linear convolution of two 1-d sequences (0-d inputs count as length 1).

    Written as a sum of shifted copies of the longer input, one term per
    element of the shorter one, which may have at most ``CONVOLVE_MAX_TERMS``
    elements (``NotImplementedError`` beyond).
    """
    x, k = lazy(a), lazy(v)
    x = x.reshape(1) if x.ndim == 0 else x
    k = k.reshape(1) if k.ndim == 0 else k
    if x.ndim != 1 or k.ndim != 1:
        raise ValueError("object too deep for desired array")
    if k.shape[0] > x.shape[0]:
        x, k = k, x
    n, taps = x.shape[0], k.shape[0]
    if n == 0:
        raise ValueError("a cannot be empty")
    if taps == 0:
        raise ValueError("v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if taps > CONVOLVE_MAX_TERMS:
        raise NotImplementedError(
            f"lazyarr.convolve: the shorter input has {taps} elements; at most "
            f"{CONVOLVE_MAX_TERMS} are supported"
        )
    dtype = np.result_type(x.dtype, k.dtype)
    pad = full((taps - 1,), 0, dtype=x.dtype) if taps > 1 else None
    padded = concat([pad, x, pad], 0)
    length = n + taps - 1
    total: Any = None
    for j in range(taps):
        start = taps - 1 - j
        term = take(padded, slice(start, start + length), 0) * take(k, slice(j, j + 1), 0)
        total = term if total is None else total + term
    if mode == "same":
        total = take(total, slice((taps - 1) // 2, (taps - 1) // 2 + n), 0)
    elif mode == "valid":
        total = take(total, slice(taps - 1, n), 0)
    return total.astype(dtype) if total.dtype != dtype else total
