"""Statistical and utility reductions (Array API signatures, NumPy keywords too)."""

from __future__ import annotations

from typing import Any

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops import reduce as _reduce
from lazyarr.namespace._register import implements

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "max",
    "mean",
    "min",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "prod",
    "std",
    "sum",
    "var",
]


def _r(
    func: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None, ddof: float = 0
) -> LazyArray:
    return wrap(_reduce(func, as_expr(x), axis, keepdims, dtype, ddof))


def _no_out(kwargs: dict[str, Any], name: str) -> None:
    if kwargs.pop("out", None) is not None:
        raise TypeError(f"{name}: out= is not supported by lazy arrays")
    kwargs.pop("where", None) if kwargs.get("where", True) is True else None
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")


@implements("sum")
def sum(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Sum over ``axis`` (all axes by default)."""
    _no_out(kw, "sum")
    return _r("sum", x, axis, keepdims, dtype)


@implements("prod")
def prod(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Product over ``axis``."""
    _no_out(kw, "prod")
    return _r("prod", x, axis, keepdims, dtype)


@implements("mean")
def mean(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Arithmetic mean over ``axis``."""
    _no_out(kw, "mean")
    return _r("mean", x, axis, keepdims, dtype)


def _correction(correction: Any, ddof: Any) -> float:
    if correction is not None and ddof is not None:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return float(correction if correction is not None else (ddof or 0))


@implements("var")
def var(
    x: Any,
    /,
    *,
    axis: Any = None,
    correction: Any = None,
    keepdims: bool = False,
    ddof: Any = None,
    dtype: Any = None,
    **kw: Any,
) -> LazyArray:
    """Variance over ``axis`` (``correction``/``ddof`` degrees of freedom removed)."""
    _no_out(kw, "var")
    return _r("var", x, axis, keepdims, dtype, _correction(correction, ddof))


@implements("std")
def std(
    x: Any,
    /,
    *,
    axis: Any = None,
    correction: Any = None,
    keepdims: bool = False,
    ddof: Any = None,
    dtype: Any = None,
    **kw: Any,
) -> LazyArray:
    """Standard deviation over ``axis``."""
    _no_out(kw, "std")
    return _r("std", x, axis, keepdims, dtype, _correction(correction, ddof))


@implements("min", "amin")
def min(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Minimum over ``axis`` (NaN propagates)."""
    _no_out(kw, "min")
    return _r("min", x, axis, keepdims)


@implements("max", "amax")
def max(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Maximum over ``axis`` (NaN propagates)."""
    _no_out(kw, "max")
    return _r("max", x, axis, keepdims)


amin = min
amax = max


@implements("any")
def any(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Whether any element along ``axis`` is true."""
    _no_out(kw, "any")
    return _r("any", x, axis, keepdims)


@implements("all")
def all(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Whether every element along ``axis`` is true."""
    _no_out(kw, "all")
    return _r("all", x, axis, keepdims)


@implements("argmin")
def argmin(x: Any, /, axis: int | None = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Index of the first minimum (into the flattened array when ``axis`` is None)."""
    _no_out(kw, "argmin")
    return _r("argmin", x, axis, keepdims)


@implements("argmax")
def argmax(x: Any, /, axis: int | None = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Index of the first maximum (into the flattened array when ``axis`` is None)."""
    _no_out(kw, "argmax")
    return _r("argmax", x, axis, keepdims)


@implements("count_nonzero")
def count_nonzero(x: Any, /, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """Number of non-zero elements along ``axis``."""
    return _r("count_nonzero", x, axis, keepdims)


@implements("nansum")
def nansum(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Sum treating NaN as zero."""
    _no_out(kw, "nansum")
    return _r("nansum", x, axis, keepdims, dtype)


@implements("nanprod")
def nanprod(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Product treating NaN as one."""
    _no_out(kw, "nanprod")
    return _r("nanprod", x, axis, keepdims, dtype)


@implements("nanmin")
def nanmin(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Minimum ignoring NaN."""
    _no_out(kw, "nanmin")
    return _r("nanmin", x, axis, keepdims)


@implements("nanmax")
def nanmax(x: Any, /, axis: Any = None, keepdims: bool = False, **kw: Any) -> LazyArray:
    """Maximum ignoring NaN."""
    _no_out(kw, "nanmax")
    return _r("nanmax", x, axis, keepdims)


@implements("nanmean")
def nanmean(
    x: Any, /, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kw: Any
) -> LazyArray:
    """Mean ignoring NaN."""
    _no_out(kw, "nanmean")
    return _r("nanmean", x, axis, keepdims, dtype)
