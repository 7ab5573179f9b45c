"""Lazy arrays and Dask: the collection protocol, ``from_dask`` and ``to_dask``.

Values against NumPy on the numpy and numba executors, in order when lazy
arrays are interleaved with other collections; laziness of
``from_dask`` by counting the Dask blocks computed; and once on the dask
executor with a real LocalCluster (2 processes x 1 thread, closed).
"""

from __future__ import annotations

import threading

import dask
import dask.array as da
import numpy as np
import pytest
from dask.base import tokenize

import lazyarr as la
from lazyarr import config
from lazyarr.executors import registry

EXECUTORS = ["numpy", "numba"]


@pytest.fixture(params=EXECUTORS)
def executor(request):
    with config.set({"executor": request.param}):
        yield request.param


def _data() -> np.ndarray:
    return np.arange(7 * 5, dtype=np.float64).reshape(7, 5) / 3


# ------------------------------------------------------------ the collection protocol
def test_dask_compute_gives_numpy_values(executor):
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    got = dask.compute(x * 2, (x + 1).sum(axis=0))
    assert all(isinstance(g, np.ndarray) for g in got)
    np.testing.assert_allclose(got[0], a * 2)
    np.testing.assert_allclose(got[1], (a + 1).sum(axis=0))
    (one,) = dask.compute(x.T @ x)
    np.testing.assert_allclose(one, a.T @ a)
    assert la.last_run().executor == executor


def test_each_array_is_one_lazyarr_compute_in_order(executor):
    """Each lazy array is one lazyarr compute (never merged by Dask, whose merge reorders
    results when another collection sits between two merged ones); values stay in order."""
    x = la.asarray(_data(), chunks=(3, 2))
    calls = []
    ex = registry.get(executor)
    real = ex.execute

    def counting(plan, outputs, progress=None, **options):
        calls.append(len(outputs))
        return real(plan, outputs, progress, **options)

    ex.execute = counting
    try:
        d = da.ones(3, chunks=2)
        got = dask.compute(x + 1, d, x.mean(axis=1), dask.delayed(len)("ab"), x.max(), x + 1)
    finally:
        del ex.execute
    assert calls == [1, 1, 1, 1] or calls == [1, 1, 1]  # equal arrays may share one task
    a = _data()
    for g, want in zip(got, [a + 1, np.ones(3), a.mean(axis=1), 2, a.max(), a + 1]):
        np.testing.assert_allclose(g, want)


def test_mixed_with_dask_arrays_and_containers(executor):
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    d = da.from_array(a, chunks=(4, 3))
    got = dask.compute({"lazy": x - 1, "dask": d * 3, "plain": 7}, [x.sum()])
    np.testing.assert_allclose(got[0]["lazy"], a - 1)
    np.testing.assert_allclose(got[0]["dask"], a * 3)
    assert got[0]["plain"] == 7
    np.testing.assert_allclose(got[1][0], a.sum())


def test_dask_persist_keeps_values_and_chunks(executor):
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    (p,) = dask.persist(x * 10)
    assert isinstance(p, la.LazyArray)
    assert p.chunks == x.chunks
    np.testing.assert_allclose(p.compute(), a * 10)
    np.testing.assert_allclose((p + x).compute(), a * 11)


def test_tokenize_is_structural():
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    assert tokenize(x * 2) == tokenize(x * 2)
    assert tokenize(x * 2) != tokenize(x * 3)
    assert tokenize(la.arange(10, chunks=3) + 1) == tokenize(la.arange(10, chunks=3) + 1)
    # copies lazyarr owns are keyed by their values: two copies, one token
    y = la.asarray(a, chunks=(3, 2), copy=True)
    assert tokenize(y.sum()) == tokenize(la.asarray(a, chunks=(3, 2), copy=True).sum())
    assert tokenize(y.sum()) != tokenize(la.asarray(a + 1, chunks=(3, 2), copy=True).sum())
    assert dask.is_dask_collection(x)


def test_dask_array_asarray_uses_to_dask_array(executor):
    a = _data()
    d = da.asarray(la.asarray(a, chunks=(3, 2)))
    assert isinstance(d, da.Array)
    assert d.chunks == ((3, 3, 1), (2, 2, 1))
    np.testing.assert_allclose((d + 1).compute(), a + 1)


# ------------------------------------------------------------------ to_dask
def test_to_dask_has_lazyarr_chunks_and_values(executor):
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    d = (x * 2).to_dask()
    assert isinstance(d, da.Array)
    assert d.chunks == x.chunks and d.dtype == x.dtype
    got = (d - 1).compute()
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, a * 2 - 1)
    np.testing.assert_allclose(d[2:5, 1].compute(), (a * 2)[2:5, 1])
    np.testing.assert_allclose(la.to_dask(x).sum().compute(), a.sum())


