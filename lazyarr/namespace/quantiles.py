"""NumPy's quantiles, percentiles and medians, NaN-ignoring ones too, from existing lazy ops.

* ``quantile``/``percentile``/``median`` sort along the reduced axis (one
  block along it, see ``lazyarr.graph.ops.sorting``) and read the sorted
  values at positions worked out with NumPy's own formulas: the length of
  the axis is known, so the positions and interpolation weights are NumPy
  arrays at expression time and the gathers are plain ``getitem``\\ s.
* ``nanquantile``/``nanpercentile``/``nanmedian`` count the non-NaN values
  per line (NaNs sort last), compute the same formulas lazily from the
  counts and gather with ``take_along_axis``.

``weights_for`` (NumPy's check of weights against the data) is shared with
``average`` (:mod:`lazyarr.namespace.covariance`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import manipulation as m
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, moveaxis, no_out, raise_where, take
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.reductions import any as any_
from lazyarr.namespace.reductions import mean, nanmean
from lazyarr.namespace.reductions import sum as sum_
from lazyarr.namespace.sorting import argsort, sort
from lazyarr.namespace.statistics import cumsum

__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]


def _ureduce(x: LazyArray, axis: Any) -> tuple[LazyArray, tuple[int, ...]]:
    """``x`` with the reduced axes merged into one last axis, and those axes (NumPy's rule)."""
    if axis is None:
        return x.reshape(-1), tuple(range(x.ndim))
    axes = normalize_axis_tuple(axis, x.ndim)
    if len(axes) == 1:
        return moveaxis(x, axes[0], -1), axes
    keep = [d for d in range(x.ndim) if d not in axes]
    moved = moveaxis(x, keep, list(range(len(keep))))
    return moved.reshape((*moved.shape[: len(keep)], -1)), axes


def _keepdims(r: LazyArray, x: LazyArray, axes: tuple[int, ...], lead: int) -> LazyArray:
    """``r`` (``lead`` leading q-axes, then x's kept axes) with the reduced axes back as 1s."""
    shape = r.shape[:lead] + tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    return r.reshape(shape)


def weights_for(w: LazyArray, x: LazyArray, axes: tuple[int, ...] | None) -> LazyArray:
    """NumPy's ``_weights_are_valid``: ``w`` reshaped to broadcast against ``x``."""
    if w.shape == x.shape:
        return w
    if axes is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if w.shape != tuple(x.shape[ax] for ax in axes):
        raise ValueError(
            "Shape of weights must be consistent with shape of a along specified axis."
        )
    w = wrap(m.permute_dims(w._expr, tuple(int(i) for i in np.argsort(axes))))
    return w.reshape(tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))


# -- quantile methods (NumPy's formulas, for NumPy arrays and lazy arrays alike) ---------

