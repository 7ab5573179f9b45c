"""Gamma and beta values from each element's own words (Marsaglia-Tsang, beta from two gammas).

* ``gamma(shape, scale)``: Marsaglia and Tsang (2000), "A simple method for
  generating gamma variables": for ``a >= 1``, ``d = a - 1/3``,
  ``c = 1 / sqrt(9 d)``, a normal ``x`` (Box-Muller on proposal words 0, 1)
  and ``v = (1 + c x)**3``; accept ``d v`` when ``v > 0`` and
  ``ln u < x**2 / 2 + d - d v + d ln v`` (``u`` from word 2); over 95% of
  proposals are accepted. For ``a < 1`` the value is
  ``gamma(a + 1) * u'**(1/a)`` with ``u'`` from word 3 of the accepted
  proposal (independent of the acceptance). ``a == 0`` gives 0 as NumPy
  does. Retries come from the element's sub-stream (``substream.py``).
* ``beta(a, b)``: ``X / (X + Y)`` for ``X ~ gamma(a)`` on the element's
  first six words and ``Y ~ gamma(b)`` on the next six, computed from the
  logarithms (``1 / (1 + exp(ln Y - ln X))``) so that tiny shapes, whose
  gammas underflow, still give values in [0, 1].
"""

from __future__ import annotations

import numpy as np

from lazyarr.kernels.reference.bits import box_muller, unit_open
from lazyarr.kernels.reference.substream import PER, rejection

__all__ = ["beta", "gamma", "log_gamma", "standard_gamma"]


def _propose(w: np.ndarray, params: tuple) -> tuple[np.ndarray, np.ndarray]:
    """One Marsaglia-Tsang proposal per row of words: (accepted, log of the value)."""
    (a,) = params
    boost = a < 1
    d = np.where(boost, a + 1.0, a) - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    x = box_muller(w[:, 0], w[:, 1])
    v = 1.0 + c * x
    log_v3 = 3.0 * np.log(v)  # NaN where v <= 0: rejected below
    v3 = v * v * v
    u = unit_open(w[:, 2])
    ok = (v > 0) & (np.log(u) < 0.5 * x * x + d - d * v3 + d * log_v3)
    log_value = np.log(d) + log_v3
    log_value = np.where(boost, log_value + np.log(unit_open(w[:, 3])) / a, log_value)
    log_value = np.where(a == 0, -np.inf, log_value)
    return ok, log_value


def log_gamma(words: np.ndarray, a: object) -> np.ndarray:
    """``ln`` of standard gamma values of shape ``a`` from ``words`` of shape ``(..., PER)``."""
    return rejection(words, (np.asarray(a, dtype=np.float64),), _propose)


def standard_gamma(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    """Gamma values of shape ``args[0]`` and scale 1."""
    (a,) = args
    return np.exp(log_gamma(words, a)).astype(dtype, copy=False)


def gamma(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    """Gamma values of ``(shape, scale)``."""
    a, scale = args
    return (np.exp(log_gamma(words, a)) * scale).astype(dtype, copy=False)


def beta(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    """Beta values of ``(a, b)`` from ``2 * PER`` words per element."""
    a, b = args
    lx = log_gamma(words[..., :PER], a)
    ly = log_gamma(words[..., PER:], b)
    with np.errstate(all="ignore"):
        diff = ly - lx
        # both gammas 0 (shapes so small both underflow): the larger logarithm wins
        diff = np.where(np.isnan(diff), np.where(lx >= ly, -np.inf, np.inf), diff)
        return (1.0 / (1.0 + np.exp(diff))).astype(dtype, copy=False)
