"""sort/argsort, searchsorted and nonzero/argwhere/flatnonzero against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from fallbacks import numpy_kernels
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import config
from lazyarr.testing import assert_eq, assert_same_error

DTYPES = ["int8", "uint16", "int64", "bool", "float32", "float64", "complex128"]


def data(shape: tuple[int, ...], dtype: str, seed: int = 0, distinct: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.integers(0, distinct, size=shape)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * rng.integers(0, 2, size=shape)).astype(dtype)
    return x.astype(dtype)


def stable_desc_argsort(x: np.ndarray, axis: int) -> np.ndarray:
    """Descending argsort, ties in input order: the reversed-line recipe, done by hand."""
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


# -- sort / argsort ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_and_stable_argsort(dtype, axis):
    x = data((5, 7), dtype)
    a = la.asarray(x, chunks=(2, 3))
    s = la.sort(a, axis=axis)
    # the sample sort keeps the blocks; complex values are sorted in one block per line
    whole = (x.shape[axis],) if x.dtype.kind == "c" else a.chunks[axis % 2]
    assert s.chunks[axis % 2] == whole
    assert_eq(s, np.sort(x, axis=axis))
    assert_eq(la.argsort(a, axis=axis), np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_descending(dtype):
    x = data((6, 9), dtype, seed=1)
    a = la.asarray(x, chunks=(4, 2))
    for axis in (0, 1):
        assert_eq(la.sort(a, axis=axis, descending=True), np.flip(np.sort(x, axis=axis), axis))
        assert_eq(la.argsort(a, axis=axis, descending=True), stable_desc_argsort(x, axis))


def test_stable_argsort_keeps_ties_in_input_order():
    x = np.array([3, 1, 3, 1, 2, 3, 1, 2] * 5)
    a = la.asarray(x, chunks=3)
    got = la.argsort(a).compute()
    assert got.tolist() == sorted(range(x.size), key=lambda i: x[i])
    got = la.argsort(a, descending=True).compute()
    assert got.tolist() == sorted(range(x.size), key=lambda i: -x[i])
    ints = np.array([5, 2, 5, 2, 9, 2])
    assert_eq(
        la.argsort(la.asarray(ints, chunks=4), descending=True), np.argsort(-ints, kind="stable")
    )


def test_nan_sorts_last_and_first_when_descending():
    x = np.array([[3.0, np.nan, -1.0, np.inf, np.nan, 0.0, -np.inf]] * 2)
    a = la.asarray(x, chunks=(1, 3))
    assert_eq(la.sort(a), np.sort(x))
    assert_eq(la.argsort(a), np.argsort(x, kind="stable"))
    assert_eq(la.sort(a, descending=True), np.flip(np.sort(x), -1))
    assert_eq(la.argsort(a, descending=True), stable_desc_argsort(x, -1))
    got = la.sort(a, descending=True).compute()
    assert np.isnan(got[:, :2]).all() and got[0, 2] == np.inf
    z = np.array([1 + 1j, np.nan, 1 - 1j, complex(np.nan, 1), 0j])
    assert_eq(la.sort(la.asarray(z, chunks=2)), np.sort(z))


def test_numpy_dispatch_keeps_numpy_defaults_exactly():
    # many ties and more than 16 elements, where NumPy's default sort is not stable
    x = data((3, 200), "float64", seed=3, distinct=4)
    a = la.asarray(x, chunks=(2, 50))
    assert isinstance(np.argsort(a), la.LazyArray)
    assert_eq(np.argsort(a), np.argsort(x))
    assert_eq(np.argsort(a, axis=0), np.argsort(x, axis=0))
    assert_eq(np.sort(a, axis=0), np.sort(x, axis=0))
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        assert_eq(np.argsort(a, kind=kind), np.argsort(x, kind=kind))
        assert_eq(la.argsort(a, kind=kind), np.argsort(x, kind=kind))
    assert_eq(np.argsort(a, stable=True), np.argsort(x, stable=True))
    assert_eq(la.argsort(a, stable=False), np.argsort(x, stable=False))


def test_axis_none_and_zero_d():
    x = data((4, 5), "int32")
    a = la.asarray(x, chunks=(3, 2))
    v = data((9,), "float32")
    assert_eq(la.sort(la.asarray(v, chunks=4), axis=None), np.sort(v, axis=None))
    assert_eq(np.sort(a, axis=None), np.sort(x, axis=None))
    assert_eq(la.argsort(a, axis=None), np.argsort(x, axis=None, kind="stable"))
    s = np.array(2.5)
    assert_eq(la.sort(la.asarray(s), axis=None), np.sort(s, axis=None))
    assert_eq(la.argsort(la.asarray(s)), np.argsort(s))
    assert_eq(la.argsort(la.asarray(s), axis=0), np.argsort(s, axis=0))
    assert_same_error(lambda: np.sort(s), lambda: la.sort(la.asarray(s)))


def test_empty_and_size_one():
    for shape, axis in [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 2), 1), ((1,), 0)]:
        x = np.ones(shape, dtype=np.float32)
        a = la.asarray(x, chunks=2)
        assert_eq(la.sort(a, axis=axis), np.sort(x, axis=axis))
        assert_eq(la.argsort(a, axis=axis, descending=True), np.argsort(x, axis=axis))


def test_sort_errors():
    x = data((3, 4), "float64")
    a = la.asarray(x, chunks=2)
    assert_same_error(lambda: np.sort(x, axis=2), lambda: la.sort(a, axis=2))
    assert_same_error(lambda: np.argsort(x, axis=-3), lambda: la.argsort(a, axis=-3))
    assert_same_error(lambda: np.sort(x, axis=1.0), lambda: la.sort(a, axis=1.0))
    assert_same_error(lambda: np.sort(x, kind="bogus"), lambda: la.sort(a, kind="bogus"))
    assert_same_error(
        lambda: np.argsort(x, kind="stable", stable=True),
        lambda: la.argsort(a, kind="stable", stable=True),
    )
    assert_same_error(lambda: np.sort(x, order="f"), lambda: la.sort(a, order="f"))


def test_sort_is_lazy():
    a = la.asarray(data((6, 6), "float64"), chunks=2)
    with config.set(executor="raise"):
        la.sort(a, axis=0)
        la.argsort(a, descending=True)
        la.searchsorted(la.asarray(np.arange(5)), a)


@st.composite
def arrays_with_chunks(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    axis = draw(st.integers(-ndim, ndim - 1))
    dtype = draw(st.sampled_from(["int16", "float64", "bool"]))
    return shape, chunks, axis, dtype


@given(arrays_with_chunks(), st.booleans())
def test_sort_hypothesis(spec, descending):
    shape, chunks, axis, dtype = spec
    x = data(shape, dtype, seed=sum(shape), distinct=3)
    a = la.asarray(x, chunks=chunks)
    want = np.sort(x, axis=axis)
    assert_eq(
        la.sort(a, axis=axis, descending=descending), np.flip(want, axis) if descending else want
    )
    want_i = stable_desc_argsort(x, axis) if descending else np.argsort(x, axis=axis, kind="stable")
    assert_eq(la.argsort(a, axis=axis, descending=descending), want_i)


# -- searchsorted --------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    base = np.array([0.0, 1.0, 1.0, 2.5, 4.0, 4.0, 7.0])
    v = np.array([[-1.0, 1.0, 4.0], [7.0, 8.0, 2.5], [np.nan, 0.0, 1.5]])
    x1 = la.asarray(base, chunks=3)
    x2 = la.asarray(v, chunks=(2, 2))
    got = la.searchsorted(x1, x2, side=side)
    assert got.chunks == x2.chunks
    assert_eq(got, np.searchsorted(base, v, side=side))
    assert_eq(np.searchsorted(x1, x2, side=side), np.searchsorted(base, v, side=side))
    assert_eq(la.searchsorted(x1, 4.0, side=side), np.searchsorted(base, 4.0, side=side))
    ints = np.array([3, 1, 2, 0])
    assert_eq(la.searchsorted(la.asarray(ints), v, side=side), np.searchsorted(ints, v, side=side))


def test_searchsorted_sorter_and_mixed_dtypes():
    base = np.array([5, 1, 4, 2, 3, 0], dtype=np.int16)
    sorter = np.argsort(base)
    v = np.array([0.5, 2, 3.5, 9])
    got = la.searchsorted(
        la.asarray(base, chunks=4), la.asarray(v, chunks=3), sorter=la.asarray(sorter)
    )
    assert_eq(got, np.searchsorted(base, v, sorter=sorter))
    assert_eq(
        la.searchsorted(la.asarray(np.arange(4)), la.asarray(np.array([True, False]))),
        np.searchsorted(np.arange(4), np.array([True, False])),
    )
    empty = np.zeros((0,))
    assert_eq(la.searchsorted(la.asarray(empty), la.asarray(v)), np.searchsorted(empty, v))
    assert_eq(la.searchsorted(la.asarray(base), la.asarray(empty)), np.searchsorted(base, empty))


def test_searchsorted_errors():
    a1, a2, v = np.arange(4), np.ones((2, 2)), np.arange(3)
    L = la.asarray
    assert_same_error(lambda: np.searchsorted(a2, 1), lambda: la.searchsorted(L(a2), 1))
    assert_same_error(
        lambda: np.searchsorted(np.float64(1), v), lambda: la.searchsorted(L(1.0), L(v))
    )
    assert_same_error(
        lambda: np.searchsorted(a1, v, side="middle"),
        lambda: la.searchsorted(L(a1), L(v), side="middle"),
    )
    assert_same_error(
        lambda: np.searchsorted(a1, v, sorter=np.arange(3)),
        lambda: la.searchsorted(L(a1), L(v), sorter=L(np.arange(3))),
    )
    assert_same_error(
        lambda: np.searchsorted(a1, v, sorter=np.arange(4.0)),
        lambda: la.searchsorted(L(a1), L(v), sorter=L(np.arange(4.0))),
    )


# -- nonzero / argwhere / flatnonzero (computed when called) -------------------------------


@numpy_kernels("greater on complex", "comparisons of complex values have no emitter")
@pytest.mark.parametrize("dtype", ["bool", "int8", "float32", "complex128"])
def test_nonzero_family(dtype):
    x = data((5, 7), dtype, distinct=2)
    a = la.asarray(x, chunks=(2, 3))
    got = la.nonzero(a)
    want = np.nonzero(x)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, la.LazyArray)
        assert_eq(g, w)
    assert_eq(la.argwhere(a), np.argwhere(x))
    assert_eq(la.flatnonzero(a), np.flatnonzero(x))
    assert_eq(np.flatnonzero(a), np.flatnonzero(x))
    for g, w in zip(np.nonzero(a), want, strict=True):
        assert_eq(g, w)
    for g, w in zip(la.where(a > 0), np.where(x > 0), strict=True):
        assert_eq(g, w)


def test_nonzero_edge_cases():
    for x in (np.zeros((3, 4)), np.zeros((0, 2)), np.array([0.0, np.nan, -0.0]), np.array([7])):
        a = la.asarray(x, chunks=2)
        for g, w in zip(la.nonzero(a), np.nonzero(x), strict=True):
            assert_eq(g, w)
        assert_eq(la.argwhere(a), np.argwhere(x))
        assert_eq(la.flatnonzero(a), np.flatnonzero(x))
    s = np.array(3.0)
    assert_eq(la.argwhere(la.asarray(s)), np.argwhere(s))
    assert_eq(la.flatnonzero(la.asarray(s)), np.flatnonzero(s))
    assert_same_error(lambda: np.nonzero(s), lambda: la.nonzero(la.asarray(s)))


def test_nonzero_computes_nothing_when_written():
    a = la.asarray(np.arange(6), chunks=2) > 2
    with config.set(executor="raise"):
        (idx,) = la.nonzero(a)
        shifted = idx + 1  # recorded on the deferred result, still nothing computed
    np.testing.assert_array_equal(shifted.compute(), np.nonzero(np.arange(6) > 2)[0] + 1)


def test_plan_json_round_trip_keeps_keys():
    from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

    a = la.asarray(data((4, 5), "float64"), chunks=2)
    exprs = [
        la.argsort(a, axis=0, descending=True, kind="heapsort")._expr,
        la.searchsorted(la.asarray(np.arange(3.0)), a, side="right")._expr,
        la.isin(a, la.asarray([1.0, 2.0]), invert=True, kind="sort")._expr,
    ]
    table, roots = exprs_to_json(exprs)
    back = exprs_from_json(table)
    assert [back[r].key for r in roots] == [e.key for e in exprs]


@given(
    st.lists(st.integers(0, 40), min_size=30, max_size=60),
    st.integers(1, 80),
    st.sampled_from(["left", "right"]),
    st.booleans(),
)
def test_searchsorted_of_a_large_sorted_array_goes_block_by_block(values, step, side, nan):
    a = np.sort(np.repeat(np.array(values, dtype=float), 5))  # over 1 KiB
    if nan:
        a[-1] = np.nan  # NaN sorts last, and searchsorted agrees
    v = np.array([-1.0, 0.0, 3.0, 17.5, 40.0, 41.0, np.nan]).reshape(7, 1) + np.zeros(3)
    x1 = la.asarray(a, chunks=step)
    with config.set({"array.chunk-size": "1KiB"}):  # x1 in two blocks or more is "large"
        got = la.searchsorted(x1, la.asarray(v, chunks=(3, 2)), side=side)
    if len(x1.chunks[0]) > 1:
        # a reduction over x1's blocks: no task reads more than one of them
        assert got._expr.op.name == "reduce" and got._expr.op.func == "sum"
    assert_eq(got, np.searchsorted(a, v, side=side), executors=["numpy", "numba"])
