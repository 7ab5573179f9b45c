"""NumPy kernels of the shape manipulation ops.

Each kernel gets the output box ``out`` (global slices) and the input
region(s) that the op's ``regions`` asked for. Common cases are plain
views (the region is exactly what the block needs); the general case, which
fused stages may ask for with arbitrary boxes, goes through index arrays.
"""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops._reshape import flat_index, reshape_groups
from lazyarr.graph.ops.blockreshape import BlockReshape
from lazyarr.graph.ops.manipulation import (
    BroadcastTo,
    Concat,
    Flip,
    Repeat,
    Reshape,
    Roll,
    Tile,
    Transpose,
    Tri,
)
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


def _empty(expr: Expr, out: Region) -> np.ndarray:
    return np.empty(_shape(out), dtype=expr.dtype)


@register(Transpose)
def transpose(op: Transpose, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return x.transpose(op.axes)


def _group_runs(
    groups: tuple, in_shape: tuple[int, ...], shape: tuple[int, ...], out: Region, region: Region
) -> tuple[list[int], tuple[slice, ...]] | None:
    """Per axis group, the region flattened and the slice of it the block needs.

    ``None`` unless the block covers one contiguous flat run in every group;
    the region of a group is then a contiguous run too (see ``flat_box``).
    """
    sizes, cuts = [], []
    for in_axes, out_axes in groups:
        out_lens = [shape[a] for a in out_axes]
        lo = flat_index([out[a].start for a in out_axes], out_lens)
        hi = flat_index([out[a].stop - 1 for a in out_axes], out_lens) + 1
        if hi - lo != int(np.prod([out[a].stop - out[a].start for a in out_axes])):
            return None
        in_lens = [in_shape[a] for a in in_axes]
        first = flat_index([region[a].start for a in in_axes], in_lens)
        sizes.append(int(np.prod([region[a].stop - region[a].start for a in in_axes])))
        cuts.append(slice(lo - first, hi - first))
    return sizes, tuple(cuts)


@register(Reshape)
def reshape(op: Reshape, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    shape = _shape(out)
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return _empty(expr, out)
    if x.size == size:
        # the region is exactly the elements of the block, in the same C order
        return x.reshape(shape)
    (inp,) = expr.inputs
    (region,) = op.regions(expr, out)
    groups = reshape_groups(inp.shape, expr.shape)
    runs = _group_runs(groups, inp.shape, expr.shape, out, region)
    if runs is not None:
        sizes, cuts = runs
        return x.reshape(sizes)[cuts].reshape(shape)
    start = [s.start for s in region]
    index: list[np.ndarray] = [np.zeros((1,) * len(shape), dtype=np.intp)] * inp.ndim
    for in_axes, out_axes in groups:
        flat = np.zeros((1,) * len(shape), dtype=np.int64)
        for a in out_axes:
            view = [1] * len(shape)
            view[a] = shape[a]
            coord = np.arange(out[a].start, out[a].stop, dtype=np.int64).reshape(view)
            flat = flat * expr.shape[a] + coord
        coords = np.unravel_index(flat, [inp.shape[a] for a in in_axes])
        for a, c in zip(in_axes, coords, strict=True):
            index[a] = c - start[a]
    return x[tuple(index)]


@register(BroadcastTo)
def broadcast_to(op: BroadcastTo, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, _shape(out))


@register(Flip)
def flip(op: Flip, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return np.flip(x, op.axes)


def _mod_take(x: np.ndarray, ax: int, out: slice, region: slice, n: int, shift: int) -> np.ndarray:
    """Output ``out`` along ``ax`` from ``x`` (input ``region``), index ``(i - shift) % n``."""
    length = out.stop - out.start
    src = (out.start - shift) % n if n else 0
    if length == 0 or (src == region.start and src + length <= region.stop):
        return x
    idx = (np.arange(out.start, out.stop) - shift) % n - region.start
    return np.take(x, idx, axis=ax)


@register(Roll)
def roll(op: Roll, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    (region,) = op.regions(expr, out)
    for ax, k in enumerate(op.shifts):
        if k:
            x = _mod_take(x, ax, out[ax], region[ax], expr.shape[ax], k)
    return x


@register(Tile)
def tile(op: Tile, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    (region,) = op.regions(expr, out)
    (inp,) = expr.inputs
    for ax, r in enumerate(op.reps):
        if r != 1:
            x = _mod_take(x, ax, out[ax], region[ax], inp.shape[ax], 0)
    return x


@register(Repeat)
def repeat(op: Repeat, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    s = out[op.axis]
    if s.stop <= s.start:
        return _empty(expr, out)
    (region,) = op.regions(expr, out)
    idx = op.source_index(np.arange(s.start, s.stop)) - region[op.axis].start
    return np.take(x, idx, axis=op.axis)


@register(Concat)
def concat(op: Concat, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    shape = _shape(out)
    if 0 in shape:
        return _empty(expr, out)
    pieces = [a for a in arrays if a.size]
    if len(pieces) == 1 and pieces[0].dtype == expr.dtype:
        return pieces[0]
    return np.concatenate(pieces, axis=op.axis, dtype=expr.dtype, casting="unsafe")


@register(Tri)
def tri(op: Tri, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    rows = np.arange(out[-2].start, out[-2].stop)[:, None]
    cols = np.arange(out[-1].start, out[-1].stop)[None, :]
    keep = (cols - rows <= op.k) if op.lower else (cols - rows >= op.k)
    if keep.all():
        return x
    return np.where(keep, x, np.zeros((), dtype=x.dtype))


@register(BlockReshape)
def reshape_blockwise(op: BlockReshape, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return x.reshape(tuple(s.stop - s.start for s in out))
