"""NumPy ndarray methods on LazyArray that are served by namespace functions."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.testing import assert_eq

DATA = np.array([[3.0, 1.0, 2.0, 9.0], [0.0, -1.0, 5.0, 5.0], [7.0, 7.0, 1.0, 0.0]])


def lazy():
    return la.asarray(DATA, chunks=(2, 3))


def test_sort_is_in_place_on_the_handle():
    x = lazy()
    alias = x
    before = x + 0
    assert x.sort(axis=1) is None
    assert_eq(alias, np.sort(DATA, axis=1))
    assert_eq(before, DATA)


def test_argsort_nonzero_searchsorted():
    assert_eq(lazy().argsort(axis=0, kind="stable"), np.argsort(DATA, axis=0, kind="stable"))
    got = lazy().nonzero()
    want = DATA.nonzero()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_eq(g, w)
    s = la.asarray(np.array([1.0, 2.0, 4.0, 8.0]), chunks=3)
    assert_eq(s.searchsorted(la.asarray(np.array([0.5, 4.0, 9.0]))), np.array([0, 2, 4]))


def test_operand_buffers_are_keyed_by_address_not_content():
    # two different buffers with equal contents must not share a cached plan
    a = np.zeros(3)
    b = np.zeros(3)
    x = la.ones(3)
    e1 = x + b
    assert (x + a).sum().compute() == 3.0
    b[:] = 5
    assert e1.sum().compute() == 18.0


def test_negative_zero_d_integer_exponent_raises_when_written():
    from lazyarr.testing import assert_same_error

    a = np.arange(1, 4)
    assert_same_error(lambda: a ** np.int64(-1), lambda: la.asarray(a) ** np.int64(-1))


def test_lists_are_operands():
    pair = [1, 2]
    assert_eq(la.arange(2) + pair, np.arange(2) + np.array(pair))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint8", "bool"])
def test_setitem_with_a_full_lazy_mask_stays_lazy(dtype):
    data = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    x = la.asarray(data, chunks=(2, 3))
    with la.config.set(executor="raise"):
        x[x > 0] = 1
    want = data.copy()
    want[want > 0] = 1
    assert_eq(x, want)


def test_setitem_with_a_lazy_mask_overflow_is_numpys_error():
    from lazyarr.testing import assert_same_error

    data = np.arange(4, dtype=np.uint8)

    def np_call():
        a = data.copy()
        a[a > 1] = 300

    def la_call():
        x = la.asarray(data)
        x[x > 1] = 300

    assert_same_error(np_call, la_call)
