"""Poisson and binomial counts from each element's own words (inversion, or transformed rejection).

* ``poisson(lam)``: for ``lam < 10``, inversion of one uniform (word 0) by
  sequential search of the CDF (NumPy's own choice of method there); for
  ``lam >= 10``, PTRS, Hörmann's transformed rejection with squeeze (W.
  Hörmann 1993, "The transformed rejection method for generating Poisson
  random variables"), the algorithm NumPy uses, with over 90% of
  proposals accepted and retries from the element's sub-stream.
* ``binomial(n, p)``: with ``q = min(p, 1 - p)`` (``n - X`` when ``p > 1/2``),
  inversion of one uniform for ``n q < 10``; otherwise BTRS, Hörmann's
  transformed rejection for the binomial (W. Hörmann 1993, "The generation
  of binomial random variates"; also JAX's and TensorFlow's), retries from
  the sub-stream.
* the searches stop where the CDF stops growing in float64 (so a uniform
  above the rounded CDF's top, probability about ``2**-52``, gets the last
  count reached); ``ln k!`` is a table below 1024 and NumPy's ``random_loggam`` Stirling
  series above.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lazyarr.kernels.reference.bits import unit
from lazyarr.kernels.reference.substream import PER, flat_param, rejection

__all__ = ["binomial", "log_factorial", "poisson"]

POISSON_INVERSION_MAX = 10.0
BINOMIAL_INVERSION_MAX = 10.0

_STIRLING = (
    8.333333333333333e-02,
    -2.777777777777778e-03,
    7.936507936507937e-04,
    -5.952380952380952e-04,
    8.417508417508418e-04,
    -1.917526917526918e-03,
    6.410256410256410e-03,
    -2.955065359477124e-02,
    1.796443723688307e-01,
    -1.39243221690590e00,
)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


_TABLE = np.array([math.lgamma(k + 1.0) for k in range(1024)])


def log_factorial(k: np.ndarray) -> np.ndarray:
    """``ln k!`` for whole numbers ``k >= 0`` (float64): a table below 1024, else the
    Stirling series of NumPy's ``random_loggam`` (exact to rounding there)."""
    k = np.asarray(k, dtype=np.float64)
    small = k < _TABLE.size
    out = _TABLE[np.where(small, k, 0.0).astype(np.intp)]
    if not small.all():
        x = np.where(small, float(_TABLE.size), k + 1.0)
        x2 = 1.0 / (x * x)
        series = np.full_like(x, _STIRLING[9])
        for c in _STIRLING[8::-1]:
            series = series * x2 + c
        big = series / x + _HALF_LOG_2PI + (x - 0.5) * np.log(x) - x
        out = np.where(small, out, big)
    return out


def _search(
    u: np.ndarray,
    first: np.ndarray,
    ratio: Callable[[int, np.ndarray], np.ndarray],
    limit: np.ndarray,
) -> np.ndarray:
    """The least ``k`` with ``u < P(0) + ... + P(k)``, stepping ``P(k) = P(k-1) * ratio(k, idx)``
    from ``P(0) = first``; it stops at ``limit`` or where ``P(k)`` underflows to 0."""
    k = np.zeros(u.shape, dtype=np.float64)
    pk = first.astype(np.float64, copy=True)
    cdf = pk.copy()
    idx = np.flatnonzero((u >= cdf) & (k < limit))
    step = 0
    while idx.size:
        step += 1
        pk[idx] *= ratio(step, idx)
        cdf[idx] += pk[idx]
        k[idx] = step
        idx = idx[(u[idx] >= cdf[idx]) & (pk[idx] > 0) & (step < limit[idx])]
    return k


def _pick(x: object, idx: np.ndarray) -> object:
    return x if np.ndim(x) == 0 else x[idx]


def _ptrs(w: np.ndarray, params: tuple) -> tuple[np.ndarray, np.ndarray]:
    (lam,) = params
    b = 0.931 + 2.53 * np.sqrt(lam)
    a = -0.059 + 0.02483 * b
    vr = 0.9277 - 3.6224 / (b - 2.0)
    u = unit(w[:, 0]) - 0.5
    v = unit(w[:, 1])
    us = 0.5 - np.abs(u)
    k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
    bad = ~np.isfinite(k) | (k < 0) | ((us < 0.013) & (v > us))
    ok = (us >= 0.07) & (v <= vr) & ~bad
    # the exact test, only where the squeeze neither accepted nor rejected
    slow = np.flatnonzero(~ok & ~bad)
    if slow.size:
        lam_s, b_s, a_s = _pick(lam, slow), _pick(b, slow), _pick(a, slow)
        us_s, k_s = us[slow], k[slow]
        invalpha = 1.1239 + 1.1328 / (b_s - 3.4)
        lhs = np.log(v[slow]) + np.log(invalpha) - np.log(a_s / (us_s * us_s) + b_s)
        ok[slow] = lhs <= -lam_s + k_s * np.log(lam_s) - log_factorial(k_s)
    return ok, k


