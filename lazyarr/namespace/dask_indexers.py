"""dask's two extra indexers on lazy arrays: ``x.vindex[...]`` (pointwise) and ``x.blocks[...]``.

``LazyArray.vindex``/``.blocks`` return these (registered into ``_array``,
which sits below this module); the expressions come from
``graph/ops/indexing.py`` (``vindex``) and ``graph/ops/blockselect.py``.
Lazy index arrays are computed first, as everywhere in lazyarr, except for
``vindex`` of a one-block array with one lazy integer array per axis (xarray's
``idxmax`` indexes a coordinate with a lazy ``argmax``): then each block of
the indices gathers from the whole array, and nothing is computed.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, _concrete_index, serve, wrap
from lazyarr.graph.ops.blockselect import select_blocks
from lazyarr.graph.ops.indexing import vindex
from lazyarr.namespace.userfuncs import blockwise

__all__ = ["BlockIndexer", "PointIndexer"]


class PointIndexer:
    """``x.vindex[i, j]``: integer arrays broadcast together, their dimensions first."""

    __slots__ = ("_array",)

    def __init__(self, array: LazyArray) -> None:
        self._array = array

    def __getitem__(self, index: Any) -> LazyArray:
        gathered = _lazy_gather(self._array, index)
        if gathered is not None:
            return gathered
        return wrap(vindex(self._array._expr, _concrete_index(index)))

    def __repr__(self) -> str:
        return f"<vindex of {self._array!r}>"


def _gather(x: np.ndarray, *indices: np.ndarray) -> np.ndarray:
    return x[indices]


def _lazy_gather(x: LazyArray, index: Any) -> LazyArray | None:
    """``x.vindex[index]`` without computing lazy indices, where ``x`` is one block and
    ``index`` one integer array (a lazy one among them) per axis; else None."""
    items = index if isinstance(index, tuple) else (index,)
    if x.npartitions != 1 or len(items) != x.ndim or x.ndim == 0:
        return None
    if not any(isinstance(i, LazyArray) for i in items):
        return None
    arrays = [i if isinstance(i, LazyArray) else np.asarray(i) for i in items]
    if any(a.dtype.kind not in "iu" or a.ndim == 0 for a in arrays):
        return None
    ndim = max(a.ndim for a in arrays)
    np.broadcast_shapes(*(a.shape for a in arrays))  # NumPy's error when written
    args: list[Any] = [x, None]
    for a in arrays:
        args += [a, tuple(range(ndim - a.ndim, ndim))]
    return blockwise(_gather, tuple(range(ndim)), *args, dtype=x.dtype)


class BlockIndexer:
    """``x.blocks[i, j]``: block ``(i, j)`` of ``x``; slices and lists pick several blocks."""

    __slots__ = ("_array",)

    def __init__(self, array: LazyArray) -> None:
        self._array = array

    def __getitem__(self, index: Any) -> LazyArray:
        return wrap(select_blocks(self._array._expr, _concrete_index(index)))

    @property
    def size(self) -> int:
        """The number of blocks (dask's ``x.blocks.size``)."""
        return self._array.npartitions

    @property
    def shape(self) -> tuple[int, ...]:
        """The number of blocks along each axis."""
        return self._array.numblocks

    def ravel(self) -> list[LazyArray]:
        """Every block as its own lazy array, in C order (dask's ``x.blocks.ravel()``)."""
        return [self[i] for i in itertools.product(*(range(n) for n in self.shape))]


serve("vindex")(PointIndexer)
serve("blocks")(BlockIndexer)
