"""The lazy ``unique`` family against NumPy: nothing computed when written.

Every case is written under the ``raise`` executor (writing must compute
nothing), then checked against NumPy on the numpy and numba executors with
passes on and off (``assert_eq``); dask in ``tests/executors/test_deferred_dask.py``.
The values are compared with NumPy's sorted ones (``np.unique_values`` may
come unsorted from its hash table); which zero of ``-0.0``/``0.0`` NumPy
keeps depends on its sort, so zeros compare equal whatever their sign.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import sizes_with_empty_blocks

import lazyarr as la
from lazyarr import api, config
from lazyarr.namespace.deferred import Deferred
from lazyarr.testing import assert_eq

EXECUTORS = ["numpy", "numba"]
DTYPES = [np.int8, np.int64, np.uint16, np.float32, np.float64, np.bool_]


def written(fn):
    """``fn()`` under the raise executor: building the expression computes nothing."""
    with config.set(executor="raise"):
        return fn()


def check(got, want) -> None:
    """A lazy result (an array, or a tuple of them) equals NumPy's, of the same types."""
    if isinstance(want, tuple):
        assert type(got) is type(want)
        assert getattr(got, "_fields", None) == getattr(want, "_fields", None)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w)
        return
    assert isinstance(got, la.LazyArray)
    assert_eq(got, want, executors=EXECUTORS)


@st.composite
def arrays(draw) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """Duplicate-heavy data (NaN and both zeros among floats) and chunks for it."""
    shape = draw(
        st.one_of(
            st.tuples(st.integers(0, 14)),
            st.lists(st.integers(0, 4), min_size=2, max_size=3).map(tuple),
        )
    )
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    n = int(np.prod(shape))
    if dtype.kind == "b":
        pool = [False, True]
    elif dtype.kind == "f":
        pool = [np.nan, -0.0, 0.0, 1.5, -2.0, np.inf]
    else:
        pool = [0, 1, 3, 7] + ([-5] if dtype.kind == "i" else [])
    picks = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    x = np.array(picks, dtype=dtype).reshape(shape)
    chunks = tuple(draw(sizes_with_empty_blocks(k)) for k in shape)
    return x, chunks


@settings(max_examples=30, deadline=None)
@given(arrays())
def test_unique_family_is_lazy_and_equals_numpy(case):
    x, chunks = case
    a = la.asarray(x, chunks=chunks)
    want_all = np.unique_all(x)
    got_all = written(lambda: la.unique_all(a))
    assert isinstance(got_all.values, Deferred) or x.size == 0
    check(got_all, want_all)
    check(written(lambda: la.unique_values(a)), np.sort(np.unique_values(x)))
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    check(written(lambda: la.unique(a, **flags)), np.unique(x, **flags))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("chunks", [((2, 0, 3),), ((1, 1, 1, 1, 1),), ((5,),), ((0, 5, 0),)])
def test_each_function_over_empty_and_one_element_blocks(dtype, chunks):
    x = np.array([3, 0, 3, 1, 0]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[[1, 3]] = [np.nan, -0.0]
    a = la.asarray(x, chunks=chunks)
    check(written(lambda: la.unique_values(a)), np.sort(np.unique_values(x)))
    check(written(lambda: la.unique_counts(a)), np.unique_counts(x))
    check(written(lambda: la.unique_inverse(a)), np.unique_inverse(x))
    check(written(lambda: la.unique_all(a)), np.unique_all(x))
    check(written(lambda: np.unique_all(a)), np.unique_all(x))  # NumPy's dispatch


NAN_CASES = [
    np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.nan, 1.0]),
    np.array([np.nan, np.nan]),
    np.array([2.0, np.nan]),
    np.array([0.0, -0.0, 0.0]),
    np.array([1 + 1j, np.nan, 1 + 1j, complex(0, np.nan), 2j]),
]


