"""Set functions: ``unique_*`` (Array API), ``unique`` (NumPy) and ``isin``.

The ``unique`` family is lazy: writing it computes nothing. Its results
whose lengths depend on the data (the values, their first indices and
counts) are deferred arrays (:mod:`lazyarr.namespace.deferred`), all
counted by one count: the flattened input is sorted by the sample sort
(which keeps its blocks; where the indices or the inverse are asked for,
one sample sort gives both the values and the stable argsort), ``keep``
marks each sorted element that differs from the one before it, and every
deferred result keeps the rows of a sorted array where ``keep`` is true,
block by block. The inverse has the input's shape, so it is an ordinary
lazy array: the ranks ``cumsum(keep) - 1`` put back in input order by one
more sort. The results are NumPy's (values sorted; NaNs all kept by the
``unique_*`` functions, one kept by ``unique``'s default
``equal_nan=True``), in the same named tuples. ``unique`` with ``axis``,
and dtypes other than booleans and numbers, compute their input when
called (complex values are lazy, sorted in one block). ``isin`` is lazy:
blocks follow ``element``; test elements larger than a block are tested
block by block (see :func:`isin`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr._convert import as_expr, chunk_limit
from lazyarr.graph.ops import sorting as _sorting
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements
from lazyarr.namespace.compaction import select_rows_together
from lazyarr.namespace.composing import computed
from lazyarr.namespace.creation import arange, asarray, ones, zeros
from lazyarr.namespace.deferred import deferring
from lazyarr.namespace.indexing import take_along_axis
from lazyarr.namespace.manipulation import concat
from lazyarr.namespace.searching import against_each_block
from lazyarr.namespace.sorting import argsort, sort
from lazyarr.namespace.statistics import cumsum, diff

__all__ = ["isin", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values"]

_LAZY_KINDS = "biufc"
"""Dtype kinds the lazy path serves (booleans, integers, real and complex floats)."""

_EMPTY = np.zeros(0)
_UniqueAll = type(np.unique_all(_EMPTY))
_UniqueCounts = type(np.unique_counts(_EMPTY))
_UniqueInverse = type(np.unique_inverse(_EMPTY))
"""NumPy's named tuples (public by use only: their module is private)."""

_KEYED_MAX = 3_037_000_499
"""The largest ``n`` with ``n * n`` within int64: up to it the inverse is sorted by one key."""


class _Unique(NamedTuple):
    """The parts of a ``unique`` call, each None where it was not asked for."""

    values: LazyArray
    indices: LazyArray | None
    inverse: LazyArray | None
    counts: LazyArray | None


def _keep(s: LazyArray, equal_nan: bool) -> LazyArray:
    """Where the sorted 1-d ``s`` starts a new value: true at 0 and where it differs from
    the element before (NaN differs from NaN unless ``equal_nan``, as in NumPy)."""
    keep = ones((1,), dtype=bool)
    if s.shape[0] > 1:
        keep = concat([keep, s[1:] != s[:-1]])
        if equal_nan and s.dtype.kind in "fc":  # NaNs sort last: keep the first one
            nan = s != s  # complex: NaN in either part, as NumPy's isnan
            after_nan = concat([zeros((1,), dtype=bool), nan[:-1]])
            keep = keep & ~(nan & after_nan)
    return keep.rechunk(s.chunks) if keep.chunks != s.chunks else keep


def _inverse(perm: LazyArray, keep: LazyArray, shape: tuple[int, ...]) -> LazyArray:
    """The rank of each input element's value (``cumsum(keep) - 1`` in sorted order, put
    back in input order by the stable sorting indices ``perm``), in ``shape``.

    The scatter ``inverse[perm] = rank`` is a sort of the keys ``perm * n + rank`` (all
    distinct, in input order once sorted): a sample sort that keeps the blocks, where a
    gather would make every block read all the ranks.
    """
    n = perm.shape[0]
    rank = cumsum(keep, dtype=np.intp) - 1
    if n <= _KEYED_MAX:
        keys = sort(perm * n + rank)
        inverse = keys - arange(n, dtype=np.intp, chunks=keys.chunks) * n
    else:  # keys would overflow: gather the ranks at the inverse permutation
        inverse = take_along_axis(rank, argsort(perm), axis=0)
    return inverse.reshape(shape)


def _unique(
    x: Any, *, index: bool = False, inverse: bool = False, counts: bool = False, equal_nan: bool
) -> _Unique:
    """The sorted unique values of ``x`` flattened, and the parts asked for (lazy).

    ``index``: the first occurrence of each value (the stable argsort, as NumPy's
    ``return_index``); ``inverse``: ``x``'s shape; ``counts``: the size of each group.
    """
    a = lazy(x)
    flat = a.reshape((-1,)) if a.ndim != 1 else a
    n = flat.shape[0]
    intp = np.dtype(np.intp)
    if n == 0:  # nothing to count: empty results of known shapes
        empty = zeros((0,), dtype=intp)
        return _Unique(
            flat,
            empty if index else None,
            zeros(a.shape, dtype=intp) if inverse else None,
            empty if counts else None,
        )
    perm = None
    if index or inverse:  # one sample sort gives both (same chunks)
        sorted_e, perm_e = _sorting.sort_and_argsort(flat._expr, 0)
        s, perm = wrap(sorted_e), wrap(perm_e)
    else:
        s = sort(flat)
    keep = _keep(s, equal_nan)
    kept = [s]
    if index:
        kept.append(perm)
    if counts:
        kept.append(arange(n, dtype=intp, chunks=s.chunks))
    got = select_rows_together(kept, keep)
    return _Unique(
        got[0],
        got[1] if index else None,
        _inverse(perm, keep, a.shape) if inverse else None,
        deferring(diff)(got[-1], append=n) if counts else None,
    )


