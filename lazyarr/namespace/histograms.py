"""Binning: ``digitize``, ``bincount``, ``histogram``, composed from existing lazy ops.

``digitize`` is a lazy ``searchsorted``; ``bincount`` and ``histogram``
find each value's bin the same way and add the bins up with a reduction
(:func:`count_bins`).

Where NumPy's result *shape* depends on the values, the result is deferred
(``bincount`` needs ``max(x)``) or those values are computed when the
function is called (``histogram`` with ``bins='auto'`` needs the data); each
docstring says so. ``histogram`` with an integer ``bins`` computes nothing:
its edges are a lazy ``linspace`` between lazy ``min``/``max``.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr._convert import chunk_limit
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops.elementwise import register_elementwise
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, raise_where
from lazyarr.namespace.compute import compute
from lazyarr.namespace.creation import arange, asarray, full, zeros
from lazyarr.namespace.deferred import Deferred
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.reductions import any as any_
from lazyarr.namespace.reductions import max as amax
from lazyarr.namespace.reductions import min as amin
from lazyarr.namespace.reductions import sum as sum_
from lazyarr.namespace.searching import searchsorted
from lazyarr.namespace.sorting import argsort, sort
from lazyarr.namespace.statistics import cumsum, diff

__all__ = ["bincount", "digitize", "histogram", "histogram_bin_edges"]


# Up to this many bins, counts are a one-hot comparison summed over the data
# (parallel over blocks); above it, a sort and ``searchsorted`` (one block).
ONE_HOT_MAX_BINS = 256

# NumPy's names for automatic bin widths (``np.histogram_bin_edges``)
BIN_ESTIMATORS = ("auto", "doane", "fd", "rice", "scott", "sqrt", "stone", "sturges")


# -- binning ---------------------------------------------------------------------------------


def _monotonicity(bins: np.ndarray) -> int:
    """NumPy's ``digitize`` rule: 1 increasing, -1 decreasing, 0 neither."""
    if bins.ndim != 1:
        raise ValueError(
            "object too deep for desired array"
            if bins.ndim > 1
            else "object of too small depth for desired array"
        )
    a = bins.astype(np.float64) if bins.dtype.kind != "c" else bins
    if a.size == 0:
        return 1
    moved = np.flatnonzero(a[1:] != a[0])
    if moved.size == 0:
        return 1
    i = int(moved[0]) + 1
    rest = a[i:]
    if a[0] < a[i]:
        return 0 if np.any(rest[:-1] > rest[1:]) else 1
    return 0 if np.any(rest[:-1] < rest[1:]) else -1


@implements("digitize")
def digitize(x: Any, bins: Any, right: bool = False) -> LazyArray:
    """Indices of the bins each value of ``x`` falls in (lazy ``searchsorted``).

    ``bins`` are checked for monotonicity now (computed if lazy).
    """
    xe = lazy(x)
    if xe.dtype.kind == "c":
        raise TypeError("x may not be complex")
    b = np.asarray(computed(bins) if isinstance(bins, LazyArray) else bins)
    mono = _monotonicity(b)
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if mono == -1:
        return len(b) - searchsorted(b[::-1], xe, side=side)
    return searchsorted(b, xe, side=side)


