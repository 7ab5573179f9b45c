"""Indexing against NumPy: ``x[index]``, ``x[index] = value``, take & co.

Every result is compared with NumPy's on every executor (``assert_eq``),
with uneven chunks; every bad index must raise NumPy's exception type while
the expression is written (``assert_same_error``).
"""

from __future__ import annotations

import warnings

import ndindex
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies_indexing import basic_indices_for, chunked_arrays, one_array_indices_for

import lazyarr as la
from lazyarr import api, config
from lazyarr.graph.ops import indexing as ix
from lazyarr.optimize.plan import Plan
from lazyarr.testing import assert_eq, assert_same_error

A = np.arange(35).reshape(5, 7)


def lazy(a, chunks=None):
    """``a`` as a lazy array; by default on blocks of (2, 3) (2 for other ndims)."""
    if chunks is None:
        chunks = (2, 3) if np.ndim(a) == 2 else 2
    return la.asarray(a, chunks=chunks)


def check(a, index, chunks=(2, 3)):
    """``lazy(a)[index]`` equals ``a[index]`` and its chunks add up."""
    got = lazy(a, chunks)[index]
    assert_eq(got, a[index])
    return got


# -- basic indexing -----------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        1,
        -1,
        (2, 3),
        (-5, -7),
        slice(1, 4),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(None, None, -3),
        slice(4, 0, -2),
        slice(10, -10, -1),
        (slice(None), slice(5, 1, -2)),
        (Ellipsis, 3),
        (None, Ellipsis, None),
        (1, None, slice(None, None, -2)),
        (np.newaxis, 2),
        np.array(2),
        (np.int8(-2), np.uint64(3)),
        slice(3, 1),
        (slice(0, 0), slice(None, None, -1)),
        (),
        Ellipsis,
    ],
)
def test_basic_indices(index):
    check(A, index)


@given(chunked_arrays(), st.data())
def test_basic_indices_property(arr_chunks, data):
    a, chunks = arr_chunks
    index = data.draw(basic_indices_for(a.shape))
    got = lazy(a, chunks)[index]
    assert got.shape == ndindex.ndindex(index).newshape(a.shape)
    assert_eq(got, a[index])


def test_slices_follow_input_chunks():
    x = la.arange(8, chunks=4)
    assert x[::2].chunks == ((2, 2),)
    assert x[::-2].chunks == ((2, 2),)
    assert x[1:7].chunks == ((3, 3),)
    assert x[5:].chunks == ((3,),)
    assert x[::100].chunks == ((1,),)
    assert x[3:3].chunks == ((0,),)
    z = la.arange(10, chunks=4)
    assert z[::-1].chunks == ((2, 4, 4),)
    assert z[8:0:-3].chunks == ((1, 1, 1),)
    y = lazy(A, (2, 3))
    assert y[None, 1:, 0].chunks == ((1,), (1, 2, 1))


def test_stepped_slice_reads_first_to_last_element():
    x = la.arange(20, chunks=5)
    e = x[2:17:6]._expr  # elements 2, 8, 14
    assert e.op.regions(e, (slice(0, 1),)) == ((slice(2, 3),),)
    e = x[::-7]._expr  # 19, 12, 5 -> blocks of the reversed walk
    assert e.chunks == ((1, 1, 1),)
    assert e.op.regions(e, (slice(1, 2),)) == ((slice(12, 13),),)


def test_identity_index_returns_the_same_expression():
    x = lazy(A)
    assert x[...]._expr is x._expr
    assert x[:, :]._expr is x._expr
    assert x[::1, ...]._expr is x._expr


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float32, np.complex64])
def test_dtypes_and_nan(dtype):
    a = (np.arange(35).reshape(5, 7) % 4).astype(dtype)
    if np.dtype(dtype).kind in "fc":
        a[1, 2] = np.nan
    for index in [(1,), (slice(None, None, -2), 2), (a != 0,), ([3, 1, 1],)]:
        index = tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
        check(a, index)


