"""Products, contractions and ``la.linalg`` against NumPy: values, shapes, dtypes, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import config
from lazyarr._convert import as_expr
from lazyarr.executors.testing import ComputeRefused
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.einsum_sum import as_product_sum
from lazyarr.graph.ops.linalg import CoreMap, Einsum, Matmul, Tensordot
from lazyarr.graph.ops.linalg import einsum as einsum_expr
from lazyarr.optimize.plan import Plan
from lazyarr.testing import assert_eq, assert_same_error

DTYPES = ["bool", "int8", "uint8", "int64", "float32", "float64", "complex64", "complex128"]


def data(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> np.ndarray:
    """Small integer values (exact products for every dtype), complex parts too."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == bool:
        return rng.random(shape) < 0.5
    x = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * rng.integers(-2, 3, size=shape)).astype(dtype)
    return x.astype(dtype)


def lazy(x: np.ndarray, chunks=2) -> la.LazyArray:
    return la.asarray(x, chunks=chunks if x.ndim else ())


# -- matmul -------------------------------------------------------------------------------


@st.composite
def matmul_case(draw):
    n, k, m = (draw(st.integers(0, 4)) for _ in range(3))
    nd_a, nd_b = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=2)))
    shape_a = (k,) if nd_a == 1 else (*batch[2 - (nd_a - 2) :], n, k)
    shape_b = (k,) if nd_b == 1 else (*batch[2 - (nd_b - 2) :], k, m)
    # broadcast: some batch axes of one side shrink to 1
    if nd_a == 3 and draw(st.booleans()):
        shape_a = (1, *shape_a[1:])
    if nd_b == 3 and draw(st.booleans()):
        shape_b = (1, *shape_b[1:])
    dt_a, dt_b = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    ca = tuple(draw(st.integers(1, max(s, 1))) for s in shape_a)
    cb = tuple(draw(st.integers(1, max(s, 1))) for s in shape_b)
    return shape_a, shape_b, dt_a, dt_b, ca, cb


@given(matmul_case())
def test_matmul_matches_numpy(case):
    shape_a, shape_b, dt_a, dt_b, ca, cb = case
    a, b = data(shape_a, dt_a, 1), data(shape_b, dt_b, 2)
    x, y = la.asarray(a, chunks=ca), la.asarray(b, chunks=cb)
    assert_eq(x @ y, a @ b)


def test_matmul_keeps_row_and_column_blocks():
    a, b = data((2, 5, 7)), data((7, 4))
    x, y = la.asarray(a, chunks=(1, 2, 3)), la.asarray(b, chunks=(3, 3))
    z = x @ y
    assert isinstance(z._expr.op, Matmul)
    assert z.chunks == ((1, 1), (2, 2, 1), (3, 1))
    assert_eq(z, a @ b)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((2, 3), (3, 0)), ((0,), (0,)), ((2, 0, 3), (3, 1))],
)
def test_matmul_empty(sa, sb):
    a, b = data(sa), data(sb, seed=1)
    assert_eq(lazy(a) @ lazy(b), a @ b)


def test_matmul_operators_and_numpy_operands():
    a, b = data((4, 3), "float32"), data((3, 5), "int8", 1)
    x = lazy(a)
    assert_eq(x @ b, a @ b)  # __matmul__ with a NumPy array
    assert_eq(la.matmul(b.T, a.T), b.T @ a.T)
    assert_eq(x.dot(b), a.dot(b))
    x2 = lazy(data((3, 3)))
    x2 @= lazy(np.eye(3))
    assert_eq(x2, data((3, 3)))


def test_numpy_gufuncs_dispatch():
    a, b = data((4, 3)), data((3, 5), seed=1)
    assert_eq(a @ la.asarray(b), a @ b)  # ndarray.__matmul__ -> np.matmul -> __array_ufunc__
    assert_eq(np.vecdot(lazy(a), a), np.vecdot(a, a))


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((), (3,)),
        ((3,), ()),
        ((2, 3), (4, 2)),
        ((3,), (4,)),
        ((2, 2, 3), (3, 3, 2)),
        ((3, 4), (3,)),
    ],
)
def test_matmul_errors_at_expression_time(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    assert_same_error(lambda: np.matmul(a, b), lambda: la.matmul(lazy(a), lazy(b)))


def test_matmul_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\) and \(4, 2\)"):
        la.matmul(la.ones((2, 3)), la.ones((4, 2)))


