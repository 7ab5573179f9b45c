"""The random distributions give the same values on a Dask cluster as on the NumPy executor."""

from __future__ import annotations

import numpy as np

import lazyarr as la


def test_distributions_on_dask_equal_numpy(dask_ex):
    xs = [
        la.random.gamma(0.7, 2.0, (40, 30), chunks=(7, 30), seed=1),
        la.random.poisson(np.array([2.0, 50.0, 500.0]), (20, 3), chunks=4, seed=2),
        la.random.binomial(300, 0.4, 100, chunks=9, seed=3),
        la.random.permutation(50, chunks=8, seed=4),
    ]
    want = la.compute(*xs, executor="numpy")
    got = la.compute(*xs, executor="dask")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
