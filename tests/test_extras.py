"""NumPy functions lazyarr composes from existing ops (quantiles, histograms, pad...) vs NumPy.

Uneven chunks everywhere (``(2, 3)`` on ``(5, 7)``); dtypes, axes, NaN,
empty and 0-d inputs; NumPy's exception types at expression time, and
value-dependent errors at compute time.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from fallbacks import numpy_kernels
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import config
from lazyarr.namespace import (
    comparison,
    covariance,
    histograms,
    index_arithmetic,
    nanfuncs,
    numerical,
    ordering,
    quantiles,
    selection,
    shape_editing,
    spacing,
)
from lazyarr.testing import assert_eq, assert_same_error, executors_under_test

FLOAT16_RUNS_NUMPY = numpy_kernels(
    "dtype float16 is not supported", "Numba has no float16 arithmetic: float16 stages run NumPy's"
)

COMPOSED = (
    comparison,
    covariance,
    histograms,
    index_arithmetic,
    nanfuncs,
    numerical,
    ordering,
    quantiles,
    selection,
    shape_editing,
    spacing,
)

METHODS = [
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
]


def check(lazy, expected, **kwargs):
    """``assert_eq`` on the NumPy reference executor.

    These functions are compositions of ops that the executor suites test
    one by one; compiling a Numba kernel for every sweep case here would
    take minutes. ``test_every_executor`` runs a sample on all executors.
    """
    assert_eq(lazy, expected, executors=["numpy"], **kwargs)


def data(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 9, size=shape).astype(dtype)
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def lz(x: np.ndarray, chunks=(2, 3)) -> la.LazyArray:
    if x.ndim != 2:
        chunks = 2 if x.ndim else ()
    return la.asarray(x, chunks=chunks)


def with_nans(shape=(5, 7), dtype="float64") -> np.ndarray:
    x = data(shape, dtype)
    x[1, 2] = np.nan
    x[3] = np.nan  # an all-NaN row
    x[:, 4] = np.nan  # an all-NaN column
    return x


def quiet(fn, *args, **kwargs):
    """NumPy's result with its RuntimeWarnings (empty / all-NaN slices) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def agree(np_call, la_call) -> int:
    """Same values as NumPy (returns 1), or NumPy's error at expression time (returns 0)."""
    try:
        want = np_call()
    except Exception:
        assert_same_error(np_call, la_call)
        return 0
    check(la_call(), want, passes=(True,))
    return 1


def lazy_raises(exc, make):
    """``make()`` builds without computing; computing raises ``exc``."""
    with config.set(executor="raise"):
        result = make()
    with pytest.raises(exc):
        result.compute()


# -- quantile / percentile / median -----------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_axes_and_q(method):
    x = data((5, 7))
    a = lz(x)
    for q in (0.3, [0.0, 0.45, 1.0], 1):
        for axis in (None, 0, 1, (0, 1)):
            want = np.quantile(x, q, axis=axis, method=method)
            check(la.quantile(a, q, axis=axis, method=method), want)
    want = np.percentile(x, [10, 90], axis=1, method=method, keepdims=True)
    check(la.percentile(a, [10, 90], axis=1, method=method, keepdims=True), want)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "float32"])
def test_quantile_dtypes(dtype):
    x = data((5, 7), dtype)
    a = lz(x)
    check(la.quantile(a, 0.3, axis=1), np.quantile(x, 0.3, axis=1))
    check(la.quantile(a, [0.3, 0.8], axis=0), np.quantile(x, [0.3, 0.8], axis=0))
    check(la.percentile(a, 40), np.percentile(x, 40))
    check(la.quantile(a, 0, axis=0), np.quantile(x, 0, axis=0))  # int q: a take
    check(la.quantile(a, 0.5, method="lower"), np.quantile(x, 0.5, method="lower"))
    check(la.median(a, axis=0), np.median(x, axis=0))


def test_quantile_q_dtype_and_shape_rules():
    x = data((5, 7), "float32")
    a = lz(x)
    for q in (
        0.25,
        np.float64(0.25),
        np.array([0.25], "f4"),
        np.array(0.25),
        [[0.1, 0.2], [0.3, 1]],
    ):
        check(la.quantile(a, q, axis=1), np.quantile(x, q, axis=1))
    q = la.asarray(np.array([0.2, 0.7]))
    check(la.quantile(a, q, axis=0), np.quantile(x, [0.2, 0.7], axis=0))


def test_quantile_3d_axes_keepdims_and_0d():
    x = data((3, 4, 5))
    a = la.asarray(x, chunks=(2, 3, 2))
    for axis in (None, 1, (0, 2), (-1, 0, 1)):
        for kd in (False, True):
            want = np.quantile(x, [0.2, 0.5], axis=axis, keepdims=kd)
            check(la.quantile(a, [0.2, 0.5], axis=axis, keepdims=kd), want)
            check(la.median(a, axis=axis, keepdims=kd), np.median(x, axis=axis, keepdims=kd))
    z = np.array(3.5)
    check(la.quantile(la.asarray(z), 0.3), np.quantile(z, 0.3))
    check(la.median(la.asarray(z)), np.median(z))
    empty_rest = np.zeros((0, 3))
    check(la.quantile(la.asarray(empty_rest), 0.5, axis=1), np.quantile(empty_rest, 0.5, axis=1))


def test_quantile_and_median_nan_propagate():
    x = with_nans()
    a = lz(x)
    for axis in (None, 0, 1):
        check(la.quantile(a, [0.1, 0.6], axis=axis), np.quantile(x, [0.1, 0.6], axis=axis))
        check(
            la.quantile(a, 0.5, axis=axis, method="lower"),
            np.quantile(x, 0.5, axis=axis, method="lower"),
        )
        check(la.median(a, axis=axis), np.median(x, axis=axis))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty slice, like NumPy
def test_median_complex_empty_and_dispatch():
    x = data((5, 7), "complex128")
    check(la.median(lz(x), axis=1), np.median(x, axis=1))
    e = np.zeros((0, 3))
    check(la.median(la.asarray(e), axis=0), quiet(np.median, e, axis=0))
    check(la.median(la.asarray(e)), quiet(np.median, e))
    a = lz(data((5, 7)))
    for fn in (np.median, np.nanmedian):
        assert isinstance(fn(a, axis=0), la.LazyArray)
    for fn in (np.quantile, np.percentile, np.nanquantile, np.nanpercentile):
        assert isinstance(fn(a, 0.5), la.LazyArray)


def test_quantile_errors():
    x = data((5, 7))
    a = lz(x)
    c = data((4,), "complex128")
    cases = [
        (lambda m: m.quantile(x, 1.5), lambda: la.quantile(a, 1.5)),
        (lambda m: m.quantile(x, [0.5, -0.1]), lambda: la.quantile(a, [0.5, -0.1])),
        (lambda m: m.percentile(x, 101), lambda: la.percentile(a, 101)),
        (lambda m: m.quantile(c, 0.5), lambda: la.quantile(la.asarray(c), 0.5)),
        (lambda m: m.quantile(x, 0.5, method="bogus"), lambda: la.quantile(a, 0.5, method="bogus")),
        (lambda m: m.quantile(x, 0.5, axis=2), lambda: la.quantile(a, 0.5, axis=2)),
        (lambda m: m.median(x, axis=(0, 0)), lambda: la.median(a, axis=(0, 0))),
        (lambda m: m.quantile(np.zeros(0), 0.5), lambda: la.quantile(la.zeros(0), 0.5)),
        (lambda m: m.quantile(x, np.zeros((1, 1, 1))), lambda: la.quantile(a, np.zeros((1, 1, 1)))),
        (lambda m: m.nanquantile(c, 0.5), lambda: la.nanquantile(la.asarray(c), 0.5)),
        (lambda m: m.nanpercentile(x, -1), lambda: la.nanpercentile(a, -1)),
    ]
    for np_call, la_call in cases:
        assert_same_error(lambda f=np_call: f(np), la_call)
    b = data((5,), "bool")
    assert_same_error(lambda: np.quantile(b, 0.5), lambda: la.quantile(la.asarray(b), 0.5))
    with pytest.raises(NotImplementedError):
        la.nanquantile(a, 0.5, method="inverted_cdf", weights=np.ones((5, 7)))
    with pytest.raises(TypeError):
        la.median(a, out=np.zeros(()))