# -- tensordot / dot / inner / outer / vdot / kron ---------------------------------------------


@pytest.mark.parametrize(
    ("sa", "sb", "axes"),
    [
        ((3, 4, 5), (4, 5, 2), 2),
        ((3, 4), (4, 5), 1),
        ((3, 4), (5,), 0),
        ((), (3,), 0),
        ((3, 4, 5), (5, 3, 2), ([2, 0], [0, 1])),
        ((3, 4, 5), (5, 3, 2), ((-1, -3), (0, 1))),
        ((3, 4), (4, 3), (1, 0)),
        ((3, 4), (4, 3), -1),
        ((2, 0), (0, 3), 1),
        ((3, 4, 5), (3, 4, 5), 3),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "bool", "complex128", "float32"])
def test_tensordot(sa, sb, axes, dtype):
    a, b = data(sa, dtype), data(sb, "float64" if dtype == "int8" else dtype, 1)
    got = la.tensordot(la.asarray(a, chunks=2), la.asarray(b, chunks=3), axes=axes)
    assert_eq(got, np.tensordot(a, b, axes=axes))
    if sa and sb:
        assert isinstance(got._expr.op, Tensordot)


@pytest.mark.parametrize(
    "axes",
    [
        1.5,
        ((0,), (0, 1)),
        ((5,), (0,)),
        ((-5,), (0,)),
        ((0, 0), (0, 1)),
        3,
        (1, 0, 1),
        ((0,), (1,)),
    ],
)
def test_tensordot_errors(axes):
    a, b = np.ones((3, 4)), np.ones((3, 4))
    assert_same_error(
        lambda: np.tensordot(a, b, axes), lambda: la.tensordot(lazy(a), lazy(b), axes=axes)
    )


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((), ()),
        ((), (3, 2)),
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3, 4)),
        ((2, 3, 4), (5, 4, 6)),
        ((2, 3, 4), (4,)),
        ((4,), (3, 4, 2)),
    ],
)
def test_dot(sa, sb):
    a, b = data(sa, "int64"), data(sb, "float32", 1)
    assert_eq(la.dot(lazy(a), lazy(b)), np.dot(a, b))
    assert_eq(np.dot(lazy(a), b), np.dot(a, b))  # __array_function__


def test_dot_and_inner_errors():
    a, b = np.ones((2, 3)), np.ones(4)
    assert_same_error(lambda: np.dot(a, b), lambda: la.dot(lazy(a), lazy(b)))
    assert_same_error(lambda: np.inner(a, b), lambda: la.inner(lazy(a), lazy(b)))


@pytest.mark.parametrize(
    ("sa", "sb"), [((), (3,)), ((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (4,))]
)
def test_inner(sa, sb):
    a, b = data(sa, "complex128"), data(sb, "int8", 1)
    assert_eq(la.inner(lazy(a), lazy(b)), np.inner(a, b))


@pytest.mark.parametrize(("sa", "sb"), [((3,), (4,)), ((0,), (2,)), ((), (3,)), ((2, 3), (2, 2))])
@pytest.mark.parametrize("dtype", ["bool", "int16", "complex64"])
def test_outer(sa, sb, dtype):
    a, b = data(sa, dtype), data(sb, dtype, 1)
    assert_eq(la.outer(lazy(a), lazy(b)), np.outer(a, b))


def test_linalg_outer_is_1d_only():
    a, b = np.ones((2, 3)), np.ones(3)
    assert_same_error(lambda: np.linalg.outer(a, b), lambda: la.linalg.outer(lazy(a), lazy(b)))
    assert_eq(la.linalg.outer(lazy(b), lazy(b)), np.linalg.outer(b, b))


@pytest.mark.parametrize(("sa", "sb"), [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (6,)), ((), ())])
@pytest.mark.parametrize("dtype", ["complex128", "int8", "bool"])
def test_vdot(sa, sb, dtype):
    a, b = data(sa, dtype), data(sb, dtype, 1)
    assert_eq(la.vdot(lazy(a), lazy(b)), np.vdot(a, b))


