"""SVD and least squares of tall-skinny (and short-fat) arrays on top of TSQR.

Built only from existing ops: :func:`~lazyarr.graph.ops.tsqr.tsqr` for the
row blocks, ``numpy.linalg`` on the small ``n x n`` factor (``CoreMap``),
block matrix products (``Matmul``: a row block times a small matrix stays
on its block; ``Q^H b`` is a contraction summed in a tree) and reductions.

* :func:`svd_tall`: ``x = Q R``, ``R = U_r S V^H``, ``U = Q U_r`` (U in
  ``x``'s row blocks); :func:`svd_wide` is the same on the conjugate
  transpose (``Vh`` in ``x``'s column blocks).
* :func:`lstsq`: ``x = solve(R, Q^H b)``; residuals ``sum |b - a x|^2``,
  the rank from the singular values of ``R`` (those of ``a``) against
  NumPy's ``rcond`` cut-off.
* :func:`svd_compressed`: randomized SVD (Halko, Martinsson and Tropp,
  "Finding structure with randomness", algorithm 4.3/4.4 with power
  iterations): ``Y = x Omega`` keeps ``x``'s row blocks, is orthonormalized
  by TSQR, ``B = Q^H x`` is a small contraction summed in a tree, and the SVD
  of ``B`` gives the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.creation import full
from lazyarr.graph.ops.elementwise import elementwise
from lazyarr.graph.ops.indexing import getitem
from lazyarr.graph.ops.linalg import core_map, matmul, permute
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.ops.reduction import reduce
from lazyarr.graph.ops.tsqr import FAN_IN, tsqr

__all__ = [
    "conj_t",
    "is_short_fat",
    "is_tall_skinny",
    "lstsq",
    "qr_tall",
    "svd_compressed",
    "svd_flip",
    "svd_tall",
    "svd_wide",
]


def is_tall_skinny(x: Expr, rows: int = 0) -> bool:
    """2-d, at least as many rows as columns, several row blocks none shorter than the width.

    ``rows=1``: the same of the transpose (a short-fat ``x`` in column blocks).
    """
    if x.ndim != 2:
        return False
    cols = 1 - rows
    if x.shape[rows] < x.shape[cols] or x.numblocks[rows] < 2:
        return False
    return min(x.chunks[rows]) >= x.shape[cols]


def is_short_fat(x: Expr) -> bool:
    """:func:`is_tall_skinny` of the transpose."""
    return is_tall_skinny(x, rows=1)


def conj_t(x: Expr) -> Expr:
    """The conjugate transpose of a 2-d ``x`` (blocks move with their axes)."""
    if x.dtype.kind == "c":
        x = elementwise("conjugate", x)
    return permute(x, (1, 0))


def _one_column_block(x: Expr) -> Expr:
    return rechunk(x, (x.chunks[0], (x.shape[1],))) if x.numblocks[1] > 1 else x


def qr_tall(x: Expr, fan_in: int = FAN_IN) -> tuple[Expr, Expr]:
    """``(Q, R)`` of a tall-skinny ``x`` by TSQR, its column blocks merged first."""
    return tsqr(_one_column_block(x), fan_in)


def svd_tall(x: Expr, compute_uv: bool = True, fan_in: int = FAN_IN) -> tuple[Expr, ...]:
    """``(U, S, Vh)`` (``full_matrices=False``) or ``(S,)`` of a tall-skinny ``x``."""
    q, r = qr_tall(x, fan_in)
    n = x.shape[1]
    real = np.empty(0, r.dtype).real.dtype
    core = [(0, 1)]
    if not compute_uv:
        kw = {"compute_uv": False, "full_matrices": False, "hermitian": False}
        return (core_map("linalg.svd", [r], core, (0,), (n,), real, kw),)
    kw = {"full_matrices": False, "hermitian": False}
    ur = core_map("linalg.svd", [r], core, (0, 1), (n, n), r.dtype, kw, 0)
    s = core_map("linalg.svd", [r], core, (0,), (n,), real, kw, 1)
    vh = core_map("linalg.svd", [r], core, (0, 1), (n, n), r.dtype, kw, 2)
    return matmul(q, ur), s, vh


def svd_wide(x: Expr, compute_uv: bool = True, fan_in: int = FAN_IN) -> tuple[Expr, ...]:
    """:func:`svd_tall` of ``x``'s conjugate transpose, turned back: ``Vh`` keeps column blocks."""
    parts = svd_tall(conj_t(x), compute_uv, fan_in)
    if not compute_uv:
        return parts
    u, s, vh = parts
    return conj_t(vh), s, conj_t(u)


def _lstsq_dtypes(a: Expr, b: Expr) -> tuple[np.dtype, np.dtype, np.dtype]:
    """NumPy's dtypes of lstsq's solution, residuals and singular values."""
    bshape = (2,) if b.ndim == 1 else (2, 1)
    x, res, _, s = np.linalg.lstsq(np.eye(2, 1, dtype=a.dtype), np.ones(bshape, b.dtype))
    return x.dtype, res.dtype, s.dtype


