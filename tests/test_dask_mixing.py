"""Lazy arrays meeting Dask arrays: operators, ufuncs and functions read the Dask array as a lazy
source (nothing computed while the expression is written) and equal NumPy's results."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402
from lazyarr.testing import assert_eq, assert_same_error  # noqa: E402

X = np.arange(20.0).reshape(4, 5)
Y = (np.arange(20) % 7).reshape(4, 5).astype(np.int32)


def both():
    return la.from_array(X, chunks=2), da.from_array(Y, chunks=(3, 2))


def test_operators_both_ways_stay_lazy_and_equal_numpy():
    a, d = both()
    with config.set(executor="raise"):
        got = [a + d, d + a, d * a - 1, a / (d[:, :1] + 1), d[0] ** a, a @ d.T]
    assert all(isinstance(g, la.LazyArray) for g in got)
    want = [X + Y, Y + X, Y * X - 1, X / (Y[:, :1] + 1), Y[0] ** X, X @ Y.T]
    for g, w in zip(got, want):
        assert_eq(g, w, passes=(True,))


def test_numpy_ufuncs_and_functions_on_both():
    a, d = both()
    with config.set(executor="raise"):
        got = [np.add(d, a), np.maximum(a, d), np.hypot(d, a), la.where(a > 3, d, a)]
        got.append(la.map_blocks(lambda p, q: p - q, a, d, dtype=np.float64))
    want = [X + Y, np.maximum(X, Y), np.hypot(Y, X), np.where(X > 3, Y, X), X - Y]
    for g, w in zip(got, want):
        assert_eq(g, w, executors=["numpy"])  # the numba executor reads Dask sources above


def test_in_place_and_int_only_mixing():
    a = la.from_array(Y, chunks=(1, 5))
    d = da.from_array(Y[::-1].copy(), chunks=2)
    a += d
    assert isinstance(a, la.LazyArray)
    assert_eq(a, Y + Y[::-1], executors=["numpy"])
    assert_eq(d - la.from_array(Y[:1], chunks=1), Y[::-1] - Y[:1], executors=["numpy"])


def test_mixing_errors_come_when_written():
    a, d = both()
    assert_same_error(lambda: X + Y[:3], lambda: a + d[:3])
    unknown = d[d[:, 0] > 0]  # dask does not know its length
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        a + unknown
