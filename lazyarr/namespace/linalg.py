"""Products and contractions in the top-level namespace (Array API + NumPy names).

``matmul``/``tensordot``/``einsum`` are their own ops; ``dot``, ``inner``,
``vdot``, ``matvec`` and ``vecmat`` are written with them, following
NumPy's definitions. ``outer``, ``vdot`` and ``kron`` flatten or reshape
N-d inputs with the manipulation ops.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise, reduce
from lazyarr.graph.ops import linalg as lin
from lazyarr.graph.ops import manipulation as manip
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.einsum_sum import as_product_sum
from lazyarr.namespace._register import implements

__all__ = [
    "cross",
    "diagonal",
    "dot",
    "einsum",
    "inner",
    "kron",
    "matmul",
    "matrix_transpose",
    "matvec",
    "outer",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
    "vecmat",
]


def _conj(x: Expr) -> Expr:
    return elementwise("conjugate", x) if x.dtype.kind == "c" else x


def _ravel(x: Expr) -> Expr:
    return x if x.ndim == 1 else manip.reshape(x, (-1,))


@implements("matmul")
def matmul(x1: Any, x2: Any, /) -> LazyArray:
    """Matrix product with NumPy's 1-d promotion and batch broadcasting."""
    return wrap(lin.matmul(as_expr(x1), as_expr(x2)))


@implements("tensordot")
def tensordot(x1: Any, x2: Any, /, axes: Any = 2) -> LazyArray:
    """Sum products over ``axes`` (a count, or a pair of axis sequences)."""
    return wrap(lin.tensordot(as_expr(x1), as_expr(x2), axes))


def _vecdot_expr(a: Expr, b: Expr, axis: int) -> Expr:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"vecdot: axis must be an integer, not {type(axis).__name__}")
    ax_a, ax_b = (normalize_axis(int(axis), x.ndim, "vecdot") for x in (a, b))
    # axes counted from the end stay right when the probe pads its stand-ins
    kwargs = {"axis1": ax_a - a.ndim, "axis2": ax_b - b.ndim}
    func = lin.CORE_FUNCS["vecdot"]
    shape, dtype = lin.probe_prepended(func, [a, b], kwargs, op="vecdot", cores=(1, 1))
    return lin.core_map("vecdot", [a, b], [(ax_a,), (ax_b,)], (), shape, dtype, kwargs)


@implements("vecdot")
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Dot products of vectors along ``axis`` (``x1`` conjugated), broadcasting the rest."""
    return wrap(_vecdot_expr(as_expr(x1), as_expr(x2), axis))


def transpose_last(x: Expr) -> Expr:
    """``x`` with its last two axes swapped (blocks move with them)."""
    if x.ndim < 2:
        raise ValueError(
            f"matrix_transpose: Input array must be at least 2-dimensional (shape {x.shape})"
        )
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return lin.permute(x, axes)


@implements("matrix_transpose")
def matrix_transpose(x: Any, /) -> LazyArray:
    """Swap the last two axes."""
    return wrap(transpose_last(as_expr(x)))


def dot_expr(a: Expr, b: Expr) -> Expr:
    """``numpy.dot``: a product for 0-d, matmul up to 2-d, else a tensordot."""
    if a.ndim == 0 or b.ndim == 0:
        return elementwise("multiply", a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return lin.matmul(a, b)
    return lin.tensordot(a, b, ((a.ndim - 1,), (max(b.ndim - 2, 0),)))


@implements("dot")
def dot(a: Any, b: Any, out: Any = None) -> LazyArray:
    """NumPy's ``dot`` (scalars multiply; N-d sums over a's last and b's second-last axis)."""
    if out is not None:
        raise TypeError("dot: out= is not supported by lazy arrays")
    return wrap(dot_expr(as_expr(a), as_expr(b)))


@implements("inner")
def inner(a: Any, b: Any, /) -> LazyArray:
    """Sum of products over the last axes of ``a`` and ``b``."""
    x, y = as_expr(a), as_expr(b)
    if x.ndim == 0 or y.ndim == 0:
        return wrap(elementwise("multiply", x, y))
    return wrap(lin.tensordot(x, y, ((x.ndim - 1,), (y.ndim - 1,))))


def outer_expr(a: Expr, b: Expr) -> Expr:
    """``numpy.outer``: both inputs flattened, then every product."""
    return lin.einsum_expr([_ravel(a), _ravel(b)], [(0,), (1,)], (0, 1))


@implements("outer")
def outer(a: Any, b: Any, out: Any = None) -> LazyArray:
    """Outer product of the flattened inputs."""
    if out is not None:
        raise TypeError("outer: out= is not supported by lazy arrays")
    return wrap(outer_expr(as_expr(a), as_expr(b)))


@implements("vdot")
def vdot(a: Any, b: Any, /) -> LazyArray:
    """Dot product of the flattened inputs, ``a`` conjugated."""
    x, y = as_expr(a), as_expr(b)
    if x.size != y.size:
        raise ValueError(
            f"vdot: cannot reshape array of size {y.size} into shape ({x.size},) "
            f"(shapes {x.shape} and {y.shape})"
        )
    if x.shape != y.shape:
        x, y = _ravel(x), _ravel(y)
    labels = tuple(range(x.ndim))
    return wrap(lin.einsum_expr([_conj(x), y], [labels, labels], ()))


