"""The reblock pass on a real cluster: cluster block shapes, same values, persist."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api

pytestmark = pytest.mark.usefixtures("reblock_any_size")


def test_dask_results_and_persist(dask_ex):
    a = la.random.standard_normal((300, 200), seed=4)
    b = la.ones((200, 100))
    c = a @ b + 1
    want = np.asarray(la.compute(c, executor="numpy")[0])
    (got,) = api.compute_exprs([c._expr], executor="dask", progress=False)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    rec = api.last_run()
    assert rec is not None and "reblock" in rec.plan.notes
    srcs = {n: s.expr for n, s in rec.plan.stages.items() if s.kind == "source"}
    assert all(np.prod(e.numblocks) >= 2 for e in srcs.values())


def test_dask_persist_of_a_reblocked_array(dask_ex):
    """Persisted blocks keep the plan's block grid (not the expression's auto chunks)."""
    a = la.random.standard_normal((300, 200), seed=4)
    (kept,) = api.persist_exprs([a._expr], executor="dask", progress=False)
    assert kept.chunks != a.chunks  # re-blocked for the cluster
    (again,) = api.compute_exprs([kept], executor="dask", progress=False)
    np.testing.assert_array_equal(again, np.asarray(la.compute(a, executor="numpy")[0]))
