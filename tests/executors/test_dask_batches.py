"""Batched block tasks on the ``dask`` executor: which tasks share a Dask task, and a run.

:func:`~lazyarr.executors.dask_batches.plan_batches` on lowered plans (no
cluster: counts and planned bytes), then on a real LocalCluster (2 processes
x 1 thread, closed at the end of the module): a Dask task per batch, values
as NumPy's, persisted blocks addressable one by one, a worker killed while
batches run.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors.dask_batches import BATCHES_PER_THREAD, batch_budget, plan_batches
from lazyarr.optimize.lower import lower
from lazyarr.optimize.memory import WORKER_BATCH_FLOOR, estimate
from lazyarr.optimize.tasks import TaskKind


def _plan(y, workers=None):
    """``y``'s plan fused, without placement; ``workers``: its stages' blocks planned on that many
    workers, block ``k`` (C order) on worker ``k % workers``."""
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify", "fuse"))
    if workers is None:
        return plan
    stages = {
        name: s.replace(
            worker=(np.arange(s.nblocks).reshape(s.numblocks) % workers).astype(np.int32)
        )
        for name, s in plan.stages.items()
    }
    return plan.with_stages(stages).replace(workers=tuple(f"tcp://w:{i}" for i in range(workers)))


def _map_stage(graph):
    (si,) = [i for i, s in enumerate(graph.stages) if s.kind == "map"]
    return si


# ------------------------------------------------------------------ planning alone


def test_two_batches_per_worker_thread_each_on_one_worker():
    y = la.sin(la.arange(400.0, chunks=10))  # 40 blocks, 20 per worker
    graph = lower(_plan(y, workers=2), generate_in_place=True)
    got = plan_batches(graph, workers=2, threads=1, memory_limit=None)
    si = _map_stage(graph)
    mine = [b for b in got.batches if b.stage == si]
    assert len(mine) == 2 * BATCHES_PER_THREAD
    assert sorted(len(b.tids) for b in mine) == [10] * 4
    for b in mine:
        assert {graph.tasks[t].worker for t in b.tids} == {b.worker}
        assert all(graph.tasks[t].kind == b.kind == TaskKind.BLOCK for t in b.tids)
    # every task of the stage sits in exactly one batch, at its place
    for b in mine:
        for pos, t in enumerate(b.tids):
            assert got.batch_of[t] == got.batches.index(b) and got.position[t] == pos
    assert got.per_stage(graph) == {graph.stages[si].name: 4}
    # more threads: more batches (two per thread), as long as there are tasks
    many = plan_batches(graph, workers=2, threads=4, memory_limit=None).batches
    assert len(many) == 16 and sorted({len(b.tids) for b in many}) == [2, 3]
    # 16 runs of 20 tasks per worker: 4 of two tasks (batches), 12 alone (plain tasks)
    thin = plan_batches(graph, workers=2, threads=8, memory_limit=None)
    assert len(thin.batches) == 2 * 4 and (thin.batch_of < 0).sum() == 2 * 12


def test_unplaced_tasks_make_two_batches_per_thread_of_the_cluster():
    y = la.sin(la.arange(400.0, chunks=10))
    graph = lower(_plan(y), generate_in_place=True)
    got = plan_batches(graph, workers=3, threads=2, memory_limit=None)
    assert len(got.batches) == 3 * 2 * BATCHES_PER_THREAD
    assert {b.worker for b in got.batches} == {-1}


def test_each_batch_fits_its_share_of_the_worker_memory():
    y = la.sin(la.arange(40_000.0, chunks=1_000))  # 40 blocks of 8 kB
    graph = lower(_plan(y, workers=2), generate_in_place=True)
    limit = 4 * 40_000  # a batch's budget: 40 kB, two blocks of working set (value + input)
    budget = batch_budget(limit, 1)
    assert budget == 40_000
    got = plan_batches(graph, workers=2, threads=1, memory_limit=limit)
    assert got.budget == budget
    assert got.batches and all(b.nbytes <= budget for b in got.batches)
    # each block task reads nothing made by a task (arange made in place): 8 kB each
    assert all(len(b.tids) == 5 for b in got.batches)
    assert len(got.batches) == 8  # 20 blocks per worker, 5 per batch
    # no limit: balance alone (two per worker)
    assert len(plan_batches(graph, workers=2, threads=1, memory_limit=None).batches) == 4


def test_a_task_over_its_budget_runs_alone():
    y = la.sin(la.arange(40_000.0, chunks=1_000))
    graph = lower(_plan(y, workers=2), generate_in_place=True)
    got = plan_batches(graph, workers=2, threads=1, memory_limit=4 * 1_000)
    assert got.batches == [] and (got.batch_of == -1).all()


def test_ordered_and_elsewhere_made_stages_stay_one_task_per_block():
    x = la.asarray(np.arange(400.0), chunks=10)
    y = la.sin(x) + 1
    graph = lower(_plan(y, workers=2), generate_in_place=True)
    sources = {i for i, s in enumerate(graph.stages) if s.kind == "source"}
    got = plan_batches(graph, workers=2, threads=1, memory_limit=None, made_elsewhere=sources)
    assert got.batches and all(b.stage not in sources for b in got.batches)
    everything = set(range(len(graph.stages)))
    none = plan_batches(graph, workers=2, threads=1, memory_limit=None, made_elsewhere=everything)
    assert none.batches == []
    # the sample sort's exchange orders its tasks: none of its stages is batched
    s = la.sort(la.random.random(4_000, chunks=250, seed=1))
    graph = lower(_plan(s, workers=2), generate_in_place=True)
    ordered = {graph.tasks[t].stage for t in graph.schedule.priority}
    assert ordered
    got = plan_batches(graph, workers=2, threads=1, memory_limit=None)
    assert not {b.stage for b in got.batches} & ordered


# ------------------------------------------------------------------ on a cluster


def test_a_dask_task_per_batch(dask_ex):
    y = la.sin(la.arange(4_000.0, chunks=10)) * 2  # 400 blocks
    plan = _plan(y, workers=2)
    plan = plan.replace(workers=dask_ex.plan_context()["workers"])
    (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.sin(np.arange(4_000.0)) * 2)
    stats = dask_ex.last_stats.extra
    name = plan.outputs[0]
    assert stats["batches"] == {name: 4}
    assert stats["dask_tasks"] == {name: 4}  # tasks submitted for the stage: its batches
    # every block ran, once, counted as a task on its worker
    assert sum(w["tasks"] for w in stats["workers"].values()) == 400
    with config.set({"dask.batch-tasks": False}):
        (again,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_array_equal(again, got)
    assert dask_ex.last_stats.extra["dask_tasks"] == {name: 400}


def test_batches_under_a_memory_limit_fit_their_budget(dask_ex):
    y = la.sin(la.arange(40_000.0, chunks=1_000)) * 2  # 40 blocks of 8 kB
    plan = _plan(y, workers=2)
    plan = plan.replace(workers=dask_ex.plan_context()["workers"])
    with config.set({"memory-limit": "480kB"}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.sin(np.arange(40_000.0)) * 2)
    stats = dask_ex.last_stats.extra
    # a batch holds its outputs until it ends: a worker thread's four batches share what the
    # plan's predicted peak per worker leaves of the limit, and together take no more than
    # the one task's working set the prediction counts per thread
    est = estimate(plan, 1, 2, gathered=False, temporaries=False)
    left = 480_000 - est.peak
    floor = 4 * WORKER_BATCH_FLOOR  # what a running thread's batches may take at least
    assert stats["batch_budget"] == max(floor, min(left, est.per_task + est.io_buffer)) // 4
    blocks_per_batch = max(1, stats["batch_budget"] // 8_000)  # 8 kB out, made in place
    batches = stats["batches"][plan.outputs[0]]
    assert batches == stats["dask_tasks"][plan.outputs[0]]
    assert batches >= 40 // blocks_per_batch


def test_blocks_read_across_workers_and_persisted_blocks_keep_their_own_keys(dask_ex):
    """A stage reading a batch planned on the other worker gets single blocks (getters);
    persisted blocks are futures of their own, readable by a later compute."""
    x = la.sin(la.arange(2_000.0, chunks=10))  # 200 blocks, alternating workers
    y = x[::-1] + 1  # block k reads x's block 199 - k: planned on the other worker
    plan = _plan(y, workers=2)
    plan = plan.replace(workers=dask_ex.plan_context()["workers"])
    (got,) = dask_ex.execute(plan, plan.outputs)
    want = np.sin(np.arange(2_000.0))[::-1] + 1
    np.testing.assert_allclose(got, want)
    (store,) = dask_ex.persist(plan, plan.outputs)
    assert len(store.blocks) == 200 and len({f.key for f in store.blocks.values()}) == 200
    back = dask_ex.local_store(store)
    np.testing.assert_allclose(np.concatenate([back.blocks[(i,)] for i in range(200)]), want)


class _KillAfter:
    """Progress that SIGKILLs worker process ``pid`` once ``blocks`` blocks are done."""

    def __init__(self, pid, blocks):
        self.pid, self.blocks = pid, blocks
        self.total = self.done = 0
        self.killed_at = None

    def start(self, total):
        self.total = total

    def advance(self, n=1):
        self.done += n
        if self.killed_at is None and self.done >= self.blocks:
            os.kill(self.pid, signal.SIGKILL)
            self.killed_at = self.done

    def finish(self):
        pass


def test_a_worker_killed_while_batches_run_loses_nothing(dask_ex):
    # 64 rows of 400k random values: sin^2 + cos^2 is 1, so each row sums to 400k
    n = 400_000
    x = la.random.random((64, n), chunks=(1, n), seed=5)
    rows = (la.sin(x) ** 2 + la.cos(x) ** 2).sum(axis=1)
    plan = _plan(rows, workers=2)
    workers = dask_ex.plan_context()["workers"]
    plan = plan.replace(workers=workers)
    client = dask_ex.client()
    pids = client.run(os.getpid)
    progress = _KillAfter(pids[workers[0]], blocks=1)
    with config.set({"dask.placement": "soft"}):
        (got,) = dask_ex.execute(plan, plan.outputs, progress)
    np.testing.assert_allclose(got, np.full(64, float(n)), rtol=1e-9)
    assert progress.killed_at is not None and progress.killed_at < progress.total
    stats = dask_ex.last_stats.extra
    assert sum(stats["batches"].values()) >= 4 and stats["retries"] == 0
    assert progress.done == progress.total
    deadline = time.monotonic() + 20  # the nanny brings a fresh worker back
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids[workers[0]] not in client.run(os.getpid).values()


@pytest.mark.parametrize("batch", [True, False])
def test_a_reduction_with_tree_parts_is_the_same_either_way(dask_ex, batch):
    data = np.random.default_rng(0).standard_normal((300, 300))
    y = la.asarray(data, chunks=30).sum(axis=0) * 2
    with config.set({"dask.batch-tasks": batch}):
        got = y.compute(executor="dask")
    np.testing.assert_allclose(got, data.sum(axis=0) * 2)


def test_a_trees_combine_steps_are_batched_by_level():
    """A reduction the place pass made a tree: its combine steps batch per worker and level,
    and no batch holds a task that reads another of its tasks."""
    y = la.random.random(200_000, chunks=100, seed=3).sum()  # 2,000 partials, one block
    context = {
        "n_workers": 2,
        "workers": ("tcp://w:0", "tcp://w:1"),
        "hosts": ("h", "h"),
        "threads": 1,
        "memory_limit": 1 << 30,
    }
    with config.set({"array.min-chunk-size": 0}):
        plan = api.make_plan([y._expr], "dask", tuple(config.get("optimize.passes")), extra=context)
    if not any(s.placement and s.placement.tree for s in plan.stages.values()):
        pytest.skip("the placement pass made no tree stage")
    graph = lower(plan, generate_in_place=True)
    got = plan_batches(graph, workers=2, threads=1, memory_limit=1 << 30)
    combines = [b for b in got.batches if b.kind == TaskKind.COMBINE]
    assert combines
    for b in got.batches:
        mine = set(b.tids)
        assert not any(mine.intersection(graph.tasks[t].deps) for t in b.tids)
    lone = int((got.batch_of < 0).sum())
    assert len(got.batches) + lone < graph.kinds()["COMBINE"]  # far fewer Dask tasks


def test_a_batchs_tasks_travel_as_columns_and_come_back_equal():
    import pickle

    from lazyarr.executors.dask_tasks import TaskColumns

    x = la.asarray(np.arange(600.0).reshape(20, 30), chunks=(5, 7))
    y = (x @ x.T).sum(axis=0)
    graph = lower(_plan(y, workers=2), generate_in_place=True)
    fields = ("kind", "stage", "index", "part", "region", "inputs", "regions")
    kinds = {}
    for t in graph.tasks:
        kinds.setdefault((t.stage, t.kind), []).append(t)
    assert len(kinds) >= 2
    for tasks in kinds.values():
        back = pickle.loads(pickle.dumps(TaskColumns(tasks)))
        assert type(back) is tuple and len(back) == len(tasks)
        for a, b in zip(tasks, back, strict=True):
            assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
    assert pickle.loads(pickle.dumps(TaskColumns())) == ()


def test_a_batch_reaches_the_scheduler_as_one_bytes_argument(dask_ex, monkeypatch):
    """The scheduler (in this process, for a LocalCluster) would unpickle and pickle again
    every task object it is sent: a batch's tasks travel packed, as bytes."""
    from lazyarr.executors.dask_graph import DaskGraph
    from lazyarr.executors.dask_tasks import batch_fn
    from lazyarr.optimize.tasks import Task

    sent = []
    original = DaskGraph.send

    def recording(self, client, keys):
        sent.extend(t for layer in self._layers.values() for t in layer.values())
        return original(self, client, keys)

    monkeypatch.setattr(DaskGraph, "send", recording)
    y = la.sin(la.arange(4_000.0, chunks=10)) * 2  # 400 blocks
    plan = _plan(y, workers=2)
    plan = plan.replace(workers=dask_ex.plan_context()["workers"])
    (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.sin(np.arange(4_000.0)) * 2)
    batches = [t for t in sent if t.func is batch_fn]
    assert len(batches) == dask_ex.last_stats.extra["batches"][plan.outputs[0]] == 4

    def objects(arg):
        if isinstance(arg, tuple | list):
            for a in arg:
                yield from objects(a)
        else:
            yield arg

    for t in batches:
        args = list(objects(t.args))
        assert sum(type(a) is bytes for a in args) == 1
        assert not any(isinstance(a, Task) for a in args)


