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