# ---------------------------------------------------------------- from_dask
class _Counted:
    """An array-like that counts its reads (Dask calls it once per Dask block computed)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.shape, self.dtype, self.ndim = a.shape, a.dtype, a.ndim
        self.reads: list[tuple] = []
        self._lock = threading.Lock()

    def __getitem__(self, where):
        with self._lock:
            self.reads.append(where)
        return self.a[where]


def test_from_dask_keeps_chunks_and_values(executor):
    a = _data()
    d = da.from_array(a, chunks=(2, 3))
    x = la.from_dask(d)
    assert x.chunks == d.chunks
    np.testing.assert_allclose((x * 2 + 1).compute(), a * 2 + 1)
    np.testing.assert_allclose(la.from_dask(d, chunks=(7, 5)).sum().compute(), a.sum())
    with pytest.raises(TypeError, match=r"dask\.array\.Array"):
        la.from_dask(a)


def test_from_dask_computes_only_the_blocks_the_plan_needs(executor):
    a = np.arange(40 * 6, dtype=np.float64).reshape(40, 6)
    src = _Counted(a)
    d = da.from_array(src, chunks=(10, 3), asarray=True)  # 4 x 2 = 8 Dask blocks
    src.reads.clear()  # Dask's own peek at an empty slice (its meta)
    x = la.from_dask(d)
    assert src.reads == []  # nothing computed to build it
    np.testing.assert_array_equal(x[:10].compute(), a[:10])
    assert len(src.reads) == 2  # the two Dask blocks of the first ten rows
    src.reads.clear()
    np.testing.assert_array_equal((x + 1)[25, 4].compute(), a[25, 4] + 1)
    assert len(src.reads) == 1
    src.reads.clear()
    np.testing.assert_allclose(x.sum(axis=0).compute(), a.sum(axis=0))
    assert len(src.reads) == 8  # each Dask block once


def test_asarray_and_from_array_of_a_dask_array_stay_lazy(executor):
    a = np.arange(30, dtype=np.int64).reshape(6, 5)
    src = _Counted(a)
    d = da.from_array(src, chunks=(3, 5), asarray=True)
    src.reads.clear()
    for make in (la.asarray, la.from_array):
        x = make(d)
        assert x.chunks == d.chunks
        assert src.reads == []
        np.testing.assert_array_equal(x[4:].compute(), a[4:])
        assert len(src.reads) == 1
        src.reads.clear()
    np.testing.assert_allclose(la.asarray(d, dtype=np.float32).compute(), a.astype(np.float32))


def test_round_trip_through_dask():
    a = _data()
    x = la.asarray(a, chunks=(3, 2))
    back = la.from_dask((x.to_dask() * 2).rechunk((4, 5)))
    assert back.chunks == ((4, 3), (5,))
    np.testing.assert_allclose(back.compute(), a * 2)


# ------------------------------------------------------------- dask executor
def test_on_the_dask_executor(dask_ex):
    a = _data()
    with config.set({"executor": "dask"}):
        x = la.asarray(a, chunks=(3, 2))
        d = da.from_array(a, chunks=(4, 5))
        got = dask.compute(x * 2, x.sum(axis=1), d + 1, scheduler="threads")
        assert la.last_run().executor == "dask"
        assert len(la.last_run().plan.outputs) == 1
        np.testing.assert_allclose(got[0], a * 2)
        np.testing.assert_allclose(got[1], a.sum(axis=1))
        np.testing.assert_allclose(got[2], a + 1)
        y = la.from_dask(d)
        np.testing.assert_allclose((y - y.mean(axis=0)).compute(), a - a.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(y[:4, 1].compute(), a[:4, 1])
        (p,) = dask.persist(x + 1, scheduler="threads")
        np.testing.assert_allclose(p.compute(), a + 1)
    # the Dask graph run by the cluster itself: the lazyarr task runs on a worker, and
    # with the dask executor configured it runs there locally (no cluster in a worker)
    client = dask_ex.client()
    for setting in ("numba", "dask"):
        with config.set({"executor": setting}):
            got = client.compute([x * 3, la.to_dask(x).sum()], sync=True)
            np.testing.assert_allclose(got[0], a * 3)
            np.testing.assert_allclose(got[1], a.sum())
            kept = client.persist(x - 1)
            assert isinstance(kept, la.LazyArray) and kept.chunks == x.chunks
            np.testing.assert_allclose(kept.compute(executor="numpy"), a - 1)
