"""The fan-out sweep's reads: per-axis tables give what block-by-block derivation gives,
the estimate does not depend on which is used, and its work grows linearly with blocks.

Counts only (no timing): how many regions the sweep derives for a plan of n and
2n blocks, against the tasks it answers for.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr.graph.chunks import block_index_iter
from lazyarr.graph.expr import MapOp
from lazyarr.optimize import axisreads, blockreads, fanout
from lazyarr.optimize.blockreads import StageReads
from lazyarr.optimize.pipeline import PASSES

A = np.arange(48.0).reshape(6, 8)


def plan_of(*arrays, passes=PASSES):
    api.clear_plan_cache()
    return api.make_plan([a._expr for a in arrays], "numpy", passes)


def block_by_block(stage, positions):
    """The reads of every task of a map stage, from :meth:`StageReads.block` one by one."""
    reads = StageReads(stage)
    found = {p: ([], []) for p in positions}
    for t, index in enumerate(block_index_iter(stage.numblocks)):
        for pos, b in reads.block(index)[1]:
            if pos in found:
                found[pos][0].append(t)
                found[pos][1].append(np.ravel_multi_index(b, stage.input_exprs[pos].numblocks))
    return {p: (np.array(t, np.int64), np.array(f, np.int64)) for p, (t, f) in found.items()}


def separable_stages(plan):
    return [
        s
        for s in plan.stages.values()
        if s.kind == "map" and len(s.members) == 1 and axisreads.separable(s.expr)
    ]


def assert_tables_match(*arrays):
    """Every separable stage's table reads equal its block-by-block reads; returns how many
    stages were compared (a fallback to block by block is allowed, and counted out)."""
    compared = 0
    for stage in separable_stages(plan_of(*arrays, passes=())):
        positions = list(range(len(stage.inputs)))
        got = axisreads.separable_reads(stage.expr, stage.input_exprs, positions)
        if got is None:
            continue
        want = block_by_block(stage, positions)
        for p in positions:
            np.testing.assert_array_equal(got[0][p][0], want[p][0], err_msg=f"{stage.name} {p}")
            np.testing.assert_array_equal(got[0][p][1], want[p][1], err_msg=f"{stage.name} {p}")
        compared += 1
    return compared


def _cases():
    x = la.asarray(A, chunks=(4, 3))
    y = la.asarray(A, chunks=(2, 5))
    v = la.asarray(np.arange(8.0), chunks=3)
    b = la.asarray(np.arange(2 * 6 * 8 * 4.0).reshape(2, 6, 8, 4), chunks=(1, 2, 4, 4))
    return {
        "concat rows": la.concatenate([x, y, x * 2], axis=0),
        "concat columns": la.concatenate([x, y], axis=1),
        "concat, blocks across inputs": la.concatenate([x.rechunk((1, 8)), y]).rechunk((5, 5)),
        "stack": la.stack([x, y, x + 1], axis=1),
        "concat of slices": la.concatenate([v, v * 2, v[2:]]),
        "step slices": x[::2, 1:7],
        "negative step and an integer": x[::-2, 3],
        "integer array": x[[0, 5, 2, 2, 1]],
        "integer array, second axis": y[:, [7, 0, 3, 3]],
        "new axes": x[None, 2:5, None],
        "boolean mask": x[np.arange(6) % 2 == 0],
        "pointwise arrays": x[[1, 2, 5], [3, 4, 0]],
        "reshape, unit axes": x.reshape(1, 6, 1, 8),
        "reshape, a split": b.reshape(2, 3, 2, 8, 4),
        "reshape, a merge": b.reshape(2, 6, 32),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_tables_give_the_block_by_block_reads(name):
    assert assert_tables_match(_cases()[name]) >= 1


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 7), min_size=1, max_size=4),
    chunk=st.integers(1, 4),
    out_chunk=st.integers(1, 5),
    width=st.integers(1, 5),
)
def test_tables_of_any_concatenation(lengths, chunk, out_chunk, width):
    if sum(lengths) == 0:
        return
    parts = [la.asarray(np.ones((n, width)), chunks=(chunk, 2)) for n in lengths]
    joined = la.concatenate(parts, axis=0)
    assert_tables_match(joined, joined.rechunk((out_chunk, 3)))


def anomalies(days: int, groups: int = 4):
    """The climatology's shape: a mean per group of days, joined, read back per day."""
    x = la.asarray(np.random.default_rng(0).random((days, 8, 6)), chunks=(5, 2, 2))
    clim = la.concatenate([x[i::groups].mean(axis=0, keepdims=True) for i in range(groups)])
    return x - clim[np.arange(days) % groups]


