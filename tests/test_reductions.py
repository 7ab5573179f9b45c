"""Reductions against NumPy: every function, axis form, keepdims and dtype.

Uneven chunks make the tree reduction combine blocks of different sizes;
NaN, empty arrays and 0-d arrays check the edge rules (NaN propagates
through min/max, argmin points at the first NaN, the min of nothing raises
while the expression is written). Variance must stay accurate on data with
a large mean (Chan's pairwise combine, not the naive sum of squares).
"""

# Lambdas built in loops are called at once (check/assert_same_error), never later.
# ruff: noqa: B023

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import arrays, axes_for, chunks_for_shape, dtypes, shapes

import lazyarr as la
from lazyarr.testing import assert_eq, assert_same_error

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REF = ["numpy"]
FUNCS = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "min",
    "max",
    "any",
    "all",
    "argmin",
    "argmax",
    "count_nonzero",
    "nansum",
    "nanprod",
    "nanmin",
    "nanmax",
    "nanmean",
]
DTYPES = ["bool", "int8", "int64", "uint8", "float32", "float64", "complex128"]
AXES = [None, 0, 1, -1, (0, 2), (2, 0), (0, 1, 2)]
SHAPE = (4, 5, 6)
CHUNKS = ((3, 1), (2, 2, 1), (1, 5))


