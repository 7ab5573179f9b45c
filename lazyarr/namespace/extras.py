"""Everyday NumPy functions lazyarr composes from its existing ops (no new graph ops).

This module holds comparisons (``array_equal``, ``array_equiv``), spacing
(``logspace``, ``geomspace``, ``indices``), ``select``/``piecewise``,
``gradient``, ``interp``, ``average``, ``ptp``, ``cov`` and ``corrcoef``,
and re-exports the others (``extras_stats``: quantiles and NaN-aware
statistics; ``extras_shape``: pad, split, insert, rot90...;
``extras_index``: binning, index arithmetic, lexsort, partition), so
``lazyarr/__init__.py`` needs one star-import.

``array_equal`` and ``array_equiv`` return lazy 0-d booleans (NumPy
returns Python bools; ``bool()`` computes them). Errors NumPy raises from
the *values* (``average`` with weights summing to zero) are raised when
the result is computed.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazyarr._array import LazyArray, wrap
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import manipulation as m
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace import extras_index, extras_shape, extras_stats
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import arange, asarray, full, linspace
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.extras_index import *  # noqa: F403
from lazyarr.namespace.extras_shape import *  # noqa: F403
from lazyarr.namespace.extras_shape import linspace_nd
from lazyarr.namespace.extras_stats import *  # noqa: F403
from lazyarr.namespace.extras_stats import (
    concat,
    lazy,
    no_out,
    raise_where,
    take,
    weights_for,
)
from lazyarr.namespace.linalg import diagonal, matmul
from lazyarr.namespace.reductions import all as all_
from lazyarr.namespace.reductions import any as any_
from lazyarr.namespace.reductions import max as amax
from lazyarr.namespace.reductions import mean
from lazyarr.namespace.reductions import min as amin
from lazyarr.namespace.reductions import sum as sum_
from lazyarr.namespace.searching import computed, searchsorted

_OWN = [
    "array_equal",
    "array_equiv",
    "average",
    "corrcoef",
    "convolve",
    "cov",
    "geomspace",
    "gradient",
    "indices",
    "interp",
    "logspace",
    "piecewise",
    "ptp",
    "select",
]
__all__ = sorted([*_OWN, *extras_index.__all__, *extras_shape.__all__, *extras_stats.__all__])


def _is_py_scalar(v: Any) -> bool:
    return isinstance(v, (int, float, complex)) and not isinstance(v, np.generic)


# -- comparisons --------------------------------------------------------------------------


@implements("array_equal")
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> LazyArray:
    """Whether both arrays have the same shape and elements (a lazy 0-d bool).

    NumPy returns a Python ``bool``; ``bool(result)`` computes this one.
    Different shapes give a constant ``False`` without computing anything.
    """
    x1, x2 = lazy(a1), lazy(a2)
    if x1.shape != x2.shape:
        return asarray(False)
    if not equal_nan or (x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc"):
        return all_(x1 == x2)
    n1, n2 = np.isnan(x1), np.isnan(x2)
    return all_((n1 == n2) & (n1 | (x1 == x2)))


@implements("array_equiv")
def array_equiv(a1: Any, a2: Any) -> LazyArray:
    """Whether the arrays are equal after broadcasting (a lazy 0-d bool, see ``array_equal``)."""
    x1, x2 = lazy(a1), lazy(a2)
    try:
        np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        return asarray(False)
    return all_(x1 == x2)


# -- spacing ----------------------------------------------------------------------------------


def _linspace(start: Any, stop: Any, num: int, endpoint: bool, axis: int) -> LazyArray:
    if _is_py_scalar(start) and _is_py_scalar(stop):
        normalize_axis(axis, 1, "linspace")
        return linspace(start, stop, num, endpoint=endpoint)
    return linspace_nd(start, stop, num, endpoint=endpoint, axis=axis)


@implements("logspace")
def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> LazyArray:
    """``base ** linspace(start, stop, num)`` (array ``start``/``stop``/``base`` broadcast)."""
    if not isinstance(base, (float, int)) and np.ndim(base):
        shapes = [np.shape(v) if not isinstance(v, LazyArray) else v.shape for v in (start, stop)]
        ndmax = len(np.broadcast_shapes(*shapes, np.shape(base)))
        start, stop, b = (
            (lambda v: v.reshape((1,) * (ndmax - v.ndim) + v.shape))(lazy(v))
            for v in (start, stop, base)
        )
        base = wrap(m.expand_dims(b._expr, axis))
    y = _linspace(start, stop, num, endpoint, axis)
    out = (lazy(base) if not _is_py_scalar(base) else base) ** y
    return out if dtype is None else out.astype(dtype)


@implements("geomspace")
def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0
) -> LazyArray:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (NumPy's steps).

    Lazy ``start``/``stop`` are computed when called (NumPy checks them for zeros).
    """
    start = np.asanyarray(computed(start) if isinstance(start, LazyArray) else start)
    stop = np.asanyarray(computed(stop) if isinstance(stop, LazyArray) else stop)
    if np.any(start == 0) or np.any(stop == 0):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(start, stop, float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    start = start.astype(dt, copy=True)
    stop = stop.astype(dt, copy=True)
    sign = np.sign(start)
    start = start / sign
    stop = stop / sign
    result = logspace(np.log10(start), np.log10(stop), num, endpoint, 10.0, dt)
    shape = result.shape[1:]
    if num > 0:
        parts: list[LazyArray | None] = [lazy(np.broadcast_to(start, shape)[None])]
        end = num - 1 if (num > 1 and endpoint) else num
        parts.append(take(result, slice(1, end), 0) if end > 1 else None)
        if num > 1 and endpoint:
            parts.append(lazy(np.broadcast_to(stop, shape)[None]))
        result = concat(parts, 0)
    result = result * lazy(sign)
    if axis != 0:
        result = wrap(m.moveaxis(result._expr, 0, axis))
    return result.astype(dtype) if result.dtype != dtype else result


@implements("indices")
def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index grid of shape ``dimensions`` (stacked, or a sparse tuple)."""
    dims = tuple(operator.index(d) for d in dimensions)
    n = len(dims)
    parts = []
    for i, d in enumerate(dims):
        r = arange(d, dtype=dtype).reshape((1,) * i + (d,) + (1,) * (n - i - 1))
        parts.append(r if sparse else wrap(m.broadcast_to(r._expr, dims)))
    if sparse:
        return tuple(parts)
    if not parts:
        return full((0,), 0, dtype=dtype)
    return wrap(m.stack([p._expr for p in parts], 0))


# -- select / piecewise ---------------------------------------------------------------------


@implements("select")
def select(condlist: Any, choicelist: Any, default: Any = 0) -> LazyArray:
    """Elements of the first choice whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if _is_py_scalar(c) else lazy(c) for c in [*choicelist, default]]
    try:
        dtype = np.result_type(*(c if _is_py_scalar(c) else c.dtype for c in choices))
    except TypeError as e:
        msg = f"Choicelist and default value do not have a common dtype: {e}"
        raise TypeError(msg) from None
    conds = [lazy(c) for c in condlist]
    cond_shape = np.broadcast_shapes(*(c.shape for c in conds))
    choice_shape = np.broadcast_shapes(
        *(np.shape(c) if _is_py_scalar(c) else c.shape for c in choices)
    )
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = cond_shape if not choice_shape else np.broadcast_shapes(cond_shape, choice_shape)
    last = choices[-1]
    if _is_py_scalar(last):
        result = full(shape, np.asarray(last).astype(dtype)[()], dtype=dtype)
    else:
        result = wrap(m.broadcast_to(last.astype(dtype)._expr, shape))
    for choice, cond in zip(choices[-2::-1], conds[::-1]):
        result = where(cond, choice, result)
    return result.astype(dtype) if result.dtype != dtype else result


