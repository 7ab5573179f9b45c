"""topk/argtopk and TSQR on the dask executor (a LocalCluster of 2 processes)."""

from __future__ import annotations

import numpy as np

import lazyarr as la
from lazyarr.testing import assert_eq


def test_topk_and_argtopk_on_dask(dask_ex):
    x = np.random.default_rng(0).integers(0, 50, size=(6, 40)).astype(float)
    x[2, 7] = np.nan
    a = la.asarray(x, chunks=(3, (9, 11, 20)))
    want = np.argsort(x, axis=1, kind="stable")[:, :4]
    assert_eq(la.argtopk(a, -4, axis=1), want, executors=["dask"])
    assert_eq(la.topk(a, -4, axis=1), np.take_along_axis(x, want, 1), executors=["dask"])


def test_tsqr_on_dask(dask_ex):
    x = np.random.default_rng(1).standard_normal((120, 6))
    a = la.asarray(x, chunks=(30, 6))
    q, r = la.linalg.qr(a)
    assert q.chunks == ((30,) * 4, (6,))
    gq, gr = la.compute(q, r, executor="dask")
    np.testing.assert_allclose(gq @ gr, x, atol=1e-10)
    np.testing.assert_allclose(gq.T @ gq, np.eye(6), atol=1e-10)
    got = la.compute(*la.linalg.lstsq(a, la.asarray(x[:, 0] + 1, chunks=40)), executor="dask")
    want = np.linalg.lstsq(x, x[:, 0] + 1)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