def test_zero_d_arrays():
    a = np.array(4.5)
    x = lazy(a, ())
    for index in [(), Ellipsis, None, (None, None), (Ellipsis, None), True, False, np.array(True)]:
        assert_eq(x[index], a[index])
    assert_same_error(lambda: a[0], lambda: x[0])
    assert_same_error(lambda: a[:], lambda: x[:])


def test_empty_arrays():
    a = np.zeros((0, 3))
    x = lazy(a, ((0,), (2, 1)))
    for index in [(slice(None), 1), (Ellipsis, slice(None, None, -1)), np.zeros(0, int), a > 0]:
        assert_eq(x[index], a[index])
    assert_eq(lazy(A)[np.zeros(0, int)], A[np.zeros(0, int)])
    assert_eq(lazy(A)[5:2, ::-1], A[5:2, ::-1])
    assert_same_error(lambda: a[np.array([0])], lambda: x[np.array([0])])


# -- advanced indexing ----------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        np.array([1, -1, 0, 0]),
        np.array([[4, 0], [-2, 3]]),
        (slice(None), np.array([6, 0, 6])),
        (slice(1, None, 2), np.array([[0], [5]])),
        (Ellipsis, np.array([-7, 6])),
        (None, np.array([2]), None),
        (np.array([4, 3, 2, 1, 0]),),
        (slice(None), np.arange(7)[::-1]),
        (np.array([0, 0, 0, 0, 0, 0]),),
    ],
)
def test_one_integer_array(index):
    check(A, index)


@pytest.mark.parametrize(
    "index",
    [
        A > 10,
        A % 3 == 0,
        A < 0,
        np.ones_like(A, bool),
        A[:, 0] > 10,
        (A[:, 0] > 10, slice(None, None, -3)),
        (slice(1, 3), A[0] % 2 == 0),
        (Ellipsis, A[0] > 3),
        True,
        False,
        (True, 2),
        (slice(None), 0, True),
        (True, None, False),
    ],
)
def test_boolean_indices(index):
    check(A, index)


@pytest.mark.parametrize(
    "index",
    [
        (np.array([0, 4]), np.array([1, 6])),
        (np.array([[0], [4]]), np.array([1, 6, 2])),
        (1, np.array([1, 6, 2])),
        (np.array([3, 1]), slice(None), None),
        (True, np.array([0, 1])),
        (np.array([0, 1]), True),
        (A[:, 0] > 10, True),
    ],
)
def test_several_advanced_indices_broadcast(index):
    check(A, index)


def test_separated_advanced_indices_put_their_dims_first():
    a = np.arange(4 * 5 * 6).reshape(4, 5, 6)
    for index in [
        (np.array([0, 2]), slice(None), np.array([1, 5])),
        (0, slice(1, 4), np.array([[1, 5]])),
        (slice(None), np.array([0]), Ellipsis, np.array([1])),  # a zero-width ... separates
        (np.array([1, 2]), None, np.array([0, 1])),
        (slice(None), np.array([0]), np.array([1]), Ellipsis),
        (np.array([0, 1]), slice(None), True),
    ]:
        check(a, index, chunks=(3, 2, 4))


@given(chunked_arrays(min_dims=1), st.data())
def test_one_array_index_property(arr_chunks, data):
    a, chunks = arr_chunks
    index = data.draw(one_array_indices_for(a.shape))
    assert_eq(lazy(a, chunks)[index], a[index])


def test_integer_array_chunks_follow_input_blocks_when_sorted():
    x = la.arange(20, chunks=5)
    assert x[np.array([0, 1, 7, 8, 9, 19])].chunks == ((2, 3, 1),)
    assert x[np.arange(20)[::-1]].chunks == ((5, 5, 5, 5),)
    assert x[np.zeros(12, int)].chunks == ((5, 5, 2),)  # capped at the input's block length
    unsorted = x[np.array([19, 0, 18, 1, 17, 2, 16])]
    assert max(unsorted.chunks[0]) <= 5
    y = lazy(A, (2, 7))
    assert y[A > 3].chunks == ((10, 14, 7),)  # one output block per block row


