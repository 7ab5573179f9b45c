"""Sibling stages on the ``dask`` executor run as joint tasks, as on numba.

Siblings (reductions over one block grid, or elementwise stages of one grid,
that read the same inputs) are lowered as ``JOINT`` tasks: each input block
is read once for all of them, each sibling's value is taken out of the joint
task's (through a getter where the reader runs on another worker), and a
placed reduction tree combines each sibling's slot. Real LocalCluster (2
processes x 1 thread, one per module); results against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import config

pytestmark = pytest.mark.usefixtures("dask_ex")


def _kinds() -> dict[str, int]:
    return la.last_run().stats.extra["task_kinds"]


def _pair(rows: int = 64, cols: int = 30, chunk: int = 8):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))
    return a, b, la.asarray(a, chunks=(chunk, cols)), la.asarray(b, chunks=(chunk, cols))


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "per-task"])
@pytest.mark.parametrize("kernels", ["auto", "numpy"])
def test_quadratic_means_read_each_input_block_once(batch, kernels):
    a, b, x, y = _pair()
    settings = {"dask.batch-tasks": batch, "dask.kernels": kernels}
    with config.set({**settings, "numba.compile-threshold": 0}):
        got = la.compute((x * x).mean(0), (y * y).mean(0), (x * y).mean(0), executor="dask")
    want = ((a * a).mean(0), (b * b).mean(0), (a * b).mean(0))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    kinds = _kinds()
    # one joint task per body block reads the x and y blocks under it once for all three
    # means; no sibling has partial tasks of its own
    assert kinds["JOINT"] == x.numblocks[0]
    assert "PARTIAL" not in kinds
    assert kinds["FINALIZE"] == 3


def test_a_placed_tree_combines_each_siblings_slot():
    a = np.random.default_rng(1).standard_normal((160, 6))
    a[5, 2] = np.nan
    x = la.asarray(a, chunks=(10, 6))  # 16 body blocks over 2 workers: a combine tree
    with config.set({"numba.compile-threshold": 0}):
        got = la.compute(x.mean(0), x.max(0), x.min(0), executor="dask")
    for g, w in zip(got, (a.mean(0), a.max(0), a.min(0)), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)  # NaN where NumPy has it
    assert np.isnan(got[0][2]) and np.isnan(got[1][2])
    kinds = _kinds()
    assert kinds["JOINT"] == 16
    assert kinds.get("COMBINE", 0) >= 3  # each sibling combines its slot on each worker


def test_integer_and_bool_siblings():
    n = np.arange(-40, 80, dtype=np.int32).reshape(12, 10)
    x = la.asarray(n, chunks=(3, 5))
    with config.set({"numba.compile-threshold": 0}):
        s, m, anyneg = la.compute(x.sum(0), x.max(0), (x < 0).any(0), executor="dask")
    np.testing.assert_array_equal(s, n.sum(0))
    assert s.dtype == n.sum(0).dtype
    np.testing.assert_array_equal(m, n.max(0))
    np.testing.assert_array_equal(anyneg, (n < 0).any(0))


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "per-task"])
def test_sibling_maps_computed_and_persisted(batch):
    a, _, x, _ = _pair(rows=40, cols=6, chunk=5)
    with config.set({"dask.batch-tasks": batch, "numba.compile-threshold": 0}):
        p, q = la.compute(x + 1, x * 2, executor="dask")
        assert _kinds()["JOINT"] == 8
        np.testing.assert_array_equal(p, a + 1)
        np.testing.assert_array_equal(q, a * 2)
        # persisted siblings keep a future per block (their own keys), read by a later plan
        kept = la.persist(x + 1, x * 2, executor="dask")
        got = (kept[0] - kept[1]).compute(executor="dask")
    np.testing.assert_array_equal(got, (a + 1) - (a * 2))


def test_siblings_read_across_workers_through_getters():
    """A reader planned on the other worker than the joint task takes one sibling's block
    alone, not the joint task's whole tuple."""
    a, _, x, _ = _pair(rows=40, cols=6, chunk=5)
    p, q = x + 1, x * 2
    with config.set({"numba.compile-threshold": 0}):
        got = la.compute(p[::-1] * q, p.sum(), executor="dask")
    np.testing.assert_allclose(got[0], (a + 1)[::-1] * (a * 2))
    np.testing.assert_allclose(got[1], (a + 1).sum())
