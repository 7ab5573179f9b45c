"""unique_* and NumPy's unique (lazy; more in test_unique_lazy.py) and isin, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.executors.testing import ComputeRefused
from lazyarr.testing import assert_eq, assert_same_error


def data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * rng.integers(0, 2, size=shape)).astype(dtype)
    return x.astype(dtype)


def check_tuple(got, want) -> None:
    assert type(got) is type(want)
    if hasattr(want, "_fields"):
        assert got._fields == want._fields
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, la.LazyArray)
        assert_eq(g, w)


INPUTS = [
    data((5, 7), "int8"),
    data((6,), "float32"),
    data((4, 3), "bool"),
    data((3, 3), "complex128"),
    np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.0, 0.0]),
    np.zeros((0, 3)),
    np.array(4.0),
]


@pytest.mark.parametrize("x", INPUTS, ids=lambda x: f"{x.dtype}{x.shape}")
def test_unique_family(x):
    a = la.asarray(x, chunks=2)
    # NumPy's unique_values may come unsorted (a hash table); ours are sorted
    assert_eq(la.unique_values(a), np.sort(np.unique_values(x)))
    check_tuple(la.unique_counts(a), np.unique_counts(x))
    check_tuple(la.unique_inverse(a), np.unique_inverse(x))
    check_tuple(la.unique_all(a), np.unique_all(x))
    check_tuple(np.unique_all(a), np.unique_all(x))
    assert_eq(np.unique_values(a), np.sort(np.unique_values(x)))
    assert_eq(la.unique(a), np.unique(x))


def test_numpy_unique_flags_and_axis():
    x = np.array([[1, 0, 1], [2, 2, 2], [1, 0, 1], [0, 0, 0]])
    a = la.asarray(x, chunks=(3, 2))
    check_tuple(
        la.unique(a, return_index=True, return_inverse=True, return_counts=True),
        np.unique(x, return_index=True, return_inverse=True, return_counts=True),
    )
    check_tuple(la.unique(a, return_counts=True, axis=0), np.unique(x, return_counts=True, axis=0))
    assert_eq(np.unique(a, axis=1), np.unique(x, axis=1))
    f = np.array([np.nan, 1.0, np.nan])
    assert_eq(la.unique(la.asarray(f), equal_nan=False), np.unique(f, equal_nan=False))
    assert_eq(la.unique(la.asarray(f)), np.unique(f))


def test_unique_errors_and_laziness():
    x = np.arange(4.0).reshape(2, 2)
    a = la.asarray(x)
    assert_same_error(lambda: np.unique(x, axis=2), lambda: la.unique(a, axis=2))
    with pytest.raises(TypeError, match="unexpected keyword"):
        la.unique(a, bogus=True)
    with config.set(executor="raise"):
        values = la.unique_values(a + 1)  # lazy: nothing computed
        doubled = values * 2
        with pytest.raises(ComputeRefused):  # its length is counted by a compute
            len(values)
    assert_eq(doubled, np.sort(np.unique_values(x + 1)) * 2)
    with config.set(executor="raise"), pytest.raises(ComputeRefused):
        la.unique(a, axis=0)  # with axis: computed when called


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    x = data((5, 7), "int32")
    test = np.array([[-2, 0], [3, 9]])
    a = la.asarray(x, chunks=(2, 3))
    t = la.asarray(test, chunks=1)
    got = la.isin(a, t, invert=invert)
    assert got.chunks == a.chunks
    assert_eq(got, np.isin(x, test, invert=invert))
    assert_eq(la.isin(a, [0, 1], invert=invert), np.isin(x, [0, 1], invert=invert))
    assert_eq(np.isin(a, t, invert=invert), np.isin(x, test, invert=invert))
    assert_eq(
        la.isin(a, t, invert=invert, kind="table"), np.isin(x, test, invert=invert, kind="table")
    )
    assert_eq(
        la.isin(a, la.asarray(np.unique(test)), assume_unique=True, invert=invert),
        np.isin(x, np.unique(test), assume_unique=True, invert=invert),
    )


def test_isin_dtypes_and_edges():
    f = np.array([1.0, np.nan, 2.5, -0.0])
    assert_eq(la.isin(la.asarray(f, chunks=3), [np.nan, 0.0, 2.5]), np.isin(f, [np.nan, 0.0, 2.5]))
    b = data((4,), "bool")
    assert_eq(la.isin(la.asarray(b), [True]), np.isin(b, [True]))
    c = data((3, 2), "complex128")
    assert_eq(la.isin(la.asarray(c, chunks=2), c[:1]), np.isin(c, c[:1]))
    e = np.zeros((0, 2))
    assert_eq(la.isin(la.asarray(e), [1.0]), np.isin(e, [1.0]))
    assert_eq(la.isin(la.asarray(f), np.zeros((0,))), np.isin(f, np.zeros((0,))))
    assert_eq(la.isin(la.asarray(np.array(2.5)), f), np.isin(np.array(2.5), f))


def test_isin_is_lazy_and_errors():
    x = np.arange(5.0)
    a = la.asarray(x, chunks=2)
    with config.set(executor="raise"):
        la.isin(a, a + 1, invert=True)
    assert_same_error(
        lambda: np.isin(x, [1.0], kind="bogus"), lambda: la.isin(a, [1.0], kind="bogus")
    )
    assert_same_error(
        lambda: np.isin(x, [1.0], kind="table"), lambda: la.isin(a, [1.0], kind="table")
    )


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("test_chunks", [37, 100, 250])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_isin_with_many_test_elements_goes_block_by_block(invert, test_chunks, dtype):
    rng = np.random.default_rng(test_chunks)
    test = rng.integers(0, 200, 500).astype(dtype)
    element = rng.integers(-10, 220, (9, 11)).astype(dtype)
    if dtype == np.float64:
        test[::50] = np.nan  # NaN is never in anything, as in NumPy
        element[0, :3] = np.nan
    with la.config.set({"array.chunk-size": "1KiB"}):  # 4 KB of test elements is "large"
        got = la.isin(
            la.asarray(element, chunks=4), la.asarray(test, chunks=test_chunks), invert=invert
        )
    reduce = got._expr.inputs[0] if invert else got._expr
    assert reduce.op.name == "reduce" and reduce.op.func == "any"
    assert_eq(got, np.isin(element, test, invert=invert), executors=["numpy", "numba"])