def _eager(a: LazyArray) -> bool:
    """Whether ``a`` is computed by NumPy's ``unique`` instead (a dtype without a lazy path)."""
    return a.dtype.kind not in _LAZY_KINDS


def _lazy_tuple(result: Any) -> Any:
    """NumPy's (named) tuple of results with each array made lazy."""
    items = [asarray(r) for r in result]
    return type(result)(*items) if hasattr(result, "_fields") else tuple(items)


@implements("unique_values")
def unique_values(x: Any, /) -> LazyArray:
    """The sorted unique values of ``x`` flattened (every NaN kept: NaN != NaN).

    Lazy: a deferred array, counted when computed or when its length is asked for.
    """
    x = lazy(x)
    if _eager(x):
        return asarray(np.sort(np.unique_values(computed(x))))
    return _unique(x, equal_nan=False).values


@implements("unique_counts")
def unique_counts(x: Any, /) -> Any:
    """``(values, counts)`` of the unique values of ``x`` (NumPy's named tuple; lazy)."""
    x = lazy(x)
    if _eager(x):
        return _lazy_tuple(np.unique_counts(computed(x)))
    u = _unique(x, counts=True, equal_nan=False)
    return _UniqueCounts(u.values, u.counts)


@implements("unique_inverse")
def unique_inverse(x: Any, /) -> Any:
    """``(values, inverse_indices)``: ``values[inverse_indices]`` rebuilds ``x`` (lazy;
    the inverse has ``x``'s shape)."""
    x = lazy(x)
    if _eager(x):
        return _lazy_tuple(np.unique_inverse(computed(x)))
    u = _unique(x, inverse=True, equal_nan=False)
    return _UniqueInverse(u.values, u.inverse)


@implements("unique_all")
def unique_all(x: Any, /) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique values of ``x`` (lazy;
    ``indices``: first occurrences in ``x`` flattened)."""
    x = lazy(x)
    if _eager(x):
        return _lazy_tuple(np.unique_all(computed(x)))
    u = _unique(x, index=True, inverse=True, counts=True, equal_nan=False)
    return _UniqueAll(u.values, u.indices, u.inverse, u.counts)


@implements("unique")
def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    **kwargs: Any,
) -> Any:
    """NumPy's ``unique`` with its ``return_*`` flags, ``axis``, ``equal_nan`` and ``sorted``.

    Lazy for ``axis=None`` (the values always sorted, which ``sorted=False`` allows);
    with ``axis`` it computes ``ar`` when called and returns lazy arrays over NumPy's
    results.
    """
    e = as_expr(ar)
    unknown = set(kwargs) - {"equal_nan", "sorted"}
    if unknown:
        raise TypeError(f"unique() got unexpected keyword arguments {sorted(unknown)}")
    if axis is None and e.dtype.kind in _LAZY_KINDS:
        u = _unique(
            wrap(e),
            index=bool(return_index),
            inverse=bool(return_inverse),
            counts=bool(return_counts),
            equal_nan=bool(kwargs.get("equal_nan", True)),
        )
        parts = [p for p in u if p is not None]
        return parts[0] if len(parts) == 1 else tuple(parts)
    if axis is not None:
        normalize_axis(axis, e.ndim, "unique")
    result = np.unique(
        computed(ar),
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
        **kwargs,
    )
    return _lazy_tuple(result) if isinstance(result, tuple) else asarray(result)


@implements("isin")
def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: str | None = None,
) -> LazyArray:
    """Whether each element of ``element`` is in ``test_elements`` (lazy, shape of ``element``).

    Blocks follow ``element``. Each reads all of ``test_elements`` while that fits in
    a block (``array.chunk-size``); a larger one in several blocks is tested block
    by block: per block of the test elements whether each element is among them,
    then an ``any`` over those blocks, so no task holds more than one of them.
    """
    e, t = as_expr(element), as_expr(test_elements)
    whole = wrap(_sorting.isin(e, t, assume_unique, invert, kind))  # NumPy's checks
    if t.nbytes <= chunk_limit() or t.size < 2:
        return whole
    flat = wrap(t).reshape((-1,))
    if len(flat.chunks[0]) < 2:
        return whole
    per_block = against_each_block(
        in_block, wrap(e), flat, np.bool_, assume_unique=bool(assume_unique), kind=kind
    )
    found = per_block.any(axis=-1)
    return ~found if invert else found


def in_block(element: np.ndarray, test: np.ndarray, assume_unique: bool, kind: Any) -> np.ndarray:
    """Whether each of ``element`` is in one block of the test elements (one more axis)."""
    return np.isin(element, test, assume_unique=assume_unique, kind=kind)[..., None]
