"""Random values from Philox words: each element from its own fixed words, no rejection.

A distribution is ``(per, convert)``: every element owns ``per`` 64-bit
words (see ``philox.py``) and ``convert(words, args, dtype)`` turns words of
shape ``(..., per)`` into values of shape ``(...)``. Nothing consumes a
variable number of words, so any element can be drawn alone.

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
* ``integers(low, high, endpoint)``: ``low + floor(u * r / 2**64)`` with
  ``r = high - low (+ 1 with endpoint)``, the multiply-high done exactly
  with 32-bit halves in uint64 arithmetic; ``r = 2**64`` (the full int64 or
  uint64 span) is ``low + u``. Each value gets ``floor`` or ``ceil`` of
  ``2**64 / r`` of the words, so its probability is within ``2**-64`` of
  ``1 / r``: a relative bias of at most ``r / 2**64``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["DISTRIBUTIONS", "Distribution", "distribution", "mulhi"]

Convert = Callable[[np.ndarray, tuple, np.dtype], np.ndarray]

_M32 = np.uint64(0xFFFFFFFF)
_S11 = np.uint64(11)
_S32 = np.uint64(32)
_S40 = np.uint64(40)


def _unit(w: np.ndarray) -> np.ndarray:
    # float64 in [0, 1) on the 2**-53 grid (exact: 53-bit integers convert exactly)
    return (w >> _S11) * 2.0**-53


def _random(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    w = words[..., 0]
    if dtype == np.float32:
        return (w >> _S40).astype(np.float32) * np.float32(2.0**-24)
    return _unit(w)


def _uniform(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    low, high = args
    return (low + (high - low) * _unit(words[..., 0])).astype(dtype, copy=False)


def _standard_normal_f64(words: np.ndarray) -> np.ndarray:
    # u1 in (0, 1] keeps the log finite; every transcendental step sees a
    # fresh contiguous array, so NumPy takes the same loop whatever the block
    u1 = ((words[..., 0] >> _S11) + np.uint64(1)) * 2.0**-53
    phi = (_unit(words[..., 1]) - 0.5) * math.pi
    r = np.log(u1)
    r *= -2.0
    np.sqrt(r, out=r)
    np.sin(phi, out=phi)
    r *= phi
    return r


def _standard_normal(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    return _standard_normal_f64(words).astype(dtype, copy=False)


def _normal(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    loc, scale = args
    return (loc + scale * _standard_normal_f64(words)).astype(dtype, copy=False)


def mulhi(u: np.ndarray, r: int) -> np.ndarray:
    """``floor(u * r / 2**64)`` for uint64 ``u`` and ``1 <= r <= 2**64``, exactly."""
    if r == 1 << 64:
        return u.copy()
    uh, ul = u >> _S32, u & _M32
    if r <= 1 << 32:
        # uh * r + (ul * r >> 32) < 2**64: no carry is lost
        rr = np.uint64(r)
        return (uh * rr + ((ul * rr) >> _S32)) >> _S32
    rh, rl = np.uint64(r >> 32), np.uint64(r & 0xFFFFFFFF)
    hh, hl, lh = uh * rh, uh * rl, ul * rh
    mid = ((ul * rl) >> _S32) + (hl & _M32) + (lh & _M32)  # < 3 * 2**32
    return hh + (hl >> _S32) + (lh >> _S32) + (mid >> _S32)


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
}


def distribution(name: str) -> Distribution:
    """The distribution called ``name``; ``NotImplementedError`` if there is none."""
    try:
        return DISTRIBUTIONS[name]
    except KeyError:
        raise NotImplementedError(f"random distribution {name!r} has no NumPy kernel") from None