_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_CONTINUOUS = {  # alpha, beta of Hyndman & Fan
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
METHODS = (*_DISCRETE, "averaged_inverted_cdf", "midpoint", "linear", *_CONTINUOUS)


def _to_boundaries(index: Any, pick_previous: Any) -> Any:
    previous = np.floor(index)
    res = np.where(pick_previous(index - previous, index), previous, previous + 1)
    return np.maximum(res.astype(np.intp), 0)


def virtual_index(method: str, n: Any, q: Any) -> Any:
    """NumPy's virtual index of quantile ``q`` in ``n`` sorted values (int for discrete ones)."""
    if method == "linear":
        return (n - 1) * q
    if method == "lower":
        return np.floor((n - 1) * q).astype(np.intp)
    if method == "higher":
        return np.ceil((n - 1) * q).astype(np.intp)
    if method == "nearest":
        return np.around((n - 1) * q).astype(np.intp)
    if method == "midpoint":
        return 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "inverted_cdf":
        return _to_boundaries(n * q - 1, lambda g, _: g == 0)
    if method == "closest_observation":
        return _to_boundaries(n * q - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1))
    alpha, beta = _CONTINUOUS[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _fix_gamma(method: str, gamma: Any, index: Any) -> Any:
    if method == "averaged_inverted_cdf":
        return np.where(gamma == 0, 0.5, 1.0)
    if method == "midpoint":
        return np.where(index % 1 == 0, 0.0, 0.5)
    return gamma


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {METHODS}")


def _lerp(a: LazyArray, b: LazyArray, t: Any) -> LazyArray:
    """NumPy's ``_lerp``: ``a + (b-a)*t``, or ``b - (b-a)*(1-t)`` where ``t >= 0.5``."""
    diff = b - a
    low = a + diff * (lazy(t) if isinstance(t, np.ndarray) else t)
    high = b - diff * (lazy(1 - t) if isinstance(t, np.ndarray) else 1 - t)
    if high.dtype != low.dtype:
        high = high.astype(low.dtype)
    if not isinstance(t, np.ndarray):
        return high if t >= 0.5 else low
    return where(lazy(t >= 0.5), high, low)


# -- quantile / percentile / median ---------------------------------------------------


def _q_array(q: Any, percent: bool) -> tuple[np.ndarray, bool]:
    weak = type(q) in (int, float)
    q = computed(q) if isinstance(q, LazyArray) else q
    q = np.true_divide(q, 100) if percent else np.asanyarray(q)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    with np.errstate(invalid="ignore"):
        ok = bool(np.all((q >= 0) & (q <= 1)))
    if not ok:
        what = "Percentiles must be in the range [0, 100]" if percent else None
        raise ValueError(what or "Quantiles must be in the range [0, 1]")
    return q, weak


def _static_quantile(s: LazyArray, q: np.ndarray, method: str, weak: bool) -> LazyArray:
    """Quantiles of the sorted ``s`` along its last axis; result shape ``rest + q.shape``."""
    n = s.shape[-1]
    vi = np.asanyarray(virtual_index(method, n, q))
    if method in _DISCRETE or (method == "linear" and vi.dtype.kind in "iu"):
        return take(s, vi, -1)
    prev = np.array(np.floor(vi))
    nxt = np.array(prev + 1)
    above = vi >= n - 1
    prev[above], nxt[above] = -1, -1
    below = vi < 0
    prev[below], nxt[below] = 0, 0
    gamma = np.asanyarray(_fix_gamma(method, vi - prev, vi), dtype=vi.dtype)
    a = take(s, prev.astype(np.intp), -1)
    b = take(s, nxt.astype(np.intp), -1)
    return _lerp(a, b, float(gamma) if weak else gamma)


def _weighted_quantile(work: LazyArray, w: LazyArray, q: np.ndarray) -> tuple[LazyArray, LazyArray]:
    """NumPy's weighted ``inverted_cdf``: the first sorted value whose weight CDF reaches ``q``.

    Negative, NaN, infinite or all-zero weights raise ``ValueError`` when
    the result is computed. Returns the sorted values and the quantiles.
    """
    n = work.shape[-1]
    if n == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    order = argsort(work, axis=-1)
    s = wrap(ix.take_along_axis(work._expr, order._expr, work.ndim - 1))
    ws = wrap(ix.take_along_axis(w._expr, order._expr, w.ndim - 1))
    cdf = cumsum(ws, axis=-1, dtype=np.float64)
    total = take(cdf, slice(n - 1, n), -1)
    negative = any_(w < 0, axis=-1, keepdims=True)
    unusable = ~np.isfinite(total) | (total == 0)
    cdf = cdf / where(unusable, 1.0, total)
    if q.dtype.kind == "f":
        cdf = cdf.astype(q.dtype)
    cdf = where(cdf == 0, -1, cdf)
    qf = lazy(q.reshape(-1, 1))
    idx = sum_(cdf[..., None, :] < qf, axis=-1, dtype=np.intp)
    r = wrap(ix.take_along_axis(s._expr, np.minimum(idx, n - 1)._expr, s.ndim - 1))
    r = r.reshape(r.shape[:-1] + q.shape)
    lead = (1,) * q.ndim
    r = raise_where(
        r,
        unusable.reshape(unusable.shape[:-1] + lead),
        ValueError,
        "Weights included NaN, inf or were all zero.",
    )
    r = raise_where(
        r, negative.reshape(negative.shape[:-1] + lead), ValueError, "Weights must be non-negative."
    )
    return s, r


def _nan_last(s: LazyArray, result: LazyArray, lead: int) -> LazyArray:
    """Lines whose sorted values end in NaN give NaN (NumPy's NaN propagation)."""
    last = take(s, s.shape[-1] - 1, -1)
    last = last.reshape(last.shape + (1,) * lead)
    out = where(np.isnan(last), last, result)
    return out.astype(result.dtype) if out.dtype != result.dtype else out


def _quantile(
    name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool, weights: Any, percent: bool
) -> LazyArray:
    x = lazy(a)
    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    qa, weak = _q_array(q, percent)
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    _check_method(method)
    work, axes = _ureduce(x, axis)
    if weights is not None:
        w = weights_for(lazy(weights), x, None if axis is None else axes)
        w = wrap(m.broadcast_to(w._expr, x.shape))
        s, r = _weighted_quantile(work, _ureduce(w, axis)[0], qa)
    elif work.shape[-1] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    else:
        s = sort(work, axis=-1)
        r = _static_quantile(s, qa, method, weak)
    if x.dtype.kind == "f":
        r = _nan_last(s, r, qa.ndim)
    r = moveaxis(r, list(range(-qa.ndim, 0)), list(range(qa.ndim))) if qa.ndim else r
    return _keepdims(r, x, axes, qa.ndim) if keepdims else r


@implements("quantile")
def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> LazyArray:
    """The ``q``-th quantiles along ``axis`` (all of NumPy's ``method``\\ s).

    Sorts along the reduced axes; NaN anywhere in a line gives NaN. A lazy
    ``q`` is computed when called (it decides the result's shape).
    ``weights`` (``method='inverted_cdf'`` only) that are negative, NaN,
    infinite or all zero raise ``ValueError`` when the result is computed.
    """
    no_out({"out": out}, "quantile")
    return _quantile("quantile", a, q, axis, method, keepdims, weights, False)


@implements("percentile")
def percentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> LazyArray:
    """The ``q``-th percentiles (``q`` in [0, 100]); see :func:`quantile`."""
    no_out({"out": out}, "percentile")
    return _quantile("percentile", a, q, axis, method, keepdims, weights, True)


@implements("median")
def median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> LazyArray:
    """The median along ``axis``: the mean of the middle one or two sorted values.

    NaN anywhere in a line gives NaN; an empty line gives NaN, as in NumPy.
    """
    no_out({"out": out}, "median")
    x = lazy(a)
    work, axes = _ureduce(x, axis)
    n = work.shape[-1]
    s = sort(work, axis=-1)
    half = n // 2
    middle = take(s, slice(half, half + 1) if n % 2 else slice(half - 1, half + 1), -1)
    if n == 0:
        middle = take(s, slice(0, 0), -1)
    r = mean(middle, axis=-1)
    if x.dtype.kind in "fcmM" and n > 0:
        r = _nan_last(s, r, 0)
    return _keepdims(r, x, axes, 0) if keepdims else r


# -- NaN-ignoring quantiles ---------------------------------------------------------------


def _nan_quantile_lines(
    s: LazyArray, count: LazyArray, q: np.ndarray, method: str, weak: bool
) -> LazyArray:
    """Quantiles of the first ``count`` values of each sorted line; shape ``rest + (q.size,)``."""
    qf = q.reshape(-1)
    n = count.reshape((*count.shape, 1))
    vdt = np.asanyarray(virtual_index(method, 1, qf)).dtype
    vi = virtual_index(method, n, lazy(qf))
    safe_last = np.maximum(n - 1, 0)
    if method in _DISCRETE:
        idx = np.minimum(np.maximum(vi, 0), safe_last).astype(np.intp)
        return wrap(ix.take_along_axis(s._expr, idx._expr, s.ndim - 1))
    vi = vi.astype(vdt)
    prev = np.floor(vi)
    above = vi >= n - 1
    below = vi < 0
    prev = where(above, -1, where(below, 0, prev))
    nxt = where(above | below, prev, prev + 1)
    gamma = _fix_gamma(method, vi - prev, vi)
    gamma = gamma.astype(s.dtype if weak else vdt)

    def at(i: LazyArray) -> LazyArray:
        pos = where(i < 0, n + i, i)
        pos = np.minimum(np.maximum(pos, 0), safe_last).astype(np.intp)
        return wrap(ix.take_along_axis(s._expr, pos._expr, s.ndim - 1))

    a, b = at(prev), at(nxt)
    diff = b - a
    low = a + diff * gamma
    high = (b - diff * (1 - gamma)).astype(low.dtype)
    return where(gamma >= 0.5, high, low)


def _nanquantile(
    name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool, weights: Any, percent: bool
) -> LazyArray:
    x = lazy(a)
    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    qa, weak = _q_array(q, percent)
    if weights is not None:
        raise NotImplementedError(f"lazyarr.{name} does not support weights=")
    if x.size == 0:
        return nanmean(x, axis, keepdims=keepdims)
    if x.dtype.kind != "f":
        return _quantile(
            name, x, qa if not weak else qa[()].item(), axis, method, keepdims, None, False
        )
    _check_method(method)
    work, axes = _ureduce(x, axis)
    s = sort(work, axis=-1)
    count = sum_(~np.isnan(work), axis=-1, dtype=np.intp)
    r = _nan_quantile_lines(s, count, qa, method, weak)
    empty = (count == 0).reshape((*count.shape, 1))
    r = where(empty, np.nan, r).astype(r.dtype)
    r = r.reshape(r.shape[:-1] + qa.shape)
    r = moveaxis(r, list(range(-qa.ndim, 0)), list(range(qa.ndim))) if qa.ndim else r
    return _keepdims(r, x, axes, qa.ndim) if keepdims else r


@implements("nanquantile")
def nanquantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> LazyArray:
    """:func:`quantile` ignoring NaNs; all-NaN lines give NaN (NumPy also warns).

    An empty ``a`` gives ``nanmean(a, axis)``, as in NumPy.
    """
    no_out({"out": out}, "nanquantile")
    return _nanquantile("nanquantile", a, q, axis, method, keepdims, weights, False)


@implements("nanpercentile")
def nanpercentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> LazyArray:
    """:func:`percentile` ignoring NaNs; see :func:`nanquantile`."""
    no_out({"out": out}, "nanpercentile")
    return _nanquantile("nanpercentile", a, q, axis, method, keepdims, weights, True)


@implements("nanmedian")
def nanmedian(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> LazyArray:
    """The median ignoring NaNs; all-NaN lines give NaN (NumPy also warns)."""
    no_out({"out": out}, "nanmedian")
    x = lazy(a)
    if x.size == 0:
        return nanmean(x, axis, keepdims=keepdims)
    if x.dtype.kind not in "fc":
        return median(x, axis, keepdims=keepdims)
    work, axes = _ureduce(x, axis)
    s = sort(work, axis=-1)
    count = sum_(~np.isnan(work), axis=-1, dtype=np.intp, keepdims=True)
    lo = np.maximum((count - 1) // 2, 0)
    hi = np.maximum(count // 2, lo)
    pos = concat([lo, hi], -1)
    pair = wrap(ix.take_along_axis(s._expr, pos._expr, s.ndim - 1))
    r = mean(pair, axis=-1)
    r = where(count[..., 0] == 0, np.nan, r).astype(r.dtype)
    return _keepdims(r, x, axes, 0) if keepdims else r