def test_lazy_arrays_inside_an_index_are_computed():
    x = lazy(A)
    idx = la.asarray(np.array([4, 0, 1]))
    assert_eq(x[idx], A[[4, 0, 1]])
    assert_eq(x[x > 20], A[A > 20])
    assert_eq(x[1, la.asarray(np.array(3))], A[1, 3])
    assert_eq(x[[0, 2], 1], A[[0, 2], 1])


# -- errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        5,
        -6,
        (0, 7),
        (0, 0, 0),
        (Ellipsis, Ellipsis),
        1.0,
        (0, 1.5),
        "a",
        slice(0, 1.5),
        slice(None, None, 0),
        np.array([1.0]),
        np.array([0, 5]),
        np.array([-6]),
        (slice(None), np.array([[7]])),
        np.array([True, False]),
        np.ones((5, 6), bool),
        np.ones((5, 7, 1), bool),
        (np.array([0, 1]), np.array([0, 1, 2])),
        2**70,
        np.array(["a"]),
        (None, object()),
    ],
)
def test_bad_indices_raise_numpys_error(index):
    x = lazy(A)
    assert_same_error(lambda: A[index], lambda: x[index])


def test_out_of_bounds_message_names_axis_and_size():
    x = lazy(A)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 7"):
        x[0, 9]
    with pytest.raises(IndexError, match="index -8 is out of bounds for axis 1 with size 7"):
        x[:, np.array([1, -8])]
    with pytest.raises(IndexError, match="but 3 were indexed"):
        x[0, 0, 0]


def test_empty_broadcast_skips_bounds_checks_like_numpy():
    a = np.zeros((0, 3))
    index = (np.zeros(0, int), np.array([5]))
    assert_eq(lazy(a, ((0,), (3,)))[index], a[index])


# -- setitem ------------------------------------------------------------------------


def set_both(a, index, value, lazy_value=None, chunks=(2, 3)):
    """Apply ``a[index] = value`` to a copy and to a lazy array; compare."""
    want = a.copy()
    want[index] = value
    x = lazy(a, chunks)
    x[index] = value if lazy_value is None else lazy_value
    assert_eq(x, want)
    return x


def test_setitem_rebinds_the_handle_only():
    a = A.copy()
    x = lazy(a)
    y = x  # the same Python object: it sees the update
    z = x + 0  # an expression taken before: it does not
    x[0] = 100
    assert y is x
    assert_eq(y, np.vstack([np.full((1, 7), 100), A[1:]]))
    assert_eq(z, A)
    np.testing.assert_array_equal(a, A)  # the wrapped NumPy data is never written


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        (slice(1, 3),),
        (slice(None, None, -2), 1),
        (slice(None), slice(6, 0, -3)),
        (Ellipsis, 2),
        (None, 1),
        (2, 3),
        A > 10,
        A[:, 0] > 10,
        (slice(1, 4), A[0] % 2 == 0),
        np.array([4, 0, 0, 2]),
        (np.array([0, 4]), np.array([6, 0])),
        (np.array([1, 1, 3]), slice(None, None, 3)),
        (slice(None), 1),
        (1, np.array([2, 5])),
        True,
        (0, True),
        (),
    ],
)
def test_setitem_scalar(index):
    set_both(A, index, -5)


@pytest.mark.parametrize(
    ("index", "value"),
    [
        (slice(1, 3), np.arange(14).reshape(2, 7)),
        (slice(1, 3), np.arange(7)),
        (slice(None, None, -2), np.arange(3)[:, None]),
        ((slice(1, 3), 4), np.ones((1, 1, 2))),
        (np.array([4, 0, 2]), np.arange(21).reshape(3, 7)),
        ((slice(None), np.array([6, 1])), np.arange(2)),
        (A > 10, np.arange(24)),
        (A[:, 0] > 10, np.arange(7)),
        (A[:, 0] > 10, np.arange(21).reshape(3, 7)),
        (A[:, 0] > 10, np.arange(3)[:, None]),
        ((np.array([0, 3]), slice(None), None), np.arange(14).reshape(2, 7, 1)),
        (0, np.array(9)),
        (Ellipsis, np.arange(35).reshape(5, 7)[::-1]),
        ((True, np.array([0, 3])), np.arange(14).reshape(2, 7)),
        ((np.array([4, 1]), slice(None), True), np.arange(14).reshape(2, 7)),
    ],
)
def test_setitem_lazy_value(index, value):
    set_both(A, index, value, lazy(value, 2 if value.ndim else ()))


