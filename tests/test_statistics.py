"""Cumulative sums/products (the blocked scan) and diff, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import config
from lazyarr.graph import build
from lazyarr.graph.ops.statistics import ScanBlocks, ScanCarry, ScanCombine, ScanTotals
from lazyarr.graph.serialize import exprs_from_json, exprs_to_json
from lazyarr.testing import assert_eq, assert_same_error

DTYPES = ["int8", "uint8", "int32", "int64", "bool", "float32", "float64", "complex128"]


def data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, size=shape).astype(dtype)
    x = rng.standard_normal(shape) + 0.5
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def op_names(arr: la.LazyArray) -> list[str]:
    g = build([arr._expr])
    return sorted(d["expr"].op.name for _, d in g.nodes(data=True))


# -- cumsum / cumprod -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_cumprod_dtypes_uneven_chunks(dtype, axis):
    x = data((5, 7), dtype)
    a = la.asarray(x, chunks=(2, 3))
    assert_eq(la.cumsum(a, axis=axis), np.cumsum(x, axis=axis))
    assert_eq(la.cumprod(a, axis=axis), np.cumprod(x, axis=axis))


@pytest.mark.parametrize("dtype", ["int8", "bool", "uint16", "float16"])
def test_small_types_accumulate_like_numpy(dtype):
    x = data((9,), dtype)
    a = la.asarray(x, chunks=4)
    assert la.cumsum(a).dtype == np.cumsum(x).dtype
    assert_eq(la.cumsum(a), np.cumsum(x))
    assert_eq(la.cumprod(a), np.cumprod(x))


def test_dtype_keyword_and_integer_wraparound():
    x = np.full(40, 100, dtype=np.int8)
    a = la.asarray(x, chunks=7)
    assert_eq(la.cumsum(a, dtype=np.int8), np.cumsum(x, dtype=np.int8))
    assert_eq(la.cumsum(a, dtype="float32"), np.cumsum(x, dtype="float32"))
    assert_eq(la.cumprod(a, dtype=np.int16), np.cumprod(x, dtype=np.int16))
    assert_eq(a.cumsum(dtype=np.uint8), x.cumsum(dtype=np.uint8))


def test_method_and_numpy_dispatch():
    x = data((4, 6), "float64")
    a = la.asarray(x, chunks=(3, 2))
    assert isinstance(np.cumsum(a, axis=1), la.LazyArray)
    assert_eq(np.cumsum(a, axis=1), np.cumsum(x, axis=1))
    assert_eq(np.cumprod(a, axis=0), np.cumprod(x, axis=0))
    assert_eq(a.cumsum(axis=0), x.cumsum(axis=0))
    assert_eq(a.cumprod(axis=1), x.cumprod(axis=1))
    assert_eq(np.cumulative_sum(a, axis=1), np.cumulative_sum(x, axis=1))
    assert_eq(np.cumulative_prod(a, axis=0), np.cumulative_prod(x, axis=0))


def test_nan_and_inf_propagate_across_blocks():
    x = np.array([1.0, np.nan, 2.0, 3.0, np.inf, -np.inf, 1.0, 0.0, np.inf, 5.0])
    y = np.array([2.0, 0.0, 3.0, np.inf, 4.0])
    with np.errstate(invalid="ignore"):
        want_sum, want_prod, want_y = np.cumsum(x), np.cumprod(x), np.cumprod(y)
    assert np.isnan(want_y[3])
    for c in (1, 2, 3, 10):
        a = la.asarray(x, chunks=c)
        assert_eq(la.cumsum(a), want_sum)
        assert_eq(la.cumprod(a), want_prod)
    assert_eq(la.cumprod(la.asarray(y, chunks=2)), want_y)


def test_empty_and_size_one():
    for shape, axis in [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0), ((1,), 0), ((1, 1), 1)]:
        x = np.ones(shape, dtype=np.float32)
        a = la.asarray(x, chunks=2)
        assert_eq(la.cumsum(a, axis=axis), np.cumsum(x, axis=axis))
        assert_eq(
            la.cumulative_prod(a, axis=axis, include_initial=True),
            np.cumulative_prod(x, axis=axis, include_initial=True),
        )


def test_empty_blocks_inside_the_axis():
    x = data((3, 7), "int64")
    a = la.asarray(x, chunks=((1, 0, 2), (2, 0, 0, 5)))
    for axis in (0, 1):
        assert_eq(la.cumsum(a, axis=axis), np.cumsum(x, axis=axis))
        assert_eq(
            la.cumulative_sum(a, axis=axis, include_initial=True),
            np.cumulative_sum(x, axis=axis, include_initial=True),
        )


@pytest.mark.parametrize("func", ["sum", "prod"])
@pytest.mark.parametrize("chunks", [(5, 7), (2, 3), (1, 1)])
def test_include_initial(func, chunks):
    x = data((5, 7), "int32")
    a = la.asarray(x, chunks=chunks)
    lazy = getattr(la, f"cumulative_{func}")
    ref = getattr(np, f"cumulative_{func}")
    for axis in (0, 1, -2):
        got = lazy(a, axis=axis, include_initial=True)
        assert_eq(got, ref(x, axis=axis, include_initial=True))
        assert_eq(lazy(a, axis=axis), ref(x, axis=axis))
    v = data((6,), "float64")
    assert_eq(lazy(la.asarray(v, chunks=4), include_initial=True), ref(v, include_initial=True))


def test_zero_d_is_treated_as_one_d():
    x = np.array(3.5)
    assert_eq(la.cumsum(la.asarray(x)), np.cumsum(x))
    assert_eq(la.cumprod(la.asarray(x), axis=0), np.cumprod(x, axis=0))
    assert_eq(la.cumulative_sum(la.asarray(x)), np.cumulative_sum(x))
    assert_eq(
        la.cumulative_prod(la.asarray(x), include_initial=True),
        np.cumulative_prod(x, include_initial=True),
    )
    assert_same_error(lambda: np.cumsum(x, axis=1), lambda: la.cumsum(la.asarray(x), axis=1))


def test_axis_none_flattens():
    x = data((4, 5), "float64")
    a = la.asarray(x, chunks=(3, 2))
    assert_eq(la.cumsum(a), np.cumsum(x))
    assert_eq(la.cumprod(a), np.cumprod(x))
    assert_eq(a.cumsum(), x.cumsum())
    v = data((11,), "int8")
    assert_eq(la.cumsum(la.asarray(v, chunks=3)), np.cumsum(v))


def test_errors_at_expression_time():
    x = data((3, 4), "float64")
    a = la.asarray(x, chunks=2)
    assert_same_error(lambda: np.cumsum(x, axis=2), lambda: la.cumsum(a, axis=2))
    assert_same_error(lambda: np.cumprod(x, axis=-3), lambda: la.cumprod(a, axis=-3))
    assert_same_error(lambda: np.cumsum(x, axis=1.0), lambda: la.cumsum(a, axis=1.0))
    assert_same_error(lambda: np.cumsum(x, dtype="foo"), lambda: la.cumsum(a, dtype="foo"))
    assert_same_error(lambda: np.cumulative_sum(x), lambda: la.cumulative_sum(a))
    assert_same_error(lambda: np.cumulative_prod(x), lambda: la.cumulative_prod(a))
    with pytest.raises(TypeError, match="out="):
        la.cumsum(a, out=np.empty((3, 4)))


def test_building_is_lazy():
    a = la.asarray(data((6, 6), "float64"), chunks=2)
    with config.set(executor="raise"):
        la.cumsum(a, axis=0)
        la.cumulative_prod(a, axis=1, include_initial=True)
        la.diff(a, n=2, axis=0)


def test_scan_structure():
    a = la.asarray(np.arange(12.0), chunks=4)
    # one block along the axis: just the local scan
    one = la.cumsum(la.asarray(np.arange(12.0), chunks=12))
    assert op_names(one) == ["array", ScanBlocks.name]
    # several blocks: totals (each block scanned) -> carry -> combine (each block scanned
    # again): no stage of scanned blocks for two readers to hold whole
    got = la.cumsum(a)
    assert op_names(got) == sorted(["array", ScanTotals.name, ScanCarry.name, ScanCombine.name])
    assert got.chunks == a.chunks
    assert got._expr.inputs[0] is a._expr
    carry = got._expr.inputs[1]
    assert carry.shape == (3,) and carry.chunks == ((3,),)
    init = la.cumulative_sum(a, include_initial=True)
    assert init.chunks == ((5, 4, 4),)


def test_plan_json_round_trip_keeps_keys():
    a = la.asarray(np.arange(10), chunks=3)
    exprs = [la.cumulative_sum(a, include_initial=True)._expr, la.diff(a, n=2)._expr]
    table, roots = exprs_to_json(exprs)
    back = exprs_from_json(table)
    assert [back[r].key for r in roots] == [e.key for e in exprs]


@st.composite
def arrays_with_chunks(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    axis = draw(st.integers(-ndim, ndim - 1))
    dtype = draw(st.sampled_from(["int16", "float64", "bool"]))
    return shape, chunks, axis, dtype


@given(arrays_with_chunks(), st.sampled_from(["sum", "prod"]), st.booleans())
def test_cumulative_hypothesis(spec, func, include_initial):
    shape, chunks, axis, dtype = spec
    x = data(shape, dtype, seed=sum(shape))
    a = la.asarray(x, chunks=chunks)
    lazy = la.cumulative_sum if func == "sum" else la.cumulative_prod
    ref = np.cumulative_sum if func == "sum" else np.cumulative_prod
    assert_eq(
        lazy(a, axis=axis, include_initial=include_initial),
        ref(x, axis=axis, include_initial=include_initial),
    )


# -- diff --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool", "float32", "complex128"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 9])
def test_diff(dtype, n):
    x = data((5, 7), dtype)
    a = la.asarray(x, chunks=(2, 3))
    for axis in (0, 1, -1):
        with np.errstate(over="ignore"):
            want = np.diff(x, n=n, axis=axis)
        assert_eq(la.diff(a, n=n, axis=axis), want)


def test_diff_chunks_follow_the_input():
    a = la.asarray(np.arange(10.0) ** 2, chunks=4)
    d = la.diff(a, n=3)
    assert d.chunks == ((4, 3),)
    assert_eq(d, np.diff(np.arange(10.0) ** 2, n=3))
    assert_eq(np.diff(a), np.diff(np.arange(10.0) ** 2))
    assert_eq(la.diff(la.asarray(np.arange(3.0), chunks=1), n=5), np.diff(np.arange(3.0), n=5))
    assert_eq(
        la.diff(la.asarray(np.ones((0, 3)), chunks=2), axis=0), np.diff(np.ones((0, 3)), axis=0)
    )


def test_diff_errors():
    x = np.arange(6.0).reshape(2, 3)
    a = la.asarray(x)
    assert_same_error(lambda: np.diff(np.float64(1)), lambda: la.diff(la.asarray(1.0)))
    assert_same_error(lambda: np.diff(x, n=-1), lambda: la.diff(a, n=-1))
    assert_same_error(lambda: np.diff(x, axis=2), lambda: la.diff(a, axis=2))


def test_diff_prepend_append():
    x = data((4, 5), "float64")
    a = la.asarray(x, chunks=(3, 2))
    assert_eq(la.diff(a, prepend=0.0), np.diff(x, prepend=0.0))
    assert_eq(la.diff(a, axis=0, append=x[:1]), np.diff(x, axis=0, append=x[:1]))
    assert_eq(
        la.diff(a, n=2, prepend=1.0, append=la.asarray(x[:, :2])),
        np.diff(x, n=2, prepend=1.0, append=x[:, :2]),
    )