def lstsq(a: Expr, b: Expr, rcond: float | None = None, fan_in: int = FAN_IN) -> tuple[Expr, ...]:
    """``(x, residuals, rank, s)`` of ``a x = b`` for ``a`` with ``m >= n`` (TSQR).

    ``a`` is first rechunked into one column block, and into a single row
    block when a row block is shorter than ``a`` is wide; ``b`` follows
    ``a``'s row blocks. Exact for ``a`` of full column rank.
    """
    if a.ndim != 2:
        raise np.linalg.LinAlgError(
            f"lstsq: {a.ndim}-dimensional array given. Array must be two-dimensional"
        )
    if b.ndim not in (1, 2):
        raise np.linalg.LinAlgError(f"lstsq: b must be 1-d or 2-d (got shape {b.shape})")
    m, n = a.shape
    if b.shape[0] != m:
        raise np.linalg.LinAlgError(
            f"lstsq: Incompatible dimensions (a has {m} rows, b has {b.shape[0]})"
        )
    if m < n:
        raise NotImplementedError(
            f"lstsq: underdetermined systems (shape {a.shape}, fewer rows than columns) are not "
            "supported by the lazy TSQR solver"
        )
    xdt, rdt, sdt = _lstsq_dtypes(a, b)
    a, b = _as(a, xdt), _as(b, xdt)  # NumPy solves in the common dtype
    a = _one_column_block(a)
    if min(a.chunks[0]) < n:
        a = rechunk(a, ((m,), (n,)))
    b = rechunk(b, (a.chunks[0], *((k,) for k in b.shape[1:])))
    q, r = tsqr(a, fan_in)
    qtb = matmul(conj_t(q), b)
    bcore = tuple(range(b.ndim))
    x = core_map("linalg.solve", [r, qtb], [(0, 1), bcore], bcore, qtb.shape, qtb.dtype)
    x = _as(x, xdt)
    if m > n:
        diff = elementwise("subtract", b, matmul(a, x))
        sq = elementwise("absolute", diff)
        residuals = _as(reduce("sum", elementwise("multiply", sq, sq), 0, b.ndim == 1), rdt)
    else:
        residuals = full((0,), 0, rdt, ((0,),))
    s = core_map("linalg.svdvals", [r], [(0, 1)], (0,), (n,), np.empty(0, r.dtype).real.dtype)
    s = _as(s, sdt)
    return x, residuals, _rank(s, m, n, rcond), s


def _rank(s: Expr, m: int, n: int, rcond: float | None) -> Expr:
    """How many singular values exceed NumPy's cut-off: ``rcond`` (default eps * max(m, n))
    times the largest."""
    if n == 0:
        return full((), 0, np.dtype(np.intp), ())
    eps = float(np.finfo(s.dtype).eps)
    cut = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    big = elementwise("greater", s, elementwise("multiply", reduce("max", s), cut))
    return reduce("count_nonzero", big)


def _as(x: Expr, dtype: Any) -> Expr:
    return x if x.dtype == dtype else elementwise("astype", x, dtype=np.dtype(dtype))


def _orth(y: Expr, fan_in: int) -> Expr:
    """An orthonormal basis ``Q`` of ``y``'s columns, in ``y``'s row blocks when TSQR fits."""
    if not is_tall_skinny(y):
        y = rechunk(y, ((y.shape[0],), (y.shape[1],)))
    return tsqr(_one_column_block(y), fan_in)[0]


def svd_compressed(
    x: Expr, k: int, omega: Expr, n_power_iter: int = 0, fan_in: int = FAN_IN
) -> tuple[Expr, Expr, Expr]:
    """Rank-``k`` ``(U, S, Vh)`` of ``x`` from the random test matrix ``omega`` (``n x l``).

    ``l = omega.shape[1] >= k`` is ``k`` plus the oversampling, at most
    ``min(x.shape)``. ``U`` keeps ``x``'s row blocks; ``S`` and ``Vh`` are one block.
    """
    n = x.shape[1]
    ell = omega.shape[1]
    q = _orth(matmul(x, omega), fan_in)
    for _ in range(n_power_iter):
        z = _orth(matmul(conj_t(x), q), fan_in)
        q = _orth(matmul(x, z), fan_in)
    b = matmul(conj_t(q), x)
    b = rechunk(b, ((ell,), b.chunks[1])) if b.numblocks[0] > 1 else b
    kw = {"full_matrices": False, "hermitian": False}
    real = np.empty(0, b.dtype).real.dtype
    core = [(0, 1)]
    ub = core_map("linalg.svd", [b], core, (0, 1), (ell, ell), b.dtype, kw, 0)
    s = core_map("linalg.svd", [b], core, (0,), (ell,), real, kw, 1)
    vh = core_map("linalg.svd", [b], core, (0, 1), (ell, n), b.dtype, kw, 2)
    u = matmul(q, ub)
    first = slice(0, k)
    return getitem(u, (slice(None), first)), getitem(s, first), getitem(vh, (first, slice(None)))


def svd_flip(u: Expr, vh: Expr) -> tuple[Expr, Expr]:
    """dask's sign convention: each pair flipped so that its row of ``vh`` sums to ``>= 0``.

    Deterministic signs for any chunking and random draw (real dtypes; complex
    vectors are returned as they are).
    """
    if vh.dtype.kind == "c":
        return u, vh
    nonneg = elementwise("greater_equal", reduce("sum", vh, 1), 0)
    signs = elementwise("subtract", elementwise("multiply", _as(nonneg, vh.dtype), 2), 1)
    signs = _as(signs, vh.dtype)
    column = getitem(signs, (slice(None), None))
    return elementwise("multiply", u, signs), elementwise("multiply", vh, column)
