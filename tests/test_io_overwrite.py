"""Writing over a source of the same computation, and replaced files: no data is ever lost.

Each test here failed on the code before issue 24: the overwrite deleted the
zarr chunks before they were read, ``to_npy`` truncated the file it read, and a
replaced HDF5 file was read through the handle of the old one. Real zarr
stores, ``.npy`` and HDF5 files in ``tmp_path``; values are checked against NumPy.
"""

from __future__ import annotations

import os

import h5py
import numpy as np
import pytest
import zarr

import lazyarr as la
from lazyarr.io import zarr_chunks
from lazyarr.io.zarr_chunks import sweep_partials
from lazyarr.namespace.composing import raise_where
from lazyarr.testing import executors_under_test

A = np.arange(60 * 24, dtype=np.float64).reshape(60, 24) / 7 - 3
EXECUTORS = executors_under_test()


def _zarr(path, values=A, chunks=(10, 24)):
    la.to_zarr(la.asarray(values, chunks=chunks), str(path))
    return str(path)


def _raw_zarr(path, values=A, chunks=(10, 24)):
    """A store of uncompressed chunks: under the tiny limits below there is no room for the
    zstd compressor a thread keeps while writing (about 300 KiB even for small chunks)."""
    z = zarr.create_array(
        str(path), shape=values.shape, dtype=values.dtype, chunks=chunks, compressors=None
    )
    z[:] = values
    return str(path)


def _store_files(path):
    return sorted(os.listdir(os.path.dirname(path)))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_to_zarr_over_its_own_source_blockwise(tmp_path, executor):
    p = _zarr(tmp_path / "a.zarr")
    la.to_zarr(la.from_zarr(p) * 2, p, overwrite=True, executor=executor)
    np.testing.assert_array_equal(zarr.open_array(p)[:], A * 2)
    assert _store_files(p) == ["a.zarr"]  # nothing left beside it


@pytest.mark.parametrize("executor", EXECUTORS)
def test_to_zarr_over_its_own_source_all_to_all(tmp_path, executor):
    """Every output block reads every source block (a transpose in other chunks)."""
    p = _zarr(tmp_path / "a.zarr")
    la.to_zarr(la.from_zarr(p).T[::-1] - 1, p, overwrite=True, executor=executor)
    np.testing.assert_array_equal(zarr.open_array(p)[:], A.T[::-1] - 1)


def test_failed_overwrite_leaves_the_old_array_whole(tmp_path):
    p = _zarr(tmp_path / "a.zarr")
    x = la.from_zarr(p)
    bad = raise_where(x * 2, x > A[50, 3] - 1e-9, ValueError, "bad value")
    with pytest.raises(ValueError, match="bad value"):
        la.to_zarr(bad, p, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(p)[:], A)
    assert _store_files(p) == ["a.zarr"]


def test_overwrite_of_a_group_member_that_is_read(tmp_path):
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    root.create_array("u", shape=A.shape, dtype=A.dtype, chunks=(10, 24))[:] = A
    u = la.from_zarr(str(tmp_path / "g.zarr"), component="u")
    la.to_zarr(u + u[::-1], str(tmp_path / "g.zarr"), component="u", overwrite=True)
    np.testing.assert_array_equal(
        zarr.open_array(str(tmp_path / "g.zarr"), path="u")[:], A + A[::-1]
    )


BIG = np.arange(600 * 48, dtype=np.float64).reshape(600, 48) / 7 - 3  # 230 kB, 10 blocks
"""Big enough that a plan fits a limit under which its staged copy is over half of it."""


