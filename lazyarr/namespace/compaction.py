"""Selections whose length is a count: ``x[mask]``, ``compress``, ``extract``, ``nonzero``.

Each output block is the selected rows of one input block, so the result
keeps its input's blocks (one output block per input block, as long as
the count of true values in its mask block) and nothing moves between
blocks. Those counts are what the result needs before it can be planned
(:mod:`lazyarr.namespace.deferred`): one small compute over the mask, then
the selection is planned with exact chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, serve
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace.creation import arange, zeros
from lazyarr.namespace.deferred import Deferred, deferring
from lazyarr.namespace.elementwise import where as where_
from lazyarr.namespace.index_arithmetic import unravel_index
from lazyarr.namespace.manipulation import moveaxis, stack
from lazyarr.namespace.reductions import argmax
from lazyarr.namespace.userfuncs import map_blocks

__all__ = [
    "argwhere_of",
    "boolean_index",
    "compress_along",
    "flatnonzero_of",
    "nonzero_of",
    "select_rows",
    "select_rows_together",
]

Check = tuple[LazyArray, Callable[[Any], None]]


def count_true(mask: np.ndarray) -> np.ndarray:
    """How many of a mask block's values are true (one element)."""
    return np.array([np.count_nonzero(mask)], dtype=np.intp)


def kept_rows(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The rows of block ``x`` where its mask block (rows, 1, 1, ...) is true."""
    return x[mask.reshape(-1)]


def _unsplit_length_1(x: LazyArray) -> LazyArray:
    """``x`` with each axis of length 1 in one block: ``map_blocks`` reads such an axis
    as broadcast (one block), so its empty blocks would not line up."""
    if all(n != 1 or len(c) == 1 for n, c in zip(x.shape, x.chunks)):
        return x
    return x.rechunk(tuple((1,) if n == 1 else c for n, c in zip(x.shape, x.chunks)))


def _counts(mask: LazyArray) -> LazyArray:
    """The count of true values in each block of the 1-d ``mask`` (one element each)."""
    return map_blocks(count_true, mask, chunks=((1,) * len(mask.chunks[0]),), dtype=np.intp)


def select_rows(
    x: LazyArray, mask: LazyArray, check: Check | None = None, counts: LazyArray | None = None
) -> Deferred:
    """``x[mask]`` for a 1-d boolean ``mask`` as long as ``x``'s first axis.

    ``check``: another array computed with the counts and a function of its value
    that raises where the selection is not allowed (NumPy's error, at compute).
    ``counts``: the mask's counts per block when several selections share them.
    """
    x = _unsplit_length_1(x)
    rest = x.shape[1:]
    if mask.chunks[0] != x.chunks[0]:
        mask = mask.rechunk((x.chunks[0],))
    counts = _counts(mask) if counts is None else counts
    rows = mask.reshape((mask.shape[0],) + (1,) * len(rest)) if rest else mask

    def build(values: Any) -> LazyArray:
        if check is not None:
            check[1](values[1])
        chunks = (tuple(int(c) for c in values[0]), *x.chunks[1:])
        return map_blocks(kept_rows, x, rows, chunks=chunks, dtype=x.dtype)

    def stand_in(n: int) -> LazyArray:
        return zeros((n, *rest), dtype=x.dtype)

    def preview() -> LazyArray:  # every row selected: the plan at its largest
        return map_blocks(kept_rows, x, rows, chunks=x.chunks, dtype=x.dtype)

    needs = (counts,) if check is None else (counts, check[0])
    return Deferred.root(needs, build, stand_in, (None, *rest), preview)


def select_rows_together(xs: Sequence[LazyArray], mask: LazyArray) -> list[Deferred]:
    """``[x[mask] for x in xs]`` for 1-d arrays with the same chunks as long as ``mask``.

    One count serves them all: the results are siblings (:meth:`Deferred.siblings`),
    so computing or asking the length of one plans every one of them.
    """
    if any(x.ndim != 1 or x.chunks != xs[0].chunks for x in xs):
        raise ValueError("select_rows_together: 1-d arrays with the same chunks are needed")
    xs = [_unsplit_length_1(x) for x in xs]
    if mask.chunks != xs[0].chunks:
        mask = mask.rechunk(xs[0].chunks)
    counts = _counts(mask)  # one need for all: resolving computes it once
    out = [select_rows(x, mask, counts=counts) for x in xs]
    Deferred.siblings(out)
    return out


def boolean_index(x: LazyArray, mask: LazyArray) -> Deferred:
    """``x[mask]`` for a lazy boolean ``mask`` over ``x``'s leading axes (NumPy's rules)."""
    k = mask.ndim
    if k > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {k} were indexed"
        )
    for ax in range(k):  # NumPy: a mask axis of length 0 matches any length
        if mask.shape[ax] not in (x.shape[ax], 0):
            raise IndexError(
                f"boolean index did not match indexed array along axis {ax}; size of axis is "
                f"{x.shape[ax]} but size of corresponding boolean axis is {mask.shape[ax]}"
            )
    rest = x.shape[k:]
    if k and mask.shape != x.shape[:k]:  # an empty mask of another shape selects nothing
        rows = x.reshape((math.prod(x.shape[:k]), *rest))[:0]
        return select_rows(rows, mask.reshape((0,)))
    if k == 1:
        return select_rows(x, mask)
    if k == 0:  # x[True] has one row (x itself), x[False] none
        return select_rows(x.reshape((1, *rest)), mask.reshape((1,)))
    return select_rows(x.reshape((-1, *rest)), mask.reshape((-1,)))


serve("index")(boolean_index)


def flatnonzero_of(a: LazyArray) -> Deferred:
    """Positions of the non-zero values of ``a`` flattened."""
    flat = a.reshape((-1,))
    positions = arange(flat.size, chunks=flat.chunks)
    return select_rows(positions, flat != 0)


def nonzero_of(a: LazyArray) -> tuple[LazyArray, ...]:
    """One index array per axis of ``a``'s non-zero values, in C order."""
    if a.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
            "instead."
        )
    flat = flatnonzero_of(a)
    if a.ndim == 1:
        return (flat,)
    return tuple(deferring(unravel_index)(flat, a.shape))


