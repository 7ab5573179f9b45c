"""Cumulative sums/products and differences (Array API and NumPy names).

``cumulative_sum``/``cumulative_prod`` follow the Array API (``axis`` is
required for arrays of more than one dimension, ``include_initial``);
``cumsum``/``cumprod`` follow NumPy (``axis=None`` scans the flattened
array). All are lazy blocked scans, see ``lazyarr.graph.ops.statistics``;
``cumreduction`` is dask's scan with the user's functions
(``lazyarr.graph.ops.cumreduction``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops import cumreduction as _cumred
from lazyarr.graph.ops import manipulation as _manip
from lazyarr.graph.ops import statistics as _stats
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements

__all__ = ["cumprod", "cumreduction", "cumsum", "cumulative_prod", "cumulative_sum", "diff"]


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported by lazy arrays")


def _cumulative(
    func: str, name: str, x: Any, axis: Any, dtype: Any, include_initial: bool
) -> LazyArray:
    e = as_expr(x)
    if axis is None and e.ndim > 1:
        raise ValueError(
            f"{name}: for arrays which have more than one dimension ``axis`` argument is "
            f"required (shape {e.shape})"
        )
    return wrap(_stats.cumulative(func, e, axis, dtype, include_initial))


@implements("cumulative_sum")
def cumulative_sum(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
    out: Any = None,
) -> LazyArray:
    """Cumulative sum along ``axis``; ``include_initial`` prepends a zero."""
    _no_out(out, "cumulative_sum")
    return _cumulative("sum", "cumulative_sum", x, axis, dtype, include_initial)


@implements("cumulative_prod")
def cumulative_prod(
    x: Any,
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: bool = False,
    out: Any = None,
) -> LazyArray:
    """Cumulative product along ``axis``; ``include_initial`` prepends a one."""
    _no_out(out, "cumulative_prod")
    return _cumulative("prod", "cumulative_prod", x, axis, dtype, include_initial)


@implements("cumsum")
def cumsum(
    a: Any, axis: int | None = None, dtype: Any = None, out: Any = None, *, method: str = ""
) -> LazyArray:
    """Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None);
    dask's ``method=`` is accepted (both of its methods are this one blocked scan)."""
    _stats.check_scan_options("cumsum", out, method)
    return wrap(_stats.cumulative("sum", as_expr(a), axis, dtype))


@implements("cumprod")
def cumprod(
    a: Any, axis: int | None = None, dtype: Any = None, out: Any = None, *, method: str = ""
) -> LazyArray:
    """Cumulative product along ``axis`` (of the flattened array when ``axis`` is None);
    dask's ``method=`` is accepted (both of its methods are this one blocked scan)."""
    _stats.check_scan_options("cumprod", out, method)
    return wrap(_stats.cumulative("prod", as_expr(a), axis, dtype))


def cumreduction(
    func: Callable[..., Any],
    binop: Callable[..., Any],
    ident: Any,
    x: Any,
    axis: int | None = None,
    dtype: Any = None,
    out: Any = None,
    method: str = "sequential",
    preop: Callable[..., Any] | None = None,
) -> LazyArray:
    """Dask's generic scan: ``func(block, axis=axis)`` per block, then each block's last
    value carried into the blocks after it with ``binop`` (from ``ident``).

    Both of dask's methods give the same lazy plan (``preop`` is checked, as dask
    asks for it with ``"blelloch"``, but the carries come from the scanned blocks'
    last values, one per block, so it is not called).
    """
    if method == "blelloch":
        if preop is None:
            raise TypeError('cumreduction with "blelloch" method required `preop=` argument')
    elif method != "sequential":
        raise ValueError(
            'Invalid method for cumreduction.  Expected "sequential" or "blelloch".  '
            f"Got: {method!r}"
        )
    _no_out(out, "cumreduction")
    return wrap(_cumred.cumreduction(func, binop, ident, as_expr(x), axis, dtype))


_NOT_GIVEN: Any = object()


def _pad(value: Any, e: Any, axis: int) -> Any:
    """A ``prepend``/``append`` value as an expression to concatenate along ``axis``."""
    p = as_expr(value)
    if p.ndim == 0:
        shape = (*e.shape[:axis], 1, *e.shape[axis + 1 :])
        p = _manip.broadcast_to(p, shape)
    return p


@implements("diff")
def diff(
    x: Any,
    /,
    n: int = 1,
    axis: int = -1,
    prepend: Any = _NOT_GIVEN,
    append: Any = _NOT_GIVEN,
) -> LazyArray:
    """The ``n``-th discrete difference along ``axis`` (NumPy and Array API).

    ``prepend``/``append`` values are joined to ``x`` along ``axis`` first
    (scalars broadcast to one slice), as in NumPy.
    """
    e = as_expr(x)
    if e.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_axis(axis, e.ndim, "diff")
    if not isinstance(n, bool) and isinstance(n, int) and n == 0:
        return wrap(e)
    parts = []
    if prepend is not _NOT_GIVEN and prepend is not None:
        parts.append(_pad(prepend, e, ax))
    parts.append(e)
    if append is not _NOT_GIVEN and append is not None:
        parts.append(_pad(append, e, ax))
    if len(parts) > 1:
        e = _manip.concat(parts, axis=ax)
    return wrap(_stats.diff(e, n, ax))
