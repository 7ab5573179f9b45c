"""Shape manipulation ops: transpose, reshape, broadcast, flip, roll, concat, tile, repeat, tri.

Every op is a :class:`MapOp` whose output chunks are chosen so that a block
reads as little of its input as possible, ideally exactly one input block:

* ``Transpose`` permutes the chunks, ``Flip`` reverses their order;
* ``Reshape`` (also used by ``expand_dims``, ``squeeze`` and ``stack``)
  keeps axes that stay the same, and picks chunks on merged or split axes
  so each block is one contiguous run of the input (the index arithmetic
  is in :mod:`lazyarr.graph.ops._reshape`);
* ``BroadcastTo`` keeps the input's chunks and adds some on new axes;
* ``Concat`` concatenates the chunks along its axis, so each block reads
  one input (the others get an empty region);
* ``Roll`` and ``Tile`` cut blocks where the input wraps around;
  ``Repeat`` repeats each input chunk.

``regions`` works for any output box (not only whole blocks), so fused
stages can ask for arbitrary pieces; the kernels in
``lazyarr.kernels.reference.manipulation`` handle the general case.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazyarr.graph.chunks import normalize_chunks, offsets, regular_chunks
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops._reshape import reshape_chunks, reshape_region
from lazyarr.graph.token import ArrayData

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "BroadcastTo",
    "Concat",
    "Flip",
    "Repeat",
    "Reshape",
    "Roll",
    "Tile",
    "Transpose",
    "Tri",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "mod_region",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "tril",
    "triu",
]

DEFAULT_BLOCK_BYTES = 64 << 20
"""Block size target for axes an op creates (callers pass the configured one)."""


def _prod(values: Sequence[int]) -> int:
    return math.prod(int(v) for v in values)


def _axis_tuple(axis: Any, ndim: int, op: str, argname: str = "axis") -> tuple[int, ...]:
    """``axis`` (int or sequence) normalised, in the given order; NumPy's errors."""
    try:
        return tuple(normalize_axis_tuple(axis, ndim, argname=argname))
    except np.exceptions.AxisError as e:
        raise np.exceptions.AxisError(f"{op}: {e}") from None
    except ValueError as e:
        raise ValueError(f"{op}: {e}") from None


def _empty_region(ndim: int) -> Region:
    return (slice(0, 0),) * ndim


def _is_empty(out: Region) -> bool:
    return any(s.stop <= s.start for s in out)


# -- transpose ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Transpose(MapOp):
    """Output axis ``i`` is input axis ``axes[i]``."""

    name = "transpose"
    axes: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        region = [slice(0, 0)] * len(self.axes)
        for i, a in enumerate(self.axes):
            region[a] = out[i]
        return (tuple(region),)


def permute_dims(x: Expr, axes: Sequence[int] | None) -> Expr:
    """``x`` with its axes permuted (reversed when ``axes`` is None)."""
    if axes is None:
        perm = tuple(range(x.ndim))[::-1]
    else:
        axes = tuple(axes)
        if len(axes) != x.ndim:
            raise ValueError(f"permute_dims: axes {axes} don't match array of shape {x.shape}")
        perm = _axis_tuple(axes, x.ndim, "permute_dims")
    if isinstance(x.op, Transpose) and x.user_name is None:
        # a transpose of a transpose is one transpose (NumPy's views compose alike)
        perm = tuple(x.op.axes[a] for a in perm)
        x = x.inputs[0]
    if perm == tuple(range(x.ndim)):
        return x
    shape = tuple(x.shape[a] for a in perm)
    chunks = tuple(x.chunks[a] for a in perm)
    return Expr(Transpose(axes=tuple(int(a) for a in perm)), (x,), shape, x.dtype, chunks)


def swapaxes(x: Expr, axis1: int, axis2: int) -> Expr:
    """``x`` with two axes interchanged."""
    a = normalize_axis(axis1, x.ndim, "swapaxes")
    b = normalize_axis(axis2, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute_dims(x, perm)


def moveaxis(x: Expr, source: Any, destination: Any) -> Expr:
    """``x`` with axes ``source`` moved to positions ``destination``."""
    src = _axis_tuple(source, x.ndim, "moveaxis", "source")
    dst = _axis_tuple(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of elements"
        )
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, order)


