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
