"""Results whose lengths depend on values (``x[mask]``, ``nonzero``, ``compress``,
``bincount``): lazy when written, counted first when computed.

Every case is written under the ``raise`` executor (writing must compute
nothing), then checked against NumPy on the numpy and numba executors with
passes on and off (``assert_eq``); dask in ``tests/executors/test_deferred_dask.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import sizes_with_empty_blocks

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors.testing import ComputeRefused
from lazyarr.namespace.deferred import Deferred
from lazyarr.testing import assert_eq

EXECUTORS = ["numpy", "numba"]


def written(fn):
    """``fn()`` under the raise executor: building the expression computes nothing."""
    with config.set(executor="raise"):
        return fn()


@st.composite
def chunked(draw, max_len=12):
    """A 1-d length and chunks for it, empty blocks included."""
    n = draw(st.integers(0, max_len))
    return n, draw(sizes_with_empty_blocks(n))


@settings(max_examples=40, deadline=None)
@given(chunked(), st.floats(0, 1), st.sampled_from([np.float64, np.int32, np.bool_]))
def test_boolean_index_over_any_chunks_equals_numpy(case, density, dtype):
    n, chunks = case
    rng = np.random.default_rng(n + len(chunks))
    x = (rng.standard_normal(n) * 10).astype(dtype)
    mask = rng.random(n) < density
    a = la.asarray(x, chunks=(chunks,))
    m = la.asarray(mask, chunks=(chunks,))
    got = written(lambda: a[m])
    assert isinstance(got, Deferred) and got.known_shape == (None,)
    assert_eq(got, x[mask], executors=EXECUTORS)
    # chained: the selection is an ordinary operand once counted
    chained = written(lambda: (got * 2 + 1)[::-1])
    assert_eq(chained, (x[mask] * 2 + 1)[::-1], executors=EXECUTORS)


def test_mask_from_the_array_itself_keeps_its_blocks():
    x = np.random.default_rng(1).random(40)
    a = la.asarray(x, chunks=10)
    got = written(lambda: a[a > 0.5])
    want = x[x > 0.5]
    assert got.shape == want.shape  # counts only
    assert got.resolve().chunks == (tuple(int((b > 0.5).sum()) for b in np.split(x, 4)),)
    assert_eq(got, want, executors=EXECUTORS)


def test_shape_queries_compute_the_counts_only():
    x = la.random.random(1000, chunks=100, seed=3)
    y = written(lambda: x[x > 0.25])
    assert len(y) == y.shape[0] == y.size
    stages = [s.expr.op.label() for s in api.last_run().plan.stages.values()]
    assert "count_true" in stages and "kept_rows" not in stages
    want = x.compute()
    assert len(y) == int((want > 0.25).sum())


@pytest.mark.parametrize(
    ("shape", "k"), [((4, 5), 2), ((4, 5), 1), ((3, 4, 2), 2), ((3, 4, 2), 3), ((5,), 0)]
)
def test_masks_over_leading_axes(shape, k):
    rng = np.random.default_rng(k)
    x = rng.standard_normal(shape)
    mask = rng.random(shape[:k]) < 0.5 if k else np.bool_(True)
    a = la.asarray(x, chunks=2)
    m = la.asarray(mask, chunks=2)
    got = written(lambda: a[m])
    assert got.known_shape == (None, *shape[k:])
    assert_eq(got, x[mask], executors=EXECUTORS)
    if not k:
        assert_eq(written(lambda: a[la.asarray(np.bool_(False))]), x[np.bool_(False)])


def test_a_mask_of_the_wrong_shape_raises_numpys_error_when_written():
    a = la.ones((4, 5), chunks=2)
    with pytest.raises(IndexError, match="did not match indexed array along axis 0"):
        written(lambda: a[la.ones(3, dtype=bool)])
    with pytest.raises(IndexError, match="too many indices"):
        written(lambda: a[la.ones((4, 5, 1), dtype=bool)])


def test_calls_on_deferred_arrays_are_recorded_and_tried_on_stand_ins():
    x = np.arange(30.0)
    a = la.asarray(x, chunks=7)
    sel = written(lambda: a[a % 3 == 0])  # 10 values
    want = x[x % 3 == 0]
    cases = {
        "ufunc": (lambda: np.sin(sel), np.sin(want)),
        "array function": (lambda: np.mean(sel), np.mean(want)),
        "namespace": (lambda: la.concat([sel, la.asarray([1.0, 2.0])]), None),
        "reshape": (lambda: sel.reshape(-1, 2), want.reshape(-1, 2)),
        "both": (lambda: sel + sel[::-1], want + want[::-1]),
        "slice": (lambda: sel[:4], want[:4]),
        "long slice": (lambda: sel[:50], want[:50]),
        "compare": (lambda: sel == 3.0, want == 3.0),
    }
    cases["namespace"] = (cases["namespace"][0], np.concatenate([want, [1.0, 2.0]]))
    for name, (make, expect) in cases.items():
        got = written(make)
        assert isinstance(got, Deferred), name
        assert_eq(got, expect, executors=EXECUTORS)
    # a slice shorter than the data has a known length; one longer does not
    assert written(lambda: sel[:4]).known_shape == (None,)
    assert written(lambda: np.mean(sel)).known_shape == ()


def test_calls_on_results_of_deferred_calls_are_recorded_too():
    # flatnonzero of a deferred array is deferred on its stand-ins too: the stand-ins
    # of a call on it are plain lazy arrays, so writing more computes nothing
    x = np.arange(10)
    a = la.asarray(x, chunks=4)
    got = written(lambda: la.flatnonzero(a[a > 1] % 3) + 1)
    assert_eq(got, np.flatnonzero(x[x > 1] % 3) + 1, executors=EXECUTORS)


def test_an_error_only_the_values_show_comes_at_compute():
    a = la.asarray(np.arange(10.0), chunks=4)
    sel = written(lambda: a[a > 4])  # 5 values
    with pytest.raises(ValueError):
        sel.reshape(2, -1).compute()


def test_setitem_on_a_deferred_array():
    x = np.arange(12.0)
    a = la.asarray(x, chunks=5)
    sel = written(lambda: a[a > 2])
    written(lambda: sel.__setitem__(slice(0, 2), -1.0))
    want = x[x > 2]
    want[:2] = -1.0
    assert_eq(sel, want, executors=EXECUTORS)


def test_repr_computes_nothing():
    a = la.ones(5)
    sel = written(lambda: a[a > 0])
    text = written(lambda: repr(sel))
    assert "?" in text and "float64" in text
    with pytest.raises(ComputeRefused):
        written(lambda: sel.shape)


# -- nonzero, flatnonzero, argwhere, compress, extract ------------------------------------


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (0,), (3, 0)])
def test_nonzero_family_equals_numpy(shape):
    x = np.random.default_rng(len(shape)).integers(0, 3, shape)
    a = la.asarray(x, chunks=2)
    got = written(lambda: la.nonzero(a))
    assert len(got) == len(shape)
    for g, w in zip(got, np.nonzero(x)):
        assert_eq(g, w, executors=EXECUTORS)
    assert_eq(written(lambda: la.flatnonzero(a)), np.flatnonzero(x), executors=EXECUTORS)
    assert_eq(written(lambda: la.argwhere(a)), np.argwhere(x), executors=EXECUTORS)
    assert_eq(written(lambda: a.nonzero()[0]), x.nonzero()[0], executors=EXECUTORS)


def test_nonzero_of_0d_raises_when_written_and_argwhere_of_0d_is_numpys():
    with pytest.raises(ValueError, match="0d"):
        written(lambda: la.nonzero(la.asarray(3.0)))
    for v in (0.0, 3.0):
        assert_eq(written(lambda v=v: la.argwhere(la.asarray(v))), np.argwhere(np.float64(v)))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("length", [2, 4, 5])
def test_compress_equals_numpy(axis, length):
    x = np.arange(20).reshape(4, 5)
    n = x.size if axis is None else x.shape[axis]
    cond = np.array([True, False, True, True, False, True] * 4)[: min(length, n)]
    a = la.asarray(x, chunks=(3, 2))
    for c in (cond, la.asarray(cond, chunks=2)):
        got = written(lambda c=c: la.compress(c, a, axis=axis))
        assert_eq(got, np.compress(cond, x, axis=axis), executors=EXECUTORS)


def test_compress_with_a_longer_condition_raises_numpys_error_at_compute():
    x = np.arange(3)
    cond = np.array([True, False, True, False, True])
    with pytest.raises(IndexError) as numpy_error:
        np.compress(cond, x)
    got = written(lambda: la.compress(la.asarray(cond), la.asarray(x)))
    with pytest.raises(IndexError) as ours:
        got.compute()
    assert str(ours.value) == str(numpy_error.value)
    ok = np.array([True, False, True, False])
    assert_eq(written(lambda: la.compress(la.asarray(ok), la.asarray(x))), np.compress(ok, x))


def test_extract_equals_numpy():
    x = np.arange(12).reshape(3, 4)
    cond = x % 3 == 0
    a = la.asarray(x, chunks=2)
    assert_eq(written(lambda: la.extract(la.asarray(cond), a)), np.extract(cond, x))
    short = np.array([1, 0, 2, 0, 0])  # read flattened, shorter than arr
    assert_eq(written(lambda: la.extract(short, a)), np.extract(short, x))


# -- bincount -------------------------------------------------------------------------------


@pytest.mark.parametrize("minlength", [0, 3, 12])
def test_bincount_without_enough_minlength_is_deferred(minlength):
    x = np.array([1, 3, 3, 0, 7, 7, 7])
    w = np.linspace(0, 1, 7)
    a = la.asarray(x, chunks=3)
    got = written(lambda: la.bincount(a, minlength=minlength))
    assert isinstance(got, Deferred)
    assert_eq(got, np.bincount(x, minlength=minlength), executors=EXECUTORS)
    weighted = written(lambda: la.bincount(a, weights=la.asarray(w), minlength=minlength))
    assert_eq(weighted, np.bincount(x, w, minlength=minlength), executors=EXECUTORS)


def test_bincount_of_negative_values_raises_numpys_error_at_compute():
    got = written(lambda: la.bincount(la.asarray([1, -1, 2])))
    with pytest.raises(ValueError, match="negative"):
        got.compute()
    assert_eq(la.bincount(la.asarray(np.array([], dtype=int))), np.bincount([]))


def test_a_selection_of_a_selection_counts_twice_and_equals_numpy():
    x = np.random.default_rng(8).random(50)
    a = la.asarray(x, chunks=12)
    inner = written(lambda: a[a > 0.3])
    outer = written(lambda: la.nonzero(inner > 0.7)[0])
    both = written(lambda: inner[inner < 0.5] + 1)
    assert isinstance(outer, Deferred) and isinstance(both, Deferred)
    kept = x[x > 0.3]
    assert_eq(outer, np.nonzero(kept > 0.7)[0], executors=EXECUTORS)
    assert_eq(both, kept[kept < 0.5] + 1, executors=EXECUTORS)


def test_the_items_of_a_recorded_call_share_one_call(monkeypatch):
    x = np.array([3, 1, 3, 7, 1, 9, 3])
    a = la.asarray(x, chunks=3)
    sel = written(lambda: a[a > 1])
    values, counts = written(lambda: la.unique_counts(sel))
    computes = []
    real = api.compute_exprs

    def counting(*args, **kwargs):
        computes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "compute_exprs", counting)
    assert len(values) == len(counts) == 3
    # one count of the selection, one of the unique values (shared by both items)
    assert len(computes) == 2
    want = np.unique_counts(x[x > 1])
    np.testing.assert_array_equal(values.compute(), np.sort(want.values))
    np.testing.assert_array_equal(counts.compute(), want.counts[np.argsort(want.values)])
