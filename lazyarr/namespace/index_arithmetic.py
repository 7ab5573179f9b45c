"""``unravel_index`` and ``ravel_multi_index``: integer arithmetic on lazy index arrays.

Out-of-range indices raise when the result is computed (``raise_where``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import raise_where
from lazyarr.namespace.creation import asarray

__all__ = ["ravel_multi_index", "unravel_index"]


def _dims(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(d) for d in shape)


def _strides(dims: tuple[int, ...], order: str) -> list[int]:
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    sizes = list(dims) if order == "C" else list(dims[::-1])
    strides = [int(np.prod(sizes[k + 1 :], dtype=np.int64)) for k in range(len(sizes))]
    return strides if order == "C" else strides[::-1]


@implements("unravel_index")
def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[LazyArray, ...]:
    """Coordinate arrays for flat ``indices`` into an array of ``shape``.

    An index out of bounds raises ``ValueError`` when the result is computed.
    """
    ie = lazy(indices)
    if ie.dtype.kind not in "iub":
        raise TypeError("only int indices permitted")
    dims = _dims(shape)
    if any(d < 0 for d in dims):
        raise ValueError("dimensions must be non-negative")
    strides = _strides(dims, order)
    size = int(np.prod(dims, dtype=np.int64))
    idx = ie.astype(np.intp)
    idx = raise_where(
        idx,
        (idx < 0) | (idx >= size),
        ValueError,
        f"index out of bounds for array with size {size}",
    )
    return tuple((idx // max(s, 1)) % max(d, 1) for s, d in zip(strides, dims))


@implements("ravel_multi_index")
def ravel_multi_index(
    multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C"
) -> LazyArray:
    """Flat indices of the coordinate arrays ``multi_index`` into an array of ``dims``.

    With ``mode='raise'`` an out-of-range coordinate raises ``ValueError``
    when the result is computed.
    """
    dims = _dims(dims)
    coords = [lazy(i) for i in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    for c in coords:
        if c.dtype.kind not in "iu":
            raise TypeError("only int indices permitted")
    modes = tuple(mode) if isinstance(mode, (tuple, list)) else (mode,) * len(dims)
    for md in modes:
        if md not in ("raise", "wrap", "clip"):
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {md!r})")
    strides = _strides(dims, order)
    np.broadcast_shapes(*(c.shape for c in coords))
    total: Any = None
    bad: Any = None
    for c, d, s, md in zip(coords, dims, strides, modes):
        i = c.astype(np.intp)
        if md == "wrap":
            i = i % max(d, 1)
        elif md == "clip":
            i = np.clip(i, 0, max(d - 1, 0))
        else:
            out = (i < 0) | (i >= d)
            bad = out if bad is None else bad | out
        total = i * s if total is None else total + i * s
    if total is None:
        return asarray(np.intp(0))
    if bad is not None:
        total = raise_where(total, bad, ValueError, "invalid entry in coordinates array")
    return total
