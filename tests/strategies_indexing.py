"""Hypothesis strategies for indexing tests: arrays on uneven chunks and NumPy indices.

``chunked_arrays`` draws a NumPy array together with explicit (uneven)
chunks for it; ``basic_indices_for`` draws basic indices (ints, slices with
any step, ``None``, ``...``); ``one_array_indices_for`` mixes one integer
or boolean array into basic indices on the other axes.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["axis_chunks", "basic_indices_for", "chunked_arrays", "one_array_indices_for"]


@st.composite
def axis_chunks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    """A random partition of an axis of length ``n`` into blocks (``(0,)`` if empty)."""
    if n == 0:
        return (0,)
    cuts = draw(st.sets(st.integers(1, n - 1), max_size=min(n - 1, 4))) if n > 1 else set()
    bounds = [0, *sorted(cuts), n]
    return tuple(b - a for a, b in itertools.pairwise(bounds))


@st.composite
def chunked_arrays(
    draw: st.DrawFn, min_dims: int = 0, max_dims: int = 3, max_side: int = 7
) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """(array, chunks): distinct values so that a wrong element is always seen."""
    shape = draw(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)
    )
    size = int(np.prod(shape))
    a = np.arange(size, dtype=np.int64).reshape(shape) * 3 - 7
    return a, tuple(draw(axis_chunks(n)) for n in shape)


def basic_indices_for(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """Any basic index of ``shape`` (may include None and Ellipsis)."""
    return hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True)


def _slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(-3, 3).filter(bool)
    return st.builds(slice, bound, bound, step)


@st.composite
def one_array_indices_for(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple:
    """A tuple index with one integer array (any dims, negatives) or one boolean
    array (over one or more axes), ints/slices on the other axes, and maybe
    ``None`` entries and a zero-width ``...``."""
    ndim = len(shape)
    ax = draw(st.integers(0, ndim - 1))
    items: list[Any] = []
    for d, n in enumerate(shape):
        if d < ax:
            items.append(draw(_slices(n) | (st.integers(-n, n - 1) if n else _slices(n))))
    if draw(st.booleans()) or shape[ax] == 0:
        k = draw(st.integers(1, ndim - ax))
        items.append(draw(hnp.arrays(np.bool_, shape[ax : ax + k])))
        rest = range(ax + k, ndim)
    else:
        n = shape[ax]
        idx_shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4))
        items.append(draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(-n, n - 1))))
        rest = range(ax + 1, ndim)
    full = True
    for d in rest:
        if draw(st.booleans()):
            items.append(draw(_slices(shape[d])))
        else:
            full = False
            break
    if full and draw(st.booleans()):  # a zero-width ``...`` still separates advanced indices
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)