def count_bins(
    idx: LazyArray, length: int, weights: LazyArray | None = None, dtype: Any = np.intp
) -> LazyArray:
    """Per-bin counts (or sums of ``weights``) of the 1-d ``idx``; values outside [0, length) drop.

    Small ``length``: a one-hot comparison summed over the data, block by
    block. Large: sort ``idx`` and ``searchsorted`` the bin starts (weights
    via a cumulative sum of the sorted weights, as NumPy's own histogram
    does for uneven bins).
    """
    dtype = np.dtype(dtype)
    if length == 0 or idx.size == 0:
        return full((length,), 0, dtype=dtype)
    acc = {"f": np.float64, "c": np.complex128}.get(dtype.kind, np.int64)
    w = None if weights is None else weights.astype(acc)
    if length <= ONE_HOT_MAX_BINS:
        rows = max(1, chunk_limit() // (8 * length))
        if max(idx.chunks[0]) > rows:
            idx = idx.rechunk(rows)
            w = None if w is None else w.rechunk(rows)
        hit = idx[:, None] == arange(length)[None, :]
        if w is None:
            counts = sum_(hit, axis=0, dtype=acc)
        else:
            counts = sum_(where(hit, w[:, None], 0), axis=0)
        return counts.astype(dtype) if counts.dtype != dtype else counts
    s = sort(idx)
    pos = searchsorted(s, arange(length + 1), side="left")
    if w is None:
        counts = diff(pos)
    else:
        order = argsort(idx)
        sw = wrap(ix.take_along_axis(w._expr, order._expr, 0))
        cw = concat([full((1,), 0, dtype=sw.dtype), cumsum(sw)], 0)
        at = wrap(ix.take_along_axis(cw._expr, pos._expr, 0))
        counts = diff(at)
    return counts.astype(dtype) if counts.dtype != dtype else counts


@implements("bincount")
def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> LazyArray:
    """Occurrences of each value in the non-negative int array ``x`` (or sums of ``weights``).

    The length is ``max(x.max() + 1, minlength)``: the result is deferred
    (:mod:`lazyarr.namespace.deferred`); ``x``'s minimum and maximum are
    computed first when it is computed or its shape is asked for (a negative
    value raises NumPy's ``ValueError`` then).
    """
    xe = lazy(x)
    if xe.ndim != 1:
        deep = "too deep" if xe.ndim > 1 else "of too small depth"
        raise ValueError(f"object {deep} for desired array")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if not np.can_cast(xe.dtype, np.intp, "safe"):
        raise TypeError(
            f"Cannot cast array data from {xe.dtype!r} to {np.dtype(np.intp)!r} according to "
            "the rule 'safe'"
        )
    w = None
    if weights is not None:
        w = lazy(weights)
        if w.shape != xe.shape:
            raise ValueError("The weights and list don't have the same length.")
        if not np.can_cast(w.dtype, np.float64, "same_kind"):
            raise TypeError(f"Cannot cast weights of dtype {w.dtype} to float64")
    ntype = np.intp if w is None else np.float64
    if not xe.size:
        return count_bins(xe.astype(np.intp), minlength, w, ntype)

    def build(values: Any) -> LazyArray:
        low, high = values
        if low < 0:
            raise ValueError("'list' argument must have no negative elements")
        return count_bins(xe.astype(np.intp), max(int(high) + 1, minlength), w, ntype)

    def stand_in(n: int) -> LazyArray:
        return zeros((n,), dtype=ntype)

    return Deferred.root((amin(xe), amax(xe)), build, stand_in, (None,))


def _finite_range(low: Any, high: Any) -> Any:
    """``low``; NumPy's ``ValueError`` when ``low`` or ``high`` (a block of each) is not finite."""
    low, high = np.asarray(low), np.asarray(high)
    if low.size and not (np.isfinite(low).all() and np.isfinite(high).all()):
        raise ValueError(f"autodetected range of [{low.flat[0]}, {high.flat[0]}] is not finite")
    return low


register_elementwise("histogram_finite_range", _finite_range)


def _lazy_edges(x: LazyArray, n: int) -> LazyArray:
    """``np.histogram_bin_edges(x, n)`` for non-empty real ``x``, lazily and bit for bit.

    NumPy's ``_get_outer_edges`` (min/max; equal ones widen by 0.5) and
    ``linspace(first, last, n + 1)`` step by step, in the same dtype: ints
    give float64, floats keep theirs. Non-finite min/max and edges that do
    not increase raise NumPy's ``ValueError`` when computed.
    """
    dt = np.dtype(np.float64) if x.dtype.kind in "iu" else x.dtype
    low, high = amin(x), amax(x)
    if x.dtype.kind == "f":
        low = wrap(elementwise("histogram_finite_range", low._expr, high._expr))
    same = low == high  # in x's dtype, as NumPy compares them
    first = where(same, low.astype(dt) - 0.5, low.astype(dt))
    last = where(same, high.astype(dt) + 0.5, high.astype(dt))
    # np.linspace(first, last, n + 1): y = arange * step + first, the last one set to last
    delta = last - first
    step = delta / n
    y = arange(0, n + 1, dtype=dt)
    y = where(step == 0, y / n * delta, y * step) + first
    edges = where(arange(n + 1) == n, last, y)
    too_many = any_(edges[:-1] >= edges[1:])
    message = f"Too many bins for data range. Cannot create {n} finite-sized bins."
    return raise_where(edges, too_many, ValueError, message)


def _bin_edges(
    x: LazyArray, bins: Any, range: Any, weights: Any
) -> tuple[np.ndarray | LazyArray, bool]:
    """NumPy's bin edges, and whether they are uniform.

    Lazy for an integer ``bins`` of real data without ``range``; a string
    ``bins`` computes ``x`` and a lazy array ``bins`` is computed.
    """
    if isinstance(bins, str):
        if bins not in BIN_ESTIMATORS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError(
                "Automated estimation of the number of bins is not supported for weighted data"
            )
        return np.histogram_bin_edges(computed(x), bins, range), True
    if np.ndim(bins) == 0 and not isinstance(bins, LazyArray):
        try:
            n = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None or x.size == 0:
            return np.histogram_bin_edges(np.empty(0, x.dtype), n, range), True
        if x.dtype.kind in "iuf":
            return _lazy_edges(x, n), True
        low, high = compute(amin(x), amax(x))  # complex: NumPy's own edges of min/max
        return np.histogram_bin_edges(np.array([low, high], dtype=x.dtype), n), True
    edges = np.asarray(computed(bins) if isinstance(bins, LazyArray) else bins)
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, False


def _ravel_weights(a: Any, weights: Any) -> tuple[LazyArray, LazyArray | None]:
    x = lazy(a)
    if x.dtype == np.bool_:
        warnings.warn(
            f"Converting input from {x.dtype} to {np.uint8} for compatibility.",
            RuntimeWarning,
            stacklevel=3,
        )
        x = x.astype(np.uint8)
    w = None
    if weights is not None:
        w = lazy(weights)
        if w.shape != x.shape:
            raise ValueError("weights should have the same shape as a.")
        w = w.reshape(-1)
    return x.reshape(-1), w


@implements("histogram_bin_edges")
def histogram_bin_edges(
    a: Any, bins: Any = 10, range: Any = None, weights: Any = None
) -> LazyArray:
    """The edges ``histogram`` would use (lazy for integer ``bins``; string bins compute ``a``)."""
    x, w = _ravel_weights(a, weights)
    return asarray(_bin_edges(x, bins, range, w)[0])


@implements("histogram")
def histogram(
    a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None
) -> tuple[LazyArray, LazyArray]:
    """``(counts, bin_edges)`` of ``a`` (flattened); the last bin includes its right edge.

    Both are lazy: each value's bin comes from ``searchsorted`` on the
    edges and a reduction adds them up. With an integer ``bins`` nothing is
    computed when called (without ``range`` the edges are a lazy
    ``linspace`` between ``a``'s lazy min and max; a non-finite one raises
    NumPy's ``ValueError`` when computed). A string ``bins`` ('auto', 'fd',
    ...) computes ``a`` now, and a lazy array ``bins`` is computed now.
    """
    x, w = _ravel_weights(a, weights)
    edges, uniform = _bin_edges(x, bins, range, w)
    nbins = len(edges) - 1
    if nbins < 1:
        raise ValueError("`bins` must have at least two edges")
    xc = x.astype(edges.dtype) if uniform and x.dtype != edges.dtype else x
    first, last = edges[0], edges[-1]
    keep = (xc >= first) & (xc <= last)
    idx = np.minimum(searchsorted(edges, xc, side="right") - 1, nbins - 1)
    idx = where(keep, idx, -1)
    ntype = np.dtype(np.intp) if w is None else w.dtype
    counts = count_bins(idx, nbins, w, ntype)
    if density:
        db = diff(lazy(edges)).astype(np.float64)
        counts = counts / db / sum_(counts)
    return counts, asarray(edges)