def test_setitem_zero_d_and_self_overlap():
    a = np.array(4.5)
    for index, value in [((), 1.0), (Ellipsis, 2), (None, 3), (True, 4), (False, 5)]:
        set_both(a, index, value, None, ())
    set_both(a, (), np.array(7.0), lazy(np.array(7.0), ()), ())
    want = A.copy()
    want[1:] = want[:-1].copy()
    x = lazy(A)
    x[1:] = x[:-1]  # the value is read from the old x, like NumPy's overlap handling
    assert_eq(x, want)
    x[::-1] = x
    assert_eq(x, want[::-1])


def test_setitem_repeated_indices_last_wins():
    set_both(A, np.array([1, 3, 1, 1]), np.arange(4)[:, None], lazy(np.arange(4)[:, None], 3))
    set_both(
        A,
        (np.array([0, 0, 4]), np.array([2, 2, 2])),
        np.array([7, 8, 9]),
        lazy(np.array([7, 8, 9])),
    )


@given(chunked_arrays(min_dims=1), st.data())
def test_setitem_basic_property(arr_chunks, data):
    a, chunks = arr_chunks
    index = data.draw(basic_indices_for(a.shape))
    sel = a[index].shape
    value = np.arange(int(np.prod(sel)), dtype=np.int64).reshape(sel) + 1000
    vchunks = tuple(data.draw(st.sampled_from([1, 2, 3])) for _ in sel)
    set_both(a, index, value, la.asarray(value, chunks=vchunks), chunks)


@given(chunked_arrays(min_dims=1), st.data())
def test_setitem_one_array_property(arr_chunks, data):
    a, chunks = arr_chunks
    index = data.draw(one_array_indices_for(a.shape))
    if data.draw(st.booleans()):
        set_both(a, index, -1, None, chunks)
        return
    sel = a[index].shape
    vshape = sel[data.draw(st.integers(0, len(sel))) :]  # NumPy broadcasts a shorter value
    value = np.arange(int(np.prod(vshape)), dtype=np.int64).reshape(vshape) + 1000
    vchunks = tuple(data.draw(st.sampled_from([1, 2, 3])) for _ in vshape)
    set_both(a, index, value, la.asarray(value, chunks=vchunks), chunks)


def test_setitem_casts_like_numpy():
    set_both(A, slice(0, 2), 2.9)  # float into int truncates
    set_both(A, 1, -3.7)
    set_both(A.astype(bool), A > 3, 2.5)
    set_both(A.astype(np.float32), A > 3, np.nan)
    f = np.linspace(-3.5, 3.5, 7)
    set_both(A, 1, f, lazy(f))
    set_both(A.astype(np.uint8), 0, np.arange(7) + 250, lazy((np.arange(7) + 250).astype(np.int64)))
    c = np.arange(7) * (1 + 1j)
    set_both(A.astype(np.complex64), 2, c, lazy(c))


def test_setitem_complex_into_real_warns_like_numpy():
    c = np.arange(7) * (1 + 2j)
    with pytest.warns(np.exceptions.ComplexWarning):
        A.astype(float)[0] = c
    x = lazy(A.astype(float))
    with pytest.warns(np.exceptions.ComplexWarning):
        x[0] = lazy(c)
    want = A.astype(float)
    want[0] = c.real
    assert_eq(x, want)


@pytest.mark.parametrize(
    ("a", "index", "value"),
    [
        (A, slice(0, 2), np.ones(3)),
        (A, slice(0, 2), np.ones((2, 1, 7))),
        (A, A > 10, np.ones(5)),
        (A, np.array([1, 2]), np.ones((3, 7))),
        (A.astype(np.int8), 0, 300),
        (A.astype(np.uint8), 0, -1),
        (A.astype(float), 0, 1j),
        (A, 0, np.nan),
        (A, 9, 1),
        (A, (0, 0, 0), 1),
        (A, 1.5, 1),
        (A, np.array([True]), 1),
    ],
)
def test_setitem_errors(a, index, value):
    def lazy_set():
        x = lazy(a)
        x[index] = lazy(value) if isinstance(value, np.ndarray) else value

    def numpy_set():
        b = a.copy()
        b[index] = value

    assert_same_error(numpy_set, lazy_set)


