"""Writers: ``store``, ``to_zarr``, ``to_npy``: block by block, aligned, never half written.

Real zarr stores and ``.npy`` files in ``tmp_path``; written values are
compared with NumPy on every local executor (the dask executor writes from
its workers in ``tests/executors/test_dask_executor.py``).
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
import zarr

import lazyarr as la
from lazyarr.graph.ops.store import Write, write
from lazyarr.io.writers import ArrayWriter
from lazyarr.kernels.reference.store import WriteError
from lazyarr.namespace.composing import raise_where
from lazyarr.testing import executors_under_test

A = np.arange(37 * 11, dtype=np.float64).reshape(37, 11) / 7 - 3
EXECUTORS = executors_under_test()


class Target:
    """A ``__setitem__`` target with stored chunks that logs every write."""

    def __init__(self, shape, chunks, fail_at=None):
        self.data = np.full(shape, -1.0)
        self.shape, self.dtype, self.chunks = shape, self.data.dtype, chunks
        self.writes: list[tuple] = []
        self.fail_at = fail_at
        self.lock = threading.Lock()

    def __setitem__(self, where, value):
        with self.lock:
            if self.fail_at is not None and where[0].start == self.fail_at:
                raise OSError("disk full")
            self.writes.append(where)
            self.data[where] = value

    def chunks_written(self):
        """(stored chunk index, write number) for every stored chunk each write touched."""
        out = []
        for i, where in enumerate(self.writes):
            ranges = [
                range(sl.start // c, (sl.stop - 1) // c + 1) for sl, c in zip(where, self.chunks)
            ]
            out.extend((chunk, i) for chunk in itertools.product(*ranges))
        return out


@pytest.mark.parametrize("executor", EXECUTORS)
def test_to_zarr_round_trip_with_uneven_blocks(tmp_path, executor):
    x = la.asarray(A, chunks=(10, 4))
    z = la.to_zarr(x * 2 - 1, str(tmp_path / "out.zarr"), executor=executor)
    np.testing.assert_array_equal(z[:], A * 2 - 1)
    back = la.from_zarr(str(tmp_path / "out.zarr"))
    np.testing.assert_array_equal((back * 3).compute(executor=executor), (A * 2 - 1) * 3)
    with pytest.raises(Exception, match="exist"):
        la.to_zarr(x, str(tmp_path / "out.zarr"))
    la.to_zarr(x, str(tmp_path / "out.zarr"), overwrite=True)
    np.testing.assert_array_equal(la.from_zarr(str(tmp_path / "out.zarr")).compute(), A)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_zarr_to_lazyarr_to_zarr_with_misaligned_chunks(tmp_path, executor):
    src = zarr.create_array(str(tmp_path / "in.zarr"), shape=A.shape, chunks=(6, 5), dtype="f8")
    src[:] = A
    dst = zarr.create_array(str(tmp_path / "dst.zarr"), shape=(45, 11), chunks=(8, 3), dtype="f8")
    x = la.from_zarr(str(tmp_path / "in.zarr"), chunks=(7, 4))
    la.store((x - x.mean(axis=0)) / x.std(axis=0), dst, regions=(slice(5, 42),), executor=executor)
    np.testing.assert_allclose(dst[5:42], (A - A.mean(0)) / A.std(0), atol=1e-12)
    assert np.all(dst[:5] == 0) and np.all(dst[42:] == 0)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_no_two_blocks_write_one_stored_chunk(executor):
    t = Target((40, 11), chunks=(6, 4))
    la.store(la.asarray(A, chunks=(5, 3)), t, regions=(slice(2, 39),), executor=executor)
    np.testing.assert_array_equal(t.data[2:39], A)
    touched = t.chunks_written()
    chunk_writers: dict[tuple, set] = {}
    for chunk, w in touched:
        chunk_writers.setdefault(chunk, set()).add(w)
    assert chunk_writers and all(len(w) == 1 for w in chunk_writers.values())


def test_the_write_op_refuses_blocks_that_split_chunks():
    x = la.asarray(A, chunks=(5, 11))._expr
    with pytest.raises(ValueError, match="share chunks"):
        write(x, ArrayWriter(Target((37, 11), chunks=(6, 11))))
    w = write(x, ArrayWriter(Target((37, 11), chunks=(5, 11))))
    assert isinstance(w.op, Write) and w.shape == (8, 1)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_store_into_numpy_and_npy(tmp_path, executor):
    out = np.zeros_like(A)
    la.store(la.asarray(A, chunks=7) ** 2, out, executor=executor)
    np.testing.assert_array_equal(out, A**2)
    la.to_npy(la.asarray(A, chunks=(9, 11)) + 1, tmp_path / "a.npy", executor=executor)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), A + 1)


def test_store_checks_its_arguments_when_called():
    x = la.asarray(A, chunks=7)
    with pytest.raises(ValueError, match="shape"):
        la.store(x, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="region"):
        la.store(x, np.zeros((40, 11)), regions=(slice(0, 30),))
    with pytest.raises(ValueError, match="2 sources but 1 targets"):
        la.store([x, x], [np.zeros_like(A)])
    with pytest.raises(TypeError, match="cannot store into tuple"):
        la.store(x, (1, 2))
    with pytest.raises(TypeError, match="cannot store"):
        la.store(x + 0.5, np.zeros(A.shape, dtype=np.int64))


def test_compute_false_gives_a_lazy_write_with_its_plan():
    t = np.zeros_like(A)
    w = la.store(la.asarray(A, chunks=(10, 11)), t, compute=False)
    assert np.all(t == 0)
    assert "write" in la.explain(w)
    counts = w.compute()
    assert counts.sum() == A.size and counts.shape == (4, 1)
    np.testing.assert_array_equal(t, A)


# -- failures ---------------------------------------------------------------------------


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_block_that_fails_leaves_no_chunk_half_written(tmp_path, executor):
    z = zarr.create_array(str(tmp_path / "t.zarr"), shape=A.shape, chunks=(4, 11), dtype="f8")
    z[:] = -1.0
    x = la.asarray(A, chunks=(8, 11))
    bad = raise_where(x * 2, x > A[30, 5] - 1e-9, ValueError, "bad value in block")
    with pytest.raises(ValueError, match="bad value in block"):
        la.store(bad, z, executor=executor)
    got = z[:]
    for i in range(0, A.shape[0], 4):  # each stored chunk is all old or all new
        chunk = got[i : i + 4]
        assert np.all(chunk == -1.0) or np.array_equal(chunk, A[i : i + 4] * 2), i
    assert np.all(got[24:] == -1.0)  # the failing block (rows 24-31) and its chunks: untouched


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_failed_write_names_the_target(executor):
    t = Target((37, 11), chunks=(10, 11), fail_at=20)
    with pytest.raises(
        WriteError, match=r"test_io_write.Target \(37, 11\) failed: OSError: disk full"
    ):
        la.store(la.asarray(A, chunks=(10, 11)), t, executor=executor)
