"""dask's two extra indexers on lazy arrays: ``x.vindex[...]`` (pointwise) and ``x.blocks[...]``.

``LazyArray.vindex``/``.blocks`` return these (registered into ``_array``,
which sits below this module); the expressions come from
``graph/ops/indexing.py`` (``vindex``) and ``graph/ops/blockselect.py``.
"""

from __future__ import annotations

import itertools
from typing import Any

from lazyarr import _array
from lazyarr._array import LazyArray, _concrete_index, wrap
from lazyarr.graph.ops.blockselect import select_blocks
from lazyarr.graph.ops.indexing import vindex

__all__ = ["BlockIndexer", "PointIndexer"]


class PointIndexer:
    """``x.vindex[i, j]``: integer arrays broadcast together, their dimensions first."""

    __slots__ = ("_array",)

    def __init__(self, array: LazyArray) -> None:
        self._array = array

    def __getitem__(self, index: Any) -> LazyArray:
        return wrap(vindex(self._array._expr, _concrete_index(index)))

    def __repr__(self) -> str:
        return f"<vindex of {self._array!r}>"


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


_array._INDEXING["vindex"] = PointIndexer
_array._INDEXING["blocks"] = BlockIndexer
