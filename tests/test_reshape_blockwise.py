"""``la.reshape_blockwise`` (every block reshaped on its own) against dask's function of that name,
and ``la.apply_along_axis`` with lazy array arguments (each call gets them whole, as in dask)."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.testing import assert_eq

da = pytest.importorskip("dask.array")

X = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)


@pytest.mark.parametrize(
    ("chunks", "shape"),
    [
        ((1, 2, 3, 2), (6, 20)),
        ((2, (1, 2), 1, 5), (2, 3, 20)),
        ((1, 3, (3, 1), 5), (120,)),
        ((1, 1, 4, (2, 3)), (2, 1, 60)),  # a new length-1 axis
        ((2, 3, 4, 5), -1),
    ],
)
def test_collapsing_equals_dask_and_round_trips(chunks, shape):
    a = la.from_array(X, chunks=chunks)
    d = da.from_array(X, chunks=chunks)
    with config.set(executor="raise"):
        got = la.reshape_blockwise(a, shape)
        back = la.reshape_blockwise(got, X.shape, chunks=a.chunks)
    want = da.reshape_blockwise(d, shape)
    assert got.chunks == want.chunks
    assert_eq(got, want.compute(), executors=["numpy"])
    assert back.chunks == a.chunks
    assert_eq(back, X)


def test_errors_when_written():
    a = la.from_array(X, chunks=(1, 2, 3, 2))
    with config.set(executor="raise"):
        with pytest.raises(ValueError, match="total size"):
            la.reshape_blockwise(a, (7, 10))
        with pytest.raises(TypeError, match="chunks"):
            la.reshape_blockwise(a, (2, 3, 4, 5, 1))
        with pytest.raises(ValueError, match="not allowed"):
            la.reshape_blockwise(a, (6, 20), chunks=((6,), (20,)))
        with pytest.raises(ValueError, match="keep its size"):
            la.reshape_blockwise(
                la.reshape_blockwise(a, (6, 20)), X.shape, chunks=((2,), (3,), (4,), (5,))
            )
        with pytest.raises(ValueError, match="collapses"):
            la.reshape_blockwise(a, (6, 2, 10))  # fewer axes, but 4 x 5 split into 2 x 10
    assert la.reshape_blockwise(a, X.shape)._expr is a._expr  # nothing to do


def test_apply_along_axis_passes_lazy_arguments_whole_to_every_call():
    y = np.arange(24.0).reshape(4, 6)
    w = np.linspace(0.0, 1.0, 4)
    a = la.from_array(y, chunks=(2, 3))
    lw = la.from_array(w, chunks=3)

    def weighted(col: np.ndarray, weights: np.ndarray) -> np.ndarray:
        assert isinstance(weights, np.ndarray) and weights.shape == (4,)
        return np.array([col @ weights, col.sum()])

    with config.set(executor="raise"):
        got = la.apply_along_axis(weighted, 0, a, lw)
    assert got.shape == (2, 6)
    assert_eq(got, np.apply_along_axis(weighted, 0, y, w))
