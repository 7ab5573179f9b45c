"""What every random function shares: seeds, sizes, and the two ways a draw becomes an expression.

Scalar parameters make a :class:`~lazyarr.graph.ops.Random` source (a
generated array the planner may re-block and slice freely); array
parameters, NumPy or lazy, make a :class:`~lazyarr.graph.ops.random.RandomMap`
over them, broadcast as NumPy broadcasts them. Both draw each element from
the Philox words at its flat index, so equal parameters give equal values.

Arguments are checked by NumPy's own generator on the parameters (a probe
of one draw, or of the NumPy parameter arrays), so the exception types and
messages are NumPy's and come when the expression is written. The values of
*lazy* parameters are not known then and are not checked: an invalid one
gives NaN (or an undefined count) where NumPy would raise.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunks_for, is_auto
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Random
from lazyarr.graph.ops._common import normalize_shape
from lazyarr.graph.ops.random import random_map

__all__ = ["draw", "float_dtype", "make", "seed_of", "shape_of"]


def shape_of(size: Any, op: str) -> tuple[int, ...]:
    """``size`` as a shape tuple (``()`` for None), with NumPy's errors."""
    return () if size is None else normalize_shape(size, f"random.{op}")


def seed_of(seed: Any) -> int:
    """A non-negative int seed; None draws a fresh one now."""
    if seed is None:
        return secrets.randbits(63)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return int(seed)


def make(dist: str, size: Any, dtype: Any, chunks: Any, seed: Any, args: tuple = ()) -> LazyArray:
    """A random source of ``dist`` with scalar ``args``."""
    shape = shape_of(size, dist)
    dtype = np.dtype(dtype)
    op = Random(dist=dist, seed=seed_of(seed), args=args, auto_chunks=is_auto(chunks))
    return wrap(Expr(op, (), shape, dtype, chunks_for(chunks, shape, dtype)))


def float_dtype(dtype: Any, name: str) -> np.dtype:
    """float32 or float64, else NumPy's ``TypeError``."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: unsupported dtype {dtype.name!r}; use float32 or float64")
    return dtype


def _is_scalar(p: Any) -> bool:
    return not isinstance(p, LazyArray) and np.ndim(p) == 0


def _out_shape(name: str, size: Any, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's output shape: the parameters' broadcast shape, or ``size`` they broadcast to."""
    try:
        common = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"random.{name}: shape mismatch: objects cannot be broadcast to a single shape "
            f"({', '.join(map(str, shapes))})"
        ) from None
    if size is None:
        return tuple(common)
    shape = shape_of(size, name)
    try:
        ok = np.broadcast_shapes(shape, common) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"random.{name}: shape mismatch: objects cannot be broadcast to a single shape "
            f"(size {shape} and parameters of shape {tuple(common)})"
        )
    return shape


def draw(
    dist: str,
    params: tuple,
    size: Any,
    dtype: Any,
    chunks: Any,
    seed: Any,
    check: Callable[..., Any],
    safe: tuple,
    convert: Callable[[Any], Any] = float,
) -> LazyArray:
    """Samples of ``dist`` with ``params`` (scalars, NumPy arrays or lazy arrays).

    ``check(*params)`` is NumPy's generator method (its errors are ours);
    ``safe`` holds a valid value of each parameter, checked in place of a
    lazy one. Scalars become ``convert(p)`` in the op.
    """
    dtype = np.dtype(dtype)
    if all(_is_scalar(p) for p in params):
        check(*params)
        return make(dist, size, dtype, chunks, seed, tuple(convert(p) for p in params))
    arrays = tuple(
        p if isinstance(p, LazyArray) or _is_scalar(p) else np.asarray(p) for p in params
    )
    check(*(s if isinstance(p, LazyArray) else p for p, s in zip(arrays, safe, strict=True)))
    shape = _out_shape(
        dist, size, [np.shape(p) if not isinstance(p, LazyArray) else p.shape for p in arrays]
    )
    exprs = tuple(convert(p) if _is_scalar(p) else as_expr(p) for p in arrays)
    seed = seed_of(seed)
    return wrap(random_map(dist, seed, exprs, shape, dtype, chunks_for(chunks, shape, dtype)))