def argwhere_of(a: LazyArray) -> LazyArray:
    """``(N, a.ndim)`` indices of ``a``'s non-zero values (NumPy's ``argwhere``)."""
    if a.ndim == 0:  # NumPy: (1, 0) or (0, 0), as for a.reshape(1)
        return boolean_index(zeros((1, 0), dtype=np.intp), (a != 0).reshape((1,)))
    return deferring(stack)(list(nonzero_of(a)), axis=1)


def compress_along(condition: LazyArray, a: LazyArray, axis: int | None) -> LazyArray:
    """``np.compress``: slices of ``a`` along ``axis`` where the 1-d ``condition`` is true.

    A condition shorter than the axis selects among its first elements; a longer one
    may only be false beyond the axis (NumPy's ``IndexError`` otherwise, raised when
    the counts are computed).
    """
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    cond = condition.astype(bool) if condition.dtype != np.bool_ else condition
    if axis is None:
        a, axis = a.reshape((-1,)), 0
    axis = normalize_axis(axis, a.ndim, "compress")
    n = a.shape[axis]
    moved = moveaxis(a, axis, 0) if axis else a
    check = None
    if cond.shape[0] < n:
        moved = moved[: cond.shape[0]]
    elif cond.shape[0] > n:
        tail = cond[n:]

        def beyond(first: Any) -> None:
            if first >= 0:
                raise IndexError(
                    f"index {n + int(first)} is out of bounds for axis {axis} with size {n}"
                )

        # the first true position past the axis, or -1
        check = (where_(tail.any(), argmax(tail), -1), beyond)
    picked = select_rows(moved, cond[:n], check)
    return deferring(moveaxis)(picked, 0, axis) if axis else picked
