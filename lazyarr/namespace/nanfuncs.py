"""NumPy's NaN-aware statistics beside the quantiles, step by step as NumPy writes them.

``nanvar``, ``nanstd``, ``nanargmin``, ``nanargmax``, ``nancumsum`` and
``nancumprod`` are elementwise ops, reductions and scans. ``nanargmin`` of
an all-NaN slice raises when the result is computed (``raise_where``); the
docstrings say so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import no_out, raise_where
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.reductions import all as all_
from lazyarr.namespace.reductions import argmax, argmin, var
from lazyarr.namespace.reductions import sum as sum_
from lazyarr.namespace.statistics import cumprod, cumsum

__all__ = ["nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanstd", "nanvar"]


# -- nanvar / nanstd -------------------------------------------------------------------------


def _ddof(ddof: Any, correction: Any) -> Any:
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _nanvar(
    a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, kw: dict[str, Any], name: str
) -> LazyArray:
    no_out(kw, name, ("correction",))
    ddof = _ddof(ddof, kw.pop("correction", None))
    x = lazy(a)
    if x.dtype.kind not in "fc":
        return var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc":
            raise TypeError("If a is inexact, then dtype must be inexact")
    mask = np.isnan(x)
    arr = where(mask, 0, x)
    cnt = sum_(~mask, axis=axis, dtype=np.intp, keepdims=True)
    total = sum_(arr, axis=axis, dtype=dtype, keepdims=True)
    avg = (total / np.maximum(cnt, 1)).astype(total.dtype)
    dev = where(mask, 0, (arr - avg).astype(x.dtype))
    sqr = (dev * np.conjugate(dev)).real if x.dtype.kind == "c" else dev * dev
    v = sum_(sqr, axis=axis, dtype=dtype, keepdims=keepdims)
    dof = cnt.reshape(v.shape) - ddof
    bad = dof <= 0
    v = (v / where(bad, 1, dof)).astype(v.dtype)
    return where(bad, np.nan, v).astype(v.dtype)


@implements("nanvar")
def nanvar(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: Any = 0,
    keepdims: bool = False,
    **kw: Any,
) -> LazyArray:
    """Variance ignoring NaNs; lines with ``count - ddof <= 0`` give NaN (NumPy also warns)."""
    kw["out"] = out
    return _nanvar(a, axis, dtype, ddof, keepdims, kw, "nanvar")


@implements("nanstd")
def nanstd(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: Any = 0,
    keepdims: bool = False,
    **kw: Any,
) -> LazyArray:
    """Standard deviation ignoring NaNs (the square root of :func:`nanvar`)."""
    kw["out"] = out
    return np.sqrt(_nanvar(a, axis, dtype, ddof, keepdims, kw, "nanstd"))


# -- nanargmin / nanargmax / nancumsum / nancumprod -------------------------------------------


def _nanarg(func: Any, fill: float, a: Any, axis: Any, out: Any, keepdims: bool) -> LazyArray:
    no_out({"out": out}, func.__name__)
    x = lazy(a)
    if x.dtype.kind not in "fc":
        return func(x, axis=axis, keepdims=keepdims)
    mask = np.isnan(x)
    res = func(where(mask, fill, x), axis=axis, keepdims=keepdims)
    if x.size == 0:
        return res
    all_nan = all_(mask, axis=axis, keepdims=keepdims)
    return raise_where(res, all_nan, ValueError, "All-NaN slice encountered")


@implements("nanargmin")
def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Index of the minimum ignoring NaNs.

    An all-NaN slice raises ``ValueError`` when the result is computed
    (NumPy raises when called: it depends on the values).
    """
    return _nanarg(argmin, np.inf, a, axis, out, keepdims)


@implements("nanargmax")
def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> LazyArray:
    """Index of the maximum ignoring NaNs (all-NaN slices: see :func:`nanargmin`)."""
    return _nanarg(argmax, -np.inf, a, axis, out, keepdims)


def _nan_filled(a: Any, fill: int) -> LazyArray:
    x = lazy(a)
    return where(np.isnan(x), fill, x) if x.dtype.kind in "fc" else x


@implements("nancumsum")
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Cumulative sum treating NaN as zero."""
    return cumsum(_nan_filled(a, 0), axis=axis, dtype=dtype, out=out)


@implements("nancumprod")
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> LazyArray:
    """Cumulative product treating NaN as one."""
    return cumprod(_nan_filled(a, 1), axis=axis, dtype=dtype, out=out)