def test_setitem_with_empty_selection_is_a_no_op():
    x = lazy(A)
    before = x._expr
    x[3:3] = 7
    x[A > 100] = 7
    x[np.zeros(0, int)] = lazy(np.ones((0, 7)))
    assert x._expr is before
    with pytest.raises(ValueError):
        x[3:3] = lazy(np.ones((2, 7)))


def test_mask_assignment_is_elementwise_and_lazy_value_rechunked():
    x = lazy(A, (2, 3))
    x[A > 10] = 0
    assert x._expr.op.name == "elementwise" and x.chunks == ((2, 2, 1), (3, 3, 1))
    row = lazy(np.arange(7) * 10, 1)
    x[A[:, 0] > 10] = row
    assert x.chunks == ((2, 2, 1), (3, 3, 1))
    want = np.where(A > 10, 0, A)
    want[A[:, 0] > 10] = np.arange(7) * 10
    assert_eq(x, want)


def test_setitem_reads_only_what_it_needs():
    x = la.arange(20, chunks=5)
    x[6:9] = la.arange(3, chunks=1)
    e = x._expr
    out = (slice(5, 10),)
    assert e.op.regions(e, out) == (out, (slice(0, 3),))
    assert e.op.regions(e, (slice(0, 5),)) == ((slice(0, 5),), (slice(0, 0),))
    assert_eq(x, np.r_[np.arange(6), np.arange(3), np.arange(9, 20)])


# -- laziness and plans --------------------------------------------------------------


def test_indexing_computes_nothing_and_plans_round_trip():
    x = lazy(A.astype(float))
    with config.set(executor="raise"):
        y = x[A > 3][::-2]
        x[1:3] = 5.0
        x[np.array([0, 0])] = y[:7]
        z = la.take_along_axis(x, lazy(np.argsort(A, axis=1)), axis=1)
        w = x[True, np.array([1, 2])]
        v = la.arange(12.0)[2:9:3] + la.random.random((4, 6), seed=1).T[1:4, 1]  # windows
    plan = api.make_plan([y._expr, x._expr, z._expr, w._expr, v._expr])
    back = Plan.from_json(plan.to_json())
    assert list(back.stages) == list(plan.stages)
    assert [s.expr.key for s in back.stages.values()] == [s.expr.key for s in plan.stages.values()]


def test_normalize_index_canonical_form():
    norm = ix.normalize_index((None, -1, slice(None, None, -2), np.array([-1, 0])), (4, 5, 6))
    assert norm.entries[:3] == (None, 3, slice(4, -1, -2))
    np.testing.assert_array_equal(norm.entries[3].array, [5, 0])
    assert ix.normalize_index(A > 40, A.shape).adv_front is False
    assert ix.normalize_index((0, slice(None), np.array([1])), (2, 3, 4)).adv_front is True


# -- take, take_along_axis, compress, extract ------------------------------------------


@pytest.mark.parametrize(
    ("indices", "axis", "mode"),
    [
        (np.array([3, -1, 0]), 0, "raise"),
        (np.array([[6, 0], [1, 1]]), 1, "raise"),
        (2, 1, "raise"),
        ([9, -9], 1, "wrap"),
        ([9, -9], 0, "clip"),
        (np.array([True, False]), 0, "raise"),
        (np.array([30, 2]), None, "raise"),
        ([[1, 2]], -1, "raise"),
        (np.zeros(0, int), 1, "raise"),
    ],
)
def test_take(indices, axis, mode):
    x = lazy(A)
    want = np.take(A, indices, axis=axis, mode=mode)
    assert_eq(la.take(x, indices, axis=axis, mode=mode), want)
    assert_eq(np.take(x, indices, axis=axis, mode=mode), want)


