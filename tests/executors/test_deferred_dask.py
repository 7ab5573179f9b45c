"""Value-dependent lengths on the dask executor: counts and selections both run there."""

from __future__ import annotations

import numpy as np

import lazyarr as la
from lazyarr import api


def test_boolean_index_and_nonzero_on_dask(dask_ex):
    x = np.random.default_rng(5).random((30, 4))
    a = la.asarray(x, chunks=((10, 0, 15, 5), 2))
    sel = a[a[:, 0] > 0.5]
    np.testing.assert_array_equal(sel.compute(executor="dask"), x[x[:, 0] > 0.5])
    # the counts ran on dask too (the last compute is the selection's, also on dask)
    assert api.last_run().executor == "dask"
    rows, cols = la.nonzero(a > 0.7)
    want = np.nonzero(x > 0.7)
    np.testing.assert_array_equal(rows.compute(executor="dask"), want[0])
    np.testing.assert_array_equal(cols.compute(executor="dask"), want[1])
    total = (sel * 2).sum()
    np.testing.assert_allclose(total.compute(executor="dask"), (x[x[:, 0] > 0.5] * 2).sum())


def test_unique_all_on_dask(dask_ex):
    x = np.random.default_rng(6).integers(0, 9, (12, 5)).astype(np.float64)
    x[x == 4] = np.nan
    a = la.asarray(x, chunks=((4, 0, 8), 3))
    with la.config.set(executor="raise"):  # written lazily
        u = la.unique_all(a)
        v, i, inv, c = la.unique(a, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique_all(x)
    for g, w in zip(u, want, strict=True):  # the count runs on dask too (with the first)
        np.testing.assert_array_equal(g.compute(executor="dask"), w)
        assert api.last_run().executor == "dask"
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(la.compute(v, i, inv, c, executor="dask"), want, strict=True):
        np.testing.assert_array_equal(g, w)
