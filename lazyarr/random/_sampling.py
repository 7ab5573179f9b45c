"""Sampling from a population and shuffling: whole-array orders made from per-element random keys.

A random permutation is the argsort of random keys: element ``i`` gets the
64-bit Philox word at its flat index (ties, about ``n**2 / 2**65`` likely,
keep index order: the sort is stable), so the permutation depends on the
seed and ``n`` alone, never on chunks or executor. The sort is a
whole-array operation for now (O(n log n) in one task, not block-local;
issue 13's distributed sort will make it scale), and so is every reader of
the permutation: ``take_along_axis`` reads the whole permuted axis.

* ``permutation(n)``/``permutation(x, axis)``/``shuffle(x, axis)``: the
  argsort of ``n`` keys, and ``x`` taken along ``axis`` in that order
  (``shuffle`` is NumPy's in-place shuffle made out of place: it returns a
  new lazy array).
* ``permuted(x, axis)``: every line along ``axis`` (or the flattened array)
  by the argsort of its own keys.
* ``choice(a, size, replace=True, p=None)``: with replacement, uniform
  indices (``integers``) or, with ``p``, NumPy's inversion (the ``right``
  ``searchsorted`` of uniforms in the normalised ``cumsum(p)``); without
  replacement, the first ``size`` of a random permutation, or with ``p``
  the exponential race (Efraimidis and Spirakis): the ``size`` smallest
  ``E_i / p_i`` with ``E_i`` standard exponential, which has the law of
  drawing one at a time proportionally to ``p`` without replacement, as
  NumPy does.
* ``multivariate_normal(mean, cov, size)``: ``mean + z @ A`` with ``z``
  standard normal (the last axis one block) and ``A`` NumPy's factor of
  ``cov`` (``svd``, ``cholesky`` or ``eigh``, as ``method`` says); the
  product's rounding may differ in the last bits between executors (BLAS).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunks_for
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import indexing, rechunk, sorting
from lazyarr.graph.ops import manipulation as manip
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.random._core import make, seed_of, shape_of

__all__ = ["choice", "multivariate_normal", "permutation", "permuted", "shuffle"]

_RNG = np.random.default_rng(0)  # NumPy's argument checks (its draws are thrown away)
_PROBE_LIMIT = 1000  # sample sizes NumPy's own checks are run on as they are
_M64 = (1 << 64) - 1


def _keys(shape: tuple[int, ...], seed: int) -> Expr:
    """The raw Philox word of every element: uint64 keys to sort by."""
    return make("integers", shape, np.uint64, "auto", seed, (0, _M64, True))._expr


def _order(keys: Expr, axis: int = 0) -> Expr:
    """The stable argsort of ``keys`` along ``axis`` (an axis of several blocks: the sample
    sort, which keeps its blocks; otherwise whole lines, one block along it)."""
    return sorting.sort(keys, axis, kind="stable", arg=True)


def _take(x: Expr, idx: Expr, axis: int) -> Expr:
    """``x`` taken along ``axis`` at the 1-d ``idx`` (the other axes whole)."""
    shape = [1] * x.ndim
    shape[axis] = idx.shape[0]
    return indexing.take_along_axis(x, manip.reshape(idx, tuple(shape)), axis)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(
            f"la.random.{name}: out= is not supported (lazy arrays are not written in place; "
            "use the returned array)"
        )


def _array_expr(x: Any, axis: int, name: str) -> tuple[Expr, int]:
    e = as_expr(x)
    if e.ndim < 1:
        raise IndexError("x must be an integer or at least 1-dimensional")
    return e, normalize_axis(axis, e.ndim, f"random.{name}")


def permutation(x: Any, axis: int = 0, *, chunks: Any = "auto", seed: Any = None) -> LazyArray:
    """A random permutation of ``range(x)`` (an int), or ``x`` shuffled along ``axis``.

    ``chunks`` gives the blocks of ``permutation(n)``; a permuted array keeps
    the chunks of ``x``.
    """
    seed = seed_of(seed)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        n = max(int(x), 0)
        order = _order(_keys((n,), seed))
        return wrap(rechunk(order, chunks_for(chunks, (n,), order.dtype)))
    e, axis = _array_expr(x, axis, "permutation")
    order = _order(_keys((e.shape[axis],), seed))
    return wrap(rechunk(_take(e, order, axis), e.chunks))


def shuffle(x: Any, axis: int = 0, *, seed: Any = None) -> LazyArray:
    """``x`` shuffled along ``axis``, out of place: a new lazy array (NumPy shuffles in place)."""
    if isinstance(x, (int, np.integer)):
        raise TypeError("shuffle: x must be an array, not an int (use permutation)")
    return permutation(x, axis, seed=seed)


def permuted(x: Any, *, axis: int | None = None, out: Any = None, seed: Any = None) -> LazyArray:
    """``x`` with every line along ``axis`` shuffled on its own (the flattened ``x`` if None)."""
    _no_out("permuted", out)
    seed = seed_of(seed)
    e = as_expr(x)
    if axis is None:
        flat = manip.reshape(e, (e.size,))
        line = _take(flat, _order(_keys((e.size,), seed)), 0)
        return wrap(rechunk(manip.reshape(line, e.shape), e.chunks))
    axis = normalize_axis(axis, e.ndim, "random.permuted")
    order = _order(_keys(e.shape, seed), axis)
    return wrap(rechunk(indexing.take_along_axis(e, order, axis), e.chunks))


def _choice_indices(
    n: int, shape: tuple[int, ...], replace: bool, p: np.ndarray | None, chunks: Any, seed: int
) -> Expr:
    """The population indices of a sample of ``shape`` (int64)."""
    k = math.prod(shape)
    if replace and p is None:
        return make("integers", shape, np.int64, chunks, seed, (0, max(n, 1), False))._expr
    if replace:
        cdf = np.cumsum(p, dtype=np.float64)
        cdf /= cdf[-1]
        u = make("random", shape, np.float64, chunks, seed)._expr
        return sorting.searchsorted(as_expr(cdf), u, "right")
    if p is None:
        order = _order(_keys((n,), seed))
        first = indexing.getitem(order, (slice(0, k),))
    else:
        nonzero = np.flatnonzero(p > 0)
        e = make("standard_exponential", (nonzero.size,), np.float64, "auto", seed)
        order = _order((e * (1.0 / p[nonzero]))._expr)
        first = _take(as_expr(nonzero.astype(np.int64)), indexing.getitem(order, (slice(0, k),)), 0)
    return manip.reshape(first, shape)


def choice(
    a: Any,
    size: Any = None,
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    shuffle: bool = True,
    *,
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """A random sample from ``a`` (an array, or ``range(a)`` for an int), NumPy's arguments.

    Without replacement the sample is always in random order (``shuffle``
    is accepted and has no effect) and comes from a whole-array sort, so
    ``chunks`` shapes only samples with replacement. A lazy ``p``, or a
    lazy 0-d ``a``, is computed first: their values choose the method.
    """
    shape = shape_of(size, "choice")
    k = math.prod(shape)
    if isinstance(a, LazyArray) and a.ndim == 0:
        a = a.compute()
    lazy = isinstance(a, LazyArray)
    stand_in = np.zeros(a.shape, np.int8) if lazy else a
    if isinstance(p, LazyArray):
        p = p.compute()
    # NumPy's own checks (types, p, sizes), on the sample itself when it is small
    _RNG.choice(stand_in, shape if k <= _PROBE_LIMIT else None, replace, p, axis, shuffle)
    population = np.ndim(stand_in) == 0
    n = operator.index(np.asarray(stand_in).item()) if population else np.shape(stand_in)[axis]
    p = None if p is None else np.asarray(p, dtype=np.float64)
    if not replace and k > n:
        raise ValueError("Cannot take a larger sample than population when replace is False")
    if not replace and p is not None and np.count_nonzero(p > 0) < k:
        raise ValueError("Fewer non-zero entries in p than size")
    idx = _choice_indices(n, shape, bool(replace), p, chunks, seed_of(seed))
    if population:
        return wrap(idx)
    e = as_expr(a)
    axis = normalize_axis(axis, e.ndim, "random.choice")
    moved = manip.moveaxis(e, axis, 0) if axis else e
    picked = _take(moved, manip.reshape(idx, (k,)), 0)
    picked = manip.reshape(picked, shape + moved.shape[1:])
    if axis and shape:
        lead = tuple(range(len(shape)))
        picked = manip.moveaxis(picked, lead, tuple(a + axis for a in lead))
    return wrap(picked)


def multivariate_normal(
    mean: Any,
    cov: Any,
    size: Any = None,
    check_valid: str = "warn",
    tol: float = 1e-8,
    *,
    method: str = "svd",
    chunks: Any = "auto",
    seed: Any = None,
) -> LazyArray:
    """Samples of the multivariate normal of ``mean`` and ``cov``, shape ``size + (len(mean),)``:
    ``mean + z @ A`` for NumPy's factor ``A`` of ``cov`` (lazy ``mean``/``cov`` are computed)."""
    mean = np.asarray(mean.compute() if isinstance(mean, LazyArray) else mean, dtype=np.float64)
    cov = np.asarray(cov.compute() if isinstance(cov, LazyArray) else cov, dtype=np.float64)
    # NumPy's checks: shapes, check_valid, method, and its warning or error for a bad cov
    _RNG.multivariate_normal(mean, cov, None, check_valid, tol, method=method)
    d = mean.shape[0]
    shape = (*shape_of(size, "multivariate_normal"), d)
    if method == "cholesky":
        factor = np.linalg.cholesky(cov).T
    elif method == "eigh":
        s, u = np.linalg.eigh(cov)
        factor = np.sqrt(np.abs(s))[:, None] * u.T
    else:
        _, s, vh = np.linalg.svd(cov)
        factor = np.sqrt(s)[:, None] * vh
    zchunks = chunks_for(chunks, shape, np.dtype(np.float64))
    zchunks = (*zchunks[:-1], (d,) if d else (0,))
    z = make("standard_normal", shape, np.float64, zchunks, seed)
    return z @ factor + mean