def test_vdot_size_mismatch():
    a, b = np.ones((2, 3)), np.ones(4)
    assert_same_error(lambda: np.vdot(a, b), lambda: la.vdot(lazy(a), lazy(b)))


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (4,)), ((2,), (3,)), ((2, 2), (3, 1)), ((), (2,))])
def test_kron(sa, sb):
    a, b = data(sa, "int16"), data(sb, "float32", 1)
    assert_eq(la.kron(lazy(a), lazy(b)), np.kron(a, b))


@pytest.mark.parametrize(
    ("sa", "sb"), [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)), ((1, 2, 2), (3, 2))]
)
def test_matvec_vecmat(sa, sb):
    a, b = data(sa, "complex128"), data(sb, "complex128", 1)
    assert_eq(la.matvec(lazy(a), lazy(b)), np.matvec(a, b))
    bt = np.swapaxes(a, -1, -2)
    assert_eq(la.vecmat(lazy(b), lazy(bt)), np.vecmat(b, bt))


def test_matvec_errors():
    a, b = np.ones((3, 4)), np.ones(3)
    assert_same_error(lambda: np.matvec(a, b), lambda: la.matvec(lazy(a), lazy(b)))
    assert_same_error(lambda: np.vecmat(b, b), lambda: la.vecmat(lazy(b), lazy(b)))


# -- vecdot / matrix_transpose --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sa", "sb", "axis"),
    [
        ((3,), (3,), -1),
        ((4, 3), (3,), -1),
        ((2, 1, 3), (4, 3), -1),
        ((3, 4), (3, 4), 0),
        ((3, 4), (2, 3, 4), -2),
        ((0, 3), (3,), -1),
        ((2, 0), (2, 0), -1),
    ],
)
@pytest.mark.parametrize("dtype", ["complex128", "int8", "bool", "float32"])
def test_vecdot(sa, sb, axis, dtype):
    a, b = data(sa, dtype), data(sb, dtype, 1)
    want = np.linalg.vecdot(a, b, axis=axis)
    assert_eq(la.vecdot(lazy(a), lazy(b), axis=axis), want)
    assert_eq(la.linalg.vecdot(lazy(a), lazy(b), axis=axis), want)


@pytest.mark.parametrize(
    ("sa", "sb", "axis"), [((3,), (4,), -1), ((), (3,), -1), ((3,), (3,), 1), ((2, 3), (4, 3), -1)]
)
def test_vecdot_errors(sa, sb, axis):
    a, b = np.ones(sa), np.ones(sb)
    assert_same_error(
        lambda: np.linalg.vecdot(a, b, axis=axis), lambda: la.vecdot(lazy(a), lazy(b), axis=axis)
    )


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (0, 2), (1, 4, 1)])
def test_matrix_transpose(shape):
    a = data(shape, "int16")
    x = la.asarray(a, chunks=(2,) * len(shape))
    t = la.matrix_transpose(x)
    assert t.chunks == (*x.chunks[:-2], x.chunks[-1], x.chunks[-2])  # blocks move, not merge
    assert_eq(t, np.matrix_transpose(a))
    assert_eq(la.linalg.matrix_transpose(x), np.matrix_transpose(a))
    assert_same_error(
        lambda: np.matrix_transpose(np.ones(3)), lambda: la.matrix_transpose(lazy(np.ones(3)))
    )


# -- einsum -----------------------------------------------------------------------------------