def data(dtype: str, shape=SHAPE, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.3
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -3
        return rng.integers(lo, 4, shape).astype(dt)
    a = rng.standard_normal(shape).astype(dt)
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(shape).astype(dt)
    return a


def check(np_call, lazy_call, rtol=None, executors=REF):
    try:
        with np.errstate(all="ignore"):
            expected = np_call()
    except Exception:
        assert_same_error(np_call, lazy_call)
        return
    assert_eq(lazy_call(), expected, rtol=rtol, atol=rtol, executors=executors)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_reduction_matches_numpy(func, dtype):
    a = data(dtype)
    x = la.asarray(a, chunks=CHUNKS)
    np_fn, la_fn = getattr(np, func), getattr(la, func)
    for axis in AXES:
        for keepdims in (False, True):
            check(
                lambda: np_fn(a, axis=axis, keepdims=keepdims),
                lambda: la_fn(x, axis=axis, keepdims=keepdims),
            )


@pytest.mark.parametrize("func", ["sum", "prod", "mean", "nansum", "nanprod", "nanmean"])
@pytest.mark.parametrize("acc", ["int8", "uint16", "int64", "float32", "float64", "complex64"])
def test_dtype_argument(func, acc):
    for dtype in ("bool", "int8", "float32", "float64"):
        a = data(dtype, seed=1)
        x = la.asarray(a, chunks=CHUNKS)
        for axis in (None, 1, (0, 2)):
            check(
                lambda: getattr(np, func)(a, axis=axis, dtype=acc),
                lambda: getattr(la, func)(x, axis=axis, dtype=acc),
            )


@pytest.mark.parametrize("func", ["var", "std"])
def test_var_std_dtype_and_degrees_of_freedom(func):
    a = data("float64", seed=2)
    x = la.asarray(a, chunks=CHUNKS)
    np_fn, la_fn = getattr(np, func), getattr(la, func)
    for ddof in (0, 1, 2, 2.5):
        assert_eq(la_fn(x, axis=1, ddof=ddof), np_fn(a, axis=1, ddof=ddof))
        assert_eq(la_fn(x, axis=(0, 2), correction=ddof), np_fn(a, axis=(0, 2), ddof=ddof))
    assert_eq(la_fn(x, dtype=np.float32), np_fn(a, dtype=np.float32))
    i = data("int64", seed=2)
    assert_eq(la_fn(la.asarray(i, chunks=CHUNKS), axis=0), np_fn(i, axis=0))
    assert_same_error(
        lambda: np_fn(a, ddof=1, correction=1), lambda: la_fn(x, ddof=1, correction=1)
    )
    # more degrees of freedom removed than there are values: inf or nan, and a warning
    b = np.array([[1.0, 2.0], [3.0, 3.0]])
    y = la.asarray(b, chunks=1)
    with pytest.warns(RuntimeWarning):
        want = np_fn(b, axis=1, ddof=2)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = la_fn(y, axis=1, ddof=2).compute()
    np.testing.assert_array_equal(got, want)  # [inf, nan]
    assert_eq(la_fn(y, axis=0, ddof=3), np_fn(b, axis=0, ddof=3))


def _fsum_var(values: np.ndarray) -> float:
    v = [float(t) for t in values.ravel()]
    m = math.fsum(v) / len(v)
    return math.fsum((t - m) ** 2 for t in v) / len(v)


@pytest.mark.parametrize("chunks", [(7, 9), (1, 63), (100, 1), (13, 5)])
def test_variance_is_accurate_with_a_large_mean(chunks):
    rng = np.random.default_rng(7)
    a = 1e6 + rng.random((120, 63))
    x = la.asarray(a, chunks=chunks)
    want = _fsum_var(a)
    got = float(la.var(x).compute())
    assert abs(got - want) <= 1e-12 * want
    got_std = float(la.std(x).compute())
    assert abs(got_std - math.sqrt(want)) <= 1e-12 * math.sqrt(want)
    got0 = la.var(x, axis=0).compute()
    want0 = np.array([_fsum_var(a[:, j]) for j in range(a.shape[1])])
    np.testing.assert_allclose(got0, want0, rtol=1e-12, atol=0)
    # complex data with a large offset too
    c = a + 1j * (1e6 + rng.random(a.shape))
    got_c = float(la.var(la.asarray(c, chunks=chunks)).compute())
    assert abs(got_c - (_fsum_var(c.real) + _fsum_var(c.imag))) <= 1e-12 * got_c


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_nan_rules(dtype):
    a = data(dtype, (5, 7), seed=3)
    a[1, 2] = a[3, 5] = a[1, 6] = np.nan
    a[4, :] = np.nan  # an all-NaN row
    x = la.asarray(a, chunks=((2, 2, 1), (3, 3, 1)))
    for axis in (None, 0, 1):
        for func in ("min", "max", "argmin", "argmax", "sum", "mean", "var"):
            # NaN propagates; argmin/argmax point at the first NaN
            check(lambda: getattr(np, func)(a, axis=axis), lambda: getattr(la, func)(x, axis=axis))
        for func in ("nansum", "nanprod", "nanmean"):
            check(lambda: getattr(np, func)(a, axis=axis), lambda: getattr(la, func)(x, axis=axis))
        if dtype != "complex128":
            for func in ("nanmin", "nanmax"):
                check(
                    lambda: getattr(np, func)(a, axis=axis),
                    lambda: getattr(la, func)(x, axis=axis),
                )


def test_argmin_returns_the_first_nan_and_first_tie():
    a = np.array([3.0, 1.0, np.nan, 1.0, np.nan, 0.5])
    for chunks in (1, 2, 4, 6, ((1, 4, 1),)):
        x = la.asarray(a, chunks=chunks)
        assert int(la.argmin(x).compute()) == 2
        assert int(la.argmax(x).compute()) == 2
    b = np.array([[2, 1, 5, 1, 5], [0, 0, 7, 7, 0]])
    y = la.asarray(b, chunks=(1, (1, 1, 2, 1)))
    assert_eq(la.argmin(y, axis=1), np.argmin(b, axis=1))
    assert_eq(la.argmax(y, axis=1), np.argmax(b, axis=1))
    assert_eq(la.argmax(y), np.argmax(b))
    assert_eq(la.argmin(y, axis=0, keepdims=True), np.argmin(b, axis=0, keepdims=True))


def test_all_nan_slices_warn_like_numpy():
    a = np.array([[np.nan, np.nan], [1.0, np.nan]])
    x = la.asarray(a, chunks=1)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        np.nanmin(a, axis=1)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        got = la.nanmin(x, axis=1).compute()
    np.testing.assert_array_equal(got, [np.nan, 1.0])


@pytest.mark.parametrize("dtype", ["bool", "int16", "float64", "complex64"])
def test_empty_arrays(dtype):
    for shape, chunks in (((0,), ((0,),)), ((0, 3), ((0,), (2, 1))), ((2, 0), (1, (0,)))):
        a = np.zeros(shape, dtype=dtype)
        x = la.asarray(a, chunks=chunks)
        for func in FUNCS:
            for axis in (None, 0, -1):
                check(
                    lambda: getattr(np, func)(a, axis=axis), lambda: getattr(la, func)(x, axis=axis)
                )
    e = la.asarray(np.zeros((0, 3)))
    assert_eq(la.sum(e), np.float64(0))
    assert_eq(la.prod(e, axis=0), np.ones(3))
    # no identity: refused while the expression is written
    for func in ("min", "max", "argmin", "argmax", "nanmin", "nanmax"):
        assert_same_error(lambda: getattr(np, func)(np.zeros((0, 3))), lambda: getattr(la, func)(e))
        assert_same_error(
            lambda: getattr(np, func)(np.zeros((0, 3)), axis=0),
            lambda: getattr(la, func)(e, axis=0),
        )
    assert_eq(la.max(e, axis=1), np.zeros(0))


def test_zero_length_chunks_are_skipped():
    a = np.arange(12.0).reshape(3, 4) - 5
    x = la.asarray(a, chunks=((0, 2, 0, 1), (4,)))
    for func in FUNCS:
        for axis in (None, 0, 1):
            check(lambda: getattr(np, func)(a, axis=axis), lambda: getattr(la, func)(x, axis=axis))


def test_zero_dimensional_arrays():
    z = np.array(3.5)
    x = la.asarray(z)
    for func in FUNCS:
        for axis in (None, 0, -1, 1, (0,)):
            check(lambda: getattr(np, func)(z, axis=axis), lambda: getattr(la, func)(x, axis=axis))


def test_complex_and_bool_specifics():
    c = np.array([1 + 2j, 1 + 1j, 0 + 5j, 1 + 1j, -1 - 1j])
    x = la.asarray(c, chunks=2)
    for func in ("min", "max", "argmin", "argmax", "sum", "prod", "mean", "var", "std"):
        check(lambda: getattr(np, func)(c), lambda: getattr(la, func)(x))
    assert la.var(x).dtype == np.float64
    b = np.array([[True, False, True], [False, False, True]])
    y = la.asarray(b, chunks=(1, 2))
    assert_eq(la.sum(y, axis=0), b.sum(axis=0))
    assert la.sum(y).dtype == np.int64
    assert_eq(la.mean(y), b.mean())
    assert_eq(
        la.count_nonzero(y, axis=1, keepdims=True), np.count_nonzero(b, axis=1, keepdims=True)
    )
    u = np.array([200, 100, 250], dtype=np.uint8)
    assert_eq(la.sum(la.asarray(u, chunks=1)), u.sum())  # uint64, no wrap
    assert_eq(la.sum(la.asarray(u, chunks=1), dtype=np.uint8), u.sum(dtype=np.uint8))  # wraps
    assert_eq(
        la.prod(la.asarray(np.int8([100, 100, 3]), chunks=1)), np.prod(np.int8([100, 100, 3]))
    )


def test_reduction_errors():
    a = np.ones((2, 3))
    x = la.asarray(a)
    assert_same_error(lambda: np.sum(a, axis=2), lambda: la.sum(x, axis=2))
    assert_same_error(lambda: np.sum(a, axis=-3), lambda: la.sum(x, axis=-3))
    assert_same_error(lambda: np.sum(a, axis=(0, 0)), lambda: la.sum(x, axis=(0, 0)))
    assert_same_error(lambda: np.mean(a, axis=(1, -1)), lambda: la.mean(x, axis=(1, -1)))
    assert_same_error(lambda: np.argmin(a, axis=(0, 1)), lambda: la.argmin(x, axis=(0, 1)))
    assert_same_error(lambda: np.argmax(a, axis=5), lambda: la.argmax(x, axis=5))
    assert_same_error(lambda: np.sum(a, axis=1.0), lambda: la.sum(x, axis=1.0))
    with pytest.raises(TypeError, match="out"):
        la.sum(x, out=np.empty(()))
    with pytest.raises(TypeError):
        la.mean(x, bogus=1)
    with pytest.raises(np.exceptions.AxisError, match="sum"):
        la.sum(x, axis=3)  # the message names the op


def test_methods_and_numpy_dispatch():
    a = data("float64", seed=4)
    x = la.asarray(a, chunks=CHUNKS)
    assert_eq(x.sum(axis=0), a.sum(axis=0))
    assert_eq(x.prod(axis=(1, 2), keepdims=True), a.prod(axis=(1, 2), keepdims=True))
    assert_eq(x.mean(axis=-1, dtype=np.float32), a.mean(axis=-1, dtype=np.float32))
    assert_eq(x.std(ddof=1), a.std(ddof=1))
    assert_eq(x.var(axis=1, ddof=2, keepdims=True), a.var(axis=1, ddof=2, keepdims=True))
    assert_eq(x.min(axis=2), a.min(axis=2))
    assert_eq(x.max(), a.max())
    assert_eq(x.argmin(axis=1), a.argmin(axis=1))
    assert_eq(x.argmax(), a.argmax())
    assert_eq((x > 0).any(axis=0), (a > 0).any(axis=0))
    assert_eq((x > 0).all(axis=(0, 1)), (a > 0).all(axis=(0, 1)))
    with la.config.set(executor="raise"):
        for f in (
            np.sum,
            np.prod,
            np.mean,
            np.std,
            np.var,
            np.min,
            np.max,
            np.amax,
            np.argmin,
            np.any,
            np.all,
            np.count_nonzero,
            np.nansum,
            np.nanmean,
            np.nanmax,
        ):
            assert isinstance(f(x, axis=1), la.LazyArray), f
    assert_eq(np.std(x, axis=0, ddof=1), np.std(a, axis=0, ddof=1))
    assert_eq(np.amin(x, axis=1), np.amin(a, axis=1))
    assert_eq(np.count_nonzero(x > 0), np.count_nonzero(a > 0))


def test_reductions_of_expressions():
    a = data("float64", seed=5)
    x = la.asarray(a, chunks=CHUNKS)
    assert_eq((x * 2 + 1).sum(axis=1), (a * 2 + 1).sum(axis=1))
    assert_eq(la.sqrt(abs(x)).mean(axis=(0, 2)), np.sqrt(abs(a)).mean(axis=(0, 2)))
    assert_eq((x - x.mean(axis=0)).std(axis=0), (a - a.mean(axis=0)).std(axis=0))
    assert_eq(x.sum(axis=0).max(axis=1), a.sum(axis=0).max(axis=1))


# -- hypothesis ----------------------------------------------------------------------

HYP_FUNCS = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "min",
    "max",
    "any",
    "all",
    "count_nonzero",
    "nansum",
    "nanmax",
    "nanmean",
    "argmin",
    "argmax",
]


@given(
    st.data(),
    st.sampled_from(HYP_FUNCS),
    dtypes("biuf").flatmap(lambda d: st.tuples(st.just(d), shapes(0, 3, 6))),
    st.booleans(),
)
def test_random_shapes_chunks_and_axes(data_, func, dtype_shape, keepdims):
    dtype, shape = dtype_shape
    elements = None
    if dtype.kind in "iu":  # keep products and sums exact
        elements = st.integers(0 if dtype.kind == "u" else -3, 3)
    a = data_.draw(arrays(dtype, shape, elements=elements))
    x = la.asarray(a, chunks=data_.draw(chunks_for_shape(shape)))
    axis = data_.draw(axes_for(len(shape)))
    if func in ("argmin", "argmax") and isinstance(axis, tuple):
        axis = axis[0]
    rtol = 1e-3 if dtype == np.float32 else None
    check(
        lambda: getattr(np, func)(a, axis=axis, keepdims=keepdims),
        lambda: getattr(la, func)(x, axis=axis, keepdims=keepdims),
        rtol=rtol,
    )
