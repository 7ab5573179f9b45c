"""``la.random.default_rng(seed)``: NumPy's ``Generator`` methods, each call on the next seed.

Every method is the module function of the same name with ``seed`` taken
from the generator's ``SeedSequence`` (one child per call), so two
generators made with the same seed give the same arrays in the same order,
and ``chunks`` stays a keyword as everywhere in ``la.random``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr.random import _elementwise as el
from lazyarr.random import _sampling as sm
from lazyarr.random._core import seed_of

__all__ = ["Generator", "default_rng"]


class Generator:
    """A seeded source of lazy random arrays (each call uses the next seed)."""

    def __init__(self, seed: Any = None) -> None:
        self._seq = np.random.SeedSequence(seed_of(seed))

    def _next(self) -> int:
        (child,) = self._seq.spawn(1)
        return int(child.generate_state(2, np.uint64)[0] >> np.uint64(1))

    def random(
        self, size: Any = None, dtype: Any = np.float64, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.random(size, dtype=dtype, chunks=chunks, seed=self._next())

    def standard_normal(
        self, size: Any = None, dtype: Any = np.float64, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.standard_normal(size, dtype=dtype, chunks=chunks, seed=self._next())

    def normal(
        self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.normal(loc, scale, size, chunks=chunks, seed=self._next())

    def uniform(
        self, low: Any = 0.0, high: Any = 1.0, size: Any = None, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.uniform(low, high, size, chunks=chunks, seed=self._next())

    def integers(
        self,
        low: int,
        high: int | None = None,
        size: Any = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
        *,
        chunks: Any = "auto",
    ) -> LazyArray:
        return el.integers(
            low, high, size, dtype=dtype, endpoint=endpoint, chunks=chunks, seed=self._next()
        )

    def exponential(self, scale: Any = 1.0, size: Any = None, *, chunks: Any = "auto") -> LazyArray:
        return el.exponential(scale, size, chunks=chunks, seed=self._next())

    def standard_exponential(
        self, size: Any = None, dtype: Any = np.float64, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.standard_exponential(size, dtype=dtype, chunks=chunks, seed=self._next())

    def lognormal(
        self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.lognormal(mean, sigma, size, chunks=chunks, seed=self._next())

    def gamma(
        self, shape: Any, scale: Any = 1.0, size: Any = None, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.gamma(shape, scale, size, chunks=chunks, seed=self._next())

    def standard_gamma(
        self, shape: Any, size: Any = None, dtype: Any = np.float64, *, chunks: Any = "auto"
    ) -> LazyArray:
        return el.standard_gamma(shape, size, dtype=dtype, chunks=chunks, seed=self._next())

    def beta(self, a: Any, b: Any, size: Any = None, *, chunks: Any = "auto") -> LazyArray:
        return el.beta(a, b, size, chunks=chunks, seed=self._next())

    def poisson(self, lam: Any = 1.0, size: Any = None, *, chunks: Any = "auto") -> LazyArray:
        return el.poisson(lam, size, chunks=chunks, seed=self._next())

    def binomial(self, n: Any, p: Any, size: Any = None, *, chunks: Any = "auto") -> LazyArray:
        return el.binomial(n, p, size, chunks=chunks, seed=self._next())

    def choice(
        self,
        a: Any,
        size: Any = None,
        replace: bool = True,
        p: Any = None,
        axis: int = 0,
        shuffle: bool = True,
        *,
        chunks: Any = "auto",
    ) -> LazyArray:
        return sm.choice(a, size, replace, p, axis, shuffle, chunks=chunks, seed=self._next())

    def permutation(self, x: Any, axis: int = 0, *, chunks: Any = "auto") -> LazyArray:
        return sm.permutation(x, axis, chunks=chunks, seed=self._next())

    def permuted(self, x: Any, *, axis: int | None = None, out: Any = None) -> LazyArray:
        return sm.permuted(x, axis=axis, out=out, seed=self._next())

    def shuffle(self, x: Any, axis: int = 0) -> LazyArray:
        """``x`` shuffled along ``axis`` as a new lazy array (NumPy's shuffles in place)."""
        return sm.shuffle(x, axis, seed=self._next())

    def multivariate_normal(
        self,
        mean: Any,
        cov: Any,
        size: Any = None,
        check_valid: str = "warn",
        tol: float = 1e-8,
        *,
        method: str = "svd",
        chunks: Any = "auto",
    ) -> LazyArray:
        return sm.multivariate_normal(
            mean, cov, size, check_valid, tol, method=method, chunks=chunks, seed=self._next()
        )


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator` seeded with ``seed``."""
    return Generator(seed)