@pytest.mark.parametrize("limit", [None, "320KiB"], ids=["in-memory", "scratch"])
def test_store_into_an_array_it_reads_stages_first(tmp_path, limit):
    """Without a memory limit the staged copy is in memory; under one, in a scratch store."""
    p = _raw_zarr(tmp_path / "a.zarr", BIG, (60, 48))
    z = zarr.open_array(p, mode="r+")
    scratch = tmp_path / "scratch"
    settings = {"temporary-directory": str(scratch), "memory-limit": limit}
    with la.config.set(settings):
        la.store(la.from_zarr(z)[::-1] + 1, z)
    np.testing.assert_array_equal(z[:], BIG[::-1] + 1)
    # the 230 kB staged copy is over half of 320 KiB: it went to a scratch store, now gone
    assert scratch.exists() == (limit is not None)
    assert not scratch.exists() or list(scratch.iterdir()) == []


def test_scratch_store_is_removed_after_a_failure(tmp_path):
    p = _raw_zarr(tmp_path / "a.zarr", BIG, (60, 48))
    z = zarr.open_array(p, mode="r+")
    x = la.from_zarr(z, chunks=(60, 48))
    bad = raise_where(x[::-1] + 1, x[::-1] > BIG[500, 3] - 1e-9, ValueError, "bad value")
    scratch = tmp_path / "scratch"
    settings = {"temporary-directory": str(scratch), "memory-limit": "320KiB"}
    with la.config.set(settings), pytest.raises(ValueError, match="bad value"):
        la.store(bad, z)
    np.testing.assert_array_equal(z[:], BIG)
    assert scratch.exists() and list(scratch.glob("*")) == []  # made for the copy, emptied


def test_store_with_regions_over_the_array_it_reads(tmp_path):
    p = _zarr(tmp_path / "a.zarr")
    z = zarr.open_array(p, mode="r+")
    la.store(la.from_zarr(z)[:30][::-1], z, regions=(slice(30, 60),))
    want = A.copy()
    want[30:] = A[:30][::-1]
    np.testing.assert_array_equal(z[:], want)


def test_store_into_the_numpy_array_it_reads():
    b = A.copy()
    la.store(la.asarray(b, chunks=(7, 5))[::-1] * 3, b)
    np.testing.assert_array_equal(b, A[::-1] * 3)


def test_a_deferred_write_over_its_own_source_is_refused(tmp_path):
    p = _zarr(tmp_path / "a.zarr")
    z = zarr.open_array(p, mode="r+")
    with pytest.raises(ValueError, match="compute=True"):
        la.store(la.from_zarr(z) + 1, z, compute=False)
    with pytest.raises(ValueError, match="compute=True"):
        la.to_zarr(la.from_zarr(p) + 1, p, overwrite=True, compute=False)
    np.testing.assert_array_equal(zarr.open_array(p)[:], A)


def test_overwrite_of_a_memory_store_it_reads():
    store = zarr.storage.MemoryStore()
    la.to_zarr(la.asarray(A, chunks=(10, 24)), store)
    la.to_zarr(la.from_zarr(zarr.open_array(store, mode="r")) * 2, store, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], A * 2)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_to_npy_over_its_own_source(tmp_path, executor):
    p = tmp_path / "a.npy"
    np.save(p, A)
    la.to_npy(la.from_npy(p, chunks=(7, 24)) * 2, p, executor=executor)
    np.testing.assert_array_equal(np.load(p), A * 2)
    assert sorted(os.listdir(tmp_path)) == ["a.npy"]


def test_failed_to_npy_leaves_the_old_file(tmp_path):
    p = tmp_path / "a.npy"
    np.save(p, A)
    x = la.from_npy(p, chunks=(7, 24))
    with pytest.raises(ValueError, match="bad value"):
        la.to_npy(raise_where(x + 1, x > A[40, 0], ValueError, "bad value"), p)
    np.testing.assert_array_equal(np.load(p), A)
    assert sorted(os.listdir(tmp_path)) == ["a.npy"]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_replaced_hdf5_file_is_read_anew(tmp_path, executor):
    p = tmp_path / "h.h5"
    with h5py.File(p, "w") as f:
        f["d"] = A
    with h5py.File(p, "r") as f:
        assert la.from_array(f["d"]).sum().compute(executor=executor) == pytest.approx(A.sum())
    with h5py.File(tmp_path / "new.h5", "w") as f:
        f["d"] = A * 3
    os.replace(tmp_path / "new.h5", p)
    with h5py.File(p, "r") as f:
        got = la.from_array(f["d"]).sum().compute(executor=executor)
    assert got == pytest.approx((A * 3).sum())