# -- reshape --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Reshape(MapOp):
    """The same elements in C order in a new shape (no parameters: shapes say it all)."""

    name = "reshape"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (reshape_region(expr.inputs[0].shape, expr.shape, out),)


def _numpy_shape(x: Expr, shape: Any, op: str) -> tuple[int, ...]:
    """The result shape NumPy gives (``-1`` filled in), with NumPy's errors."""
    dummy = np.broadcast_to(np.empty((), dtype=np.int8), x.shape)
    try:
        return tuple(int(n) for n in dummy.reshape(shape).shape)
    except ValueError as e:
        raise ValueError(f"{op}: {e}") from None
    except TypeError as e:
        raise TypeError(f"{op}: {e}") from None


def reshape(x: Expr, shape: Any) -> Expr:
    """``x`` in a new shape (C order; one ``-1`` is inferred)."""
    new = _numpy_shape(x, shape, "reshape")
    if new == x.shape:
        return x
    return Expr(Reshape(), (x,), new, x.dtype, reshape_chunks(x.shape, x.chunks, new))


def expand_dims(x: Expr, axis: Any) -> Expr:
    """``x`` with new length-one axes at positions ``axis`` (of the result)."""
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    axes = _axis_tuple(axis, x.ndim + count, "expand_dims")
    it = iter(x.shape)
    shape = tuple(1 if ax in axes else next(it) for ax in range(x.ndim + len(axes)))
    return reshape(x, shape)


def squeeze(x: Expr, axis: Any = None) -> Expr:
    """``x`` without length-one axes (those in ``axis``; all of them by default)."""
    if axis is None:
        axes = tuple(a for a, n in enumerate(x.shape) if n == 1)
    else:
        axes = _axis_tuple(axis, x.ndim, "squeeze")
        bad = [a for a in axes if x.shape[a] != 1]
        if bad:
            raise ValueError(
                f"squeeze: cannot select an axis to squeeze out which has size not equal to "
                f"one (axis {bad[0]} of shape {x.shape})"
            )
    return reshape(x, tuple(n for a, n in enumerate(x.shape) if a not in axes))


# -- broadcast_to ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BroadcastTo(MapOp):
    """The input repeated along new leading axes and along its length-one axes."""

    name = "broadcast_to"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        lead = expr.ndim - x.ndim
        return (
            tuple(
                slice(0, 1) if (n == 1 and expr.shape[lead + j] != 1) else out[lead + j]
                for j, n in enumerate(x.shape)
            ),
        )