EINSUM_CASES = [
    ("ij,jk->ik", [(4, 5), (5, 3)]),
    ("ij,jk", [(4, 5), (5, 3)]),
    ("ij->ji", [(4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(4, 5)]),
    ("i,i", [(5,), (5,)]),
    ("i,j", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...->...", [(3, 2, 4)]),
    ("ij,j->i", [(3, 1), (4,)]),  # a label broadcast from length one
    ("ij,ij->ij", [(3, 1), (1, 4)]),
    ("Ba,b", [(3, 2), (4,)]),  # implicit output: upper case sorts first
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,", [(3,), ()]),
    ("", [()]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
]


def lin_einsum(subscripts, *arrays):
    """The plain ``Einsum`` expression of NumPy arrays (before any rewrite)."""
    return einsum_expr([subscripts, *arrays], lambda a: as_expr(lazy(a)))


@pytest.mark.parametrize(("subscripts", "shapes"), EINSUM_CASES)
@pytest.mark.parametrize("dtype", ["int8", "bool", "complex128"])
def test_einsum(subscripts, shapes, dtype):
    arrays = [data(s, dtype, i) for i, s in enumerate(shapes)]
    got = la.einsum(subscripts, *[lazy(a, chunks=2) for a in arrays])
    # floating products of broadcast operands are built as a product and a sum (test_einsum_sum)
    rewritten = as_product_sum(lin_einsum(subscripts, *arrays)) is not None
    assert isinstance(got._expr.op, Reduce if rewritten else Einsum)
    assert_eq(got, np.einsum(subscripts, *arrays))
    assert_eq(np.einsum(subscripts, *[lazy(a) for a in arrays]), np.einsum(subscripts, *arrays))


def test_einsum_sublist_form_and_keywords():
    a, b = data((3, 4), "int8"), data((4, 2), "int8", 1)
    x, y = lazy(a), lazy(b)
    assert_eq(la.einsum(x, [0, 27], y, [27, 1], [1, 0]), np.einsum(a, [0, 27], b, [27, 1], [1, 0]))
    assert_eq(la.einsum(x, [27, 0]), np.einsum(a, [27, 0]))
    assert_eq(la.einsum(x, [Ellipsis, 1], [Ellipsis]), np.einsum(a, [Ellipsis, 1], [Ellipsis]))
    want = np.einsum("ij,jk", a, b, dtype=np.float32, casting="unsafe")
    assert_eq(la.einsum("ij,jk", x, y, dtype=np.float32, casting="unsafe"), want)
    assert_eq(la.einsum("ij,jk", x, y, optimize=True), np.einsum("ij,jk", a, b))


@pytest.mark.parametrize(
    ("subscripts", "shapes", "kwargs"),
    [
        ("ii", [(3, 2)], {}),
        ("ij,j->i", [(3, 2), (4,)], {}),
        ("ijk", [(3, 2)], {}),
        ("ij,jk", [(3, 2)], {}),
        ("ij", [(3, 2), (2,)], {}),
        ("ij->k", [(3, 2)], {}),
        ("ij->ii", [(3, 2)], {}),
        ("i1", [(3, 2)], {}),
        ("..i", [(3,)], {}),
        ("...i->i", [(2, 3)], {}),
        ("...ij,...j", [(5, 3, 2), (4, 2, 2)], {}),
        ("ij->", [(3, 2)], {"dtype": np.int32}),
    ],
)
def test_einsum_errors(subscripts, shapes, kwargs):
    arrays = [np.ones(s) for s in shapes]
    assert_same_error(
        lambda: np.einsum(subscripts, *arrays, **kwargs),
        lambda: la.einsum(subscripts, *[lazy(a) for a in arrays], **kwargs),
    )


@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_einsum_uneven_chunks(n, k, m, c1, c2, c3):
    a, b = data((n, k), "float64"), data((k, m), "float64", 1)
    x, y = la.asarray(a, chunks=(c1, c2)), la.asarray(b, chunks=(c3, c1))
    assert_eq(la.einsum("ij,jk->ki", x, y), np.einsum("ij,jk->ki", a, b))
    assert_eq(la.einsum("ij,ik->jk", x, x), np.einsum("ij,ik->jk", a, a))


# -- diagonal / trace / cross -------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0, 1, -2, 3, -6, 9])
@pytest.mark.parametrize(
    ("shape", "a1", "a2"), [((5, 7), 0, 1), ((5, 7), 1, 0), ((3, 4, 5), 0, 2), ((3, 4, 5), -1, 1)]
)
def test_diagonal_and_trace(shape, a1, a2, offset):
    a = data(shape, "int8")
    x = la.asarray(a, chunks=(2, 3, 2)[: len(shape)])
    assert_eq(la.diagonal(x, offset, a1, a2), np.diagonal(a, offset, a1, a2))
    assert_eq(la.trace(x, offset, a1, a2), np.trace(a, offset, a1, a2))
    assert_eq(
        la.trace(x, offset, a1, a2, dtype=np.float32), np.trace(a, offset, a1, a2, np.float32)
    )


def test_linalg_trace_and_diagonal_use_the_last_axes():
    a = data((2, 4, 3), "bool")
    x = la.asarray(a, chunks=(1, 3, 2))
    assert_eq(la.linalg.trace(x, offset=1), np.linalg.trace(a, offset=1))
    assert_eq(la.linalg.diagonal(x, offset=-1), np.linalg.diagonal(a, offset=-1))
    assert_eq(np.trace(x), np.trace(a))


@pytest.mark.parametrize(
    ("shape", "kwargs"), [((3,), {}), ((3, 3), {"axis1": 1, "axis2": 1}), ((3, 3), {"axis2": 2})]
)
def test_diagonal_errors(shape, kwargs):
    a = np.ones(shape)
    assert_same_error(lambda: np.diagonal(a, **kwargs), lambda: la.diagonal(lazy(a), **kwargs))
    assert_same_error(lambda: np.trace(a, **kwargs), lambda: la.trace(lazy(a), **kwargs))


@pytest.mark.parametrize(
    ("sa", "sb", "kwargs"),
    [
        ((3,), (3,), {}),
        ((4, 3), (3,), {}),
        ((2, 1, 3), (4, 3), {}),
        ((3, 4), (3, 4), {"axis": 0}),
        ((3, 4), (4, 3), {"axisa": 0, "axisc": 0}),
        ((2, 3, 5), (3, 5), {"axisa": 1, "axisb": 0, "axisc": 1}),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "float64", "complex128"])
def test_cross(sa, sb, kwargs, dtype):
    a, b = data(sa, dtype), data(sb, dtype, 1)
    assert_eq(la.cross(lazy(a), lazy(b), **kwargs), np.cross(a, b, **kwargs))


def test_linalg_cross_and_errors():
    a, b = data((4, 3)), data((3,), seed=1)
    assert_eq(la.linalg.cross(lazy(a), lazy(b)), np.linalg.cross(a, b))
    assert_eq(la.linalg.cross(lazy(a.T), lazy(a.T), axis=0), np.linalg.cross(a.T, a.T, axis=0))
    for x, y in [
        (np.ones(4), np.ones(4)),
        (np.ones((2, 3)), np.ones((4, 3))),
        (np.ones(3, bool),) * 2,
    ]:
        assert_same_error(
            lambda x=x, y=y: np.cross(x, y), lambda x=x, y=y: la.cross(lazy(x), lazy(y))
        )
    two = np.ones(2)
    assert_same_error(
        lambda: np.linalg.cross(two, two), lambda: la.linalg.cross(lazy(two), lazy(two))
    )
    with pytest.warns(DeprecationWarning):
        la.cross(lazy(two), lazy(two))


# -- linalg extension: whole-matrix maps ----------------------------------------------------------


def spd(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    a = np.random.default_rng(3).standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * np.random.default_rng(4).standard_normal(shape)
    m = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return m.astype(dtype)


def general(shape: tuple[int, ...], dtype: str = "float64", seed: int = 5) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal(shape) + 2 * np.eye(*shape[-2:])
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3)])
def test_square_matrix_functions(shape, dtype):
    L = np.linalg
    s, g = spd(shape, dtype), general(shape, dtype)
    S, G = la.asarray(s, chunks=2), la.asarray(g, chunks=(1,) * (len(shape) - 2) + (2, 3))
    assert_eq(la.linalg.cholesky(S), L.cholesky(s))
    assert_eq(la.linalg.cholesky(S, upper=True), L.cholesky(s, upper=True))
    assert_eq(la.linalg.det(G), L.det(g))
    assert_eq(la.linalg.inv(G), L.inv(g))
    assert_eq(la.linalg.eigvalsh(S, UPLO="U"), L.eigvalsh(s, UPLO="U"))
    w, v = la.linalg.eigh(S)
    assert_eq(w, L.eigh(s).eigenvalues)
    assert_eq(v, L.eigh(s).eigenvectors)
    sign, logdet = la.linalg.slogdet(G)
    assert_eq(sign, L.slogdet(g).sign)
    assert_eq(logdet, L.slogdet(g).logabsdet)
    assert_eq(la.linalg.matrix_power(G, 3), L.matrix_power(g, 3))
    assert_eq(la.linalg.matrix_power(G, -1), L.matrix_power(g, -1))
    assert_eq(la.linalg.matrix_power(G, 0), L.matrix_power(g, 0))
    assert_eq(la.linalg.cond(G), L.cond(g))
    assert_eq(la.linalg.cond(G, "fro"), L.cond(g, "fro"))


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)])
def test_rectangular_matrix_functions(shape, dtype):
    L = np.linalg
    g = general(shape, dtype)
    G = la.asarray(g, chunks=2)
    assert_eq(la.linalg.pinv(G), L.pinv(g))
    assert_eq(la.linalg.pinv(G, rtol=0.5), L.pinv(g, rtol=0.5))
    for mode in ("reduced", "complete"):
        q, r = la.linalg.qr(G, mode=mode)
        assert_eq(q, L.qr(g, mode=mode).Q)
        assert_eq(r, L.qr(g, mode=mode).R)
    assert_eq(la.linalg.qr(G, mode="r"), L.qr(g, mode="r"))
    h, tau = la.linalg.qr(G, mode="raw")
    assert_eq(h, L.qr(g, mode="raw")[0])
    assert_eq(tau, L.qr(g, mode="raw")[1])
    for full in (True, False):
        u, s, vh = la.linalg.svd(G, full_matrices=full)
        want = L.svd(g, full_matrices=full)
        assert_eq(u, want.U)
        assert_eq(s, want.S)
        assert_eq(vh, want.Vh)
    assert_eq(la.linalg.svd(G, compute_uv=False), L.svd(g, compute_uv=False))
    assert_eq(la.linalg.svdvals(G), L.svdvals(g))
    assert_eq(la.linalg.matrix_rank(G), L.matrix_rank(g))
    assert_eq(la.linalg.matrix_rank(G, rtol=0.9), L.matrix_rank(g, rtol=0.9))


