"""Searching: ``searchsorted`` (lazy) and ``nonzero``/``argwhere``/``flatnonzero``.

``nonzero``, ``argwhere`` and ``flatnonzero`` have result shapes that
depend on the data, so they compute their input *when called* and return
lazy arrays over the computed NumPy results. ``argmax``, ``argmin`` and
``count_nonzero`` live with the reductions; ``where`` with one argument
comes here through ``lazyarr.where``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops import sorting as _sorting
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import asarray

__all__ = ["argwhere", "flatnonzero", "nonzero", "searchsorted"]


def computed(x: Any) -> np.ndarray:
    """The values of ``x`` as a NumPy array (a lazy array is computed now)."""
    if isinstance(x, LazyArray):
        return x.compute()
    return np.asarray(x)


@implements("nonzero")
def nonzero(x: Any, /) -> tuple[LazyArray, ...]:
    """Indices of the non-zero elements, one array per axis.

    Computes ``x`` when called (the result length depends on the data) and
    returns lazy arrays over the computed indices.
    """
    if as_expr(x).ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
            "instead."
        )
    return tuple(asarray(i) for i in np.nonzero(computed(x)))


@implements("argwhere")
def argwhere(a: Any, /) -> LazyArray:
    """Indices of the non-zero elements, one row per element (shape ``(N, a.ndim)``).

    Computes ``a`` when called (the result shape depends on the data).
    """
    as_expr(a)
    return asarray(np.argwhere(computed(a)))


@implements("flatnonzero")
def flatnonzero(a: Any, /) -> LazyArray:
    """Indices of the non-zero elements of the flattened array.

    Computes ``a`` when called (the result length depends on the data).
    """
    as_expr(a)
    return asarray(np.flatnonzero(computed(a)))


@implements("searchsorted")
def searchsorted(x1: Any, x2: Any, /, side: str = "left", sorter: Any = None) -> LazyArray:
    """Where the elements of ``x2`` would go in the sorted 1-d ``x1`` (lazy).

    Blocks follow ``x2``; each reads all of ``x1`` (and ``sorter``).
    """
    s = None if sorter is None else as_expr(sorter)
    return wrap(_sorting.searchsorted(as_expr(x1), as_expr(x2), side, s))
