"""The sample sort on the dask executor (a LocalCluster of 2 processes)."""

from __future__ import annotations

import numpy as np

import lazyarr as la
from lazyarr.testing import assert_eq


def test_sample_sort_on_dask(dask_ex):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, 60).astype(float)
    x[[4, 17, 40]] = np.nan
    a = la.asarray(x, chunks=((9, 0, 20, 1, 30),))
    assert la.sort(a).chunks == a.chunks
    assert_eq(la.sort(a), np.sort(x), executors=["dask"])
    assert_eq(la.argsort(a), np.argsort(x, kind="stable"), executors=["dask"])
    want = x.size - 1 - np.flip(np.argsort(np.flip(x), kind="stable"))
    assert_eq(la.argsort(a, descending=True), want, executors=["dask"])


def test_sample_sort_along_an_axis_on_dask(dask_ex):
    x = np.random.default_rng(4).integers(0, 5, (6, 40)).astype(np.int32)
    a = la.asarray(x, chunks=(4, (10, 0, 25, 5)))
    got = la.argsort(a, axis=1)
    assert got.chunks == a.chunks
    assert_eq(got, np.argsort(x, axis=1, kind="stable"), executors=["dask"])
    assert_eq(la.sort(a, axis=0), np.sort(x, axis=0), executors=["dask"])


def test_exchange_merges_wait_for_the_last_merge_on_their_worker(dask_ex):
    """Each worker merges one output block at a time: a finalize of the exchange waits for a
    token of the worker's previous one, so the next block's slices are fetched only then;
    the partials all wait for one token of every offsets block."""
    from distributed import get_task_stream

    x = np.random.default_rng(5).random(4000)
    a = la.asarray(x, chunks=250)  # 16 output blocks on 2 workers
    with get_task_stream(la.cluster()) as ts:
        assert_eq(la.sort(a), np.sort(x), executors=["dask"], passes=[True])
    keys = [str(t["key"]) for t in ts.data]
    exchange = [k for k in keys if "samplesort.exchange" in k]
    tokens = [k for k in exchange if "-t-" in k]
    offsets = [k for k in exchange if "-o-" in k]  # the partials wait for all offsets
    finals = [k for k in exchange if "-p" not in k and k not in tokens and k not in offsets]
    workers = {t["worker"] for t in ts.data if str(t["key"]) in finals}
    assert len(finals) == 16 and len(tokens) == len(finals) - len(workers)
    assert len(offsets) == 1


def test_finished_outputs_are_fetched_while_the_rest_runs(dask_ex, monkeypatch):
    """With a batch of one byte every output block is brought here as it finishes (and
    released on its worker); the values equal a compute that fetches them at the end."""
    from lazyarr.executors import dask_fetch

    x = np.random.default_rng(6).random((300, 20))
    a = la.asarray(x, chunks=(50, 7))
    y = la.sort(a, axis=0) + 1
    want = np.sort(x, axis=0) + 1
    flushed = []
    real = dask_fetch.FetchBatch.flush

    def flush(self):  # futures gathered, and the blocks they hold (a batch holds several)
        blocks = sum(len(self.where[f.key]) for f in self.pending)
        flushed.append((len(self.pending), blocks))
        real(self)

    monkeypatch.setattr(dask_fetch.FetchBatch, "flush", flush)
    monkeypatch.setattr(dask_fetch, "FETCH_BATCH_BYTES", 1)
    assert_eq(y, want, executors=["dask"], passes=[True])
    # 6 x 3 blocks, one future (a block, or a batch of blocks) at a time
    assert sum(b for _, b in flushed) == 6 * 3 and max(f for f, _ in flushed) == 1
    flushed.clear()
    monkeypatch.setattr(dask_fetch, "FETCH_BATCH_BYTES", 1 << 40)
    assert_eq(y, want, executors=["dask"], passes=[True])
    assert len(flushed) == 1 and flushed[0][1] == 18  # all at the end
