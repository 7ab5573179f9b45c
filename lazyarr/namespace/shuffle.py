"""``la.shuffle``: reorder one axis so that given groups of positions share a block (dask's).

xarray's ``GroupBy.shuffle_to_chunks`` calls it (through the chunk manager)
so that each group, say every January of a daily series, lies in one block
and a groupby runs block by block. The groups of a real index are spread
over the whole axis, so every output block gathers pieces of many input
blocks: the movement is all-to-all. It is done in three steps, each with
blocks that fit: a rechunk to blocks that hold the whole axis (split along
the other axes instead), a take inside each of them, and a rechunk to the
packed groups. When the first rechunk would hold more than ``memory-limit``,
it runs through a scratch store like any all-to-all rechunk
(:mod:`lazyarr.staged_rechunk`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunks_for
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.rechunk import rechunk

__all__ = ["shuffle"]

CHUNK_TOLERANCE = 1.25
"""A block may grow to this many times the input's mean block length along the axis before
the next group starts a new one (dask's ``array.chunk-size-tolerance``)."""


def packed_chunks(sizes: Sequence[int], target: float) -> tuple[int, ...]:
    """Block lengths holding whole groups of ``sizes``, in order, about ``target`` long each
    (a group longer than that is a block of its own)."""
    out: list[int] = []
    current = 0
    for n in sizes:
        if current and current + n > target * CHUNK_TOLERANCE:
            out.append(current)
            current = 0
        current += n
    if current or not out:
        out.append(current)
    return tuple(out)


def shuffle(x: Any, indexer: Sequence[Sequence[int]], axis: int, chunks: Any = "auto") -> LazyArray:
    """``x`` reordered along ``axis`` by ``indexer``, a list of groups of positions; each
    group ends up in one block (several small groups may share one).

    ``chunks="auto"`` sizes the blocks of the other axes for the gathering step;
    explicit ``chunks`` give those blocks (the axis's own entry is ignored).
    """
    xe = as_expr(x)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, not {type(axis).__name__}")
    axis = normalize_axis(int(axis), xe.ndim, "shuffle")
    groups = [np.asarray(g, dtype=np.intp).reshape(-1) for g in indexer]
    n = xe.shape[axis]
    idx = np.concatenate(groups) if groups else np.empty(0, np.intp)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    idx = np.where(idx < 0, idx + n, idx)
    spec = list(chunks) if isinstance(chunks, (tuple, list)) else ["auto"] * xe.ndim
    spec[axis] = -1  # the gathering blocks hold the whole axis
    whole = chunks_for(tuple(spec), xe.shape, xe.dtype)
    gathered = wrap(rechunk(xe, whole)).take(idx, axis=axis)
    mean = np.mean(xe.chunks[axis]) if xe.chunks[axis] else 1
    target = packed_chunks([len(g) for g in groups], float(mean))
    out = list(xe.chunks)
    out[axis] = target if idx.size else (0,)
    return wrap(rechunk(gathered._expr, tuple(out)))