def test_weighted_quantile():
    x = data((5, 7), "int16").astype(np.float32)
    x[2, 2] = np.nan
    a = lz(x)
    w = data((5, 7), seed=4) ** 2
    w[0, :3] = 0  # leading zero weights
    w1 = np.arange(1.0, 8.0)
    kw = {"method": "inverted_cdf"}
    for q in (0.0, 0.3, [0.0, 0.5, 1.0], np.array([0.25, 0.8], "f4")):
        for axis in (None, 0, 1, (0, 1)):
            want = np.quantile(x, q, axis=axis, weights=w, **kw)
            check(la.quantile(a, q, axis=axis, weights=lz(w), **kw), want)
        want = np.percentile(x, 30, axis=1, weights=w1, keepdims=True, **kw)
        check(la.percentile(a, 30, axis=1, weights=w1, keepdims=True, **kw), want)
    errors = [
        (lambda m: m.quantile(x, 0.5, weights=w), lambda: la.quantile(a, 0.5, weights=w)),
        (
            lambda m: m.quantile(x, 0.5, weights=w1, **kw),
            lambda: la.quantile(a, 0.5, weights=w1, **kw),
        ),
        (
            lambda m: m.quantile(x, 0.5, 0, weights=w1, **kw),
            lambda: la.quantile(a, 0.5, 0, weights=w1, **kw),
        ),
    ]
    for np_call, la_call in errors:
        assert_same_error(lambda f=np_call: f(np), la_call)
    for bad in (-w, w * 0, np.where(w > 1, np.inf, w)):
        with pytest.raises(ValueError):
            quiet(np.quantile, x, 0.5, axis=1, weights=bad, **kw)
        lazy_raises(ValueError, lambda b=bad: la.quantile(a, 0.5, axis=1, weights=b, **kw))


# -- NaN-ignoring quantiles -------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_methods(method):
    x = with_nans()
    a = lz(x)
    for axis in (None, 0, 1):
        for q in (0.35, [0.0, 0.5, 1.0]):
            want = quiet(np.nanquantile, x, q, axis=axis, method=method)
            check(la.nanquantile(a, q, axis=axis, method=method), want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_nanquantile_nanmedian_dtypes_keepdims(dtype):
    x = with_nans(dtype=dtype) if dtype.startswith("f") else data((5, 7), dtype)
    a = lz(x)
    for axis in (None, 0, 1, (0, 1)):
        for kd in (False, True):
            want = quiet(np.nanmedian, x, axis=axis, keepdims=kd)
            check(la.nanmedian(a, axis=axis, keepdims=kd), want)
            want = quiet(np.nanpercentile, x, [20, 75], axis=axis, keepdims=kd)
            check(la.nanpercentile(a, [20, 75], axis=axis, keepdims=kd), want)
    check(la.nanquantile(a, 0.4), quiet(np.nanquantile, x, 0.4))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty slice, like NumPy
def test_nan_statistics_of_empty_arrays():
    for e in (np.zeros((0, 3)), np.zeros(0, dtype=np.int32)):
        a = la.asarray(e)
        for axis in (None, 0):
            check(la.nanmedian(a, axis=axis), quiet(np.nanmedian, e, axis=axis))
            check(la.nanquantile(a, [0.5], axis=axis), quiet(np.nanquantile, e, [0.5], axis=axis))


# -- average / ptp -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128", "bool"])
def test_average(dtype):
    x = data((5, 7), dtype)
    a = lz(x)
    w2 = data((5, 7), "float64", seed=1) ** 2 + 0.1
    w1 = np.arange(1, 8, dtype=np.int16)
    check(la.average(a), np.average(x))
    for axis in (0, 1, (0, 1), None):
        for kd in (False, True):
            check(la.average(a, axis=axis, keepdims=kd), np.average(x, axis=axis, keepdims=kd))
            want = np.average(x, axis=axis, weights=w2, keepdims=kd)
            check(la.average(a, axis=axis, weights=lz(w2), keepdims=kd), want)
    avg, scl = la.average(a, axis=1, weights=w1, returned=True)
    want_avg, want_scl = np.average(x, axis=1, weights=w1, returned=True)
    check(avg, want_avg)
    check(scl, want_scl)
    avg, scl = la.average(a, axis=0, returned=True)
    want_avg, want_scl = np.average(x, axis=0, returned=True)
    check(avg, want_avg)
    check(scl, want_scl)


def test_average_errors():
    x = data((5, 7))
    a = lz(x)
    assert_same_error(
        lambda: np.average(x, weights=np.ones(7)), lambda: la.average(a, weights=np.ones(7))
    )
    assert_same_error(
        lambda: np.average(x, axis=0, weights=np.ones(7)),
        lambda: la.average(a, axis=0, weights=np.ones(7)),
    )
    assert_same_error(lambda: np.average(x, axis=3), lambda: la.average(a, axis=3))
    e = np.zeros((0, 3))
    assert_same_error(lambda: np.average(e, axis=1), lambda: la.average(la.asarray(e), axis=1))
    w = np.array([1.0, -1, 0, 0, 2, -2, 0])  # sums to zero
    with pytest.raises(ZeroDivisionError):
        np.average(x, axis=1, weights=w)
    lazy_raises(ZeroDivisionError, lambda: la.average(a, axis=1, weights=w))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "complex64"])
def test_ptp(dtype):
    x = data((5, 7), dtype)
    a = lz(x)
    for axis in (None, 0, 1):
        check(la.ptp(a, axis=axis), np.ptp(x, axis=axis))
    check(la.ptp(a, axis=1, keepdims=True), np.ptp(x, axis=1, keepdims=True))
    check(np.ptp(a, axis=0), np.ptp(x, axis=0))


def test_ptp_errors():
    b = data((5,), "bool")
    assert_same_error(lambda: np.ptp(b), lambda: la.ptp(la.asarray(b)))
    e = np.zeros((0, 3))
    assert_same_error(lambda: np.ptp(e, axis=0), lambda: la.ptp(la.asarray(e), axis=0))


# -- nanvar / nanstd / nanarg* / nancum* --------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")  # var, like np.var
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int32"])
def test_nanvar_nanstd(dtype):
    x = with_nans(dtype=dtype) if dtype[0] in "fc" else data((5, 7), dtype)
    a = lz(x)
    for axis in (None, 0, 1):
        for ddof in (0, 1, 6):
            for fn, lfn in ((np.nanvar, la.nanvar), (np.nanstd, la.nanstd)):
                check(lfn(a, axis=axis, ddof=ddof), quiet(fn, x, axis=axis, ddof=ddof))
    check(la.nanvar(a, axis=0, keepdims=True), quiet(np.nanvar, x, axis=0, keepdims=True))
    check(la.nanstd(a, axis=1, correction=1), quiet(np.nanstd, x, axis=1, correction=1))
    if dtype == "float32":
        check(la.nanvar(a, axis=1, dtype="f8"), quiet(np.nanvar, x, axis=1, dtype="f8"))


