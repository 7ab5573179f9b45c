"""Distributions drawn element by element: each value from the words at its own flat index.

NumPy's signatures (``size`` after the parameters), plus keyword-only
``chunks`` and ``seed``; the parameters of every distribution except
``integers`` may be arrays, NumPy or lazy, broadcast as NumPy does.
The algorithms are in ``lazyarr/kernels/reference/distributions.py``,
``gamma.py`` and ``discrete.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr.random._core import draw, float_dtype, make, shape_of

__all__ = [
    "beta",
    "binomial",
    "exponential",
    "gamma",
    "integers",
    "lognormal",
    "normal",
    "poisson",
    "random",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "uniform",
]

_RNG = np.random.default_rng(0)  # NumPy's argument checks (its draws are thrown away)


def _takes_name(fn: Callable[..., LazyArray]) -> Callable[..., LazyArray]:
    """``fn`` with a ``name=`` keyword: the result under the user's name (as
    ``x.rename(name)``), which plan pictures and ``explain`` show."""

    @functools.wraps(fn)
    def named(*args: Any, name: str | None = None, **kwargs: Any) -> LazyArray:
        out = fn(*args, **kwargs)
        return out if name is None else out.rename(name)

    return named


@_takes_name
def random(
    size: Any = None, *, dtype: Any = np.float64, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Uniform floats in ``[0, 1)``."""
    return make("random", size, float_dtype(dtype, "random"), chunks, seed)


@_takes_name
def standard_normal(
    size: Any = None, *, dtype: Any = np.float64, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Samples of the standard normal distribution."""
    return make("standard_normal", size, float_dtype(dtype, "standard_normal"), chunks, seed)


@_takes_name
def normal(
    loc: Any = 0.0,
    scale: Any = 1.0,
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Normal samples with mean ``loc`` and deviation ``scale`` (arrays allowed)."""
    return draw(
        "normal",
        (loc, scale),
        size,
        float_dtype(dtype, "normal"),
        chunks,
        seed,
        _RNG.normal,
        (0.0, 1.0),
    )


@_takes_name
def uniform(
    low: Any = 0.0,
    high: Any = 1.0,
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Uniform floats in ``[low, high)`` (arrays allowed)."""
    # NumPy's checks of the bounds (high < low, an infinite or NaN range)
    return draw(
        "uniform",
        (low, high),
        size,
        float_dtype(dtype, "uniform"),
        chunks,
        seed,
        _RNG.uniform,
        (0.0, 1.0),
    )


@_takes_name
def integers(
    low: int,
    high: int | None = None,
    size: Any = None,
    *,
    dtype: Any = np.int64,
    endpoint: bool = False,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Random integers in ``[low, high)`` (``[low, high]`` with ``endpoint``); scalar bounds."""
    if high is None:
        low, high = 0, low
    if np.ndim(low) or np.ndim(high) or isinstance(low, LazyArray) or isinstance(high, LazyArray):
        raise NotImplementedError("la.random.integers: array bounds are not supported yet")
    dtype = np.dtype(dtype)
    shape = shape_of(size, "integers")
    # NumPy's own checks of the bounds for this dtype, raised now (NumPy skips
    # them when nothing is drawn, so probe with one draw unless the size is 0)
    probe = 0 if 0 in shape else 1
    _RNG.integers(low, high, size=probe, dtype=dtype, endpoint=endpoint)
    return make("integers", shape, dtype, chunks, seed, (int(low), int(high), bool(endpoint)))


@_takes_name
def exponential(
    scale: Any = 1.0, size: Any = None, *, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Exponential samples with mean ``scale`` (inversion of one uniform)."""
    return draw("exponential", (scale,), size, np.float64, chunks, seed, _RNG.exponential, (1.0,))


@_takes_name
def standard_exponential(
    size: Any = None, *, dtype: Any = np.float64, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Exponential samples with mean 1."""
    dtype = float_dtype(dtype, "standard_exponential")
    return make("standard_exponential", size, dtype, chunks, seed)


@_takes_name
def lognormal(
    mean: Any = 0.0,
    sigma: Any = 1.0,
    size: Any = None,
    *,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """``exp`` of normal samples with mean ``mean`` and deviation ``sigma``."""
    return draw(
        "lognormal", (mean, sigma), size, np.float64, chunks, seed, _RNG.lognormal, (0.0, 1.0)
    )


@_takes_name
def gamma(
    shape: Any,
    scale: Any = 1.0,
    size: Any = None,
    *,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Gamma samples of ``shape`` (k) and ``scale`` (theta): Marsaglia-Tsang."""
    return draw("gamma", (shape, scale), size, np.float64, chunks, seed, _RNG.gamma, (1.0, 1.0))


@_takes_name
def standard_gamma(
    shape: Any,
    size: Any = None,
    *,
    dtype: Any = np.float64,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Gamma samples of ``shape`` and scale 1."""
    dtype = float_dtype(dtype, "standard_gamma")
    return draw("standard_gamma", (shape,), size, dtype, chunks, seed, _RNG.standard_gamma, (1.0,))


@_takes_name
def beta(a: Any, b: Any, size: Any = None, *, chunks: Any = "auto", seed: Any = None) -> LazyArray:
    """Beta samples: ``X / (X + Y)`` of gamma samples ``X ~ Gamma(a)``, ``Y ~ Gamma(b)``."""
    return draw("beta", (a, b), size, np.float64, chunks, seed, _RNG.beta, (1.0, 1.0))


@_takes_name
def poisson(
    lam: Any = 1.0, size: Any = None, *, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Poisson counts (int64) with mean ``lam``: inversion below 10, PTRS above."""
    return draw("poisson", (lam,), size, np.int64, chunks, seed, _RNG.poisson, (1.0,))


@_takes_name
def binomial(
    n: Any, p: Any, size: Any = None, *, chunks: Any = "auto", seed: Any = None
) -> LazyArray:
    """Binomial counts (int64) of ``n`` trials with success probability ``p``: inversion or BTRS."""
    return draw(
        "binomial",
        (n, p),
        size,
        np.int64,
        chunks,
        seed,
        _RNG.binomial,
        (1, 0.5),
        convert=_number,
    )


def _number(p: Any) -> Any:
    """An int stays an int (``n`` of binomial), anything else is a float."""
    return int(p) if isinstance(p, (int, np.integer)) else float(p)
