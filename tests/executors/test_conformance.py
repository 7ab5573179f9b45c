"""The executor contract, checked on every registered executor.

New executors (numba, dask) join this suite by being registered.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.executors import registry
from lazyarr.executors.base import Executor
from lazyarr.executors.testing import ComputeRefused
from lazyarr.graph.ops import BlockStore
from lazyarr.testing import executors_under_test

EXECUTORS = executors_under_test(everything=True)


class Recorder:
    def __init__(self):
        self.total = None
        self.done = 0
        self.finished = False

    def start(self, total_blocks):
        self.total = total_blocks

    def advance(self, blocks=1):
        self.done += blocks

    def finish(self):
        self.finished = True


def plan_for(*arrays):
    return api.make_plan([a._expr for a in arrays], "numpy", ("cse", "simplify"))


@pytest.fixture(params=EXECUTORS)
def executor(request):
    return registry.get(request.param)


def test_satisfies_the_protocol(executor):
    assert isinstance(executor, Executor)
    assert registry.get(executor.name) is executor


def test_execute_returns_numpy_arrays_for_each_output(executor):
    data = np.arange(35.0).reshape(5, 7)
    x = la.asarray(data, chunks=(2, 3))
    outs = [x + 1, x.sum(axis=0), x.max()]
    plan = plan_for(*outs)
    results = executor.execute(plan, plan.outputs)
    assert all(isinstance(r, np.ndarray) for r in results)
    np.testing.assert_array_equal(results[0], data + 1)
    np.testing.assert_allclose(results[1], data.sum(axis=0))
    assert results[2].shape == () and results[2] == 34.0


def test_results_do_not_alias_user_data(executor):
    data = np.arange(6.0)
    x = la.asarray(data, chunks=6)
    plan = plan_for(x)
    (out,) = executor.execute(plan, plan.outputs)
    out[0] = 100
    assert data[0] == 0


def test_progress_counts_every_block(executor):
    x = la.ones((6, 6), chunks=(2, 3))
    plan = plan_for((x * 2).sum(axis=1))
    rec = Recorder()
    executor.execute(plan, plan.outputs, rec)
    assert rec.total == rec.done and rec.finished
    # the blocks made, or read by partial reductions (TaskGraph.progress_blocks): at least
    # the 6 blocks of x * 2 or the 3 of the sum, never more than every block of the plan
    assert 3 <= rec.total <= plan.total_blocks


def test_progress_finishes_on_error(executor):
    x = la.asarray(np.array([1, 2, 3]), chunks=1)
    plan = plan_for(x // 0)
    rec = Recorder()
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        executor.execute(plan, plan.outputs, rec)
    assert rec.finished


def test_persist_keeps_blocks_and_recomputes_nothing(executor):
    x = la.random.random((8, 4), chunks=(3, 4), seed=1)
    y = x * 2
    plan = plan_for(y)
    (store,) = executor.persist(plan, plan.outputs)
    assert isinstance(store, BlockStore)
    assert set(store.blocks) == {(0, 0), (1, 0), (2, 0)}
    p = y.persist(executor=executor.name)
    with la.config.set(executor="raise"), pytest.raises(ComputeRefused):
        y.compute()
    np.testing.assert_allclose(p.compute(executor=executor.name), x.compute() * 2)
    # a persisted array is a source: its plan is one stage
    assert len(plan_for(p).stages) == 1


def test_zero_d_and_empty(executor):
    for arr, want in [
        (la.asarray(np.float64(3.5)) * 2, np.float64(7.0)),
        (la.zeros((0, 3), chunks=2) + 1, np.zeros((0, 3)) + 1),
        (la.zeros((0, 3)).sum(axis=0), np.zeros(3)),
    ]:
        plan = plan_for(arr)
        (got,) = executor.execute(plan, plan.outputs)
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(got, want)


def test_contraction_with_folded_operands(executor):
    # every pass on (on a cluster: layout and placement too, so tree parts
    # compute the folded operands on their workers)
    rng = np.random.default_rng(3)
    xd, dd = rng.standard_normal((40, 6)), rng.random(40)
    x = la.asarray(xd, chunks=(10, 6))
    d = la.asarray(dd, chunks=10)
    h = x.T @ (x * (d * (1 - d))[:, None])
    g = x.T @ (d - 0.5)
    got_h, got_g = api.compute_exprs([h._expr, g._expr], executor=executor.name, progress=False)
    np.testing.assert_allclose(got_h, xd.T @ (xd * (dd * (1 - dd))[:, None]), rtol=1e-12)
    np.testing.assert_allclose(got_g, xd.T @ (dd - 0.5), rtol=1e-12)
    plan = api.last_run().plan
    assert any("transpose" in [m.op.label() for m in s.members] for s in plan.stages.values())


def test_unknown_executor_names_a_suggestion():
    with pytest.raises(ValueError, match="did you mean 'numpy'"):
        registry.get("numpi")


def test_registering_an_executor_by_name():
    class Echo:
        """Delegates to the reference executor (a registration test)."""

        name = "echo-test"

        def execute(self, plan, outputs, progress=None):
            return registry.get("numpy").execute(plan, outputs, progress)

        def persist(self, plan, outputs, progress=None):
            return registry.get("numpy").persist(plan, outputs, progress)

    registry.register("echo-test", Echo)
    try:
        assert "echo-test" in registry.names()
        assert registry.available()["echo-test"][0]
        np.testing.assert_array_equal(la.ones(3).compute(executor="echo-test"), np.ones(3))
    finally:
        registry._EXTRA.pop("echo-test")
        registry._INSTANCES.pop("echo-test", None)


def test_raise_executor_refuses():
    with pytest.raises(ComputeRefused):
        la.ones(3).compute(executor="raise")