def test_nanvar_errors():
    x = with_nans()
    a = lz(x)
    assert_same_error(lambda: np.nanvar(x, dtype=int), lambda: la.nanvar(a, dtype=int))
    assert_same_error(
        lambda: np.nanstd(x, ddof=1, correction=1), lambda: la.nanstd(a, ddof=1, correction=1)
    )
    assert_same_error(lambda: np.nanvar(x, axis=2), lambda: la.nanvar(a, axis=2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int8", "bool"])
def test_nanargmin_nanargmax(dtype):
    x = data((5, 7), dtype)
    if dtype[0] in "fc":
        x[1, 2] = np.nan
        x[0, :] = np.nan
        x[2, 3] = np.inf
    a = lz(x)
    for fn, lfn in ((np.nanargmin, la.nanargmin), (np.nanargmax, la.nanargmax)):
        check(lfn(a), fn(x))
        check(lfn(a, axis=0), fn(x, axis=0))
        check(lfn(a, axis=0, keepdims=True), fn(x, axis=0, keepdims=True))
        check(fn(a, axis=None, keepdims=True), fn(x, axis=None, keepdims=True))


def test_nanargmin_all_nan_raises_when_computed():
    x = with_nans()
    a = lz(x)
    with pytest.raises(ValueError, match="All-NaN"):
        np.nanargmin(x, axis=1)
    lazy_raises(ValueError, lambda: la.nanargmin(a, axis=1))
    lazy_raises(ValueError, lambda: la.nanargmax(a, axis=0))
    lazy_raises(ValueError, lambda: la.nanargmax(la.full((3, 4), np.nan)))
    e = np.zeros((0, 3))
    assert_same_error(lambda: np.nanargmin(e), lambda: la.nanargmin(la.asarray(e)))
    assert_same_error(lambda: np.nanargmax(x, axis=5), lambda: la.nanargmax(a, axis=5))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int16"])
def test_nancumsum_nancumprod(dtype):
    x = with_nans(dtype=dtype) if dtype[0] in "fc" else data((5, 7), dtype)
    x = x / 2 if dtype[0] in "fc" else x
    a = lz(x)
    for axis in (None, 0, 1):
        check(la.nancumsum(a, axis=axis), np.nancumsum(x, axis=axis))
        check(la.nancumprod(a, axis=axis), np.nancumprod(x, axis=axis))
    if dtype[0] != "c":
        check(la.nancumsum(a, axis=1, dtype="f8"), np.nancumsum(x, axis=1, dtype="f8"))
    assert_same_error(lambda: np.nancumsum(x, axis=2), lambda: la.nancumsum(a, axis=2))


# -- cov / corrcoef -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
def test_cov_corrcoef(dtype):
    x = data((4, 7), dtype)
    y = data((2, 7), dtype, seed=3)
    a, b = lz(x), lz(y)
    check(la.cov(a), np.cov(x))
    check(la.cov(a, b), np.cov(x, y))
    check(la.cov(a, rowvar=False), np.cov(x, rowvar=False))
    check(la.cov(a, bias=True), np.cov(x, bias=True))
    check(la.cov(a, ddof=3), np.cov(x, ddof=3))
    check(la.cov(a[0]), np.cov(x[0]))
    check(la.cov(a, dtype="f4"), np.cov(x, dtype="f4")) if dtype[0] != "c" else None
    fw = np.array([1, 2, 1, 3, 1, 1, 2])
    aw = np.linspace(0.5, 2, 7)
    check(la.cov(a, fweights=fw), np.cov(x, fweights=fw))
    check(la.cov(a, aweights=aw, ddof=1), np.cov(x, aweights=aw, ddof=1))
    check(la.cov(a, fweights=la.asarray(fw), aweights=aw), np.cov(x, fweights=fw, aweights=aw))
    check(la.corrcoef(a), np.corrcoef(x))
    check(la.corrcoef(a, b, rowvar=True), np.corrcoef(x, y))
    check(la.corrcoef(a[0]), np.corrcoef(x[0]))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # 0 * inf, as in NumPy
def test_cov_edge_cases_and_errors():
    e = np.zeros((0, 4))
    check(la.cov(la.asarray(e)), np.cov(e))
    x = data((3, 1))
    with pytest.warns(RuntimeWarning):
        c = la.cov(lz(x))
    check(c, quiet(np.cov, x))
    a = lz(data((3, 5)))
    xs = data((3, 5))
    cases = [
        (lambda: np.cov(xs, ddof=1.5), lambda: la.cov(a, ddof=1.5)),
        (lambda: np.cov(np.zeros((2, 2, 2))), lambda: la.cov(la.zeros((2, 2, 2)))),
        (lambda: np.cov(xs, fweights=[1.5] * 5), lambda: la.cov(a, fweights=[1.5] * 5)),
        (lambda: np.cov(xs, fweights=[1] * 4), lambda: la.cov(a, fweights=[1] * 4)),
        (lambda: np.cov(xs, aweights=[-1] * 5), lambda: la.cov(a, aweights=[-1] * 5)),
    ]
    for np_call, la_call in cases:
        assert_same_error(np_call, la_call)


# -- comparisons / spacing -------------------------------------------------------------------------


def test_array_equal_and_equiv():
    x = with_nans()
    a = lz(x)
    b = lz(x.copy(), chunks=(3, 2))
    assert isinstance(la.array_equal(a, b), la.LazyArray)
    assert not bool(la.array_equal(a, b))
    assert bool(la.array_equal(a, b, equal_nan=True))
    assert bool(np.array_equal(a, b, equal_nan=True))
    assert not bool(la.array_equal(a, a[:, :6]))
    y = data((5, 7), "int8")
    assert bool(la.array_equal(lz(y), y.astype(np.int64), equal_nan=True))
    z = y.copy()
    z[4, 6] += 1
    assert not bool(la.array_equal(lz(y), z))
    check(la.array_equal(lz(y), y), np.array(np.array_equal(y, y)))
    assert bool(la.array_equiv(lz(y[:1]), np.repeat(y[:1], 3, axis=0)))
    assert not bool(la.array_equiv(lz(y), y[:, :3]))
    assert not bool(la.array_equiv(lz(y), z))
    assert bool(la.array_equal(la.zeros((0, 3)), np.zeros((0, 3))))


def test_logspace_geomspace():
    check(la.logspace(0, 3, 7), np.logspace(0, 3, 7))
    check(
        la.logspace(1, 2, 5, endpoint=False, base=2), np.logspace(1, 2, 5, endpoint=False, base=2)
    )
    check(la.logspace(0, 2, 4, dtype=np.float32), np.logspace(0, 2, 4, dtype=np.float32))
    start, stop = np.array([0.0, 1.0]), np.array([[2.0, 3.0]])
    check(la.logspace(start, stop, 5), np.logspace(start, stop, 5))
    check(la.logspace(start, 3, 5, axis=-1), np.logspace(start, 3, 5, axis=-1))
    base = np.array([2.0, 10.0])
    check(la.logspace(0, 3, 4, base=base, axis=1), np.logspace(0, 3, 4, base=base, axis=1))
    check(la.logspace(0, 3, 0), np.logspace(0, 3, 0))
    check(la.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    check(la.geomspace(-1, -1000, 5, endpoint=False), np.geomspace(-1, -1000, 5, endpoint=False))
    check(la.geomspace(1j, 1000j, 4), np.geomspace(1j, 1000j, 4))
    check(la.geomspace(2, 64, 6, dtype=int), np.geomspace(2, 64, 6, dtype=int))
    check(la.geomspace([1, 2], [100, 8], 3, axis=1), np.geomspace([1, 2], [100, 8], 3, axis=1))
    check(la.geomspace(5, 7, 1), np.geomspace(5, 7, 1))
    assert_same_error(lambda: np.geomspace(0, 10), lambda: la.geomspace(0, 10))
    assert_same_error(lambda: np.logspace(0, 1, -2), lambda: la.logspace(0, 1, -2))


def test_indices():
    for dims in ((3, 4), (2,), (2, 0, 3), ()):
        check(la.indices(dims), np.indices(dims))
        for got, want in zip(la.indices(dims, sparse=True), np.indices(dims, sparse=True)):
            check(got, want)
    check(la.indices((2, 3), dtype=np.float32), np.indices((2, 3), dtype=np.float32))


# -- shape helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int16", "float64", "bool"])
def test_diag_diagflat(dtype):
    v = data((5,), dtype)
    m = data((5, 7), dtype)
    for k in (0, 2, -3):
        check(la.diag(la.asarray(v, chunks=2), k), np.diag(v, k))
        check(la.diag(lz(m), k), np.diag(m, k))
        check(la.diagflat(lz(m[:2]), k), np.diagflat(m[:2], k))
    check(la.diag(lz(m), 9), np.diag(m, 9))
    assert_same_error(lambda: np.diag(np.zeros((2, 2, 2))), lambda: la.diag(la.zeros((2, 2, 2))))
    check(la.diagflat(la.asarray(np.array(3))), np.diagflat(np.array(3)))


def test_rot90():
    x = data((3, 4, 5))
    a = la.asarray(x, chunks=(2, 3, 2))
    for k in range(-1, 6):
        for axes in ((0, 1), (1, 2), (2, 0), (-1, -2)):
            check(la.rot90(a, k, axes), np.rot90(x, k, axes))
    check(np.rot90(lz(data((5, 7)))), np.rot90(data((5, 7))))
    for axes in ((0, 0), (0, 1, 2), (0, 3)):
        assert_same_error(lambda ax=axes: np.rot90(x, 1, ax), lambda ax=axes: la.rot90(a, 1, ax))
    assert_same_error(lambda: np.rot90(np.ones(3)), lambda: la.rot90(la.ones(3)))


PAD_WIDTHS = [1, (2, 3), ((0, 4), (6, 1)), ((9, 11), (0, 8)), {1: (2, 0)}]


@pytest.mark.parametrize(
    "mode,kwargs",
    [
        ("constant", {}),
        ("constant", {"constant_values": ((1, 2), (3.7, -4))}),
        ("edge", {}),
        ("wrap", {}),
        ("reflect", {}),
        ("reflect", {"reflect_type": "odd"}),
        ("symmetric", {}),
        ("symmetric", {"reflect_type": "odd"}),
        ("maximum", {}),
        ("minimum", {"stat_length": 2}),
        ("mean", {"stat_length": ((1, 3), (2, 9))}),
        ("median", {"stat_length": 3}),
        ("linear_ramp", {}),
        ("linear_ramp", {"end_values": (5, -2)}),
    ],
)
@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_pad_modes(mode, kwargs, dtype):
    x = data((5, 7), dtype)
    a = lz(x)
    for width in PAD_WIDTHS:
        check(la.pad(a, width, mode, **kwargs), np.pad(x, width, mode, **kwargs))


def test_pad_edge_cases():
    x = data((5, 7))
    a = lz(x)
    got = la.pad(a, 2, "empty")
    assert got.shape == (9, 11) and got.dtype == x.dtype
    check(la.pad(a, 0), x)
    one = data((1, 3), "int8")
    for mode in ("reflect", "symmetric", "wrap"):
        check(la.pad(la.asarray(one), 4, mode), np.pad(one, 4, mode))
    e = np.zeros((0, 3))
    check(la.pad(la.asarray(e), 2), np.pad(e, 2))
    check(la.pad(la.asarray(e), ((0, 0), (1, 1)), "edge"), np.pad(e, ((0, 0), (1, 1)), "edge"))
    z = np.array(4.0)
    check(la.pad(la.asarray(z), 3), np.pad(z, 3))
    b = data((4,), "bool")
    check(
        la.pad(la.asarray(b), 5, "reflect", reflect_type="odd"),
        np.pad(b, 5, "reflect", reflect_type="odd"),
    )
    cases = [
        (lambda: np.pad(x, -1), lambda: la.pad(a, -1)),
        (lambda: np.pad(x, 1.5), lambda: la.pad(a, 1.5)),
        (lambda: np.pad(x, 1, "bogus"), lambda: la.pad(a, 1, "bogus")),
        (
            lambda: np.pad(x, 1, "edge", constant_values=3),
            lambda: la.pad(a, 1, "edge", constant_values=3),
        ),
        (lambda: np.pad(e, 1, "edge"), lambda: la.pad(la.asarray(e), 1, "edge")),
        (lambda: np.pad(x, ((1, 2, 3),)), lambda: la.pad(a, ((1, 2, 3),))),
        (
            lambda: np.pad(x, 1, "maximum", stat_length=0),
            lambda: la.pad(a, 1, "maximum", stat_length=0),
        ),
    ]
    for np_call, la_call in cases:
        assert_same_error(np_call, la_call)
    with pytest.raises(NotImplementedError):
        la.pad(a, 1, lambda *args: None)


@given(
    n=st.integers(1, 6),
    before=st.integers(0, 13),
    after=st.integers(0, 13),
    mode=st.sampled_from(["edge", "wrap", "reflect", "symmetric"]),
    odd=st.booleans(),
    chunk=st.integers(1, 4),
    dtype=st.sampled_from(["float64", "int8", "bool"]),
)
def test_pad_widths_beyond_the_array(n, before, after, mode, odd, chunk, dtype):
    x = (np.arange(n) ** 2 % 7 + 1).astype(dtype)
    if dtype == "bool":
        x = np.arange(n) % 3 == 1
    kwargs = {"reflect_type": "odd"} if odd and mode in ("reflect", "symmetric") else {}
    got = la.pad(la.asarray(x, chunks=chunk), (before, after), mode, **kwargs)
    check(got, np.pad(x, (before, after), mode, **kwargs), passes=(True,))


def test_split_family():
    x = data((6, 8, 4))
    a = la.asarray(x, chunks=(4, 3, 3))
    cases = [
        (np.split, la.split, (x, 3), (a, 3)),
        (np.split, la.split, (x, [1, 4, 10]), (a, [1, 4, 10])),
        (np.split, la.split, (x, [5, 2, -1], 1), (a, [5, 2, -1], 1)),
        (np.array_split, la.array_split, (x, 5, 1), (a, 5, 1)),
        (np.array_split, la.array_split, (x, 9), (a, 9)),
        (np.hsplit, la.hsplit, (x, 4), (a, 4)),
        (np.vsplit, la.vsplit, (x, [2]), (a, [2])),
        (np.dsplit, la.dsplit, (x, 2), (a, 2)),
        (np.hsplit, la.hsplit, (x[0, 0], 2), (a[0, 0], 2)),
    ]
    for fn, lfn, nargs, largs in cases:
        want = fn(*nargs)
        got = lfn(*largs)
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w, passes=(True,))
    errors = [
        (lambda: np.split(x, 4), lambda: la.split(a, 4)),
        (lambda: np.array_split(x, 0), lambda: la.array_split(a, 0)),
        (lambda: np.hsplit(np.array(1), 1), lambda: la.hsplit(la.asarray(1), 1)),
        (lambda: np.vsplit(x[0, 0], 2), lambda: la.vsplit(a[0, 0], 2)),
        (lambda: np.dsplit(x[0], 2), lambda: la.dsplit(a[0], 2)),
        (lambda: np.split(x, 2, axis=3), lambda: la.split(a, 2, axis=3)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


def test_append():
    x = data((5, 7), "int32")
    a = lz(x)
    check(la.append(a, [1.5, 2]), np.append(x, [1.5, 2]))
    check(la.append(a, x[:2], axis=0), np.append(x, x[:2], axis=0))
    check(np.append(a, lz(x), axis=1), np.append(x, x, axis=1))
    assert_same_error(lambda: np.append(x, [1, 2], axis=0), lambda: la.append(a, [1, 2], axis=0))


@pytest.mark.parametrize(
    "obj",
    [
        0,
        3,
        -2,
        7,
        [1, 4],
        [4, 1, 1],
        [],
        slice(1, 5, 2),
        np.array([True, False] * 3 + [True]),
        [-1, 0],
    ],
)
def test_insert_delete(obj):
    x = data((5, 7), "int16")
    a = lz(x)
    agreed = 0
    for axis in (1, None):
        for values in (9, [7, 8, 9, 10, 11], 2.9):
            agreed += agree(
                lambda v=values, ax=axis: np.insert(x, obj, v, axis=ax),
                lambda v=values, ax=axis: la.insert(a, obj, v, axis=ax),
            )
        agreed += agree(
            lambda ax=axis: np.delete(x, obj, axis=ax), lambda ax=axis: la.delete(a, obj, axis=ax)
        )
    assert agreed >= 2  # most cases compute; the rest raise NumPy's error


def test_insert_delete_more():
    x = data((5, 7))
    a = lz(x)
    col = np.arange(5.0)
    check(la.insert(a, 2, col, axis=1), np.insert(x, 2, col, axis=1))
    check(la.insert(a, [2], col[:, None], axis=1), np.insert(x, [2], col[:, None], axis=1))
    check(la.insert(a, 1, lz(x[:2]), axis=0), np.insert(x, 1, x[:2], axis=0))
    check(la.delete(a, la.asarray(np.array([0, 6])), axis=1), np.delete(x, [0, 6], axis=1))
    errors = [
        (lambda: np.insert(x, 8, 1, axis=1), lambda: la.insert(a, 8, 1, axis=1)),
        (lambda: np.insert(x, [[1]], 1), lambda: la.insert(a, [[1]], 1)),
        (
            lambda: np.insert(x, [1, 2], [1, 2, 3], axis=1),
            lambda: la.insert(a, [1, 2], [1, 2, 3], axis=1),
        ),
        (lambda: np.delete(x, 7, axis=1), lambda: la.delete(a, 7, axis=1)),
        (lambda: np.delete(x, [True, False], axis=1), lambda: la.delete(a, [True, False], axis=1)),
        (lambda: np.delete(x, [1.5]), lambda: la.delete(a, [1.5])),
        (lambda: np.delete(x, 0, axis=2), lambda: la.delete(a, 0, axis=2)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


def test_select_and_piecewise():
    x = data((5, 7))
    a = lz(x)
    conds = [x < -1, x > 2]
    lconds = [a < -1, a > 2]
    check(la.select(lconds, [a, a * 2], default=-5), np.select(conds, [x, x * 2], default=-5))
    xi = data((5, 7), "int8")
    check(la.select(lconds, [lz(xi), 3]), np.select(conds, [xi, 3]))
    check(la.select([a[0] > 0], [1.5], default=lz(xi)), np.select([x[0] > 0], [1.5], default=xi))
    errors = [
        (lambda: np.select(conds, [x]), lambda: la.select(lconds, [a])),
        (lambda: np.select([], []), lambda: la.select([], [])),
        (lambda: np.select([x], [x]), lambda: la.select([a], [a])),
        (
            lambda: np.select([x[:2] > 0, x > 0], [1, 2]),
            lambda: la.select([a[:2] > 0, a > 0], [1, 2]),
        ),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)
    funcs = [lambda v: v * 2, 7, lambda v: -v]
    check(la.piecewise(a, lconds, funcs), np.piecewise(x, conds, funcs))
    check(la.piecewise(lz(xi), [lz(xi) > 4], [1.9]), np.piecewise(xi, [xi > 4], [1.9]))
    assert_same_error(lambda: np.piecewise(x, conds, [1]), lambda: la.piecewise(a, lconds, [1]))


# -- binning ---------------------------------------------------------------------------------------


def test_digitize():
    x = data((5, 7))
    a = lz(x)
    for bins in ([-2.0, 0, 0, 1.5], [3, 1, 1, -1], [0.5], [], [2, 2]):
        for right in (False, True):
            check(la.digitize(a, bins, right=right), np.digitize(x, bins, right=right))
    check(la.digitize(a, la.asarray(np.array([-1.0, 1.0]))), np.digitize(x, [-1.0, 1.0]))
    errors = [
        (lambda: np.digitize(x, [1, 0, 2]), lambda: la.digitize(a, [1, 0, 2])),
        (lambda: np.digitize(x, [[1, 2]]), lambda: la.digitize(a, [[1, 2]])),
        (lambda: np.digitize(x + 1j, [1, 2]), lambda: la.digitize(a + 1j, [1, 2])),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


@pytest.mark.parametrize("minlength", [0, 4, 300])
def test_bincount(minlength):
    x = np.random.default_rng(0).integers(0, 12, 40)
    a = la.asarray(x, chunks=7)
    w = np.linspace(-1, 3, 40)
    check(la.bincount(a, minlength=minlength), np.bincount(x, minlength=minlength))
    check(la.bincount(a, weights=w, minlength=minlength), np.bincount(x, w, minlength))
    check(
        la.bincount(a.astype(np.uint8), la.asarray(w.astype("f4"))),
        np.bincount(x.astype(np.uint8), w.astype("f4")),
    )
    check(np.bincount(a), np.bincount(x))
    e = np.zeros(0, dtype=np.intp)
    check(la.bincount(la.asarray(e), minlength=minlength), np.bincount(e, minlength=minlength))


def test_bincount_errors():
    x = np.array([1, 3, 2])
    a = la.asarray(x)
    errors = [
        (lambda: np.bincount(x, minlength=-1), lambda: la.bincount(a, minlength=-1)),
        (
            lambda: np.bincount(np.zeros((2, 2), int)),
            lambda: la.bincount(la.zeros((2, 2), dtype=int)),
        ),
        (lambda: np.bincount(np.array(3)), lambda: la.bincount(la.asarray(3))),
        (lambda: np.bincount(x.astype(float)), lambda: la.bincount(a.astype(float))),
        (lambda: np.bincount(x, weights=[1, 2]), lambda: la.bincount(a, weights=[1, 2])),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)
    counted = la.bincount(la.asarray(np.array([1, -1])))  # the length needs the maximum
    with pytest.raises(ValueError):
        counted.compute()  # NumPy's error, once the values are known


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_histogram(dtype):
    x = data((6, 7), dtype)
    x.reshape(-1)[3] = x.max()  # exactly on the last edge
    a = la.asarray(x, chunks=(4, 3))
    w = data((6, 7), "float64", seed=2)
    cases = [
        {},
        {"bins": 5, "range": (-2, 3)},
        {"bins": 7, "range": (-2, 3), "weights": w},
        {"bins": [-3, -1, 0, 0, 2.5, 4]},
        {"bins": 3, "density": True},
        {"bins": [-1, 0, 4], "density": True, "weights": w},
        {"bins": "auto"},
        {"bins": 400},
        {"bins": 300, "weights": w.astype("f4")},
    ]
    for kwargs in cases:
        want_n, want_e = np.histogram(x, **kwargs)
        lkwargs = dict(kwargs)
        if "weights" in lkwargs:
            lkwargs["weights"] = la.asarray(lkwargs["weights"], chunks=(4, 3))
        got_n, got_e = la.histogram(a, **lkwargs)
        check(got_n, want_n, passes=(True,))
        check(got_e, want_e, passes=(True,))
    check(la.histogram_bin_edges(a, 4), np.histogram_bin_edges(x, 4))


def test_histogram_lazy_with_range_and_errors():
    x = with_nans()
    a = lz(x)
    with config.set(executor="raise"):
        counts, edges = la.histogram(a, bins=4, range=(-1, 1))  # nothing computed
    want_n, want_e = np.histogram(x, bins=4, range=(-1, 1))
    check(counts, want_n)
    check(edges, want_e)
    e = np.zeros(0)
    for kwargs in ({}, {"bins": 3, "range": (0, 2)}):
        got = la.histogram(la.asarray(e), **kwargs)
        for g, w in zip(got, np.histogram(e, **kwargs)):
            check(g, w)
    y = data((5, 7))
    b = lz(y)
    errors = [
        (lambda: np.histogram(y, bins=0), lambda: la.histogram(b, bins=0)),
        (lambda: np.histogram(y, bins=2.5), lambda: la.histogram(b, bins=2.5)),
        (lambda: np.histogram(y, bins=[[1, 2]]), lambda: la.histogram(b, bins=[[1, 2]])),
        (lambda: np.histogram(y, bins=[3, 1]), lambda: la.histogram(b, bins=[3, 1])),
        (lambda: np.histogram(y, range=(2, 1)), lambda: la.histogram(b, range=(2, 1))),
        (lambda: np.histogram(y, weights=y[0]), lambda: la.histogram(b, weights=y[0])),
        (lambda: np.histogram(y, "bogus"), lambda: la.histogram(b, "bogus")),
        (lambda: np.histogram(y, "auto", weights=y), lambda: la.histogram(b, "auto", weights=y)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)
    with config.set(executor="raise"):
        counts, edges = la.histogram(a)  # nothing computed: the range is found when computing
    for lazy_result in (counts, edges):
        with pytest.raises(ValueError, match=r"autodetected range of \[nan, nan\] is not finite"):
            lazy_result.compute()


HIST_EXECUTORS = ["numpy", "numba"]


def histogram_data(draw, dtype: np.dtype) -> np.ndarray:
    """1 to 40 values of ``dtype``: small, negative, constant, large, offset or subnormal."""
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(st.sampled_from(["small", "negative", "constant", "large", "offset", "tiny"]))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = {
            "small": (0, 9),
            "negative": (max(int(info.min), -1000), -1) if dtype.kind == "i" else (0, 3),
            "large": (int(info.min), int(info.max)),
            "offset": (int(info.max) - 5, int(info.max)),
        }.get(kind, (int(info.min), int(info.max)))
        x = rng.integers(low, high, n, dtype=dtype, endpoint=True)
    else:
        info = np.finfo(dtype)
        u = rng.uniform(-1, 1, n)
        x = {
            "small": u * 3,
            "negative": -np.abs(u) * 100 - 1,
            "large": u * float(info.max) / 4,  # the range stays finite
            "offset": 1000 + u * float(info.eps) * 4000,  # few representable values
            "tiny": u * float(info.smallest_subnormal) * 8,  # too many bins, often
        }.get(kind, u * 100).astype(dtype)
    if kind == "constant":
        x[:] = x[0]
    return x


@st.composite
def histogram_cases(draw):
    dtype = np.dtype(
        draw(st.sampled_from(["int64", "int8", "uint8", "uint64", "float64", "float32", "float16"]))
    )
    x = histogram_data(draw, dtype)
    if x.size % 2 == 0 and draw(st.booleans()):
        x = x.reshape(2, -1)
    weights = None
    if draw(st.booleans()):
        wtype = draw(st.sampled_from(["float64", "float32", "int64"]))
        weights = np.random.default_rng(x.size).standard_normal(x.shape).astype(wtype)
    return x, draw(st.integers(1, 50)), weights, draw(st.booleans()), draw(st.integers(1, 7))


@FLOAT16_RUNS_NUMPY
@settings(max_examples=12, deadline=None)  # each example compiles kernels: ~2 s
@given(case=histogram_cases())
def test_histogram_integer_bins_lazy_and_exact(case):
    """Integer ``bins`` without ``range``: nothing computed when written, NumPy's exact edges."""
    x, bins, weights, density, chunk = case
    a = la.asarray(x, chunks=chunk if x.ndim == 1 else (1, chunk))
    lw = None if weights is None else la.asarray(weights, chunks=a.chunks)
    with config.set(executor="raise"):
        counts, edges = la.histogram(a, bins, weights=lw, density=density)
        only_edges = la.histogram_bin_edges(a, bins)
    assert counts.shape == (bins,) and edges.shape == (bins + 1,)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_n, want_e = np.histogram(x, bins, weights=weights, density=density)
    except ValueError as e:  # too many bins for the data's range: raised when computed
        for name in HIST_EXECUTORS:
            for lazy_result in (edges, only_edges, counts):
                with pytest.raises(ValueError, match=re.escape(str(e))):
                    lazy_result.compute(executor=name)
        return
    assert edges.dtype == want_e.dtype and only_edges.dtype == want_e.dtype
    for name in HIST_EXECUTORS:
        np.testing.assert_array_equal(edges.compute(executor=name), want_e, strict=True)
        np.testing.assert_array_equal(only_edges.compute(executor=name), want_e, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # density of all-zero weights: 0/0
        if x.dtype.kind == "f" and np.abs(x).max() < np.finfo(x.dtype).smallest_normal:
            # NumPy counts uniform bins from a float estimate corrected by one step,
            # which can disagree with its own edges on a subnormal range; lazyarr
            # follows the edges, as NumPy does for explicit edges
            want_n = np.histogram(x, want_e, weights=weights, density=density)[0]
        rtol = None
        if density and weights is not None and weights.dtype == np.float32:
            # the density divides by the sum of float32 weights, which the compiled
            # kernel adds in float64: with signed weights the sums part in the 6th digit
            rtol = 1e-4
        assert_eq(counts, want_n, executors=HIST_EXECUTORS, passes=(True,), rtol=rtol)


@FLOAT16_RUNS_NUMPY
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_histogram_non_finite_range_raises_when_computed(dtype, bad):
    x = np.array([1.0, bad, -2.0, 0.5], dtype=dtype)
    a = la.asarray(x, chunks=3)
    with pytest.raises(ValueError) as want:
        np.histogram(x, 5)
    with config.set(executor="raise"):
        counts, edges = la.histogram(a, 5, density=True)
        only_edges = la.histogram_bin_edges(a, 5)
    for name in HIST_EXECUTORS:
        for lazy_result in (counts, edges, only_edges):
            with pytest.raises(ValueError, match=re.escape(str(want.value))):
                lazy_result.compute(executor=name)


def test_histogram_edges_exact_sweep():
    """Edges bit for bit against NumPy over many ranges, dtypes and bin counts."""
    rng = np.random.default_rng(13)
    cases = [
        np.array([0.1, 0.7]),
        np.array([-3.3, 1e-9, 7.1]),
        np.array([1e300, -1e300]),
        np.array([5e-324, 0.0]),  # a subnormal range: too many bins beyond one
        np.array([2**53, 2**53 + 1], dtype=np.int64),  # equal as float64: too many bins
        np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        np.array([0, 2**64 - 1], dtype=np.uint64),
        np.array([7, 7, 7], dtype=np.int8),
        np.array([0.3, 0.3], dtype=np.float32),
        np.array([-0.0, 0.0]),
    ]
    cases += [rng.standard_normal(9) * 10.0 ** rng.integers(-30, 30) for _ in range(20)]
    cases += [rng.standard_normal(9).astype(np.float32) * np.float32(1e3) for _ in range(10)]
    cases += [(rng.standard_normal(9) * 50).astype(np.float16) for _ in range(5)]
    xs = [np.asarray(c) for c in cases]
    lazies = []
    with config.set(executor="raise"):
        for x in xs:
            lazies += [
                (x, bins, la.histogram_bin_edges(la.asarray(x, chunks=2), bins))
                for bins in (1, 2, 3, 7, 10, 33, 50, 257)
            ]
    for x, bins, lazy_edges in lazies:
        try:
            want = np.histogram_bin_edges(x, bins)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                lazy_edges.compute(executor="numpy")
            continue
        np.testing.assert_array_equal(lazy_edges.compute(executor="numpy"), want, strict=True)


def test_count_bins_paths_agree():
    rng = np.random.default_rng(5)
    idx = rng.integers(-2, 600, 200)
    w = rng.standard_normal(200)
    keep = (idx >= 0) & (idx < 600)
    want = np.bincount(idx[keep], minlength=600)
    want_w = np.bincount(idx[keep], w[keep], minlength=600)
    a = la.asarray(idx, chunks=64)
    check(histograms.count_bins(a, 600), want)
    check(histograms.count_bins(a, 600, la.asarray(w), np.float64), want_w)
    check(histograms.count_bins(a, 100), want[:100])
    check(histograms.count_bins(a, 100, la.asarray(w), np.float64), want_w[:100])


# -- index arithmetic ------------------------------------------------------------------------------


def test_unravel_and_ravel_multi_index():
    shape = (3, 4, 5)
    flat = np.array([[0, 17], [59, 33], [8, 41]])
    f = la.asarray(flat, chunks=(2, 1))
    for order in ("C", "F"):
        for got, want in zip(
            la.unravel_index(f, shape, order=order), np.unravel_index(flat, shape, order=order)
        ):
            check(got, want)
        coords = np.unravel_index(flat, shape, order=order)
        lcoords = [la.asarray(c, chunks=(2, 1)) for c in coords]
        check(
            la.ravel_multi_index(lcoords, shape, order=order),
            np.ravel_multi_index(coords, shape, order=order),
        )
    got = la.unravel_index(la.asarray(np.int64(7)), (4, 3))
    for g, w in zip(got, np.unravel_index(7, (4, 3))):
        check(g, w)
    big = (np.array([-1, 3, 7]), np.array([2, 9, -4]))
    lbig = tuple(la.asarray(b) for b in big)
    for mode in ("wrap", "clip", ("clip", "wrap")):
        check(
            la.ravel_multi_index(lbig, (4, 5), mode=mode),
            np.ravel_multi_index(big, (4, 5), mode=mode),
        )
    lazy_raises(ValueError, lambda: la.unravel_index(la.asarray(np.array([3, 60])), shape)[0])
    lazy_raises(ValueError, lambda: la.ravel_multi_index(lbig, (4, 5)))
    errors = [
        (lambda: np.unravel_index(1.0, shape), lambda: la.unravel_index(la.asarray(1.0), shape)),
        (
            lambda: np.unravel_index(1, shape, order="K"),
            lambda: la.unravel_index(la.asarray(1), shape, order="K"),
        ),
        (
            lambda: np.ravel_multi_index(([1],), (3, 4)),
            lambda: la.ravel_multi_index((la.asarray([1]),), (3, 4)),
        ),
        (
            lambda: np.ravel_multi_index(([1.0], [1]), (3, 4)),
            lambda: la.ravel_multi_index((la.asarray([1.0]), la.asarray([1])), (3, 4)),
        ),
        (
            lambda: np.ravel_multi_index(([1], [1]), (3, 4), mode="x"),
            lambda: la.ravel_multi_index((la.asarray([1]), la.asarray([1])), (3, 4), mode="x"),
        ),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


# -- lexsort / partition ---------------------------------------------------------------------------


def test_lexsort():
    rng = np.random.default_rng(1)
    k1 = rng.integers(0, 3, (4, 9))
    k2 = rng.integers(0, 3, (4, 9)).astype(float)
    k2[0, 3] = np.nan
    l1, l2 = la.asarray(k1, chunks=(3, 4)), la.asarray(k2, chunks=(2, 5))
    check(la.lexsort((l1, l2)), np.lexsort((k1, k2)))
    check(la.lexsort((l2, l1), axis=0), np.lexsort((k2, k1), axis=0))
    check(la.lexsort(la.asarray(k1)), np.lexsort(k1))
    check(np.lexsort((l1[0],)), np.lexsort((k1[0],)))
    errors = [
        (lambda: np.lexsort(()), lambda: la.lexsort(())),
        (lambda: np.lexsort((k1, k1[:2])), lambda: la.lexsort((l1, l1[:2]))),
        (lambda: np.lexsort((k1,), axis=2), lambda: la.lexsort((l1,), axis=2)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


def test_partition_contract():
    x = data((5, 7))
    x[2, 3] = np.nan
    a = lz(x)
    for kth, axis in ((3, -1), ([0, 4], 0), (-2, 1), (10, None)):
        p = la.partition(a, kth, axis=axis).compute()
        want = np.partition(x, kth, axis=axis)
        ks = np.atleast_1d(kth)
        ax = -1 if axis is None else axis
        np.testing.assert_array_equal(np.take(p, ks, axis=ax), np.take(want, ks, axis=ax))
        idx = la.argpartition(a, kth, axis=axis).compute()
        base = x.reshape(-1) if axis is None else x
        picked = np.take_along_axis(base, idx, axis=ax)
        np.testing.assert_array_equal(np.take(picked, ks, axis=ax), np.take(want, ks, axis=ax))
    errors = [
        (lambda: np.partition(x, 7), lambda: la.partition(a, 7)),
        (lambda: np.partition(x, True), lambda: la.partition(a, True)),
        (lambda: np.partition(x, 1.5), lambda: la.partition(a, 1.5)),
        (lambda: np.argpartition(x, -8), lambda: la.argpartition(a, -8)),
        (lambda: np.partition(x, 1, axis=2), lambda: la.partition(a, 1, axis=2)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


# -- gradient / interp -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_gradient(dtype):
    x = data((5, 7), dtype)
    a = lz(x)
    coords = np.array([0.0, 0.5, 1.5, 1.7, 3.0, 4.0, 6.5])
    for edge_order in (1, 2):
        for got, want in zip(
            la.gradient(a, edge_order=edge_order), np.gradient(x, edge_order=edge_order)
        ):
            check(got, want)
        check(
            la.gradient(a, 0.5, axis=1, edge_order=edge_order),
            np.gradient(x, 0.5, axis=1, edge_order=edge_order),
        )
        check(
            la.gradient(a, coords, axis=-1, edge_order=edge_order),
            np.gradient(x, coords, axis=-1, edge_order=edge_order),
        )
        for got, want in zip(
            la.gradient(a, 2.0, coords, edge_order=edge_order),
            np.gradient(x, 2.0, coords, edge_order=edge_order),
        ):
            check(got, want)
    check(la.gradient(a, np.arange(7) * 3, axis=1), np.gradient(x, np.arange(7) * 3, axis=1))
    errors = [
        (lambda: np.gradient(x[:2], edge_order=2), lambda: la.gradient(a[:2], edge_order=2)),
        (lambda: np.gradient(x, 1, 2, 3), lambda: la.gradient(a, 1, 2, 3)),
        (
            lambda: np.gradient(x, np.arange(3), axis=1),
            lambda: la.gradient(a, np.arange(3), axis=1),
        ),
        (lambda: np.gradient(x, edge_order=3), lambda: la.gradient(a, edge_order=3)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


def test_interp():
    xp = np.array([-2.0, -1.0, 0.0, 0.0, 1.5, 4.0])
    fp = np.array([1.0, 3.0, -1.0, 2.0, 0.5, 7.0])
    x = data((5, 7))
    x[0, 0] = np.nan
    x[0, 1] = 4.0
    x[0, 2] = -1.0
    a = lz(x)
    check(la.interp(a, xp, fp), np.interp(x, xp, fp))
    check(
        la.interp(a, xp[:-1], fp[:-1], left=-9, right=9.5),
        np.interp(x, xp[:-1], fp[:-1], left=-9, right=9.5),
    )
    check(la.interp(a, xp[:1], fp[:1]), np.interp(x, xp[:1], fp[:1]))
    check(la.interp(la.asarray(np.array(0.7)), xp, fp + 1j), np.interp(0.7, xp, fp + 1j))
    check(la.interp(a, la.asarray(xp, chunks=2), la.asarray(fp, chunks=4)), np.interp(x, xp, fp))
    errors = [
        (lambda: np.interp(x, xp, fp[:3]), lambda: la.interp(a, xp, fp[:3])),
        (lambda: np.interp(x, [], []), lambda: la.interp(a, [], [])),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)


# -- every executor --------------------------------------------------------------------------------


def test_every_executor():
    """A sample of the compositions on every executor, passes on and off.

    Kept small: each case compiles Numba kernels when the disk cache is cold.
    """
    x = with_nans()
    a = lz(x)
    y = data((5, 7))
    b = lz(y)
    i = np.random.default_rng(2).integers(0, 6, 30)
    w = np.arange(1.0, 6.0)
    cases = [
        (la.median(b, axis=1), np.median(y, axis=1)),
        (la.nanmedian(a, axis=0), quiet(np.nanmedian, x, axis=0)),
        (la.average(b, axis=0, weights=w), np.average(y, 0, w)),
        (
            la.pad(b, ((3, 1), (8, 2)), "reflect", reflect_type="odd"),
            np.pad(y, ((3, 1), (8, 2)), "reflect", reflect_type="odd"),
        ),
        (la.insert(b, [1, 5], 0.5, axis=1), np.insert(y, [1, 5], 0.5, axis=1)),
        (la.bincount(la.asarray(i, chunks=7), minlength=9), np.bincount(i, minlength=9)),
        (la.cov(b), np.cov(y)),
        (la.lexsort((b[0], b[1] > 0)), np.lexsort((y[0], y[1] > 0))),
    ]
    for got, want in cases:
        assert_eq(got, want)


def test_value_errors_surface_on_every_executor():
    x = with_nans()
    w = np.array([1.0, -1, 0, 0, 2, -2, 0])
    for name in executors_under_test():
        with pytest.raises(ValueError, match="All-NaN slice"):
            la.nanargmin(lz(x), axis=1).compute(executor=name)
        with pytest.raises(ZeroDivisionError):
            la.average(lz(x), axis=1, weights=w).compute(executor=name)
        with pytest.raises(ValueError):
            la.unravel_index(la.asarray(np.array([1, 99])), (3, 4))[1].compute(executor=name)


def test_every_name_dispatches_from_numpy():
    from lazyarr._array import HANDLED_FUNCTIONS

    missing = [
        n
        for mod in COMPOSED
        for n in mod.__all__
        if hasattr(np, n) and getattr(np, n) not in HANDLED_FUNCTIONS
    ]
    assert missing == []
    assert {"median", "pad", "histogram", "nanargmin", "cov", "lexsort"} <= set(dir(la))


@st.composite
def arrays_and_axis(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    axis = draw(st.sampled_from([None, *range(-ndim, ndim)]))
    seed = draw(st.integers(0, 2**16))
    x = np.random.default_rng(seed).standard_normal(shape).round(1)  # ties included
    nan_mask = np.random.default_rng(seed + 1).random(shape) < draw(st.sampled_from([0, 0.3, 1]))
    return x, chunks, axis, nan_mask


@given(
    case=arrays_and_axis(),
    q=st.sampled_from([0.0, 0.5, 1.0, [0.1, 0.75], [[0.3], [0.9]]]),
    method=st.sampled_from(METHODS),
    keepdims=st.booleans(),
)
def test_quantiles_random_shapes_and_chunks(case, q, method, keepdims):
    x, chunks, axis, nan_mask = case
    a = la.asarray(x, chunks=chunks)
    kw = {"axis": axis, "method": method, "keepdims": keepdims}
    check(la.quantile(a, q, **kw), np.quantile(x, q, **kw), passes=(True,))
    xn = np.where(nan_mask, np.nan, x)
    an = la.asarray(xn, chunks=chunks)
    check(la.nanquantile(an, q, **kw), quiet(np.nanquantile, xn, q, **kw), passes=(True,))
    kw.pop("method")
    check(la.median(an, **kw), np.median(xn, **kw), passes=(True,))
    check(la.nanmedian(an, **kw), quiet(np.nanmedian, xn, **kw), passes=(True,))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve(mode):
    a = data((9,))
    v = data((4,), seed=1)
    la_a, la_v = la.asarray(a, chunks=4), la.asarray(v, chunks=3)
    check(la.convolve(la_a, la_v, mode), np.convolve(a, v, mode))
    check(la.convolve(la_v, la_a, mode), np.convolve(v, a, mode))
    i8, u8 = data((7,), "int8"), data((3,), "uint8")
    check(la.convolve(la.asarray(i8, chunks=3), u8, mode), np.convolve(i8, u8, mode))
    b = data((5,), "bool")
    check(la.convolve(la.asarray(b, chunks=2), b[:2], mode), np.convolve(b, b[:2], mode))
    check(la.convolve(la.asarray(5.0), a, mode), np.convolve(5.0, a, mode))
    c = a[:3] + 1j
    check(la.convolve(la.asarray(c), a, mode), np.convolve(c, a, mode))
    errors = [
        (lambda: np.convolve([], a, mode), lambda: la.convolve(la.zeros(0), la_a, mode)),
        (lambda: np.convolve(a, v, "bogus"), lambda: la.convolve(la_a, la_v, "bogus")),
        (lambda: np.convolve([[1.0]], a), lambda: la.convolve(la.ones((1, 1)), la_a)),
    ]
    for np_call, la_call in errors:
        assert_same_error(np_call, la_call)