def test_a_batch_runs_its_tasks_with_the_cycle_collector_off():
    """The tasks of a batch make acyclic objects only; a collection their count triggers
    would scan the worker's heap: collector off in the call, as it was after."""
    import gc

    from lazyarr.executors.dask_tasks import batch_fn, pack_batch

    graph = lower(_plan(la.sin(la.arange(40.0, chunks=10)), workers=2), generate_in_place=True)
    tasks = [t for t in graph.tasks if t.kind == TaskKind.BLOCK]

    class Payload:
        class stage:
            name = "s"

        def __init__(self):
            self.seen = []

        def run(self, task, values):
            self.seen.append(gc.isenabled())
            return task.index

    payload = Payload()
    assert gc.isenabled()
    got = batch_fn(payload, pack_batch(tasks, tuple(() for _ in tasks)), ())
    assert list(got) == [t.index for t in tasks]
    assert payload.seen == [False] * len(tasks) and gc.isenabled()


def test_the_workers_report_per_stage_not_per_block(dask_ex):
    """What the client reads back after a compute: per worker, per stage, a count, summed
    seconds and a span (four numbers, whatever the number of blocks)."""
    from lazyarr.executors import dask_stats

    y = la.sin(la.arange(4_000.0, chunks=10)) * 2  # 400 blocks
    plan = _plan(y, workers=2)
    plan = plan.replace(workers=dask_ex.plan_context()["workers"])
    dask_ex.execute(plan, plan.outputs)
    snaps = dask_stats.snapshot(dask_ex.client())
    (name,) = plan.outputs
    assert {n for s in snaps.values() for n in s["stages"]} == {name}
    assert sum(s["stages"][name][0] for s in snaps.values()) == 400
    for s in snaps.values():
        count, busy, start, stop = s["stages"][name]
        assert count > 0
        assert 0 < busy <= stop - start
    busy = dask_stats.stage_busy(snaps)[name]
    assert busy[1] == 400 and busy[0] > 0
    assert dask_ex.last_stats.stage_seconds[name] >= max(
        s["stages"][name][3] - s["stages"][name][2] for s in snaps.values()
    )
