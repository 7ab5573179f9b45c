"""Random values from Philox words: each element from its own fixed words.

A distribution is ``(per, convert)``: every element owns ``per`` 64-bit
words (see ``philox.py``) and ``convert(words, args, dtype)`` turns words of
shape ``(..., per)`` into values of shape ``(...)``; ``args`` are scalars,
or arrays that broadcast to ``(...)`` (array parameters). No element reads
another's words, so any element can be drawn alone. The samplers that
reject (gamma, beta, large-mean poisson and binomial) retry on a sub-stream
keyed by two of the element's own words (``substream.py``; algorithms in
``gamma.py`` and ``discrete.py``).

* ``random``: float64 ``(u >> 11) * 2**-53`` (53 bits, in [0, 1)); float32
  ``(u >> 40) * 2**-24`` (24 bits, in [0, 1)).
* ``uniform(low, high)``: ``low + (high - low) * random``, in float64, then
  cast (NumPy's formula; a float32 cast may round up to ``high``).
* ``standard_normal`` / ``normal(loc, scale)``: Box-Muller on the element's
  two words, one coordinate: ``sqrt(-2 ln u1) * sin(pi (u2 - 1/2))`` with
  ``u1 = ((w0 >> 11) + 1) * 2**-53`` in (0, 1] and ``u2 = (w1 >> 11) *
  2**-53``. ``sin`` of a uniform angle in [-pi/2, pi/2) has the law of
  ``cos`` of one on the whole circle (and costs half as much in NumPy), so
  this is exactly normal up to the 53-bit grid of ``u1, u2``, with
  ``|z| <= sqrt(106 ln 2) ~ 8.57``. ``normal`` is ``loc + scale * z``.
  Computed in float64, then cast.
* ``exponential(scale)``: ``-scale * ln u`` with ``u`` in (0, 1] (inversion;
  ``standard_exponential`` is scale 1). ``lognormal(mean, sigma)``:
  ``exp(mean + sigma * z)`` for the normal ``z`` above.
* ``integers(low, high, endpoint)``: ``low + floor(u * r / 2**64)`` with
  ``r = high - low (+ 1 with endpoint)``, the multiply-high done exactly
  with 32-bit halves in uint64 arithmetic; ``r = 2**64`` (the full int64 or
  uint64 span) is ``low + u``. Each value gets ``floor`` or ``ceil`` of
  ``2**64 / r`` of the words, so its probability is within ``2**-64`` of
  ``1 / r``: a relative bias of at most ``r / 2**64``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from lazyarr.kernels.reference import discrete, gamma
from lazyarr.kernels.reference.bits import box_muller, mulhi, unit, unit_open
from lazyarr.kernels.reference.substream import PER

__all__ = ["DISTRIBUTIONS", "Distribution", "distribution", "mulhi"]

Convert = Callable[[np.ndarray, tuple, np.dtype], np.ndarray]

_S40 = np.uint64(40)


def _random(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    w = words[..., 0]
    if dtype == np.float32:
        return (w >> _S40).astype(np.float32) * np.float32(2.0**-24)
    return unit(w)


def _uniform(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    low, high = args
    return (low + (high - low) * unit(words[..., 0])).astype(dtype, copy=False)


def _standard_normal(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    return box_muller(words[..., 0], words[..., 1]).astype(dtype, copy=False)


def _normal(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    loc, scale = args
    return (loc + scale * box_muller(words[..., 0], words[..., 1])).astype(dtype, copy=False)


def _lognormal(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    mean, sigma = args
    z = box_muller(words[..., 0], words[..., 1])
    with np.errstate(over="ignore"):  # inf, as NumPy gives, for huge mean or sigma
        return np.exp(mean + sigma * z).astype(dtype, copy=False)


def _standard_exponential(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    return (-np.log(unit_open(words[..., 0]))).astype(dtype, copy=False)


def _exponential(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    (scale,) = args
    return (-np.log(unit_open(words[..., 0])) * scale).astype(dtype, copy=False)


def _integers(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    low, high = args[0], args[1]
    endpoint = bool(args[2]) if len(args) > 2 else False
    r = high - low + (1 if endpoint else 0)
    values = mulhi(words[..., 0], r)
    values += np.uint64(low % (1 << 64))  # two's complement: wraps to low + offset
    if dtype.kind == "i":
        values = values.view(np.int64)
    return values.astype(dtype, copy=False)


class Distribution(NamedTuple):
    """Words per element and the conversion of words to values."""

    per: int
    convert: Convert


DISTRIBUTIONS: dict[str, Distribution] = {
    "random": Distribution(1, _random),
    "uniform": Distribution(1, _uniform),
    "standard_normal": Distribution(2, _standard_normal),
    "normal": Distribution(2, _normal),
    "integers": Distribution(1, _integers),
    "exponential": Distribution(1, _exponential),
    "standard_exponential": Distribution(1, _standard_exponential),
    "lognormal": Distribution(2, _lognormal),
    "gamma": Distribution(PER, gamma.gamma),
    "standard_gamma": Distribution(PER, gamma.standard_gamma),
    "beta": Distribution(2 * PER, gamma.beta),
    "poisson": Distribution(PER, discrete.poisson),
    "binomial": Distribution(PER, discrete.binomial),
}


def distribution(name: str) -> Distribution:
    """The distribution called ``name``; ``NotImplementedError`` if there is none."""
    try:
        return DISTRIBUTIONS[name]
    except KeyError:
        raise NotImplementedError(f"random distribution {name!r} has no NumPy kernel") from None
