"""64-bit Philox words as numbers: exact multiply-high and floats on the 2**-53 grid.

Shared by the stream (``philox.py``, which needs ``mulhi`` for its rounds)
and the distributions that turn words into values, so neither imports the
other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_muller", "mulhi", "unit", "unit_open"]

_M32 = np.uint64(0xFFFFFFFF)
_S11 = np.uint64(11)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_PI = float(np.pi)


def unit(w: np.ndarray) -> np.ndarray:
    """float64 in [0, 1) on the 2**-53 grid (exact: 53-bit integers convert exactly)."""
    return (w >> _S11) * 2.0**-53


def unit_open(w: np.ndarray) -> np.ndarray:
    """float64 in (0, 1] on the 2**-53 grid: its logarithm is always finite."""
    return ((w >> _S11) + _ONE) * 2.0**-53


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


def box_muller(w0: np.ndarray, w1: np.ndarray) -> np.ndarray:
    """A standard normal float64 from two words: ``sqrt(-2 ln u1) * sin(pi (u2 - 1/2))``.

    ``u1`` in (0, 1] keeps the log finite; ``sin`` of a uniform angle in
    [-pi/2, pi/2) has the law of ``cos`` of one on the whole circle (and costs
    half as much). Every transcendental step sees a fresh contiguous array,
    so NumPy takes the same loop whatever the block.
    """
    u1 = unit_open(w0)
    phi = (unit(w1) - 0.5) * _PI
    r = np.log(u1)
    r *= -2.0
    np.sqrt(r, out=r)
    np.sin(phi, out=phi)
    r *= phi
    return r
