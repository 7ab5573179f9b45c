"""Random arrays whose values depend on the seed and each element's position only.

The element at flat (C-order) index ``i`` is computed from the 64-bit words
at position ``i`` (two for the normal distributions) of a counter-based
Philox stream keyed by the seed: any block jumps straight to its own
elements and draws only those, so a block costs its own size, and every
executor and every chunking gives the same numbers for the same seed.
That is what lets the ``reblock`` pass give auto-chunked random arrays
blocks chosen for the cluster without changing a single value. Each
distribution turns an element's words into its value with no rejection
(``lazyarr/kernels/reference/distributions.py`` gives the formulas); the
values are not those of ``numpy.random`` for the same seed.
A ``seed`` of None draws a fresh seed when the expression is written.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import chunks_for, is_auto
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Random
from lazyarr.graph.ops._common import normalize_shape

__all__ = ["Generator", "default_rng", "integers", "normal", "random", "standard_normal", "uniform"]


def __dir__() -> list[str]:
    """The public names only: ``dir()`` and tab completion show no ``np``, ``Expr`` or helpers."""
    return sorted(__all__)


def _shape(size: Any, op: str) -> tuple[int, ...]:
    return () if size is None else normalize_shape(size, f"random.{op}")


def _seed(seed: Any) -> int:
    if seed is None:
        return secrets.randbits(63)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return int(seed)


def _make(
    dist: str,
    size: Any,
    dtype: Any,
    chunks: Any,
    seed: Any,
    args: tuple = (),
    name: str | None = None,
) -> LazyArray:
    """A generated source; ``name`` is what plan pictures call it (as ``x.rename(name)``)."""
    shape = _shape(size, dist)
    dtype = np.dtype(dtype)
    op = Random(dist=dist, seed=_seed(seed), args=args, auto_chunks=is_auto(chunks))
    return wrap(Expr(op, (), shape, dtype, chunks_for(chunks, shape, dtype), name))


def _float_dtype(dtype: Any, name: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: unsupported dtype {dtype.name!r}; use float32 or float64")
    return dtype


def random(
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
    name: str | None = None,
) -> LazyArray:
    """Uniform floats in ``[0, 1)``."""
    return _make("random", size, _float_dtype(dtype, "random"), chunks, seed, name=name)


def standard_normal(
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
    name: str | None = None,
) -> LazyArray:
    """Samples of the standard normal distribution."""
    dtype = _float_dtype(dtype, "standard_normal")
    return _make("standard_normal", size, dtype, chunks, seed, name=name)


def normal(
    loc: float = 0.0,
    scale: float = 1.0,
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
    name: str | None = None,
) -> LazyArray:
    """Samples of a normal distribution with mean ``loc`` and deviation ``scale``."""
    if scale < 0:
        raise ValueError("scale < 0")
    return _make(
        "normal",
        size,
        _float_dtype(dtype, "normal"),
        chunks,
        seed,
        (float(loc), float(scale)),
        name,
    )


def uniform(
    low: float = 0.0,
    high: float = 1.0,
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
    name: str | None = None,
) -> LazyArray:
    """Uniform floats in ``[low, high)``."""
    # NumPy's checks of the bounds (high < low, an infinite or NaN range), raised now
    np.random.default_rng(0).uniform(low, high, size=0)
    return _make(
        "uniform",
        size,
        _float_dtype(dtype, "uniform"),
        chunks,
        seed,
        (float(low), float(high)),
        name,
    )


def integers(
    low: int,
    high: int | None = None,
    size: Any = None,
    *,
    dtype: Any = np.int64,
    endpoint: bool = False,
    chunks: Any = "auto",
    seed: Any = None,
    name: str | None = None,
) -> LazyArray:
    """Random integers in ``[low, high)`` (``[low, high]`` with ``endpoint``)."""
    if high is None:
        low, high = 0, low
    dtype = np.dtype(dtype)
    shape = _shape(size, "integers")
    # NumPy's own checks of the bounds for this dtype, raised now (NumPy skips
    # them when nothing is drawn, so probe with one draw unless the size is 0)
    probe = 0 if 0 in shape else 1
    np.random.default_rng(0).integers(low, high, size=probe, dtype=dtype, endpoint=endpoint)
    bounds = (int(low), int(high), bool(endpoint))
    return _make("integers", shape, dtype, chunks, seed, bounds, name)


class Generator:
    """A seeded source of lazy random arrays (each call uses the next seed)."""

    def __init__(self, seed: Any = None) -> None:
        self._seq = np.random.SeedSequence(_seed(seed))

    def _next(self) -> int:
        (child,) = self._seq.spawn(1)
        return int(child.generate_state(2, np.uint64)[0] >> np.uint64(1))

    def random(
        self, size: Any = None, *, dtype: Any = np.float64, chunks: Any = "auto"
    ) -> LazyArray:
        return random(size, dtype=dtype, chunks=chunks, seed=self._next())

    def standard_normal(self, size: Any = None, *, dtype: Any = np.float64, chunks: Any = "auto"):
        return standard_normal(size, dtype=dtype, chunks=chunks, seed=self._next())

    def normal(
        self, loc: float = 0.0, scale: float = 1.0, size: Any = None, *, chunks: Any = "auto"
    ):
        return normal(loc, scale, size, chunks=chunks, seed=self._next())

    def uniform(
        self, low: float = 0.0, high: float = 1.0, size: Any = None, *, chunks: Any = "auto"
    ):
        return uniform(low, high, size, chunks=chunks, seed=self._next())

    def integers(
        self,
        low: int,
        high: int | None = None,
        size: Any = None,
        *,
        dtype: Any = np.int64,
        endpoint: bool = False,
        chunks: Any = "auto",
    ):
        return integers(
            low, high, size, dtype=dtype, endpoint=endpoint, chunks=chunks, seed=self._next()
        )


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator` seeded with ``seed``."""
    return Generator(seed)
