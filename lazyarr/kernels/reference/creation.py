"""NumPy kernels of source ops: user arrays, persisted blocks, closed forms, random tiles."""

from __future__ import annotations

import math

import numpy as np

from lazyarr.graph.chunks import block_slices, regular_chunks
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Arange, Eye, FromArray, FromBlocks, Full, Linspace, Random
from lazyarr.graph.ops.creation import RANDOM_TILE_BYTES
from lazyarr.kernels.blocks import blocks_for_region
from lazyarr.kernels.reference.registry import register

__all__ = ["random_tiles"]


def _shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


@register(FromArray)
def from_array(op: FromArray, expr: Expr, out: Region) -> np.ndarray:
    # the trailing Ellipsis keeps a 0-d block an array (``a[()]`` is a scalar)
    return op.data.array[(*out, Ellipsis)]


@register(FromBlocks)
def from_blocks(op: FromBlocks, expr: Expr, out: Region) -> np.ndarray:
    chunks = expr.chunks
    (index, local), *rest = blocks_for_region(chunks, out)
    if rest:
        raise ValueError("persisted blocks are read one block at a time")
    return op.store.blocks[index][local]


@register(Full)
def full(op: Full, expr: Expr, out: Region) -> np.ndarray:
    return np.full(_shape(out), op.value, dtype=expr.dtype)


@register(Arange)
def arange(op: Arange, expr: Expr, out: Region) -> np.ndarray:
    # NumPy's fill: the first two values are cast to the dtype, then
    # ``first + i * (second - first)`` in that dtype (integers wrap)
    (sl,) = out
    dtype = expr.dtype
    if dtype.kind == "b":  # at most two values (arange() refuses longer bool ranges)
        return np.array([op.start, op.start + op.step]).astype(bool)[sl.start : sl.stop]
    with np.errstate(all="ignore"):
        first = np.asarray(op.start).astype(dtype)
        delta = np.asarray(op.start + op.step).astype(dtype) - first
        i = np.arange(sl.start, sl.stop).astype(dtype)
        return np.asarray(first + i * delta, dtype=dtype)


@register(Linspace)
def linspace(op: Linspace, expr: Expr, out: Region) -> np.ndarray:
    # numpy.linspace's arithmetic, on the indices of this block only
    (sl,) = out
    num = op.num
    div = (num - 1) if op.endpoint else num
    dt = np.result_type(op.start, op.stop, 1.0)
    start = np.asarray(op.start, dtype=dt)
    delta = np.subtract(op.stop, op.start, dtype=dt)
    y = np.arange(sl.start, sl.stop, dtype=dt)
    with np.errstate(all="ignore"):
        if div > 0:
            step = delta / div
            y = (y / div) * delta if step == 0 else y * step
        else:
            y = y * delta
        y = y + start
    if op.endpoint and num > 1 and sl.stop == num and sl.stop > sl.start:
        y[-1] = op.stop
    if expr.dtype.kind in "iu" and dt.kind != "c":
        y = np.floor(y)
    with np.errstate(all="ignore"):
        return y.astype(expr.dtype, copy=False)


@register(Eye)
def eye(op: Eye, expr: Expr, out: Region) -> np.ndarray:
    rows = np.arange(out[0].start, out[0].stop)[:, None]
    cols = np.arange(out[1].start, out[1].stop)[None, :]
    return (cols - rows == op.k).astype(expr.dtype)


def _draw(op: Random, rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype):
    a = op.args
    if op.dist == "random":
        return rng.random(shape, dtype=dtype)
    if op.dist == "standard_normal":
        return rng.standard_normal(shape, dtype=dtype)
    if op.dist == "normal":
        return (a[0] + a[1] * rng.standard_normal(shape)).astype(dtype, copy=False)
    if op.dist == "uniform":
        return rng.uniform(a[0], a[1], shape).astype(dtype, copy=False)
    if op.dist == "integers":
        return rng.integers(
            a[0], a[1], shape, dtype=dtype, endpoint=bool(a[2]) if len(a) > 2 else False
        )
    raise NotImplementedError(f"random distribution {op.dist!r} has no NumPy kernel")


def random_tiles(shape: tuple[int, ...], itemsize: int) -> tuple[tuple[int, ...], ...]:
    """The fixed tiling random values are drawn in; depends on the shape only.

    Tiles of at most ``RANDOM_TILE_BYTES``, as near to cubes as the shape
    allows (the longest tile side is halved until a tile fits): a block of
    any shape then draws little more than its own elements, whether the
    blocks are row bands or the square blocks a cluster layout picks.
    """
    sides = [max(1, int(n)) for n in shape]
    budget = max(1, RANDOM_TILE_BYTES // max(1, itemsize))
    while math.prod(sides) > budget:
        ax = max(range(len(sides)), key=lambda a: (sides[a], -a))  # longest; first on ties
        sides[ax] = -(-sides[ax] // 2)
    return tuple(
        regular_chunks(int(n), side) if n else (0,) for n, side in zip(shape, sides, strict=True)
    )


@register(Random)
def random(op: Random, expr: Expr, out: Region) -> np.ndarray:
    tiles = random_tiles(expr.shape, expr.dtype.itemsize)
    result = np.empty(_shape(out), dtype=expr.dtype)
    numtiles = tuple(len(t) for t in tiles)
    for index, local in blocks_for_region(tiles, out):
        tile_region = block_slices(tiles, index)
        tile_shape = _shape(tile_region)
        linear = int(np.ravel_multi_index(index, numtiles)) if numtiles else 0
        rng = np.random.default_rng(np.random.SeedSequence(op.seed, spawn_key=(linear,)))
        values = _draw(op, rng, tile_shape, expr.dtype)
        dest = tuple(
            slice(t.start + lo.start - o.start, t.start + lo.stop - o.start)
            for t, lo, o in zip(tile_region, local, out, strict=True)
        )
        result[dest] = values[local]
    return result
