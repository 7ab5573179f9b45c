"""Lazy readers: stored arrays are read block by block, only where a result needs them.

Real zarr stores, HDF5 files and ``.npy`` files in ``tmp_path``; every
result is compared with NumPy on every local executor, passes on and off.
"""

from __future__ import annotations

import threading

import h5py
import numpy as np
import pytest
import zarr

import lazyarr as la
from lazyarr.graph.chunks import aligned_chunks
from lazyarr.graph.ops import FromReader
from lazyarr.testing import assert_eq

A = np.arange(60 * 14, dtype=np.float64).reshape(60, 14) * 0.5 - 7


class Recording:
    """An array-like that refuses ``__array__`` and logs every region read."""

    def __init__(self, data: np.ndarray, chunks=None) -> None:
        self.data = data
        self.shape = data.shape
        self.dtype = data.dtype
        if chunks is not None:
            self.chunks = chunks
        self.reads: list[tuple] = []
        self.lock = threading.Lock()

    def __array__(self, *args, **kwargs):
        raise AssertionError("__array__ was called: the whole array would be read")

    def __getitem__(self, where):
        with self.lock:
            self.reads.append(where)
        return self.data[where]

    def elements_read(self) -> int:
        return sum(self.data[w].size for w in self.reads)


def test_from_array_reads_nothing_until_compute_and_only_the_needed_regions():
    r = Recording(A, chunks=(10, 7))
    x = la.from_array(r)
    assert x.chunks == ((60,), (14,)) and r.reads == []  # tiny: one block of whole chunks
    x = la.from_array(r, chunks=(10, 7))
    y = (x * 2 + 1)[13, 2:5]
    assert r.reads == []
    np.testing.assert_array_equal(y.compute(), (A * 2 + 1)[13, 2:5])
    assert r.elements_read() == 3  # pushdown: the three elements, not a block
    r.reads.clear()
    with la.config.set({"optimize.passes": []}):
        np.testing.assert_array_equal(y.compute(), (A * 2 + 1)[13, 2:5])
    assert r.elements_read() == 10 * 7  # culling alone: the one block that holds them


@pytest.mark.parametrize(
    "index", [np.s_[::-3], np.s_[5], np.s_[:, ::-5], np.s_[59:0:-7, 3], np.s_[..., -1], np.s_[4:4]]
)
def test_read_windows_equal_numpy(index):
    x = la.from_array(Recording(A, chunks=(8, 5)), chunks=(16, 5))
    assert_eq(x[index], A[index])
    assert_eq((x - x[0])[index], (A - A[0])[index])


def test_reductions_and_chains_over_readers():
    x = la.from_array(Recording(A), chunks=(11, 4))
    assert_eq((x - x.mean(axis=0)) / x.std(axis=0), (A - A.mean(axis=0)) / A.std(axis=0))
    assert_eq(x.T @ x, A.T @ A)


def test_default_blocks_are_multiples_of_the_stored_chunks():
    # leading axes grow first: each stored chunk stays one contiguous slab of its block
    assert aligned_chunks((1000, 300), 8, (64, 100), 8 * 64 * 100 * 3) == (
        (192,) * 5 + (40,),
        (100,) * 3,
    )
    # the whole first axis fits: the next axis grows
    assert aligned_chunks((1000, 300), 8, (64, 100), 8 * 1000 * 200) == ((1000,), (200, 100))
    assert aligned_chunks((1000, 300), 8, (64, 100), 8) == ((64,) * 15 + (40,), (100,) * 3)
    blocks = aligned_chunks((10_000, 5_000), 4, (100, 250), 64 << 20)
    assert blocks[0] == (10_000,) and blocks[1][0] % 250 == 0
    assert (64 << 20) - 10_000 * 250 * 4 < blocks[1][0] * 10_000 * 4 <= 64 << 20


# -- zarr, HDF5, npy ----------------------------------------------------------------------


@pytest.fixture
def zarr_path(tmp_path):
    path = tmp_path / "a.zarr"
    z = zarr.create_array(str(path), shape=A.shape, chunks=(7, 5), dtype="f8")
    z[:] = A
    return str(path)


def test_from_zarr_reads_lazily_with_uneven_chunks(zarr_path):
    x = la.from_zarr(zarr_path, chunks=(13, 6))
    assert isinstance(x._expr.op, FromReader)
    assert_eq(x, A)
    assert_eq((x * 3)[::-4, 1:], (A * 3)[::-4, 1:])
    assert_eq(x.sum(axis=1), A.sum(axis=1))


def test_zarr_groups_components_and_identity(tmp_path):
    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("sub/x", shape=A.shape, chunks=(10, 14), dtype="f8")[:] = A
    x = la.from_zarr(str(tmp_path / "g.zarr"), component="sub/x")
    assert x.chunks[0][0] % 10 == 0
    assert_eq(x[3], A[3])
    again = la.from_zarr(str(tmp_path / "g.zarr"), component="sub/x")
    assert again._expr.key == x._expr.key  # equal reads share one key (CSE, plan cache)
    assert la.from_array(g["sub/x"])._expr.key == x._expr.key


def test_hdf5_datasets_are_read_by_file_name(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("grp/d", data=A, chunks=(6, 14))
    with h5py.File(path, "r") as f:
        x = la.from_array(f["grp/d"])
        assert x.chunks[0][0] % 6 == 0
    # the file handle is closed: blocks reopen the file by its name
    assert_eq(x, A)
    assert_eq((x + 1)[::-9, 2], (A + 1)[::-9, 2])
    np.testing.assert_array_equal(
        la.from_array(h5py.File(path, "r")["grp/d"], chunks=7)[5].compute(), A[5]
    )


def test_npy_files_are_memory_mapped_per_block(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, A)
    x = la.from_npy(path, chunks=(9, 14))
    assert_eq(x, A)
    assert_eq(x[::5, ::-2] * 2, A[::5, ::-2] * 2)
    first = x._expr.key
    np.save(path, A + 1)  # a rewritten file is a new array
    assert la.from_npy(path, chunks=(9, 14))._expr.key != first


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_a_gram_matrix_reads_each_element_once(executor):
    r = Recording(A)
    x = la.from_array(r, chunks=(8, 14))
    np.testing.assert_allclose((x.T @ x).compute(executor=executor), A.T @ A)
    assert r.elements_read() == A.size  # x.T and x share each read region
