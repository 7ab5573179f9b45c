"""NumPy kernels of source ops: user arrays, persisted blocks, closed forms, random tiles."""

from __future__ import annotations

import numpy as np

from lazyarr.graph.chunks import auto_chunks, block_slices
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
    return op.data.array[out]


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
    (sl,) = out
    i = np.arange(sl.start, sl.stop)
    if expr.dtype.kind in "iub":
        return (op.start + i * op.step).astype(expr.dtype)
    # NumPy fills arange from the first two values: start + i * delta
    delta = (op.start + op.step) - op.start
    return (op.start + i * delta).astype(expr.dtype)


@register(Linspace)
def linspace(op: Linspace, expr: Expr, out: Region) -> np.ndarray:
    (sl,) = out
    num = op.num
    div = (num - 1) if op.endpoint else num
    i = np.arange(sl.start, sl.stop, dtype=np.float64 if expr.dtype.kind != "c" else expr.dtype)
    delta = op.stop - op.start
    if div > 0:
        step = delta / div
        y = i * step + op.start if step != 0 else (i / div) * delta + op.start
    else:
        y = i * delta + op.start
    if op.endpoint and num > 1 and sl.stop == num and sl.stop > sl.start:
        y[-1] = op.stop
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
        return rng.integers(a[0], a[1], shape, dtype=dtype, endpoint=bool(a[2]) if len(a) > 2 else False)
    raise NotImplementedError(f"random distribution {op.dist!r} has no NumPy kernel")


def random_tiles(shape: tuple[int, ...], itemsize: int) -> tuple[tuple[int, ...], ...]:
    """The fixed tiling random values are drawn in; depends on the shape only."""
    return auto_chunks(shape, itemsize, RANDOM_TILE_BYTES)


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
            for t, lo, o in zip(tile_region, local, out)
        )
        result[dest] = values[local]
    return result

