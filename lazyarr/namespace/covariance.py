"""``average``, ``ptp``, ``cov`` and ``corrcoef`` from lazy reductions.

Errors NumPy raises from the *values* (``average`` with weights summing to
zero) are raised when the result is computed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import manipulation as m
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, no_out, raise_where
from lazyarr.namespace.creation import full
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.linalg import diagonal, matmul
from lazyarr.namespace.quantiles import weights_for
from lazyarr.namespace.reductions import max as amax
from lazyarr.namespace.reductions import mean
from lazyarr.namespace.reductions import min as amin
from lazyarr.namespace.reductions import sum as sum_

__all__ = ["average", "corrcoef", "cov", "ptp"]


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
