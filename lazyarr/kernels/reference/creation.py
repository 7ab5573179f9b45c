"""NumPy kernels of source ops (user arrays, persisted blocks, closed forms, random values)
and of random draws with array parameters."""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Arange, Eye, FromArray, FromBlocks, FromReader, Full, Linspace, Random
from lazyarr.graph.ops.creation import Windowed
from lazyarr.graph.ops.random import RandomMap, fill_params
from lazyarr.graph.window import AxisRun, forward
from lazyarr.kernels.blocks import blocks_for_region
from lazyarr.kernels.reference import philox
from lazyarr.kernels.reference.checks import block_name, called, checked
from lazyarr.kernels.reference.distributions import distribution
from lazyarr.kernels.reference.registry import register

__all__ = ["PIECE_WORDS"]


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


@register(FromReader)
def from_reader(op: FromReader, expr: Expr, out: Region) -> np.ndarray:
    # read the box of positions with positive steps, then flip the reversed axes
    # the read is checked against the box asked for (shape, dtype kind): never reshaped into place
    fwd, flip = forward(_runs(op, out))
    reader, block_at = op.reader, block_name(expr.chunks, out)
    where = tuple(slice(s, s + st * (n - 1) + 1 if n else s, st) for s, st, n in fwd)
    block = called(reader.read, f"reading {block_at} from {reader.describe()}", where)
    block = checked(block, [n for _, _, n in fwd], reader.dtype, reader.describe(), block_at)
    block = np.asarray(block, dtype=expr.dtype)
    if flip:
        block = np.flip(block, flip)
    return block.reshape(_shape(out))


@register(Full)
def full(op: Full, expr: Expr, out: Region) -> np.ndarray:
    return np.full(_shape(out), op.value, dtype=expr.dtype)


def _runs(op: Windowed, out: Region) -> tuple[AxisRun, ...]:
    """The base positions of ``out`` per base axis (through the window, if any)."""
    if op.window is None:
        return tuple((sl.start, 1, sl.stop - sl.start) for sl in out)
    return op.window.base_runs(out)


def _positions(run: AxisRun) -> np.ndarray:
    start, step, count = run
    return start + step * np.arange(count, dtype=np.int64)


@register(Arange)
def arange(op: Arange, expr: Expr, out: Region) -> np.ndarray:
    # NumPy's fill: the first two values are cast to the dtype, then
    # ``first + i * (second - first)`` in that dtype (integers wrap)
    (run,) = _runs(op, out)
    i = _positions(run)
    dtype = expr.dtype
    if dtype.kind == "b":  # at most two values (arange() refuses longer bool ranges)
        return np.array([op.start, op.start + op.step]).astype(bool)[i].reshape(_shape(out))
    with np.errstate(all="ignore"):
        first = np.asarray(op.start).astype(dtype)
        delta = np.asarray(op.start + op.step).astype(dtype) - first
        return np.asarray(first + i.astype(dtype) * delta, dtype=dtype).reshape(_shape(out))


@register(Linspace)
def linspace(op: Linspace, expr: Expr, out: Region) -> np.ndarray:
    # numpy.linspace's arithmetic, on the indices of this block only
    (run,) = _runs(op, out)
    i = _positions(run)
    num = op.num
    div = (num - 1) if op.endpoint else num
    dt = np.result_type(op.start, op.stop, 1.0)
    start = np.asarray(op.start, dtype=dt)
    delta = np.subtract(op.stop, op.start, dtype=dt)
    y = i.astype(dt)
    with np.errstate(all="ignore"):
        if div > 0:
            step = delta / div
            y = (y / div) * delta if step == 0 else y * step
        else:
            y = y * delta
        y = y + start
    if op.endpoint and num > 1:
        y[i == num - 1] = op.stop
    if expr.dtype.kind in "iu" and dt.kind != "c":
        y = np.floor(y)
    with np.errstate(all="ignore"):
        return y.astype(expr.dtype, copy=False).reshape(_shape(out))


@register(Eye)
def eye(op: Eye, expr: Expr, out: Region) -> np.ndarray:
    (r, c) = _runs(op, out)
    rows = _positions(r)[:, None]
    cols = _positions(c)[None, :]
    return (cols - rows == op.k).astype(expr.dtype).reshape(_shape(out))


PIECE_WORDS = 1 << 14
"""Long runs are drawn and converted this many words at a time (128 KiB), so
the words stay in cache between the draw and the conversion; larger pieces
measured twice as slow."""


@register(Random)
def random(op: Random, expr: Expr, out: Region) -> np.ndarray:
    # every element from its own Philox words (philox.py), so a block draws
    # only its own elements and no value depends on the chunking
    per, convert = distribution(op.dist)
    k = philox.key(op.seed)
    if op.window is None:
        r, flip = philox.runs(expr.shape, out), ()
    else:
        fwd, flip = forward(op.window.base_runs(out))
        r = philox.strided_runs(op.window.base, fwd)
    piece = PIECE_WORDS // per
    if r.outer or r.run <= 2 * piece:
        words = philox.region_words(k, r, per)
        if not r.counts:  # 0-d: ufuncs would return scalars
            words = words[None]
        values = convert(words, op.args, expr.dtype).reshape(r.counts)
    else:
        values = np.empty(r.run, dtype=expr.dtype)
        for lo in range(0, r.run, piece):
            hi = min(r.run, lo + piece)
            words = philox.stream(k, (r.start + lo) * per, (hi - lo) * per)
            values[lo:hi] = convert(words.reshape(hi - lo, per), op.args, expr.dtype)
        values = values.reshape(r.counts)
    if flip:
        values = np.flip(values, flip)
    return values.reshape(_shape(out))


@register(RandomMap)
def random_map(op: RandomMap, expr: Expr, out: Region, *params: np.ndarray) -> np.ndarray:
    # the words of this block's own elements, as the Random source draws them,
    # and the block's region of each (broadcast) parameter
    per, convert = distribution(op.dist)
    shape = _shape(out)
    words = philox.region_words(philox.key(op.seed), philox.runs(expr.shape, out), per)
    args = tuple(np.broadcast_to(p, shape) for p in params)
    values = convert(words.reshape(*shape, per), fill_params(op.template, args), expr.dtype)
    return np.asarray(values, dtype=expr.dtype).reshape(shape)