def broadcast_to(x: Expr, shape: Any, limit_bytes: int = DEFAULT_BLOCK_BYTES) -> Expr:
    """``x`` broadcast to ``shape``; new axes get blocks of about ``limit_bytes``."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    dummy = np.broadcast_to(np.empty((), dtype=np.int8), x.shape)
    try:
        new = tuple(int(n) for n in np.broadcast_to(dummy, shape).shape)
    except ValueError as e:
        raise ValueError(f"broadcast_to: {e}") from None
    except TypeError as e:
        raise TypeError(f"broadcast_to: {e}") from None
    if new == x.shape:
        return x
    lead = len(new) - x.ndim
    spec: list[Any] = ["auto"] * lead
    for j, n in enumerate(x.shape):
        spec.append(x.chunks[j] if n == new[lead + j] else "auto")
    chunks = normalize_chunks(tuple(spec), new, x.dtype.itemsize, limit_bytes)
    return Expr(BroadcastTo(), (x,), new, x.dtype, chunks)


# -- flip and roll --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Flip(MapOp):
    """The order of elements reversed along ``axes``."""

    name = "flip"
    axes: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        region = list(out)
        for a in self.axes:
            n = expr.shape[a]
            region[a] = slice(n - out[a].stop, n - out[a].start)
        return (tuple(region),)


def flip(x: Expr, axis: Any = None) -> Expr:
    """``x`` reversed along ``axis`` (every axis by default)."""
    axes = tuple(range(x.ndim)) if axis is None else _axis_tuple(axis, x.ndim, "flip")
    if not axes:
        return x
    axes = tuple(sorted(int(a) for a in axes))
    chunks = tuple(c[::-1] if a in axes else c for a, c in enumerate(x.chunks))
    return Expr(Flip(axes=axes), (x,), x.shape, x.dtype, chunks)


def mod_region(start: int, stop: int, n: int, shift: int) -> slice:
    """Input range read by output ``[start, stop)`` under ``i -> (i - shift) % n``.

    The whole axis when the range wraps around the end.
    """
    if stop <= start:
        return slice(0, 0)
    src = (start - shift) % n
    if src + (stop - start) <= n:
        return slice(src, src + stop - start)
    return slice(0, n)


@dataclasses.dataclass(frozen=True)
class Roll(MapOp):
    """Output index ``i`` along axis ``a`` reads input ``(i - shifts[a]) % n``."""

    name = "roll"
    shifts: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (
            tuple(
                s if not k else mod_region(s.start, s.stop, n, k)
                for s, n, k in zip(out, expr.shape, self.shifts, strict=True)
            ),
        )


def _rolled_chunks(chunks: tuple[int, ...], n: int, shift: int) -> tuple[int, ...]:
    cuts = sorted({(o + shift) % n for o in offsets(chunks)} | {0, n})
    return tuple(b - a for a, b in itertools.pairwise(cuts))


def roll(x: Expr, shift: Any, axis: Any = None) -> Expr:
    """``x`` rolled by ``shift`` along ``axis`` (the flattened array when None)."""
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    try:
        axes = tuple(normalize_axis_tuple(axis, x.ndim, allow_duplicate=True))
    except np.exceptions.AxisError as e:
        raise np.exceptions.AxisError(f"roll: {e}") from None
    b = np.broadcast(np.asarray(shift), np.asarray(axes))
    if b.ndim > 1:
        raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
    shifts = [0] * x.ndim
    for sh, ax in b:
        shifts[int(ax)] += int(sh)
    shifts = [s % n if n else 0 for s, n in zip(shifts, x.shape, strict=True)]
    if not any(shifts):
        return x
    chunks = tuple(
        _rolled_chunks(c, n, s) if s else c
        for c, n, s in zip(x.chunks, x.shape, shifts, strict=True)
    )
    return Expr(Roll(shifts=tuple(shifts)), (x,), x.shape, x.dtype, chunks)


# -- concat and stack -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Concat(MapOp):
    """The inputs joined along ``axis``; a block reads the inputs it overlaps."""

    name = "concat"
    axis: int = 0

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        ax = self.axis
        starts = offsets(tuple(x.shape[ax] for x in expr.inputs))
        result = [_empty_region(expr.ndim)] * len(expr.inputs)
        lo, hi = out[ax].start, out[ax].stop
        if hi <= lo or _is_empty(out):
            return tuple(result)
        first = bisect.bisect_right(starts, lo) - 1
        for i in range(max(first, 0), len(expr.inputs)):
            if starts[i] >= hi:
                break
            a, b = max(lo, starts[i]), min(hi, starts[i + 1])
            if a < b:
                result[i] = (*out[:ax], slice(a - starts[i], b - starts[i]), *out[ax + 1 :])
        return tuple(result)


def concat(xs: Sequence[Expr], axis: int | None = 0) -> Expr:
    """The arrays joined along an existing ``axis`` (flattened first when None)."""
    xs = list(xs)
    if not xs:
        raise ValueError("concat: need at least one array to concatenate")
    if axis is None:
        xs = [reshape(x, (-1,)) for x in xs]
        axis = 0
    ndim = xs[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    for i, x in enumerate(xs):
        if x.ndim != ndim:
            raise ValueError(
                f"concat: all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has shape {xs[0].shape} and the array at index {i} has "
                f"shape {x.shape}"
            )
    ax = normalize_axis(axis, ndim, "concat")
    for i, x in enumerate(xs):
        for d in range(ndim):
            if d != ax and x.shape[d] != xs[0].shape[d]:
                raise ValueError(
                    "concat: all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {d}, the array at index 0 has "
                    f"shape {xs[0].shape} and the array at index {i} has shape {x.shape}"
                )
    dtype = np.result_type(*[x.dtype for x in xs])
    if len(xs) == 1:
        return xs[0]
    shape = list(xs[0].shape)
    shape[ax] = sum(x.shape[ax] for x in xs)
    chunks = []
    for d in range(ndim):
        if d == ax:
            along = tuple(c for x in xs for c in x.chunks[ax] if c)
            chunks.append(along or (0,))
        else:
            chunks.append(max((x.chunks[d] for x in xs), key=len))
    return Expr(Concat(axis=ax), xs, tuple(shape), dtype, tuple(chunks))


def stack(xs: Sequence[Expr], axis: int = 0) -> Expr:
    """The arrays (all of one shape) joined along a new ``axis``."""
    xs = list(xs)
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    if any(x.shape != xs[0].shape for x in xs):
        shapes = ", ".join(str(x.shape) for x in xs)
        raise ValueError(f"stack: all input arrays must have the same shape, got {shapes}")
    ax = normalize_axis(axis, xs[0].ndim + 1, "stack")
    return concat([expand_dims(x, ax) for x in xs], ax)


# -- tile and repeat ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Tile(MapOp):
    """Output index ``i`` along axis ``a`` reads input ``i % n`` (``reps[a]`` copies)."""

    name = "tile"
    reps: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        return (
            tuple(
                s if r == 1 else mod_region(s.start, s.stop, n, 0)
                for s, n, r in zip(out, x.shape, self.reps, strict=True)
            ),
        )


def _grown_chunks(
    base: list[tuple[int, ...]],
    growable: dict[int, tuple[int, int]],
    itemsize: int,
    limit_bytes: int,
) -> list[tuple[int, ...]]:
    """Let axes made of ``copies`` blocks of ``unit`` grow (last axis first) up to the limit."""
    budget = max(1, limit_bytes // max(1, itemsize))
    cur = _prod([max(c) for c in base])
    for ax in sorted(growable, reverse=True):
        unit, copies = growable[ax]
        q = max(1, min(copies, budget // max(cur, 1)))
        if q > 1:
            base[ax] = regular_chunks(unit * copies, unit * q)
            cur *= q
    return base


def tile(x: Expr, reps: Any, limit_bytes: int = DEFAULT_BLOCK_BYTES) -> Expr:
    """``x`` repeated ``reps`` times along each axis (NumPy's ``tile``)."""
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    if len(tup) and all(r == 1 for r in tup):  # NumPy accepts any ones here, even 1.0
        tup = (1,) * len(tup)
    try:
        tup = tuple(operator.index(r) for r in tup)
    except TypeError:
        raise TypeError(f"tile: reps must be integers, not {reps!r}") from None
    if any(r < 0 for r in tup):
        raise ValueError(f"tile: negative dimensions are not allowed (reps {tup})")
    if x.ndim < len(tup):
        x = reshape(x, (1,) * (len(tup) - x.ndim) + x.shape)
    tup = (1,) * (x.ndim - len(tup)) + tup
    if all(r == 1 for r in tup):
        return x
    shape = tuple(n * r for n, r in zip(x.shape, tup, strict=True))
    base: list[tuple[int, ...]] = []
    growable: dict[int, tuple[int, int]] = {}
    for ax, (c, n, r) in enumerate(zip(x.chunks, x.shape, tup, strict=True)):
        if r == 1:
            base.append(c)
        elif n * r == 0:
            base.append((0,))
        else:
            base.append(tuple(b for b in c if b) * r)
            if len(c) == 1:
                growable[ax] = (n, r)
    chunks = _grown_chunks(base, growable, x.dtype.itemsize, limit_bytes)
    return Expr(Tile(reps=tup), (x,), shape, x.dtype, tuple(chunks))


@dataclasses.dataclass(frozen=True)
class Repeat(MapOp):
    """Each element repeated along ``axis``: ``count`` times, or by the cumulative ``ends``."""

    name = "repeat"
    axis: int = 0
    count: int = 1
    ends: ArrayData | None = None

    def source_index(self, i: np.ndarray) -> np.ndarray:
        """Input index of each output index ``i`` along the axis."""
        if self.ends is None:
            return i // self.count
        return np.searchsorted(self.ends.array, i, side="right")

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        s = out[self.axis]
        if s.stop <= s.start:
            return (_empty_region(expr.ndim),)
        first, last = self.source_index(np.array([s.start, s.stop - 1]))
        return ((*out[: self.axis], slice(int(first), int(last) + 1), *out[self.axis + 1 :]),)


def _repeat_counts(repeats: Any, n: int) -> np.ndarray:
    r = np.asarray(repeats)
    if r.ndim > 1:
        raise ValueError(f"repeat: repeats must be an int or a 1-d sequence, not shape {r.shape}")
    try:
        r = r.astype(np.intp, casting="same_kind" if r.dtype.kind == "c" else "unsafe")
    except TypeError as e:
        raise TypeError(f"repeat: {e}") from None
    if r.ndim == 1 and r.shape[0] not in (1, n):
        raise ValueError(
            f"repeat: operands could not be broadcast together with shape ({n},) {r.shape}"
        )
    if (r < 0).any():
        raise ValueError("repeat: negative dimensions are not allowed")
    return r


def repeat(
    x: Expr, repeats: Any, axis: int | None = None, limit_bytes: int = DEFAULT_BLOCK_BYTES
) -> Expr:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened when None)."""
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    ax = normalize_axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    r = _repeat_counts(repeats, n)
    if r.ndim == 0 or r.shape[0] == 1:
        count = int(r.reshape(-1)[0])
        if count == 1:
            return x
        op = Repeat(axis=ax, count=count)
        total = n * count
        per_chunk = [c * count for c in x.chunks[ax]]
    else:
        ends = np.cumsum(r, dtype=np.int64)
        op = Repeat(axis=ax, ends=ArrayData(ends))
        total = int(ends[-1]) if n else 0
        starts = offsets(x.chunks[ax])
        per_chunk = [
            int(ends[b - 1] - (ends[a - 1] if a else 0)) if b > a else 0
            for a, b in itertools.pairwise(starts)
        ]
    shape = (*x.shape[:ax], total, *x.shape[ax + 1 :])
    if total == 0:
        chunks = (*x.chunks[:ax], (0,), *x.chunks[ax + 1 :])
        return Expr(op, (x,), shape, x.dtype, chunks)
    other = _prod([max(c) for i, c in enumerate(x.chunks) if i != ax])
    budget = max(1, limit_bytes // max(1, x.dtype.itemsize) // max(other, 1))
    along: list[int] = []
    for c in per_chunk:
        if c:
            along.extend(regular_chunks(c, budget))
    chunks = (*x.chunks[:ax], tuple(along), *x.chunks[ax + 1 :])
    return Expr(op, (x,), shape, x.dtype, chunks)


# -- tril / triu ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Tri(MapOp):
    """Zeros above (``lower``) or below the ``k``-th diagonal of the last two axes."""

    name = "tri"
    k: int = 0
    lower: bool = True

    def label(self) -> str:
        return "tril" if self.lower else "triu"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (out,)


def _tri(x: Expr, k: int, lower: bool) -> Expr:
    name = "tril" if lower else "triu"
    if x.ndim == 0:
        raise TypeError(f"{name}: the input must have at least one dimension (got a 0-d array)")
    k = operator.index(k)
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    return Expr(Tri(k=int(k), lower=lower), (x,), x.shape, x.dtype, x.chunks)


def tril(x: Expr, k: int = 0) -> Expr:
    """``x`` with elements above the ``k``-th diagonal zeroed."""
    return _tri(x, k, True)


def triu(x: Expr, k: int = 0) -> Expr:
    """``x`` with elements below the ``k``-th diagonal zeroed."""
    return _tri(x, k, False)
