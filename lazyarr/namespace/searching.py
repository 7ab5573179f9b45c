"""Searching: ``searchsorted`` and ``nonzero``/``argwhere``/``flatnonzero``, all lazy.

``nonzero``, ``argwhere`` and ``flatnonzero`` have lengths that depend on
the data: they are deferred arrays (:mod:`lazyarr.namespace.deferred`),
whose counts are computed before the rest is planned. ``argmax``, ``argmin`` and
``count_nonzero`` live with the reductions; ``where`` with one argument
comes here through ``lazyarr.where``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr._convert import as_expr, chunk_limit
from lazyarr.graph.ops import sorting as _sorting
from lazyarr.namespace._register import implements
from lazyarr.namespace.compaction import argwhere_of, flatnonzero_of, nonzero_of
from lazyarr.namespace.userfuncs import blockwise

__all__ = ["argwhere", "flatnonzero", "nonzero", "searchsorted"]


@implements("nonzero")
def nonzero(x: Any, /) -> tuple[LazyArray, ...]:
    """Indices of the non-zero elements, one array per axis (lazy).

    Their length is the count of non-zero values: it is computed (that count
    only) when the result is computed or its shape is asked for.
    """
    return nonzero_of(lazy(x))


@implements("argwhere")
def argwhere(a: Any, /) -> LazyArray:
    """Indices of the non-zero elements, one row per element (shape ``(N, a.ndim)``, lazy)."""
    return argwhere_of(lazy(a))


@implements("flatnonzero")
def flatnonzero(a: Any, /) -> LazyArray:
    """Indices of the non-zero elements of the flattened array (lazy)."""
    return flatnonzero_of(lazy(a))


@implements("searchsorted")
def searchsorted(x1: Any, x2: Any, /, side: str = "left", sorter: Any = None) -> LazyArray:
    """Where the elements of ``x2`` would go in the sorted 1-d ``x1`` (lazy).

    Blocks follow ``x2``. Each reads all of ``x1`` (and ``sorter``) while ``x1``
    fits in a block (``array.chunk-size``); a larger ``x1`` in several blocks is
    searched block by block: the position is the sum over its sorted blocks of
    the position within each, a reduction over ``x1``'s blocks, so no task holds
    more than one block of each.
    """
    s = None if sorter is None else as_expr(sorter)
    a, v = as_expr(x1), as_expr(x2)
    whole = wrap(_sorting.searchsorted(a, v, side, s))  # NumPy's checks and errors
    if s is not None or len(a.chunks[0]) < 2 or a.nbytes <= chunk_limit():
        return whole
    per_block = against_each_block(position_in_block, wrap(v), wrap(a), np.intp, side=side)
    return per_block.sum(axis=-1, dtype=np.intp)


def against_each_block(
    fn: Any, x: LazyArray, big: LazyArray, dtype: Any, **kwargs: Any
) -> LazyArray:
    """``fn(block of x, block of big, **kwargs)`` for every pair of blocks: ``x``'s shape
    and one more axis, one element per block of the 1-d ``big`` (a reduction over that
    axis finishes). No task holds more than one block of ``big``."""
    labels = "".join(chr(ord("a") + i) for i in range(x.ndim))
    return blockwise(
        fn, labels + "z", x, labels, big, "z", adjust_chunks={"z": 1}, dtype=dtype, **kwargs
    )


def position_in_block(v: np.ndarray, block: np.ndarray, side: str) -> np.ndarray:
    """How many of a sorted block's values go before each of ``v`` (one more, last axis)."""
    return np.searchsorted(block, v, side=side)[..., None]