def test_integer_and_bool_inputs_promote_like_numpy():
    a = np.array([[2, 1], [1, 3]])
    assert_eq(la.linalg.inv(lazy(a)), np.linalg.inv(a))
    assert_eq(la.linalg.det(lazy(a > 1)), np.linalg.det(a > 1))
    assert_eq(la.linalg.matrix_power(lazy(a), 2), np.linalg.matrix_power(a, 2))  # stays int
    assert_eq(
        la.linalg.matrix_rank(lazy(np.array([0, 0, 1]))), np.linalg.matrix_rank(np.array([0, 0, 1]))
    )
    assert_eq(la.linalg.matrix_rank(lazy(np.zeros(3))), np.linalg.matrix_rank(np.zeros(3)))


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((4, 4), (4,)),
        ((4, 4), (4, 2)),
        ((3, 4, 4), (3, 4, 2)),
        ((3, 4, 4), (4, 2)),
        ((1, 4, 4), (2, 4, 1)),
        ((2, 4, 4), (4,)),
    ],
)
def test_solve(sa, sb):
    a, b = general(sa), data(sb, "float64", 1)
    x = la.linalg.solve(la.asarray(a, chunks=2), la.asarray(b, chunks=3))
    assert_eq(x, np.linalg.solve(a, b))


