"""dask's ``x.blocks[index]``: an array made of chosen blocks, each kept whole as a block.

The index counts blocks, not elements: integers (the axis stays, one block
long), slices of blocks (any step), lists or 1-d integer arrays of block
numbers. Each axis becomes one slice of ``x`` where the chosen blocks are
contiguous and ascending, else the blocks joined in the order asked; the
result's chunks are the chosen blocks' lengths.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.indexing import getitem
from lazyarr.graph.ops.manipulation import concat
from lazyarr.graph.ops.rechunk import rechunk

__all__ = ["select_blocks"]


def _block_numbers(item: Any, n: int, axis: int) -> list[int]:
    """The block numbers ``item`` picks among ``n`` blocks (NumPy's errors, counted in blocks)."""
    if isinstance(item, slice):
        return list(range(n))[item]
    if isinstance(item, (list, np.ndarray)):
        arr = np.asarray(item)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise IndexError("blocks: only 1-d integer arrays of block numbers are supported")
        picks = [int(i) for i in arr]
    else:
        try:
            picks = [operator.index(item)]
        except TypeError:
            raise IndexError(
                f"blocks: only integers, slices, ellipsis and 1-d integer arrays are valid "
                f"block indices, not {type(item).__name__}"
            ) from None
    for i in picks:
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return [i % n for i in picks]


def _expand(index: Any, ndim: int) -> tuple[Any, ...]:
    items = index if isinstance(index, tuple) else (index,)
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is None for i in items):
        raise IndexError("blocks: np.newaxis (None) is not supported")
    named = [i for i in items if i is not Ellipsis]
    if len(named) > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {len(named)} were "
            "indexed"
        )
    at = items.index(Ellipsis) if Ellipsis in items else len(items)
    fill = (slice(None),) * (ndim - len(named))
    return (*items[:at], *fill, *[i for i in items[at:] if i is not Ellipsis])


def _runs(picks: list[int]) -> list[tuple[int, int]]:
    """Consecutive ascending block numbers grouped as ``(first, last + 1)``."""
    runs: list[tuple[int, int]] = []
    for b in picks:
        if runs and runs[-1][1] == b:
            runs[-1] = (runs[-1][0], b + 1)
        else:
            runs.append((b, b + 1))
    return runs


def select_blocks(x: Expr, index: Any) -> Expr:
    """The blocks of ``x`` that ``index`` picks (per axis, counted in blocks), as one array."""
    chunks = x.chunks
    picks = [
        _block_numbers(i, len(c), ax)
        for ax, (i, c) in enumerate(zip(_expand(index, x.ndim), chunks))
    ]
    wanted = tuple(tuple(c[b] for b in p) or (0,) for c, p in zip(chunks, picks))
    for axis, (blocks, p) in enumerate(zip(chunks, picks)):
        o = offsets(blocks)  # element positions along an axis survive slicing the others
        pre = (slice(None),) * axis
        parts = [getitem(x, (*pre, slice(o[a], o[b]))) for a, b in _runs(p)]
        if not parts:
            x = getitem(x, (*pre, slice(0, 0)))
        elif len(parts) == 1:
            x = parts[0]
        else:
            x = concat(parts, axis=axis)
    # slicing and joining may merge or drop empty blocks: the chosen blocks are the chunks
    return x if x.chunks == wanted else rechunk(x, wanted)
