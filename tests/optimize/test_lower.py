"""The lowering: one typed task graph per plan, linear in blocks, reading what kernels read.

Structure and counts only (no timing): how many tasks and region
derivations a plan of n blocks costs, that every task names exactly the
input blocks its kernel asks for, that blocks no output needs get no task,
and that the values equal NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import chunks_for_shape

import lazyarr as la
from lazyarr import api
from lazyarr.executors.blockwork import StageCode, gather, run_task
from lazyarr.kernels.blocks import blocks_for_region
from lazyarr.kernels.sets import ReferenceKernels
from lazyarr.optimize.lower import lower
from lazyarr.optimize.pipeline import PASSES
from lazyarr.optimize.tasks import TaskKind

ALL = tuple(p for p in PASSES if p not in ("reblock", "layout", "place"))


def plan_of(*arrays, passes=ALL):
    return api.make_plan([a._expr for a in arrays], "numpy", passes)


def chain_sum(n_blocks: int, block: int = 4) -> la.LazyArray:
    x = la.asarray(np.arange(n_blocks * block, dtype=float), chunks=block)
    return (la.sin(x) * 2 + la.cos(x)).sum()


@pytest.mark.parametrize("passes", [(), ALL])
def test_tasks_and_region_work_grow_linearly_with_blocks(passes):
    per_block = []
    for n in (10, 100, 1000):
        graph = lower(plan_of(chain_sum(n), passes=passes))
        kinds = graph.kinds()
        assert kinds["FINALIZE"] == 1 and kinds["SOURCE"] == n
        per_block.append((len(graph) - 1, graph.regions_computed))
    for (tasks, regions), n in zip(per_block, (10, 100, 1000)):
        assert tasks == per_block[0][0] // 10 * n  # the same tasks per block at every size
        assert regions == per_block[0][1] // 10 * n  # and the same region derivations
    fused = lower(plan_of(chain_sum(1000)))
    assert fused.kinds() == {"SOURCE": 1000, "PARTIAL": 1000, "FINALIZE": 1}


def test_every_task_comes_after_the_tasks_it_reads():
    x = la.asarray(np.arange(60.0).reshape(6, 10), chunks=(2, 3))
    graph = lower(plan_of((x @ x.T).sum(axis=0), x.mean(0) + x.std(0)))
    for tid, task in enumerate(graph.tasks):
        assert all(d < tid for d in task.deps), task


def _varied():
    a = la.asarray(np.arange(48.0).reshape(6, 8), chunks=(4, 3))
    b = la.asarray(np.arange(24.0).reshape(8, 3), chunks=(3, 2))
    v = la.asarray(np.arange(8.0), chunks=3)
    return [
        a * 2 + v,
        (a - a.mean(0)) / a.std(0),
        a @ b,
        (a.T * 2) @ a,
        a[1:4, ::2] + 1,
        la.concatenate([a, a * 2], axis=0),
        a.T,
        a.sum(),
        la.einsum("ij,jk->ik", a, b),
        a[:, 0:0].sum(axis=1),
        la.max(a, axis=1, keepdims=True),
        a[:5] + v[:5, None],
        la.cumsum(a, axis=1),
        la.flip(a, axis=0) - la.roll(a, 2, axis=1),
    ]


class Recording:
    """A getter that records which input blocks a kernel touched."""

    def __init__(self, stage, task, values):
        self.chunks = [e.chunks for e in stage.input_exprs]
        self.blocks = dict(zip(task.inputs, values))
        self.touched = set()

    def __call__(self, pos, region):
        from lazyarr.kernels.blocks import assemble

        for b, _ in blocks_for_region(self.chunks[pos], region):
            self.touched.add((pos, b))
        return assemble(self.chunks[pos], region, lambda b: self.blocks[(pos, b)])


@pytest.mark.parametrize("k", range(len(_varied())))
@pytest.mark.parametrize("passes", [(), ALL])
def test_each_task_reads_exactly_the_blocks_its_kernel_asks_for(k, passes):
    expr = _varied()[k]
    plan = plan_of(expr, passes=passes)
    graph = lower(plan)
    kernels = ReferenceKernels()
    values = [None] * len(graph)
    for tid, task in enumerate(graph.tasks):
        stage = graph.stages[task.stage]
        inputs = [values[d] for d in task.deps]
        if task.kind in (TaskKind.BLOCK, TaskKind.PARTIAL):
            rec = Recording(stage, task, inputs)
            code = StageCode(stage, kernels)
            fn = code.map if task.kind == TaskKind.BLOCK else code.partial
            values[tid] = fn(task.region, rec)
            assert rec.touched == set(task.inputs), (task, rec.touched)
        else:
            values[tid] = run_task(task, StageCode(stage, kernels), inputs)
    (out,) = graph.outputs
    blocks = {idx: values[tid] for idx, tid in graph.blocks_of(out)}
    got = gather(graph.stages[out].numblocks, blocks)
    np.testing.assert_allclose(got, expr.compute(executor="numpy"))


def test_blocks_no_output_needs_get_no_task():
    x = la.asarray(np.arange(400.0).reshape(40, 10), chunks=(4, 10))
    y = x * 2
    graph = lower(plan_of(y[5], passes=()))
    counts = graph.stage_tasks()
    assert sum(counts.values()) == 3  # x's block 1, y's block 1, the row
    graph = lower(plan_of(x[::7].sum(), passes=()))
    src = graph.position[next(n for n, s in graph.plan.stages.items() if s.kind == "source")]
    assert sorted(i for (i, _), _ in graph.blocks_of(src)) == [0, 1, 3, 5, 7, 8]


def test_a_shared_stage_is_lowered_once_for_every_reader():
    x = la.asarray(np.arange(100.0), chunks=10)
    s = la.sin(x)
    graph = lower(plan_of(s + 1, s * 2, passes=()))
    assert graph.stage_tasks()[s._expr.name] == 10
    assert len(graph) == 40  # x, sin(x), and each reader: 10 blocks each


def test_siblings_lower_to_joint_tasks():
    x = la.asarray(np.arange(60.0).reshape(12, 5), chunks=(4, 5))
    plan = plan_of(x.mean(0), x.std(0))
    assert plan.siblings
    graph = lower(plan, joint=True)
    kinds = graph.kinds()
    assert kinds["JOINT"] == 3  # one per body block, for both reductions
    assert kinds["FINALIZE"] == 2 and "PARTIAL" not in kinds
    apart = lower(plan)
    assert apart.kinds()["PARTIAL"] == 6 and "JOINT" not in apart.kinds()


@given(
    st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), chunks_for_shape((n,)))),
    st.sampled_from(["sum", "max", "mean"]),
)
def test_lowered_reductions_equal_numpy(n_chunks, func):
    n, chunks = n_chunks
    data = np.linspace(-3, 5, n)
    x = la.asarray(data, chunks=chunks)
    y = getattr(la, func)(la.exp(x) - 1)
    np.testing.assert_allclose(
        y.compute(executor="numpy"), getattr(np, func)(np.exp(data) - 1), rtol=1e-12
    )


def test_a_contraction_with_fewer_blocks_than_threads_runs_its_products_as_tasks():
    x = la.random.random((400, 6), chunks=(50, 6), seed=3)
    y = x.T @ x  # one output block, eight partial products
    plan = la.plan(y, executor="numba")
    one = lower(plan, in_place=True)
    assert one.kinds() == {"BLOCK": 1}
    split = lower(plan, in_place=True, split=2)
    assert split.kinds() == {"PRODUCT": 8, "COMBINE": 7}
    a = x.compute()
    np.testing.assert_allclose(y.compute(executor="numba"), a.T @ a)
    assert la.last_run().stats.extra["task_kinds"]["PRODUCT"] == 8