def test_multi_dot():
    a, b, c, v = general((3, 4)), general((4, 5)), general((5, 2)), data((3,))
    arrays = [v, a, b, c]
    assert_eq(la.linalg.multi_dot([lazy(x) for x in arrays]), np.linalg.multi_dot(arrays))
    assert_eq(la.linalg.multi_dot([lazy(a), lazy(b)]), np.linalg.multi_dot([a, b]))
    assert_same_error(lambda: np.linalg.multi_dot([a]), lambda: la.linalg.multi_dot([lazy(a)]))
    bad = [a, np.ones((4, 5, 1)), c]
    assert_same_error(
        lambda: np.linalg.multi_dot(bad), lambda: la.linalg.multi_dot([lazy(x) for x in bad])
    )


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("inv", [np.ones(3)], {}),
        ("inv", [np.ones((2, 3))], {}),
        ("det", [np.ones((2, 3))], {}),
        ("cholesky", [np.ones(())], {}),
        ("eigh", [np.ones((3, 2))], {}),
        ("inv", [np.ones((2, 2), np.float16)], {}),
        ("svd", [np.ones(4)], {}),
        ("qr", [np.ones((2, 2))], {"mode": "bogus"}),
        ("matrix_power", [np.ones((2, 2))], {"n": 1.5}),
        ("matrix_power", [np.ones((2, 3))], {"n": 2}),
        ("solve", [np.ones((3, 3)), np.ones((4,))], {}),
        ("solve", [np.ones((3, 3)), np.ones((2, 3))], {}),
        ("solve", [np.ones((2, 3, 3)), np.ones((4, 3, 1))], {}),
        ("solve", [np.ones((3,)), np.ones((3,))], {}),
    ],
)
def test_matrix_function_errors(name, args, kwargs):
    assert_same_error(
        lambda: getattr(np.linalg, name)(*args, **kwargs),
        lambda: getattr(la.linalg, name)(*[lazy(a) for a in args], **kwargs),
    )