@pytest.mark.parametrize("x", NAN_CASES, ids=lambda x: str(x.tolist()))
@pytest.mark.parametrize("equal_nan", [True, False])
@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (False, True, True)])
def test_numpy_unique_flags_and_equal_nan(x, equal_nan, flags):
    a = la.asarray(x, chunks=2)
    kw = dict(zip(("return_index", "return_inverse", "return_counts"), flags, strict=True))
    want = np.unique(x, equal_nan=equal_nan, **kw)
    got = written(lambda: la.unique(a, equal_nan=equal_nan, **kw))
    check(got, want)
    if equal_nan and not any(flags):
        check(written(lambda: np.unique(a)), np.unique(x))  # NumPy's dispatch, default


@pytest.mark.parametrize(
    "x", [np.array(3.0), np.array(True), np.zeros((3, 0)), np.zeros((0,), np.int8)], ids=repr
)
def test_0d_and_empty_inputs(x):
    a = la.asarray(x)
    check(written(lambda: la.unique_all(a)), np.unique_all(x))
    check(written(lambda: la.unique_inverse(a)), np.unique_inverse(x))
    check(written(lambda: la.unique_values(a)), np.unique_values(x))
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    check(written(lambda: la.unique(a, **flags)), np.unique(x, **flags))


def test_unique_of_a_deferred_array_and_chained_use():
    x = np.random.default_rng(2).integers(0, 6, 40)
    a = la.asarray(x, chunks=9)
    sel = written(lambda: a[a > 1])
    values, counts = written(lambda: la.unique_counts(sel))
    assert isinstance(values, Deferred) and isinstance(counts, Deferred)
    want = np.unique_counts(x[x > 1])
    check(values, want.values)
    check(written(lambda: counts * 2 + values), want.counts * 2 + want.values)
    u = written(lambda: la.unique_inverse(a.reshape(5, 8)))
    assert u.inverse_indices.shape == (5, 8)  # known: no count needed
    # the inverse takes the values back to x (take_along_axis keeps lazy indices lazy)
    rebuilt = written(lambda: la.take_along_axis(u.values, u.inverse_indices.reshape(-1), axis=0))
    check(written(lambda: rebuilt.reshape(5, 8)), x.reshape(5, 8))


def test_all_results_are_counted_once_and_keep_the_blocks():
    x = la.random.integers(0, 50, size=400, chunks=100, seed=4)
    u = written(lambda: la.unique_all(x))
    assert len(u.values) == len(u.indices) == len(u.counts)  # one count for the three
    stages = [s.expr.op.label() for s in api.last_run().plan.stages.values()]
    assert "count_true" in stages and "kept_rows" not in stages
    with config.set(executor="raise"):  # the siblings were resolved by that count
        u.counts.resolve()
        u.indices.resolve()
    assert u.values.resolve().numblocks == (4,)
    assert u.inverse_indices.chunks == ((100,) * 4,)
    want = np.unique_all(x.compute())
    check(u, want)


def test_axis_keeps_the_eager_path():
    x = np.array([[1, 0, 1], [2, 2, 2], [1, 0, 1]])
    a = la.asarray(x, chunks=2)
    check(la.unique(a, axis=0, return_counts=True), np.unique(x, axis=0, return_counts=True))


def test_inverse_by_a_gather_where_the_keys_would_overflow(monkeypatch):
    from lazyarr.namespace import sets

    monkeypatch.setattr(sets, "_KEYED_MAX", 0)  # as for n * n past int64
    x = np.array([[3, 1, 3], [2, 1, 0]])
    a = la.asarray(x, chunks=(1, 2))
    check(written(lambda: la.unique_inverse(a)), np.unique_inverse(x))


def test_one_sample_sort_gives_the_sort_and_the_stable_argsort():
    from lazyarr._array import wrap
    from lazyarr.graph.ops.sorting import sort_and_argsort

    x = np.random.default_rng(3).integers(0, 5, 60).astype(np.float32)
    x[::7] = np.nan
    a = la.asarray(x, chunks=((20, 0, 25, 15),))
    values, indices = (wrap(e) for e in sort_and_argsort(a._expr, 0))
    assert values.chunks == indices.chunks == a.chunks
    assert_eq(values, np.sort(x), executors=EXECUTORS)
    assert_eq(indices, np.argsort(x, kind="stable"), executors=EXECUTORS)
