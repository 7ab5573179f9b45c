"""``x.vindex[...]`` and ``x.blocks[...]`` (dask's indexers) against NumPy and dask's semantics."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config
from lazyarr.testing import assert_eq, assert_same_error

X = np.arange(3 * 4 * 5, dtype=np.float64).reshape(3, 4, 5)
CHUNKS = (2, (1, 3, 0), (2, 2, 1))


def lazy(x: np.ndarray = X, chunks=CHUNKS) -> la.LazyArray:
    return la.from_array(x, chunks=chunks)


@pytest.mark.parametrize(
    "index",
    [
        (np.array([[0, 2], [1, 1]]), np.array([3, 0]), np.array([-1, 4])),
        ([0, 2, 1], [1, 3, 0]),  # lists as dask takes them
        (np.array([[2]]), slice(None), np.array([0, 4, 1])),  # separated: NumPy puts dims first
        (np.array([1, 1]), np.array([0, -3]), Ellipsis),
        (1, np.array([0, 3]), np.array([4, 4])),
    ],
)
def test_vindex_with_only_integers_and_arrays_equals_numpy(index):
    assert_eq(lazy().vindex[index], X[index])


def test_vindex_puts_the_broadcast_dimensions_first_as_dask_does():
    # NumPy keeps adjacent arrays in place; dask's vindex always moves them to the front
    got = lazy().vindex[:, [0, 3], [1, 2]]
    assert got.shape == (2, 3)
    assert_eq(got, np.moveaxis(X[:, [0, 3], [1, 2]], -1, 0))
    assert_eq(lazy().vindex[1:, 0, [4, 1]], np.moveaxis(X[1:, 0, [4, 1]], -1, 0))
    assert_eq(lazy().vindex[..., [1, 1], [0, -5]], np.moveaxis(X[..., [1, 1], [0, -5]], -1, 0))


@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_vindex_of_other_dtypes_and_size_one_axes(dtype):
    x = (np.arange(8).reshape(1, 8) % 3).astype(dtype)
    a = lazy(x, (1, 3))
    assert_eq(a.vindex[[0, 0, 0], [7, 0, 3]], x[[0, 0, 0], [7, 0, 3]])


def test_vindex_refuses_what_dask_refuses_when_written():
    a = lazy()
    with config.set(executor="raise"):
        with pytest.raises(IndexError, match="boolean"):
            a.vindex[np.array([True, False, True])]
        with pytest.raises(IndexError, match="None"):
            a.vindex[None, [0]]
    assert_same_error(lambda: X[[0, 5]], lambda: a.vindex[[0, 5]])
    assert_same_error(lambda: X[[0, 1], [0, 1, 2]], lambda: a.vindex[[0, 1], [0, 1, 2]])
    assert_same_error(lambda: X[[0.5]], lambda: a.vindex[[0.5]])


def test_blocks_picks_whole_blocks_keeping_their_chunks():
    a = lazy()
    one = a.blocks[1, 1, 2]
    assert one.chunks == ((1,), (3,), (1,))
    assert_eq(one, X[2:3, 1:4, 4:5])
    several = a.blocks[:, ::-1, [2, 0, 1]]
    assert several.chunks == ((2, 1), (0, 3, 1), (1, 2, 2))
    assert_eq(several, X[:, [1, 2, 3, 0]][:, :, [4, 0, 1, 2, 3]])
    assert_eq(a.blocks[-1], X[2:])
    assert_eq(a.blocks[..., 1:], X[..., 2:])
    assert a.blocks.shape == (2, 3, 3) and a.blocks.size == 18
    parts = a.blocks.ravel()
    assert len(parts) == 18 and parts[1].shape == (2, 1, 2)


def test_blocks_of_a_single_block_array_and_empty_selections():
    a = la.from_array(np.arange(6), chunks=6)
    assert_eq(a.blocks[0], np.arange(6))
    assert_eq(a.blocks[1:], np.arange(0))


def test_blocks_raise_index_errors_when_written():
    a = lazy()
    with config.set(executor="raise"):
        for bad in [(2,), (0, 3), (0, 0, 0, 0), (None,), (np.array([[0]]),), (0.5,)]:
            with pytest.raises(IndexError):
                a.blocks[bad]


def test_vindex_with_lazy_indices_gathers_from_a_one_block_array_without_computing():
    coord = np.arange(6.0) * 2 - 3
    x = la.from_array(coord, chunks=6)
    idx = np.array([[5, 0], [-1, 2], [3, 3]])
    lazy_idx = la.from_array(idx, chunks=(2, 1))
    with config.set(executor="raise"):
        got = x.vindex[lazy_idx]
    assert got.chunks == ((2, 1), (1, 1))
    assert_eq(got, coord[idx])
    grid = la.from_array(X[0], chunks=-1)  # 2-d, one lazy and one NumPy index array
    rows = la.from_array(np.array([0, 3, 1]), chunks=2)
    with config.set(executor="raise"):
        both = grid.vindex[rows, np.array([[4], [0]])]
    assert_eq(both, X[0][np.array([0, 3, 1]), np.array([[4], [0]])])
    # more than one block: the indices are computed first, as in x[...]
    assert_eq(lazy().vindex[la.from_array(np.array([2, 0]), chunks=1)], X[[2, 0]])
