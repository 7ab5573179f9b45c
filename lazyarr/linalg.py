"""The Array API ``linalg`` extension (``la.linalg``) with NumPy's ``numpy.linalg`` names.

* Products (``matmul``, ``tensordot``, ``vecdot``, ``outer``, ``cross``,
  ``trace``, ``diagonal``, ``multi_dot``) are lazy block ops.
* Norms made of sums and maxima are tree reductions: ``vector_norm`` of
  any order and ``matrix_norm`` with ``ord`` in ``'fro'``, 1, -1, inf, -inf.
* Decompositions and solvers (``cholesky``, ``det``, ``eigh``, ``inv``,
  ``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd``, ...), ``cond`` and the
  matrix norms 2, -2 and ``'nuc'`` apply ``numpy.linalg`` to each whole
  matrix: the last two axes are read as one piece per matrix while batch
  axes keep their blocks. That is exact and lazy, but each single matrix
  must fit in memory; no distributed algorithm (blocked Cholesky,
  tall-skinny QR) is used. Each output of ``eigh``/``qr``/``slogdet``/``svd``
  is its own op, so computing several outputs runs the factorization once
  per output. ``eig``/``eigvals`` (whose dtype depends on the values),
  ``tensorsolve`` and ``tensorinv`` are not provided.
* Tall-skinny arrays keep their row blocks (``graph/ops/tsqr.py``,
  ``graph/ops/tallskinny.py``): ``qr`` (modes ``'reduced'`` and ``'r'``) of a
  2-d array with more than one row block, each at least as tall as the array
  is wide, runs TSQR, and ``Q`` comes back in the input's row blocks; ``svd``
  with ``full_matrices=False`` (or ``compute_uv=False``) of such an array runs
  TSQR and the SVD of ``R`` (``U`` in row blocks), and of a short-fat array in
  column blocks the same on its transpose (``Vh`` in column blocks); so does
  ``svdvals``. ``tsqr``
  (dask's name) asks for TSQR explicitly and raises ``ValueError`` for row
  blocks shorter than the width; ``lstsq`` and ``svd_compressed`` are built
  on it (see their docstrings for how they differ from NumPy/dask).
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from lazyarr import random as _random
from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise, reduce
from lazyarr.graph.ops import linalg as lin
from lazyarr.graph.ops import tallskinny as ts
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.tsqr import tsqr as _tsqr
from lazyarr.namespace import linalg as top
from lazyarr.namespace._register import implements

__all__ = [
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svd_compressed",
    "svdvals",
    "tensordot",
    "trace",
    "tsqr",
    "vecdot",
    "vector_norm",
]


def __dir__() -> list[str]:
    """The public names only: ``dir()`` and tab completion show no ``np``, ``Expr`` or helpers."""
    return sorted(__all__)


LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: LazyArray
    eigenvectors: LazyArray


class QRResult(NamedTuple):
    Q: LazyArray
    R: LazyArray


class SlogdetResult(NamedTuple):
    sign: LazyArray
    logabsdet: LazyArray


class SVDResult(NamedTuple):
    U: LazyArray
    S: LazyArray
    Vh: LazyArray


_UNSET: Any = object()


# --------------------------------------------------------------- products


@implements("linalg.matmul")
def matmul(x1: Any, x2: Any, /) -> LazyArray:
    """Matrix product (NumPy's ``matmul`` rules)."""
    return top.matmul(x1, x2)


@implements("linalg.tensordot")
def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> LazyArray:
    """Tensor contraction over ``axes``."""
    return top.tensordot(x1, x2, axes=axes)


@implements("linalg.vecdot")
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Vector dot products along ``axis`` (``x1`` conjugated)."""
    return top.vecdot(x1, x2, axis=axis)


@implements("linalg.matrix_transpose")
def matrix_transpose(x: Any, /) -> LazyArray:
    """Swap the last two axes."""
    return top.matrix_transpose(x)


@implements("linalg.outer")
def outer(x1: Any, x2: Any, /) -> LazyArray:
    """Outer product of two vectors (1-d only, as the Array API asks)."""
    a, b = as_expr(x1), as_expr(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            "linalg.outer: Input arrays must be one-dimensional, but they are "
            f"x1.ndim={a.ndim} and x2.ndim={b.ndim}."
        )
    return wrap(top.outer_expr(a, b))


@implements("linalg.trace")
def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> LazyArray:
    """Sum of the diagonals of the matrices in the last two axes."""
    return wrap(top.trace_expr(as_expr(x), offset, -2, -1, dtype))


@implements("linalg.diagonal")
def diagonal(x: Any, /, *, offset: int = 0) -> LazyArray:
    """Diagonals of the matrices in the last two axes."""
    return wrap(lin.diagonal(as_expr(x), offset, -2, -1))


@implements("linalg.cross")
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Cross products of 3-vectors along ``axis``."""
    a, b = as_expr(x1), as_expr(x2)
    na, nb = a.shape[axis], b.shape[axis]
    if na != 3 or nb != 3:
        raise ValueError(
            "linalg.cross: Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they are {na} and {nb} dimensional instead (shapes {a.shape} and {b.shape})."
        )
    return wrap(top.cross_expr(a, b, axis, axis, axis))


@implements("linalg.multi_dot")
def multi_dot(arrays: Any, *, out: Any = None) -> LazyArray:
    """The chained product ``arrays[0] @ arrays[1] @ ...`` (first/last may be 1-d)."""
    if out is not None:
        raise TypeError("multi_dot: out= is not supported by lazy arrays")
    exprs = [as_expr(a) for a in arrays]
    if len(exprs) < 2:
        raise ValueError("multi_dot: Expecting at least two arrays.")
    for i, e in enumerate(exprs):
        ends = i in (0, len(exprs) - 1)
        if e.ndim != 2 and not (ends and e.ndim == 1):
            raise LinAlgError(
                f"multi_dot: {e.ndim}-dimensional array given. Array must be two-dimensional"
            )
    result = exprs[0]
    for e in exprs[1:]:
        result = lin.matmul(result, e)
    return wrap(result)


# ------------------------------------------------------- whole-matrix maps


def _require_2d(name: str, x: Expr) -> None:
    if x.ndim < 2:
        raise LinAlgError(
            f"linalg.{name}: {x.ndim}-dimensional array given. "
            "Array must be at least two-dimensional"
        )


def _matrix_op(name: str, x: Expr, which: int | None = None, **kwargs: Any) -> Expr:
    """``numpy.linalg.<name>`` applied to each matrix of the last two axes."""
    _require_2d(name, x)
    func = f"linalg.{name}"
    shape, dtype = lin.probe_prepended(lin.CORE_FUNCS[func], [x], kwargs, which, op=func)
    nb = x.ndim - 2
    out_core = tuple(range(nb, len(shape)))
    return lin.core_map(func, [x], [(nb, nb + 1)], out_core, shape, dtype, kwargs, which)


def _float_param(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    raise NotImplementedError(
        f"{name}: only a scalar (or None) is supported by lazy arrays, not {type(value).__name__}"
    )


@implements("linalg.cholesky")
def cholesky(x: Any, /, *, upper: bool = False) -> LazyArray:
    """Cholesky factor of each Hermitian positive-definite matrix."""
    return wrap(_matrix_op("cholesky", as_expr(x), upper=bool(upper)))


@implements("linalg.det")
def det(a: Any, /) -> LazyArray:
    """Determinant of each matrix."""
    return wrap(_matrix_op("det", as_expr(a)))


@implements("linalg.eigh")
def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix."""
    x = as_expr(a)
    parts = (wrap(_matrix_op("eigh", x, i, UPLO=UPLO)) for i in range(2))
    return EighResult(*parts)


@implements("linalg.eigvalsh")
def eigvalsh(a: Any, UPLO: str = "L") -> LazyArray:
    """Eigenvalues (ascending) of each Hermitian matrix."""
    return wrap(_matrix_op("eigvalsh", as_expr(a), UPLO=UPLO))


@implements("linalg.inv")
def inv(a: Any, /) -> LazyArray:
    """Inverse of each square matrix (``LinAlgError`` at compute time if singular)."""
    return wrap(_matrix_op("inv", as_expr(a)))


@implements("linalg.pinv")
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _UNSET) -> LazyArray:
    """Moore-Penrose pseudo-inverse of each matrix.

    ``rtol`` (or ``rcond``) may be an array that broadcasts to the batch shape
    ``a.shape[:-2]``, one cutoff per matrix, as the Array API and NumPy allow.
    """
    x = as_expr(a)
    cutoff = rcond if rtol is _UNSET else rtol
    if _is_array_param(cutoff):
        if rtol is not _UNSET and rcond is not None:
            raise ValueError("`rtol` and `rcond` can't be both set.")  # NumPy's words
        return wrap(_pinv_by_cutoffs(x, as_expr(cutoff), bool(hermitian)))
    kwargs: dict[str, Any] = {"rcond": _float_param("pinv", rcond), "hermitian": bool(hermitian)}
    if rtol is not _UNSET:
        kwargs["rtol"] = _float_param("pinv", rtol)
    return wrap(_matrix_op("pinv", x, **kwargs))


def _is_array_param(value: Any) -> bool:
    """An array (lazy, or NumPy's of at least one axis) where a scalar cutoff may stand."""
    return isinstance(value, LazyArray) or (value is not None and np.ndim(value) > 0)


def _pinv_by_cutoffs(x: Expr, cutoffs: Expr, hermitian: bool) -> Expr:
    """``numpy.linalg.pinv(matrix, cutoff)`` per matrix, the cutoffs an array broadcast
    against the batch axes (a block of matrices meets the block of its cutoffs)."""
    _require_2d("pinv", x)
    if cutoffs.ndim > x.ndim - 2 or any(
        c not in (1, b) for c, b in zip(cutoffs.shape[::-1], x.shape[-3::-1], strict=False)
    ):
        raise ValueError(
            f"pinv: rtol of shape {cutoffs.shape} does not broadcast to the batch shape "
            f"{x.shape[:-2]} of the matrices"
        )
    shape, dtype = lin.probe_prepended(
        np.linalg.pinv, [x], {"hermitian": hermitian}, op="linalg.pinv"
    )
    nb = x.ndim - 2
    core = (nb, nb + 1)
    return lin.core_map(
        "linalg.pinv", [x, cutoffs], [core, ()], core, shape, dtype, {"hermitian": hermitian}
    )


@implements("linalg.qr")
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR factorization of each matrix (NumPy's modes; ``'r'`` returns R only).

    A tall-skinny array in row blocks (each at least as tall as the array is
    wide) with mode ``'reduced'`` or ``'r'`` is factored by TSQR: ``Q`` keeps
    the row blocks. ``Q`` and ``R`` may differ from NumPy's by the signs of
    matching columns of ``Q`` and rows of ``R``.
    """
    x = as_expr(a)
    if mode in ("reduced", "r") and ts.is_tall_skinny(x):
        q, r = ts.qr_tall(x)
        return wrap(r) if mode == "r" else QRResult(wrap(q), wrap(r))
    if mode == "r":
        return wrap(_matrix_op("qr", x, mode=mode))
    parts = tuple(wrap(_matrix_op("qr", x, i, mode=mode)) for i in range(2))
    return parts if mode == "raw" else QRResult(*parts)


@implements("linalg.slogdet")
def slogdet(a: Any, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant of each matrix."""
    x = as_expr(a)
    return SlogdetResult(*(wrap(_matrix_op("slogdet", x, i)) for i in range(2)))


@implements("linalg.svd")
def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular value decomposition of each matrix (``S`` only without ``compute_uv``).

    With ``full_matrices=False`` or ``compute_uv=False``, a tall-skinny array
    in row blocks goes through TSQR (``U`` keeps the row blocks) and a
    short-fat one in column blocks through TSQR of its transpose (``Vh``
    keeps the column blocks); singular vectors may differ from NumPy's by
    a sign (a phase) per pair.
    """
    x = as_expr(a)
    if not hermitian and not (full_matrices and compute_uv):
        for fits, algo in ((ts.is_tall_skinny, ts.svd_tall), (ts.is_short_fat, ts.svd_wide)):
            if fits(x):
                parts = algo(x, bool(compute_uv))
                return SVDResult(*map(wrap, parts)) if compute_uv else wrap(parts[0])
    kw = {"full_matrices": bool(full_matrices), "hermitian": bool(hermitian)}
    if not compute_uv:
        return wrap(_matrix_op("svd", x, compute_uv=False, **kw))
    return SVDResult(*(wrap(_matrix_op("svd", x, i, **kw)) for i in range(3)))


def tsqr(data: Any, compute_svd: bool = False) -> tuple[LazyArray, ...]:
    """Tall-skinny QR (dask's ``tsqr``): ``(Q, R)``, or ``(U, S, Vh)`` with ``compute_svd``.

    ``data`` is 2-d with one column block and row blocks each at least as
    tall as it is wide (``ValueError`` otherwise, as in dask). ``Q`` and
    ``U`` keep the row blocks; the per-block factorizations run where the
    blocks are and only the small ``R`` factors travel (in a tree of fan-in
    16 when there are many blocks).
    """
    x = as_expr(data)
    qr_parts = _tsqr(x)  # checks the blocks (ValueError)
    return tuple(map(wrap, ts.svd_tall(x) if compute_svd else qr_parts))


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[LazyArray, ...]:
    """Least squares ``(x, residuals, rank, s)`` of ``a @ x = b`` by TSQR (``a``: m x n, m >= n).

    NumPy's semantics for ``a`` of full column rank: ``residuals`` holds the
    sums of squared residuals per column of ``b`` (shape ``(1,)`` for a 1-d
    ``b``; empty when ``m == n``). Differences: ``rank`` is a lazy 0-d array;
    a rank-deficient ``a`` does not get NumPy's minimum-norm solution (``R``
    is singular) and its residuals are still computed; underdetermined
    systems (``m < n``) raise ``NotImplementedError``. ``a`` is used in its
    row blocks when each is at least ``n`` rows tall, else as one block.
    ``numpy.linalg.lstsq`` of lazy arrays stays NumPy's own (it computes its
    arguments and gives NumPy's exact results, rank-deficient ones included).
    """
    parts = ts.lstsq(as_expr(a), as_expr(b), _float_param("lstsq", rcond))
    return tuple(wrap(p) for p in parts)


def svd_compressed(
    a: Any,
    k: int,
    iterator: str = "power",
    n_power_iter: int = 0,
    n_oversamples: int = 10,
    seed: Any = None,
    compute: bool = False,
    coerce_signs: bool = True,
) -> SVDResult:
    """Randomized rank-``k`` SVD (dask's signature; Halko et al.): ``(U, S, Vh)``.

    ``x @ Omega`` for a standard normal ``Omega`` of ``k + n_oversamples``
    columns (``seed``: as in ``la.random``), ``n_power_iter`` power
    iterations, each orthonormalized by TSQR. ``U`` keeps ``a``'s row blocks.
    ``coerce_signs`` flips each singular pair as dask does (its row of ``Vh``
    sums to ``>= 0``; real dtypes). Only ``iterator='power'``; ``compute`` is
    accepted for dask's signature and has no effect (results stay lazy).
    """
    x = as_expr(a)
    if x.ndim != 2:
        raise ValueError(f"svd_compressed: the input must be 2-d (got shape {x.shape})")
    if iterator != "power":
        raise ValueError(f"svd_compressed: iterator must be 'power' (got {iterator!r})")
    k = operator.index(k)
    if not 0 < k <= min(x.shape):
        raise ValueError(f"svd_compressed: k must be in [1, {min(x.shape)}] (got {k})")
    ell = min(k + max(int(n_oversamples), 0), *x.shape)
    real = np.float32 if x.dtype in (np.float32, np.complex64) else np.float64
    n = x.shape[1]
    chunks = (x.chunks[1], (ell,))
    omega = as_expr(_random.standard_normal((n, ell), dtype=real, chunks=chunks, seed=seed))
    u, s, vh = ts.svd_compressed(x, k, omega, operator.index(n_power_iter))
    if coerce_signs:
        u, vh = ts.svd_flip(u, vh)
    return SVDResult(wrap(u), wrap(s), wrap(vh))


@implements("linalg.svdvals")
def svdvals(x: Any, /) -> LazyArray:
    """Singular values of each matrix, descending (by TSQR for tall-skinny or short-fat arrays)."""
    e = as_expr(x)
    if ts.is_tall_skinny(e) or ts.is_short_fat(e):
        return svd(e, compute_uv=False)
    return wrap(_matrix_op("svdvals", e))


@implements("linalg.matrix_power")
def matrix_power(a: Any, n: int) -> LazyArray:
    """Each square matrix raised to the integer power ``n``."""
    x = as_expr(a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, not {n!r}") from None
    return wrap(_matrix_op("matrix_power", x, n=n))


@implements("linalg.matrix_rank")
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:
    """Rank of each matrix from its singular values (a 1-d input: any non-zero)."""
    x = as_expr(A)
    if x.ndim < 2:
        return wrap(_any_nonzero(x))
    if _is_array(tol) or _is_array(rtol):
        return _rank_per_matrix(x, tol, rtol, hermitian)
    kwargs = {
        "tol": _float_param("matrix_rank", tol),
        "hermitian": bool(hermitian),
        "rtol": _float_param("matrix_rank", rtol),
    }
    return wrap(_matrix_op("matrix_rank", x, **kwargs))


def _is_array(value: Any) -> bool:
    return isinstance(value, (LazyArray, np.ndarray))


def _rank_per_matrix(x: Expr, tol: Any, rtol: Any, hermitian: bool) -> LazyArray:
    """``matrix_rank`` with a tolerance per matrix (an array over the batch axes), as
    NumPy computes it: singular values above ``tol``, or above ``rtol`` times the largest."""
    s = abs(eigvalsh(wrap(x))) if hermitian else svdvals(wrap(x))
    if tol is not None:
        cut = wrap(as_expr(tol))[..., None]
    else:
        cut = s.max(axis=-1, keepdims=True) * wrap(as_expr(rtol))[..., None]
    return (s > cut).sum(axis=-1, dtype=np.intp)


def _any_nonzero(x: Expr) -> Expr:
    nonzero = reduce("any", elementwise("not_equal", x, 0))
    return elementwise("astype", nonzero, dtype=np.dtype(np.intp))


@implements("linalg.cond")
def cond(x: Any, p: Any = None) -> LazyArray:
    """Condition number of each matrix in the norm ``p``."""
    return wrap(_matrix_op("cond", as_expr(x), p=p))


@implements("linalg.solve")
def solve(a: Any, b: Any) -> LazyArray:
    """Solve ``a @ x = b`` for each matrix of ``a`` (``b`` a vector only when 1-d).

    As NumPy's one call, any part of the result raises ``LinAlgError`` when any
    matrix of ``a`` is singular, whatever the blocks and whichever part is read
    (a slice of the result alone would otherwise raise or not depending on the
    chunks): each block waits for one check of the whole batch (an LU of every
    matrix, streamed block by block and reduced to one flag). A single matrix
    needs no check: every block of the result solves with it, and raises alike.
    """
    x, y = as_expr(a), as_expr(b)
    _require_2d("solve", x)
    vector = y.ndim == 1
    shape, dtype = lin.probe_prepended(
        np.linalg.solve, [x, y], {}, op="linalg.solve", cores=(2, None if vector else 2)
    )
    ncore = 1 if vector else 2
    matrix = (x.ndim - 2, x.ndim - 1)
    in_core = [matrix, tuple(range(y.ndim - ncore, y.ndim)), ()]
    out_core = tuple(range(len(shape) - ncore, len(shape)))
    if x.ndim == 2:
        # one matrix: every block's solve factors the same matrix and raises alike
        return wrap(lin.core_map("linalg.solve", [x, y], in_core[:2], out_core, shape, dtype))
    each = lin.core_map("linalg.nonsingular", [x], [matrix], (), x.shape[:-2], np.dtype(bool))
    none_singular = reduce("all", each)
    return wrap(
        lin.core_map(
            "linalg.solve_if_none_singular", [x, y, none_singular], in_core, out_core, shape, dtype
        )
    )


# ------------------------------------------------------------------ norms


def _inexact(x: Expr) -> Expr:
    return x if x.dtype.kind in "fc" else elementwise("astype", x, dtype=np.dtype(np.float64))


def _abs(x: Expr) -> Expr:
    return elementwise("absolute", x)


def _abs2(x: Expr) -> Expr:
    """``(conj(x) * x).real``: squared magnitudes in the real dtype."""
    if x.dtype.kind == "c":
        return elementwise("real", elementwise("multiply", elementwise("conjugate", x), x))
    return elementwise("multiply", x, x)


def _empty_along(x: Expr, axes: Any) -> bool:
    if axes is None:
        return x.size == 0
    axes = (axes,) if isinstance(axes, (int, np.integer)) else axes
    return any(x.shape[normalize_axis(a, x.ndim, "norm")] == 0 for a in axes)


def _vector_norm(x: Expr, axis: Any, keepdims: bool, ord: Any) -> Expr:
    """NumPy's vector norm of ``x`` (already inexact) over ``axis``."""
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord is None or ord == 2:
        return elementwise("sqrt", reduce("sum", _abs2(x), axis, keepdims))
    if ord == math.inf:
        # NumPy takes the maximum with initial=0: an empty reduction gives 0 (the sum)
        func = "sum" if _empty_along(x, axis) else "max"
        return reduce(func, _abs(x), axis, keepdims)
    if ord == -math.inf:
        return reduce("min", _abs(x), axis, keepdims)
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    if ord == 0:
        nonzero = elementwise("astype", elementwise("not_equal", x, 0), dtype=real)
        return reduce("sum", nonzero, axis, keepdims)
    if ord == 1:
        return reduce("sum", _abs(x), axis, keepdims)
    p = float(ord)
    total = reduce("sum", elementwise("power", _abs(x), p), axis, keepdims)
    return elementwise("power", total, float(np.reciprocal(p, dtype=total.dtype)))


def _matrix_norm(x: Expr, ord: Any, row: int, col: int, keepdims: bool) -> Expr:
    """NumPy's matrix norm of ``x`` (already inexact) over axes ``row``/``col``."""
    if ord in (2, -2, "nuc"):
        kwargs = {"ord": ord, "axis": (row, col), "keepdims": bool(keepdims)}
        probe_kw = {**kwargs, "axis": (row + 1, col + 1)}
        func = lin.CORE_FUNCS["linalg.norm"]
        shape, dtype = lin.probe_prepended(func, [x], probe_kw, op="linalg.norm")
        out_core = (row, col) if keepdims else ()
        return lin.core_map("linalg.norm", [x], [(row, col)], out_core, shape, dtype, kwargs)
    if ord in (None, "fro", "f"):
        return elementwise("sqrt", reduce("sum", _abs2(x), (row, col), keepdims))
    if ord in (1, -1, math.inf, -math.inf):
        # sum over one axis, then the max (min) over the other
        summed, kept = (row, col) if ord in (1, -1) else (col, row)
        func = "min" if ord < 0 else "max"
        if func == "max" and x.shape[kept] == 0:
            func = "sum"  # NumPy's maximum has initial=0: an empty one is 0, as is the sum
        s = reduce("sum", _abs(x), summed, keepdims)
        if not keepdims and kept > summed:
            kept -= 1
        return reduce(func, s, kept, keepdims)
    raise ValueError(f"Invalid norm order {ord!r} for matrices.")


@implements("linalg.norm")
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> LazyArray:
    """NumPy's ``linalg.norm``: a vector or matrix norm by the number of axes."""
    e = _inexact(as_expr(x))
    if axis is None:
        nd = e.ndim
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            return wrap(elementwise("sqrt", reduce("sum", _abs2(e), None, keepdims)))
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)  # NumPy's conversion: 1.5 reads as 1
        except Exception:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        return wrap(_vector_norm(e, axis, keepdims, ord))
    if len(axis) == 2:
        row = normalize_axis(axis[0], e.ndim, "norm")
        col = normalize_axis(axis[1], e.ndim, "norm")
        if row == col:
            raise ValueError(f"norm: Duplicate axes given ({axis}).")
        return wrap(_matrix_norm(e, ord, row, col, keepdims))
    raise ValueError(f"norm: Improper number of dimensions to norm ({axis}).")


@implements("linalg.vector_norm")
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> LazyArray:
    """Vector norm over ``axis`` (any number of axes; all by default)."""
    return wrap(_vector_norm(_inexact(as_expr(x)), axis, keepdims, ord))


@implements("linalg.matrix_norm")
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> LazyArray:
    """Matrix norm over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)