def test_a_replaced_npy_file_is_a_new_source(tmp_path):
    """Same size, same modification time: only the inode tells the files apart."""
    p = tmp_path / "a.npy"
    np.save(p, A)
    st = os.stat(p)
    first = la.from_npy(p)
    assert first.sum().compute() == pytest.approx(A.sum())
    np.save(tmp_path / "b.npy", A + 1)
    os.utime(tmp_path / "b.npy", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp_path / "b.npy", p)
    again = la.from_npy(p)
    assert again._expr.key != first._expr.key
    assert again.sum().compute() == pytest.approx((A + 1).sum())


def test_partial_chunks_of_a_killed_writer_are_swept(tmp_path):
    """A process killed between writing a chunk's temporary file and renaming it."""
    import subprocess
    import sys

    p = _zarr(tmp_path / "a.zarr")
    code = (
        "import os, lazyarr.io.zarr_chunks as zc; "
        f"open(os.path.join({p!r}, 'c', '0', '0.' + zc._WRITER + '-0123abcd.partial'), 'wb')"
    )
    subprocess.run([sys.executable, "-c", code], check=True)  # exits: its pid is dead
    live = os.path.join(p, "c", "1", "0.") + f"{zarr_chunks._WRITER}-89abcdef.partial"
    open(live, "wb").close()  # this process is alive: its file stays
    z = zarr.open_array(p, mode="r+")
    la.store(la.asarray(A + 5, chunks=(10, 24)), z)
    partials = [f for _, _, fs in os.walk(p) for f in fs if f.endswith(".partial")]
    assert partials == [os.path.basename(live)]
    os.remove(live)
    assert sweep_partials(p) == 0
    np.testing.assert_array_equal(z[:], A + 5)


def test_a_truncated_npy_file_is_named_when_opened(tmp_path):
    p = tmp_path / "t.npy"
    np.save(p, A)
    with open(p, "r+b") as f:
        f.truncate(os.path.getsize(p) // 2)
    with pytest.raises(ValueError) as err:
        la.from_npy(p)
    assert str(p) in "\n".join(getattr(err.value, "__notes__", []))


@pytest.mark.parametrize("component", [None, "sst/daily"])
def test_a_refused_or_failed_new_array_leaves_nothing_behind(tmp_path, component):
    """Before, the array was made before the write was refused: an empty store stayed, and
    the same call again raised ``ContainsArrayError``. A write that fails part way is
    removed the same way; the second try then writes the store."""
    p = str(tmp_path / "new.zarr")
    x = la.asarray(A, chunks=(10, 24))
    with la.config.set({"memory-limit": "1KiB"}), pytest.raises(la.MemoryLimitError):
        la.to_zarr(x * 2, p, component=component)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="bad value"):
        la.to_zarr(raise_where(x * 2, x > A[50, 3] - 1e-9, ValueError, "bad value"), p, component)
    assert os.listdir(tmp_path) == []
    la.to_zarr(x * 2, p, component=component)
    np.testing.assert_array_equal(zarr.open_array(p, path=component or "")[:], A * 2)


def test_a_failed_new_array_in_an_existing_group_leaves_the_group(tmp_path):
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    root.create_array("u", shape=A.shape, dtype=A.dtype, chunks=(10, 24))[:] = A
    x = la.asarray(A, chunks=(10, 24))
    with pytest.raises(ValueError, match="bad value"):
        bad = raise_where(x, x > A[50, 3] - 1e-9, ValueError, "bad value")
        la.to_zarr(bad, str(tmp_path / "g.zarr"), component="v")
    assert sorted(zarr.open_group(str(tmp_path / "g.zarr")).array_keys()) == ["u"]
    np.testing.assert_array_equal(zarr.open_group(str(tmp_path / "g.zarr"))["u"][:], A)