@implements("matvec")
def matvec(x1: Any, x2: Any, /) -> LazyArray:
    """Matrix-vector products over the last axes, broadcasting the rest."""
    a, b = as_expr(x1), as_expr(x2)
    return wrap(_gufunc_einsum(np.matvec, "...ij,...j->...i", a, b, (2, 1)))


@implements("vecmat")
def vecmat(x1: Any, x2: Any, /) -> LazyArray:
    """Vector-matrix products over the last axes (``x1`` conjugated)."""
    a, b = as_expr(x1), as_expr(x2)
    return wrap(_gufunc_einsum(np.vecmat, "...j,...ji->...i", _conj(a), b, (1, 2), (a, b)))


def _gufunc_einsum(
    ufunc: Any,
    subscripts: str,
    a: Expr,
    b: Expr,
    cores: tuple[int, int],
    check: tuple[Expr, Expr] | None = None,
) -> Expr:
    # the gufunc's own core-dimension checks (exact sizes, no broadcasting)
    lin.probe_prepended(ufunc, list(check or (a, b)), {}, op=ufunc.__name__, cores=cores)
    inputs, output = lin.einsum_labels(subscripts, [a, b])
    return lin.einsum_expr([a, b], inputs, output)


@implements("einsum")
def einsum(
    *operands: Any,
    out: Any = None,
    dtype: Any = None,
    order: str = "K",
    casting: str = "safe",
    optimize: Any = False,
) -> LazyArray:
    """Einstein summation (string or interleaved sublist form, NumPy's rules); a product of
    broadcast operands and a sum is built as one (``graph/ops/einsum_sum.py``).

    ``optimize`` and ``order`` are accepted and ignored (results equal NumPy's).
    """
    if out is not None:
        raise TypeError("einsum: out= is not supported by lazy arrays")
    e = lin.einsum(operands, as_expr, dtype=dtype, casting=casting)
    return wrap(as_product_sum(e) or e)


@implements("diagonal")
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
    """The diagonal over ``axis1``/``axis2`` as the last axis (a copy, not a view)."""
    return wrap(lin.diagonal(as_expr(a), offset, axis1, axis2))


def trace_expr(x: Expr, offset: int, axis1: int, axis2: int, dtype: Any) -> Expr:
    """Sum of the diagonal (NumPy's sum dtype rules: small ints widen)."""
    return reduce("sum", lin.diagonal(x, offset, axis1, axis2), -1, False, dtype)


@implements("trace")
def trace(
    a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None
) -> LazyArray:
    """Sum along the diagonal over ``axis1``/``axis2``."""
    if out is not None:
        raise TypeError("trace: out= is not supported by lazy arrays")
    return wrap(trace_expr(as_expr(a), offset, axis1, axis2, dtype))


def cross_expr(a: Expr, b: Expr, axisa: int, axisb: int, axisc: int) -> Expr:
    """``numpy.cross`` on the vector axes ``axisa``/``axisb``, result vector at ``axisc``."""
    ax_a = normalize_axis(axisa, a.ndim, "cross")
    ax_b = normalize_axis(axisb, b.ndim, "cross")
    axisc = operator.index(axisc)
    # vector axes counted from the end stay right when the probe pads its stand-ins
    kwargs = {"axisa": ax_a - a.ndim, "axisb": ax_b - b.ndim, "axisc": axisc + (axisc >= 0)}
    shape, dtype = lin.probe_prepended(np.cross, [a, b], kwargs, op="cross", cores=(1, 1))
    if len(shape) > max(a.ndim, b.ndim) - 1:  # a vector axis in the result
        out_core: tuple[int, ...] = (normalize_axis(axisc, len(shape), "cross"),)
    else:
        out_core = ()
    kwargs = {"axisa": ax_a, "axisb": ax_b, "axisc": out_core[0] if out_core else -1}
    return lin.core_map("cross", [a, b], [(ax_a,), (ax_b,)], out_core, shape, dtype, kwargs)


@implements("cross")
def cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> LazyArray:
    """Cross products of 3-vectors (2-vectors as NumPy, with its deprecation)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    return wrap(cross_expr(as_expr(a), as_expr(b), axisa, axisb, axisc))


@implements("kron")
def kron(a: Any, b: Any, /) -> LazyArray:
    """Kronecker product: every product ``a[i] * b[j]`` in blocks of ``b``'s shape."""
    x, y = as_expr(a), as_expr(b)
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    x = manip.reshape(x, xs) if x.shape != xs else x
    y = manip.reshape(y, ys) if y.shape != ys else y
    labels_x = tuple(range(0, 2 * nd, 2))
    labels_y = tuple(range(1, 2 * nd, 2))
    prod = lin.einsum_expr([x, y], [labels_x, labels_y], tuple(range(2 * nd)))
    shape = tuple(p * q for p, q in zip(xs, ys, strict=False))
    return wrap(manip.reshape(prod, shape) if prod.shape != shape else prod)
