"""Scheduling as data: the order facts lowering writes for the sample sort's exchange.

Before issue 23 these lived in the dask executor (``_priority``,
``_offsets_token``); now ``lower`` writes them (``optimize/schedule.py``) from
the op's traits and every executor reads the same facts.
"""

from __future__ import annotations

import lazyarr as la
from lazyarr import api
from lazyarr.optimize.lower import lower
from lazyarr.optimize.schedule import schedule
from lazyarr.optimize.tasks import TaskKind

EX = "samplesort.exchange"


def _graph():
    x = la.random.random(4_000, chunks=1_000, seed=0)
    return lower(api.make_plan([la.sort(x)._expr], "numpy", ()))


def test_exchange_partials_by_the_block_they_split_then_blocks_in_order():
    """Partials outrank the exchange's other tasks, those of sorted block 0 first (each block
    is released once split); then its finalizes block by block, the same order on every
    worker. Other stages keep the executor's order (priority 0)."""
    graph = _graph()
    order = graph.schedule
    got: dict = {}
    for tid, t in enumerate(graph.tasks):
        stage = graph.stages[t.stage]
        part = t.part if t.kind == TaskKind.PARTIAL else None
        got[(stage.expr.op.label(), t.kind, t.index, part)] = order.priority_of(tid)
    for j in range(4):
        assert [got[(EX, TaskKind.PARTIAL, (j,), k)] for k in range(4)] == [8, 7, 6, 5]
        assert got[(EX, TaskKind.FINALIZE, (j,), None)] == 4 - j
    assert {p for (label, *_), p in got.items() if label != EX} == {0}


def test_every_exchange_partial_waits_for_the_whole_offsets_input():
    graph = _graph()
    order = graph.schedule
    partials = [
        tid
        for tid, t in enumerate(graph.tasks)
        if t.kind == TaskKind.PARTIAL and graph.stages[t.stage].expr.op.label() == EX
    ]
    assert len(partials) == 16 and {order.waits[t] for t in partials} == {0}
    (barrier,) = order.barriers
    offsets = graph.stages[graph.tasks[partials[0]].stage].expr.inputs[-1].key
    assert barrier and all(graph.stages[graph.tasks[d].stage].expr.key == offsets for d in barrier)
    for t in partials:  # every offsets block a partial reads is in the barrier
        reads = [
            d for d in graph.tasks[t].deps if graph.stages[graph.tasks[d].stage].expr.key == offsets
        ]
        assert set(reads) <= set(barrier)


def test_finalizes_of_one_worker_run_one_after_another():
    """With placed finalizes (workers 0 and 1 alternating), each waits for the previous one
    of its worker; unplaced ones (worker -1) are not chained."""
    graph = _graph()
    assert graph.schedule.after == {}  # one process: no worker chains
    finals = [
        (tid, t)
        for tid, t in enumerate(graph.tasks)
        if t.kind == TaskKind.FINALIZE and graph.stages[t.stage].expr.op.label() == EX
    ]
    for _, t in finals:
        t.worker = t.index[0] % 2
    after = schedule(graph).after
    assert after == {finals[2][0]: finals[0][0], finals[3][0]: finals[1][0]}


def test_plans_without_ordered_ops_have_no_facts():
    x = la.random.random((40, 40), chunks=10, seed=0)
    graph = lower(api.make_plan([(x @ x.T).sum()._expr], "numpy", ()))
    order = graph.schedule
    assert (order.priority, order.barriers, order.waits, order.after) == ({}, [], {}, {})


def test_the_ready_order_is_deepest_stage_first_combines_first_then_the_lowerings():
    """Where no op orders tasks, every task has a rank of its own (the dask executor sends
    them as priorities, the numba pool takes its ready tasks by them): deeper stages first,
    a combine or finalize before the other tasks of its stage, then the lowering's order
    (a block's parts as its combine tree takes them)."""
    x = la.random.random((64, 8), chunks=(4, 8), seed=0)
    plan = api.make_plan([(la.exp(x).sum(axis=0) + 1)._expr], "numpy", ("cse", "simplify"))
    graph = lower(plan)
    ready = graph.schedule.ready
    assert graph.schedule.priority == {} and len(set(ready.tolist())) == len(graph.tasks)
    frees = (TaskKind.COMBINE, TaskKind.FINALIZE)
    for a, ta in enumerate(graph.tasks):
        for b, tb in enumerate(graph.tasks):
            if ta.stage != tb.stage:
                assert (ready[a] > ready[b]) == (ta.stage > tb.stage)
            elif (ta.kind in frees) != (tb.kind in frees):
                assert (ready[a] > ready[b]) == (ta.kind in frees)
            elif a < b:
                assert ready[a] > ready[b]
    assert {t.kind for t in graph.tasks} >= {TaskKind.PARTIAL, TaskKind.FINALIZE}


def test_an_op_that_orders_its_tasks_keeps_the_stage_order_for_the_others():
    """The sample sort's exchange has priorities of its own: the ready order is by stage
    (no depth-first walk), and the dask executor sends the op's priorities."""
    graph = _graph()
    assert graph.schedule.priority
    stages = [t.stage for t in graph.tasks]
    ready = graph.schedule.ready
    assert all(
        (ready[a] > ready[b]) == (stages[a] > stages[b])
        for a in range(len(stages))
        for b in range(len(stages))
        if stages[a] != stages[b]
    )


def test_a_worker_folds_its_share_of_parts_where_tasks_follow_the_ready_order():
    """88 parts of an output block on 2 workers: each folds its 44 sixteen at a time
    (16 being filled, 3 combined, 1 in flight: 20 kept); in Dask's own order (an op
    ordered tasks) a worker kept all 44 until the tree combined them."""
    from lazyarr.optimize.memory import kept_parts

    x = la.random.random((88 * 4, 8), chunks=(4, 8), seed=0)
    plan = api.make_plan([x.sum(axis=0)._expr], "numpy", ())
    (stage,) = [s for s in plan.stages.values() if s.kind == "reduce"]
    assert kept_parts(stage, 88, workers=2) == 20
    assert kept_parts(stage, 88, workers=2, in_flight=8) == 28  # two batches of 4 besides
    assert kept_parts(stage, 88, workers=2, in_flight=30) == 44  # never more than its share
    assert kept_parts(stage, 88, workers=2, folded=False) == 44