def poisson(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    """Poisson counts of mean ``args[0]`` (a scalar or one per element)."""
    (lam,) = args
    lead = words.shape[:-1]
    flat = words.reshape(-1, PER)
    lam_f = np.broadcast_to(np.asarray(lam, dtype=np.float64), lead).reshape(-1)
    out = np.zeros(flat.shape[0], dtype=np.float64)
    small = np.flatnonzero(lam_f < POISSON_INVERSION_MAX)
    large = np.flatnonzero(lam_f >= POISSON_INVERSION_MAX)
    if small.size:
        ls = lam_f[small]
        with np.errstate(all="ignore"):
            out[small] = _search(
                unit(flat[small, 0]), np.exp(-ls), lambda k, i: ls[i] / k, np.full(ls.shape, 1e4)
            )
    if large.size:
        out[large] = rejection(flat[large], (lam_f[large],), _ptrs)
    return out.reshape(lead).astype(dtype)


def _btrs(w: np.ndarray, params: tuple) -> tuple[np.ndarray, np.ndarray]:
    n, q = params
    spq = np.sqrt(n * q * (1.0 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    vr = 0.92 - 4.2 / b
    u = unit(w[:, 0]) - 0.5
    v = unit(w[:, 1])
    us = 0.5 - np.abs(u)
    k = np.floor((2.0 * a / us + b) * u + n * q + 0.5)
    bad = ~np.isfinite(k) | (k < 0) | (k > n)
    ok = (us >= 0.07) & (v <= vr) & ~bad
    # the exact test, only where the squeeze neither accepted nor rejected
    slow = np.flatnonzero(~ok & ~bad)
    if slow.size:
        n_s, q_s, a_s, b_s = _pick(n, slow), _pick(q, slow), _pick(a, slow), _pick(b, slow)
        us_s, k_s = us[slow], k[slow]
        alpha = (2.83 + 5.1 / b_s) * _pick(spq, slow)
        m = np.floor((n_s + 1.0) * q_s)
        h = log_factorial(m) + log_factorial(n_s - m)
        lhs = np.log(v[slow] * alpha / (a_s / (us_s * us_s) + b_s))
        rhs = (
            h
            - log_factorial(k_s)
            - log_factorial(n_s - k_s)
            + (k_s - m) * np.log(q_s / (1.0 - q_s))
        )
        ok[slow] = lhs <= rhs
    return ok, k


def binomial(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
    """Binomial counts of ``(n, p)`` (scalars or one per element)."""
    n, p = args
    lead = words.shape[:-1]
    flat = words.reshape(-1, PER)
    n_f = flat_param(np.asarray(n, dtype=np.float64), lead)
    p_f = flat_param(np.asarray(p, dtype=np.float64), lead)
    n_f = np.broadcast_to(n_f, flat.shape[:1]).copy()
    p_f = np.broadcast_to(p_f, flat.shape[:1])
    flip = p_f > 0.5
    q = np.where(flip, 1.0 - p_f, p_f)
    x = np.zeros(flat.shape[0], dtype=np.float64)
    with np.errstate(all="ignore"):
        small = np.flatnonzero(n_f * q < BINOMIAL_INVERSION_MAX)
        large = np.flatnonzero(n_f * q >= BINOMIAL_INVERSION_MAX)
        if small.size:
            ns, qs = n_f[small], q[small]
            s = qs / (1.0 - qs)
            x[small] = _search(
                unit(flat[small, 0]),
                (1.0 - qs) ** ns,
                lambda k, i: (ns[i] + 1.0 - k) / k * s[i],
                ns,
            )
        if large.size:
            x[large] = rejection(flat[large], (n_f[large], q[large]), _btrs)
    x = np.where(flip, n_f - x, x)
    return x.reshape(lead).astype(dtype)