def test_take_lazy_indices_and_errors():
    x = lazy(A)
    assert_eq(la.take(x, la.asarray(np.array([4, 0])), axis=0), np.take(A, [4, 0], axis=0))
    assert_same_error(lambda: np.take(A, [7], axis=1), lambda: la.take(x, [7], axis=1))
    assert_same_error(lambda: np.take(A, 0, axis=2), lambda: la.take(x, 0, axis=2))
    assert_same_error(
        lambda: np.take(A, np.array([1.5]), axis=0), lambda: la.take(x, np.array([1.5]), axis=0)
    )
    assert_same_error(lambda: np.take(A, [1], mode="x"), lambda: la.take(x, [1], mode="x"))
    e = np.zeros((0, 3))
    assert_same_error(
        lambda: np.take(e, [0], axis=0, mode="wrap"),
        lambda: la.take(lazy(e, 1), [0], axis=0, mode="wrap"),
    )
    with pytest.raises(NotImplementedError, match="out="):
        la.take(x, [0], out=np.empty(7))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(axis):
    a = (A * 7 % 11).astype(float)
    idx = np.argsort(a, axis=axis)
    x = lazy(a)
    assert_eq(la.take_along_axis(x, lazy(idx, (3, 2)), axis=axis), np.take_along_axis(a, idx, axis))
    assert_eq(np.take_along_axis(x, idx, axis=axis), np.take_along_axis(a, idx, axis))
    part = idx.take([0, -1], axis=axis) - 2
    assert_eq(la.take_along_axis(x, part, axis=axis), np.take_along_axis(a, part, axis))


def test_take_along_axis_broadcasts_and_checks():
    a = np.arange(12.0).reshape(3, 4)
    x = lazy(a, (2, 3))
    idx = np.array([[0, 3, -1, 2, 2]])
    assert_eq(la.take_along_axis(x, idx, axis=1), np.take_along_axis(a, idx, 1))
    col = np.array([[2], [0], [1]])
    assert_eq(la.take_along_axis(x[:, :1], col, axis=0), np.take_along_axis(a[:, :1], col, 0))
    assert_eq(
        la.take_along_axis(x, np.array([5, 0]), axis=None),
        np.take_along_axis(a, np.array([5, 0]), None),
    )
    for bad in [np.array([[7]]), np.array([0]), np.array([[0.0]]), np.ones((2, 2), int)]:
        assert_same_error(
            lambda bad=bad: np.take_along_axis(a, bad, 1),
            lambda bad=bad: la.take_along_axis(x, bad, axis=1),
        )
    lazy_bad = la.take_along_axis(x, lazy(np.array([[0], [9], [1]])), axis=1)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 4"):
        lazy_bad.compute()


def test_compress_and_extract():
    x = lazy(A)
    for cond, axis in [([True, False, True], 0), (np.array([0, 1, 2, 0]), 1), ([1, 0, 1], None)]:
        want = np.compress(cond, A, axis=axis)
        assert_eq(la.compress(cond, x, axis=axis), want)
        assert_eq(np.compress(cond, x, axis=axis), want)
    assert_same_error(lambda: np.compress([[True]], A), lambda: la.compress([[True]], x))
    assert_same_error(lambda: np.compress([1] * 6, A, 0), lambda: la.compress([1] * 6, x, 0))
    assert_eq(np.extract(A % 3 == 0, x), np.extract(A % 3 == 0, A))
    assert_eq(la.extract(x > 20, x), np.extract(A > 20, A))
    assert_eq(la.extract([1, 0, 0, 1], x), np.extract([1, 0, 0, 1], A))


def test_no_warnings_leak_from_kernels():
    x = lazy(A.astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[A > 3] = 0.5
        assert_eq(x[::-1, np.array([0, 6])], np.where(A > 3, 0.5, A)[::-1][:, [0, 6]])


def test_empty_list_index_in_the_graph_layer():
    x = lazy(A)
    assert_eq(x[np.zeros(0, np.intp)], A[[]])
    e = ix.getitem(x._expr, [])  # a list reaching the op builder is an (empty) integer index
    assert e.shape == A[[]].shape


def test_empty_list_index_through_the_array():
    assert_eq(lazy(A)[[]], A[[]])
    x = lazy(A)
    x[[]] = 5
    assert_eq(x, A)