def test_singular_matrix_fails_when_computed():
    x = la.linalg.inv(la.zeros((2, 3, 3), chunks=1))  # lazily fine
    with pytest.raises(np.linalg.LinAlgError):
        x.compute()


def test_batch_axes_keep_their_blocks():
    g = general((6, 3, 3))
    x = la.linalg.inv(la.asarray(g, chunks=(2, 1, 2)))
    assert isinstance(x._expr.op, CoreMap)
    assert x.chunks == ((2, 2, 2), (3,), (3,))
    assert_eq(x, np.linalg.inv(g))


# -- norms ------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int16", "bool"])
def test_matrix_norm(ord, keepdims, dtype):
    a = data((2, 4, 3), dtype)
    x = la.asarray(a, chunks=(1, 3, 2))
    want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert_eq(la.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), want)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
@pytest.mark.parametrize("axis", [(0, 2), (2, 0), (-1, 1)])
def test_norm_matrix_axes(ord, axis):
    a = data((3, 4, 5), "complex128")
    x = la.asarray(a, chunks=(2, 3, 2))
    for keepdims in (False, True):
        want = np.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)
        assert_eq(la.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize("ord", [2, 1, 0, np.inf, -np.inf, 3, -1.5, 0.5, None])
@pytest.mark.parametrize("axis", [None, -1, (0, 2), (2, 0, 1)])
@pytest.mark.parametrize("dtype", ["float64", "complex64", "int8"])
def test_vector_norm(ord, axis, dtype):
    a = data((2, 3, 4), dtype)
    if dtype == "int8" or ord in (-1.5,):
        a = np.where(a == 0, 1, a).astype(dtype)  # no 0 ** negative: NumPy would warn too
    x = la.asarray(a, chunks=(1, 2, 3))
    for keepdims in (False, True):
        want = np.linalg.vector_norm(a, ord=ord, axis=axis, keepdims=keepdims)
        assert_eq(la.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize(
    ("ord", "axis"),
    [(None, None), ("fro", None), (2, None), (np.inf, 0), (1, 1), (2, (0, 1)), (None, -1)],
)
def test_norm(ord, axis):
    for a in (data((3, 4), "int64"), data((5,), "complex128")):
        if a.ndim == 1 and (ord == "fro" or axis in (1, (0, 1))):
            continue
        assert_eq(
            la.linalg.norm(lazy(a), ord=ord, axis=axis), np.linalg.norm(a, ord=ord, axis=axis)
        )
        assert_eq(np.linalg.norm(lazy(a), ord, axis, True), np.linalg.norm(a, ord, axis, True))


def test_norms_of_empty_and_special_values():
    e = np.ones((0, 3))
    assert_eq(la.linalg.vector_norm(lazy(e), ord=np.inf), np.linalg.vector_norm(e, ord=np.inf))
    assert_eq(la.linalg.vector_norm(lazy(e), axis=0), np.linalg.vector_norm(e, axis=0))
    assert_eq(la.linalg.matrix_norm(lazy(e), ord=1), np.linalg.matrix_norm(e, ord=1))
    assert_eq(la.linalg.matrix_norm(lazy(e.T), ord=np.inf), np.linalg.matrix_norm(e.T, ord=np.inf))
    assert_eq(la.linalg.matrix_norm(lazy(e)), np.linalg.matrix_norm(e))
    nan = np.array([[1.0, np.nan], [np.inf, 2.0]])
    for ord in ("fro", 1, np.inf):
        assert_eq(la.linalg.matrix_norm(lazy(nan), ord=ord), np.linalg.matrix_norm(nan, ord=ord))
    assert_eq(la.linalg.vector_norm(lazy(nan), ord=0), np.linalg.vector_norm(nan, ord=0))
    s = np.array(3.0)
    assert_eq(la.linalg.vector_norm(lazy(s)), np.linalg.vector_norm(s))
    assert_eq(la.linalg.norm(lazy(nan), axis=1.5), np.linalg.norm(nan, axis=1.5))


@pytest.mark.parametrize(
    ("func", "args", "kwargs"),
    [
        ("matrix_norm", [np.ones(3)], {}),
        ("matrix_norm", [np.ones((3, 3))], {"ord": 3}),
        ("vector_norm", [np.ones((3, 3))], {"ord": "fro"}),
        ("vector_norm", [np.ones((3, 3))], {"axis": 2}),
        ("vector_norm", [np.ones((0,))], {"ord": -np.inf}),
        ("norm", [np.ones((3, 3))], {"axis": (0, 0)}),
        ("norm", [np.ones((3, 3, 3))], {"ord": 2}),
        ("norm", [np.ones((3, 3))], {"axis": "a"}),
        ("norm", [np.ones((3, 3))], {"axis": (0, 3)}),
        ("matrix_norm", [np.ones((2, 2), np.float16)], {"ord": 2}),
    ],
)
def test_norm_errors(func, args, kwargs):
    assert_same_error(
        lambda: getattr(np.linalg, func)(*args, **kwargs),
        lambda: getattr(la.linalg, func)(*[lazy(a) for a in args], **kwargs),
    )


# -- laziness, dispatch, plans -------------------------------------------------------------


def test_building_computes_nothing():
    g = general((4, 4))
    with config.set(executor="raise"):
        x = la.asarray(g, chunks=2)
        exprs = [
            x @ x,
            la.tensordot(x, x),
            la.einsum("ij,jk", x, x),
            la.linalg.inv(x),
            la.linalg.svd(x).S,
            la.linalg.matrix_norm(x, ord=2),
            la.linalg.vector_norm(x),
            la.trace(x),
            la.vecdot(x, x),
            la.linalg.solve(x, x),
        ]
        with pytest.raises(ComputeRefused):
            exprs[0].compute()
    for e in exprs:
        assert isinstance(e, la.LazyArray)


def test_numpy_functions_dispatch_to_lazyarr():
    g = general((3, 3))
    x = lazy(g)
    for f in (
        np.linalg.inv,
        np.linalg.det,
        np.linalg.svdvals,
        np.linalg.matrix_norm,
        np.trace,
        lambda a: np.tensordot(a, a, 1),
        lambda a: np.einsum("ij->j", a),
        np.linalg.norm,
        lambda a: np.linalg.matrix_power(a, 2),
        lambda a: np.linalg.eigh(a)[0],
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = f(x)
        got = got if isinstance(got, la.LazyArray) else got[0]
        assert isinstance(got, la.LazyArray)
        assert_eq(got, f(g))


def test_plans_with_linalg_ops_round_trip_through_json():
    a, b = general((2, 3, 3)), data((3, 2))
    x, y = la.asarray(a, chunks=(1, 2, 2)), la.asarray(b, chunks=2)
    out = [
        x @ y,
        la.tensordot(x, y, 1),
        la.einsum("bij,jk->kb", x, y),
        la.linalg.inv(x),
        la.diagonal(x, 1, 1, 2),
        la.linalg.svd(x)[2],
        la.linalg.matrix_norm(x, ord="nuc"),
    ]
    plan = la.plan(*out)
    again = Plan.from_json(plan.to_json())
    assert [s.expr.key for s in again.stages.values()] == [s.expr.key for s in plan.stages.values()]