@implements("piecewise")
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> LazyArray:
    """``funclist[i]`` applied where ``condlist[i]`` holds (later conditions win), else 0.

    Unlike NumPy, a callable gets the *whole* lazy ``x`` (not ``x[cond]``)
    and must work elementwise on lazy arrays; results are picked with
    ``where``. Values are cast to ``x``'s dtype.
    """
    xe = lazy(x)
    n2 = len(funclist)
    if np.isscalar(condlist) or (
        not isinstance(condlist[0], (list, np.ndarray, LazyArray)) and xe.ndim != 0
    ):
        condlist = [condlist]
    conds = [lazy(c).astype(bool) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        stacked = wrap(m.stack([c._expr for c in conds], 0))
        conds.append(~any_(stacked, axis=0))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = full(xe.shape, 0, dtype=xe.dtype)
    for cond, func in zip(conds, funclist):
        value = func(xe, *args, **kw) if callable(func) else func
        value = lazy(value).astype(xe.dtype)
        y = where(cond, value, y)
    return y


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


# -- average / ptp -------------------------------------------------------------------------


@implements("average")
def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    """The (weighted) mean along ``axis``; with ``returned``, also the sum of weights.

    Weights summing to zero raise ``ZeroDivisionError`` when the result is
    computed (NumPy raises it when called: it depends on the values).
    """
    x = lazy(a)
    axes = None if axis is None else normalize_axis_tuple(axis, x.ndim, argname="axis")
    kd = bool(keepdims)
    if weights is None:
        avg = mean(x, axis=axes, keepdims=kd)
        value = avg.dtype.type(x.size / avg.size)
        scl = full(avg.shape, value, dtype=avg.dtype)
    else:
        w = weights_for(lazy(weights), x, axes)
        if x.dtype.kind in "iub":
            rdt = np.result_type(x.dtype, w.dtype, "f8")
        else:
            rdt = np.result_type(x.dtype, w.dtype)
        scl = sum_(w, axis=axes, dtype=rdt, keepdims=kd)
        num = sum_(x.astype(rdt) * w.astype(rdt), axis=axes, keepdims=kd)
        safe = where(scl == 0, 1, scl)
        avg = raise_where(
            num / safe, scl == 0, ZeroDivisionError, "Weights sum to zero, can't be normalized"
        )
    if not returned:
        return avg
    if scl.shape != avg.shape:
        scl = wrap(m.broadcast_to(scl._expr, avg.shape))
    return avg, scl


@implements("ptp")
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> LazyArray:
    """Peak to peak: ``max - min`` along ``axis``."""
    no_out({"out": out}, "ptp")
    x = lazy(a)
    return amax(x, axis=axis, keepdims=keepdims) - amin(x, axis=axis, keepdims=keepdims)


# -- cov / corrcoef ---------------------------------------------------------------------------


def _atleast_2d(x: LazyArray) -> LazyArray:
    return x if x.ndim >= 2 else x.reshape((1,) * (2 - x.ndim) + x.shape)


def _obs_weights(fweights: Any, aweights: Any, n: int) -> tuple[np.ndarray | None, Any]:
    """NumPy's checks of ``fweights``/``aweights`` (computed now: they are checked by value)."""
    w = None
    if fweights is not None:
        fw = np.asarray(computed(fweights), dtype=float)
        if not np.all(fw == np.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if any(fw < 0):
            raise ValueError("fweights cannot be negative")
        w = fw
    aw = None
    if aweights is not None:
        aw = np.asarray(computed(aweights), dtype=float)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if any(aw < 0):
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else w * aw
    return w, aw


@implements("cov")
def cov(
    m_: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    fweights: Any = None,
    aweights: Any = None,
    *,
    dtype: Any = None,
) -> LazyArray:
    """Covariance matrix of the variables in the rows (or columns) of ``m`` (and ``y``).

    ``fweights``/``aweights`` are computed when called if lazy (NumPy checks
    their values). Too few observations warn now and give inf/NaN, as in NumPy.
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = lazy(m_)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    ye = None if y is None else lazy(y)
    if ye is not None and ye.ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dts = [x.dtype] + ([] if ye is None else [ye.dtype])
        dtype = np.result_type(*dts, np.float64)
    X = _atleast_2d(x.astype(dtype))
    if not rowvar and x.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return full((0, 0), 0.0, dtype=np.float64)
    if ye is not None:
        Y = _atleast_2d(ye.astype(dtype))
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = concat([X, Y], 0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w, aw = _obs_weights(fweights, aweights, X.shape[1])
    if w is None:
        avg = mean(X, axis=1)
        fact: Any = X.shape[1] - ddof
    else:
        avg = average(X, axis=1, weights=w)
        w_sum = np.asarray(w.sum(dtype=np.result_type(X.dtype, w.dtype)))[()]
        if w_sum == 0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * np.sum(w * aw) / w_sum
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = (X - avg[:, None]).astype(X.dtype)
    X_T = X.T if w is None else (X * lazy(w)).T
    if X_T.dtype.kind == "c":
        X_T = np.conjugate(X_T)
    c = matmul(X, X_T)
    c = (c * np.true_divide(1, fact)).astype(c.dtype)
    return wrap(m.squeeze(c._expr))


@implements("corrcoef")
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> LazyArray:
    """Pearson correlation coefficients (``cov`` normalised), clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim != 2:
        return c / c
    d = diagonal(c)
    stddev = np.sqrt(d.real)
    c = (c / stddev[:, None]).astype(c.dtype)
    c = (c / stddev[None, :]).astype(c.dtype)
    if c.dtype.kind == "c":
        re = np.clip(c.real, -1, 1)
        im = np.clip(c.imag, -1, 1)
        return (re + im * 1j).astype(c.dtype)
    return np.clip(c, -1, 1)


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