def test_the_estimate_does_not_depend_on_the_tables(monkeypatch):
    plan = plan_of(anomalies(40))
    tables = fanout._fanout_holds(plan, frozenset())
    monkeypatch.setattr(blockreads, "worth_probing", lambda expr: False)
    assert fanout._fanout_holds(plan, frozenset()) == tables
    assert any(f.held for f in tables)  # the joined means are kept for their readers


def count_region_work(monkeypatch, plan) -> tuple[int, int]:
    """Regions derived by the fan-out sweep of ``plan`` (op rules and block lookups), and
    the tasks of the stages it answers for."""
    calls = [0]
    real = blockreads.region_blocks

    def counted_blocks(chunks, region):
        calls[0] += 1
        return real(chunks, region)

    monkeypatch.setattr(blockreads, "region_blocks", counted_blocks)
    for cls in {type(m.op) for s in plan.stages.values() for m in s.members}:
        if issubclass(cls, MapOp) and "regions" in vars(cls):
            rule = vars(cls)["regions"]

            def counted(self, expr, out, rule=rule):
                calls[0] += 1
                return rule(self, expr, out)

            monkeypatch.setattr(cls, "regions", counted)
    found = fanout._fanout_holds(plan, frozenset())
    monkeypatch.undo()
    tasks = sum(int(np.prod(plan.stages[f.reader].numblocks)) for f in found)
    return calls[0], tasks


def test_the_sweep_derives_regions_per_axis_not_per_block(monkeypatch):
    work, tasks = [], []
    for days in (80, 160):
        w, t = count_region_work(monkeypatch, plan_of(anomalies(days)))
        work.append(w)
        tasks.append(t)
    assert tasks[1] > 1.8 * tasks[0]  # about twice the blocks to answer for
    assert work[1] <= 2 * work[0] + 16  # linear in the blocks (no product of two sizes)
    assert work[1] < tasks[1] / 2  # and a few regions per block along an axis, not per block


def _twice(b):
    return b * 2


def test_a_worker_holds_its_share_of_a_held_stage_and_the_copies_its_tasks_fetch():
    """A stage two stages read is kept whole; on a cluster a worker keeps its own blocks and
    a copy of every block its tasks fetch from another worker, until the stage is freed.
    A rechunk to columns on every worker reads every row block: each holds all of them."""
    x = la.map_blocks(_twice, la.random.random((8, 8), chunks=(1, 8), seed=0), dtype=float)
    plan = plan_of(x.rechunk((8, 1)), x + 1, passes=())
    (held,) = [n for n in plan.stages if plan.stages[n].expr.op.label() == "_twice"]
    (cols,) = [n for n in plan.stages if plan.stages[n].expr.op.label() == "rechunk"]
    (plus,) = [n for n in plan.stages if plan.stages[n].expr.op.label() == "add"]
    nbytes = plan.stages[held].expr.nbytes

    def placed(cols_on: list[int]) -> object:
        s = plan.stages
        return plan.with_stages(
            {
                **s,
                held: s[held].replace(worker=np.arange(8, dtype=np.int32) % 2),
                plus: s[plus].replace(worker=np.arange(8, dtype=np.int32).reshape(8, 1) % 2),
                cols: s[cols].replace(worker=np.asarray(cols_on, dtype=np.int32).reshape(1, 8)),
            }
        )

    assert fanout.worker_share(placed([0, 1] * 4), held, 2) == nbytes  # each fetches 4
    assert fanout.worker_share(placed([0] * 8), held, 2) == nbytes  # worker 0 fetches 4
    assert fanout.worker_share(plan, held, 2) == nbytes // 2  # no placement: even shares
    assert fanout.worker_share(placed([0] * 8), held, 1) == nbytes
