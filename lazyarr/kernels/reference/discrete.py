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
  count reached); ``ln k!`` is NumPy's ``random_loggam`` Stirling series.
"""

from __future__ import annotations

import math

import numpy as np

from lazyarr.kernels.reference.bits import unit
from lazyarr.kernels.reference.substream import PER, flat_param, rejection

__all__ = ["binomial", "loggam", "poisson"]

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


def loggam(x: np.ndarray) -> np.ndarray:
    """``ln Gamma(x)`` for ``x >= 1`` (NumPy's ``random_loggam``: shifted above 7, Stirling)."""
    x = np.asarray(x, dtype=np.float64)
    n = np.where(x < 7.0, np.floor(7.0 - x), 0.0)
    x0 = x + n
    x2 = 1.0 / (x0 * x0)
    series = np.full_like(x0, _STIRLING[9])
    for c in _STIRLING[8::-1]:
        series = series * x2 + c
    out = series / x0 + _HALF_LOG_2PI + (x0 - 0.5) * np.log(x0) - x0
    for i in range(7):
        out = np.where(n > i, out - np.log(x + i), out)
    return np.where((x == 1.0) | (x == 2.0), 0.0, out)


def _search(u: np.ndarray, first: np.ndarray, ratio, limit: np.ndarray) -> np.ndarray:
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


def _ptrs(w: np.ndarray, params: tuple) -> tuple[np.ndarray, np.ndarray]:
    (lam,) = params
    slam, loglam = np.sqrt(lam), np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    u = unit(w[:, 0]) - 0.5
    v = unit(w[:, 1])
    us = 0.5 - np.abs(u)
    k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
    fast = (us >= 0.07) & (v <= vr)
    bad = ~np.isfinite(k) | (k < 0) | ((us < 0.013) & (v > us))
    slow = np.log(v) + np.log(invalpha) - np.log(a / (us * us) + b) <= (
        -lam + k * loglam - loggam(np.where(bad, 0.0, k) + 1.0)
    )
    return (fast & ~bad) | (~bad & slow), k


def poisson(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
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
    r = q / (1.0 - q)
    spq = np.sqrt(n * q * (1.0 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = n * q + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = np.floor((n + 1.0) * q)
    h = loggam(m + 1.0) + loggam(n - m + 1.0)
    u = unit(w[:, 0]) - 0.5
    v = unit(w[:, 1])
    us = 0.5 - np.abs(u)
    k = np.floor((2.0 * a / us + b) * u + c)
    bad = ~np.isfinite(k) | (k < 0) | (k > n)
    fast = (us >= 0.07) & (v <= vr)
    ks = np.where(bad, 0.0, k)
    slow = np.log(v * alpha / (a / (us * us) + b)) <= (
        h - loggam(ks + 1.0) - loggam(n - ks + 1.0) + (ks - m) * np.log(r)
    )
    return ~bad & (fast | slow), k


def binomial(words: np.ndarray, args: tuple, dtype: np.dtype) -> np.ndarray:
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
