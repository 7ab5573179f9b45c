"""The ``dask`` executor sends a compute as one graph, with the plan's worker restrictions.

:class:`~lazyarr.executors.dask_graph.DaskGraph` on its own (layers,
annotations, references), then on a real LocalCluster (2 processes x 1
thread, loopback, closed at the end of the module) with a scheduler plugin
that records, for every graph the scheduler accepts, each new task's
worker restrictions and dependencies as the scheduler holds them.
"""

from __future__ import annotations

import gc
import operator
import pickle
import time

import numpy as np
import pytest
import test_conformance as conformance
from dask.task_spec import TaskRef
from distributed import Future, SchedulerPlugin

import lazyarr as la
from lazyarr import api, config
from lazyarr.executors import dask as dask_executor
from lazyarr.executors import dask_stats, dask_tasks
from lazyarr.executors.dask_batches import plan_batches
from lazyarr.executors.dask_graph import DaskGraph
from lazyarr.executors.dask_run import progress_ticks
from lazyarr.optimize.fanout import handed_off
from lazyarr.optimize.lower import lower
from lazyarr.optimize.placement import combine_schedule, host_ids
from lazyarr.optimize.placement.planner import fan_in

# -------------------------------------------------------------- DaskGraph alone


def test_tasks_are_grouped_into_one_annotated_layer_per_restriction():
    g = DaskGraph("t")
    a = g.add("a", operator.neg, 1, worker="tcp://w:1", loose=True)
    b = g.add("b", operator.add, a, 2, worker="tcp://w:1", loose=False)
    c = g.add("c", operator.add, a, b, worker="tcp://w:2", loose=False)
    d = g.add("d", operator.neg, c, worker=None, loose=True)  # no worker: loose ignored
    assert isinstance(d, TaskRef) and d.key == "d" and len(g) == 4 and "c" in g
    hlg = g.high_level_graph()
    hlg.validate()  # the layer dependencies are the ones the tasks imply
    layers = {
        tuple(sorted(layer)): (layer.annotations, deps)
        for (name, layer), deps in zip(hlg.layers.items(), hlg.dependencies.values())
    }
    names = {tuple(sorted(layer)): name for name, layer in hlg.layers.items()}
    assert layers == {
        ("a",): ({"workers": ["tcp://w:1"], "allow_other_workers": True}, set()),
        ("b",): ({"workers": ["tcp://w:1"]}, {names[("a",)]}),
        ("c",): ({"workers": ["tcp://w:2"]}, {names[("a",)], names[("b",)]}),
        ("d",): (None, {names[("c",)]}),
    }
    assert hlg.layers[names[("c",)]]["c"].dependencies == {"a", "b"}
    # the tasks run as written
    vals: dict = {}
    for k in "abcd":
        (layer,) = [lay for lay in hlg.layers.values() if k in lay]
        vals[k] = layer[k]({d: vals[d] for d in layer[k].dependencies})
    assert vals == {"a": -1, "b": 1, "c": 0, "d": 0}


def test_priorities_are_per_key_in_their_layers_annotation():
    """One layer per restriction, whatever the priorities (a depth-first order gives each
    task its own); the scheduler calls the annotation with each key (None: Dask's order)."""
    g = DaskGraph("t")
    g.add("a", operator.neg, 1, worker="tcp://w:1", loose=False, priority=2)
    g.add("b", operator.neg, 1, worker="tcp://w:1", loose=False)
    g.add("e", operator.neg, 1, worker="tcp://w:1", loose=False, priority=5)
    g.add("c", operator.neg, 1, worker=None, loose=False, priority=1)
    g.add("d", operator.neg, 1, worker=None, loose=True)
    hlg = g.high_level_graph()
    layers = {tuple(sorted(layer)): layer.annotations for layer in hlg.layers.values()}
    assert set(layers) == {("a", "b", "e"), ("c", "d")}
    on_w, anywhere = layers[("a", "b", "e")], layers[("c", "d")]
    assert on_w["workers"] == ["tcp://w:1"] and "workers" not in anywhere
    by_key = {k: f["priority"](k) for f, ks in ((on_w, "abe"), (anywhere, "cd")) for k in ks}
    assert by_key == {"a": 2, "b": None, "e": 5, "c": 1, "d": None}
    assert pickle.loads(pickle.dumps(on_w["priority"]))("e") == 5  # sent to the scheduler


def test_a_key_is_added_once_and_only_its_tasks_can_be_sent():
    g = DaskGraph("t")
    g.add("a", operator.neg, 1, worker=None, loose=False)
    with pytest.raises(ValueError, match="already in the graph"):
        g.add("a", operator.neg, 2, worker=None, loose=False)
    with pytest.raises(KeyError, match="not tasks of this graph"):
        g.send(None, ["a", "zzz"])
    assert g.send(None, []) == {}  # nothing to send: no client needed


# -------------------------------------------------------------- on a cluster


class GraphLog(SchedulerPlugin):
    """For each graph the scheduler takes: every new task's restrictions and dependencies.

    The scheduler also hands plugins the tasks a graph reads that an earlier
    graph made (persisted blocks): those are left out, as is data (no run spec).
    """

    name = "lazyarr-test-graph-log"

    def __init__(self):
        self.graphs = []
        self.seen = set()
        self.priorities = {}  # key: the user priority the scheduler gave its task

    def update_graph(self, scheduler, *, tasks, **kwargs):
        seen = {}
        for key in tasks:
            ts = scheduler.tasks.get(key)
            if ts is not None and ts.run_spec is not None and key not in self.seen:
                self.seen.add(key)
                seen[key] = (
                    tuple(sorted(ts.worker_restrictions or ())),
                    bool(ts.loose_restrictions),
                    frozenset(d.key for d in ts.dependencies),
                )
                self.priorities[key] = -ts.priority[0]
        self.graphs.append(seen)


def _graphs(dask_scheduler):
    return dask_scheduler.plugins[GraphLog.name].graphs


@pytest.fixture
def graph_log(dask_ex):
    """A function returning the graphs the scheduler took since the test began."""
    client = dask_ex.client()
    dask_ex.plan_context()  # first contact: the cost model's probe submits its own tasks
    client.register_plugin(GraphLog(), name=GraphLog.name)
    try:
        yield lambda: client.run_on_scheduler(_graphs)
    finally:
        client.unregister_scheduler_plugin(GraphLog.name)


def _priorities(dask_scheduler):
    return dask_scheduler.plugins[GraphLog.name].priorities


def _split(key, stages):
    """``(stage, block index, part suffix)`` of a block task's key (``stage-i_j-p0-token``)."""
    body = key.rsplit("-", 1)[0]
    name = max((n for n in stages if body.startswith(n + "-")), key=len)
    index, _, part = body[len(name) + 1 :].partition("-")
    return name, tuple(int(i) for i in index.split("_") if i), part


def _planned(plan, stage, index, part):
    """The worker number the plan gives a block, tree part (``p<k>``) or combine step (``c<j>``)."""
    if not part:
        return int(stage.worker[index])
    parts = stage.placement.parts[index].tolist()
    if part[0] == "p":
        return parts[int(part[1:])]
    host_of = host_ids(plan.hosts, len(plan.workers))
    steps = combine_schedule(parts, int(stage.worker[index]), host_of, fan_in(stage))
    return steps[int(part[1:])][-1]


def _placed_plan(dask_ex, y):
    passes = tuple(config.get("optimize.passes"))
    if "place" not in passes:
        pytest.skip("no placement pass in this pipeline")
    return api.make_plan([y._expr], "dask", passes, extra=dask_ex.plan_context())


X = np.random.default_rng(3).standard_normal((400, 400))
CASES = {
    "sum": (lambda x: x.sum(axis=0), lambda x: X.sum(axis=0)),
    "matmul": (lambda x: x @ x.T, lambda x: X @ X.T),
}


@pytest.mark.parametrize("placement", ["soft", "hard", "scheduler"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_graph_carries_the_plans_worker_for_every_task(case, placement, dask_ex, graph_log):
    """A task per block (batches off): each block task's restriction is its planned worker."""
    lazy, want = CASES[case]
    y = lazy(la.asarray(X, chunks=100)) + 1  # 16 scattered blocks of 80 kB
    plan = _placed_plan(dask_ex, y)
    tree = {n for n, s in plan.stages.items() if (s.placement and s.placement.tree)}
    assert bool(tree) == (case == "sum")
    workers = plan.workers
    with config.set({"dask.placement": placement, "dask.batch-tasks": False}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, want(X) + 1)
    (graph,) = graph_log()  # one update-graph for the whole compute
    computed = {n: s for n, s in plan.stages.items() if s.kind != "source"}
    payloads = {k for k in graph if k.startswith(dask_stats.PAYLOAD_PREFIX)}
    assert payloads == set()  # small payloads ride inside the tasks
    blocks = set(graph)
    # every block of every computed stage is in it, but those made inside their one
    # reader's task (handed off: the matmul's, read by the + 1), and tree stages add parts
    # and steps
    inside = {
        n for n in computed if n not in plan.outputs and n not in tree and handed_off(plan, n)
    }
    assert {n.split("-")[0] for n in inside} == ({"matmul"} if case == "matmul" else set())
    assert {_split(k, computed)[:2] for k in blocks if not _split(k, computed)[2]} == {
        (n, i) for n, s in computed.items() if n not in inside for i in np.ndindex(*s.numblocks)
    }
    assert len(blocks) > sum(s.nblocks for s in computed.values()) or not tree
    for k in blocks:
        name, index, part = _split(k, computed)
        restricted, loose, _ = graph[k]
        if placement == "scheduler":
            assert (restricted, loose) == ((), False), k
        else:
            w = workers[_planned(plan, computed[name], index, part)]
            assert (restricted, loose) == ((w,), placement == "soft"), k


@pytest.mark.parametrize("placement", ["soft", "hard", "scheduler"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_batches_carry_the_plans_worker_of_all_their_tasks(case, placement, dask_ex, graph_log):
    """Batches on: a Dask task per batch (each restricted to the one worker all its tasks
    are planned on), the other tasks one each, as above; the values are the same."""
    lazy, want = CASES[case]
    y = lazy(la.asarray(X, chunks=100)) + 1
    plan = _placed_plan(dask_ex, y)
    info = dask_ex.plan_context()
    graph = lower(plan, generate_in_place=True)
    made_elsewhere = {si for si, s in enumerate(graph.stages) if s.kind == "source"}
    batches = plan_batches(
        graph,
        workers=info["n_workers"],
        threads=info["threads"],
        memory_limit=info["memory_limit"],
        made_elsewhere=made_elsewhere,
    )
    assert batches.batches  # the case has stages with several tasks per worker
    with config.set({"dask.placement": placement}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, want(X) + 1)
    (sent,) = graph_log()
    stats = dask_ex.last_stats.extra
    assert stats["batches"] == batches.per_stage(graph)
    batch_keys = {k for k in sent if "-batch" in k}
    assert len(batch_keys) == len(batches.batches)
    for k in batch_keys:
        name, number = k.rsplit("-", 1)[0].rsplit("-batch", 1)
        batch = batches.batches[int(number)]
        assert graph.stages[batch.stage].name == name
        assert {graph.tasks[t].worker for t in batch.tids} == {batch.worker}
        restricted, loose, _ = sent[k]
        if placement == "scheduler" or batch.worker < 0:
            assert (restricted, loose) == ((), False), k
        else:
            assert (restricted, loose) == ((plan.workers[batch.worker],), placement == "soft")
    # a stage's Dask tasks: its batches, its lone tasks and getters, never a task per block
    for name, n in stats["dask_tasks"].items():
        lone = sum(
            1
            for t, b in zip(graph.tasks, batches.batch_of)
            if graph.stages[t.stage].name == name and b < 0
        )
        assert n >= batches.per_stage(graph).get(name, 0) + lone


def test_without_a_plan_for_workers_tasks_are_unrestricted(dask_ex, graph_log):
    y = la.sin(la.arange(10.0, chunks=3)) * 2
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    with config.set({"dask.placement": "hard"}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.sin(np.arange(10.0)) * 2)
    (graph,) = graph_log()
    # arange, sin, * 2: four blocks each (payloads inside); sin's tasks make their
    # arange blocks themselves, and run inside the * 2's tasks (each block read once)
    assert len(plan.stages) == 3
    assert len(graph) == 4
    assert {v[:2] for v in graph.values()} == {((), False)}


def test_tasks_run_in_the_ready_order_and_blocks_read_once_inside_their_reader(dask_ex, graph_log):
    """Two stored stages read by one (``a + c``): each task's Dask priority is the
    schedule's ready order (a depth-first walk: a priority of its own), as the numba
    executor's order; the sum's blocks, read once each by the * 2, are made inside its
    tasks (no key, no stored block). Before, Dask's own order ran staged reads of a pencil
    rechunk ahead of their writes (3.7 blocks waiting on a worker)."""
    x = la.asarray(np.arange(40.0), chunks=10)
    y = (la.map_blocks(np.sin, x) + la.map_blocks(np.cos, x)) * 2
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    with config.set({"dask.batch-tasks": False}):
        (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, (np.sin(np.arange(40.0)) + np.cos(np.arange(40.0))) * 2)
    (graph,) = graph_log()
    priorities = dask_ex.client().run_on_scheduler(_priorities)
    lowered = lower(plan, generate_in_place=True)
    order = lowered.schedule.ready
    names = [s.name for s in lowered.stages]
    computed = {n: s for n, s in plan.stages.items() if s.kind != "source"}
    made = {}
    for k in graph:
        name, index, _ = _split(k, computed)
        made[k] = int(order[lowered.producers[names.index(name)][index]])
    assert {k: priorities[k] for k in graph} == made
    assert len(set(made.values())) == len(made)  # depth-first: one rank per task
    summed = [n for n in computed if plan.readers[n] and handed_off(plan, n)]
    assert len(summed) == 1 and not any(_split(k, computed)[0] == summed[0] for k in graph)
    assert len(graph) == 3 * 4  # sin, cos and * 2: four blocks each


def test_a_big_payload_is_a_task_each_worker_fetches(dask_ex, graph_log, monkeypatch):
    x = la.asarray(np.arange(40.0), chunks=10)
    y = la.exp(x) * 2 + (x @ x)
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify", "fuse"))
    computed = [n for n, s in plan.stages.items() if s.kind != "source"]
    monkeypatch.setattr(dask_tasks, "INLINE_BYTES", 0)  # every payload is "big"
    (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.exp(np.arange(40.0)) * 2 + np.arange(40.0) @ np.arange(40.0))
    (graph,) = graph_log()
    payloads = {k for k in graph if k.startswith(dask_stats.PAYLOAD_PREFIX)}
    assert len(payloads) == len(computed)
    assert all(graph[k][:2] == ((), False) for k in payloads)
    blocks = [k for k in graph if k not in payloads]
    # every task of a computed stage depends on its stage's payload task
    for k in blocks:
        name = max((n for n in computed if k.startswith(n + "-")), key=len)
        assert any(d.startswith(dask_stats.PAYLOAD_PREFIX + name + "-") for d in graph[k][2]), k


def test_inline_payloads_unpickle_once_per_process():
    x = la.asarray(np.arange(6.0), chunks=3)
    (stage,) = [
        s for s in api.make_plan([(x + 1)._expr], "numpy", ()).stages.values() if s.kind != "source"
    ]
    payload = dask_tasks.StagePayload(dask_tasks.detached(stage), (), "lazyarr-stage-test-token")
    assert payload.inline
    first = pickle.loads(pickle.dumps(payload))
    again = pickle.loads(pickle.dumps(payload))
    assert first is again and first is not payload
    assert first.stage.expr.key == payload.stage.expr.key
    assert first.code() is again.code()  # kernels looked up once
    other = dask_tasks.StagePayload(dask_tasks.detached(stage), (), "lazyarr-stage-test-other")
    assert pickle.loads(pickle.dumps(other)) is not first
    untokened = dask_tasks.StagePayload(dask_tasks.detached(stage))
    assert not untokened.inline
    assert pickle.loads(pickle.dumps(untokened)) is not pickle.loads(pickle.dumps(untokened))


def test_persisted_and_scattered_inputs_are_dependencies_of_the_graph(dask_ex, graph_log):
    p = (la.arange(12.0, chunks=4) * 3).persist(executor="dask")
    (stage,) = api.make_plan([p._expr], "dask", ()).stages.values()
    persisted = stage.expr.op.store.blocks
    assert all(isinstance(f, Future) for f in persisted.values())
    data = np.linspace(0.0, 1.0, 12)
    y = p + la.asarray(data, chunks=5)  # block boundaries differ: tasks read two blocks
    before = len(graph_log())
    got = y.compute(executor="dask")
    np.testing.assert_allclose(got, np.arange(12.0) * 3 + data)
    graphs = graph_log()[before:]
    assert len(graphs) == 1
    (graph,) = graphs
    deps = set().union(*(d for _, _, d in graph.values()))
    outside = deps - set(graph)
    # the persisted blocks by their keys, the scattered ones (3 blocks of 5, 5, 2: each
    # alone, or the blocks planned on one worker in one slab)
    scattered = outside - {f.key for f in persisted.values()}
    assert outside - scattered == {f.key for f in persisted.values()}
    assert len(scattered) in (2, 3) and all(k.startswith("array-") for k in scattered)
    # the persisted inputs stay: computed again, same answer
    assert all(f.status == "finished" for f in persisted.values())
    np.testing.assert_allclose((p - 1).compute(executor="dask"), np.arange(12.0) * 3 - 1)


def test_tiny_blocks_of_a_users_array_travel_in_slabs(dask_ex, graph_log):
    """4,000 blocks of 80 bytes: a few scattered slabs (keys grow with bytes, not blocks)."""
    data = np.linspace(0.0, 1.0, 40_000)
    x = la.asarray(data, chunks=10)
    before = len(graph_log())
    got = (la.sin(x) * 2 + x).sum(axis=0).compute(executor="dask")
    np.testing.assert_allclose(got, (np.sin(data) * 2 + data).sum(), rtol=1e-12)
    (graph,) = graph_log()[before:]
    deps = set().union(*(d for _, _, d in graph.values()))
    scattered = deps - set(graph)
    assert scattered and all(k.startswith("array-") and "-slab-" in k for k in scattered)
    # 320 kB over two workers: one slab each (a slab holds up to dask.SLAB_BYTES)
    assert len(scattered) <= 2 * -(-data.nbytes // dask_executor.SLAB_BYTES)
    # a block too big for a slab travels alone
    big = la.asarray(np.arange(40_000.0), chunks=20_000)
    np.testing.assert_array_equal((big + 1).compute(executor="dask"), np.arange(40_000.0) + 1)
    (graph,) = graph_log()[before + 1 :]
    scattered = set().union(*(d for _, _, d in graph.values())) - set(graph)
    assert len(scattered) == 2 and not any("-slab-" in k for k in scattered)


def test_a_big_graph_is_sent_without_dasks_big_graph_warning(dask_ex):
    """lazyarr sends a compute as one graph by design; Dask's advice for big graphs does not
    apply (warnings are errors here: the threshold is lowered so this small graph is 'big')."""
    import dask

    x = la.asarray(np.arange(400.0), chunks=10)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1kB"}):
        got = (x * 2).sum().compute(executor="dask")
    assert got == np.arange(400.0).sum() * 2


def test_persisting_scattered_data_alone_sends_no_graph(dask_ex, graph_log):
    data = np.arange(7.0)
    p = la.asarray(data, chunks=3).persist(executor="dask")
    (store,) = [s.expr.op.store for s in api.make_plan([p._expr], "dask", ()).stages.values()]
    assert store.executor == "dask" and len(store.blocks) == 3
    assert graph_log() == []
    np.testing.assert_array_equal(p.compute(executor="dask"), data)


def test_an_error_in_a_tree_part_is_raised_with_its_traceback(dask_ex):
    x = la.asarray(np.arange(400.0 * 400).reshape(400, 400) % 3, chunks=100)
    y = (x // 0.0).sum(axis=0)
    plan = _placed_plan(dask_ex, y)
    if not any((s.placement and s.placement.tree) for s in plan.stages.values()):
        pytest.skip("the placement pass made no tree stage")
    with (
        config.set({"dask.kernels": "numpy"}),  # NumPy kernels honour ``np.errstate``
        np.errstate(divide="raise", invalid="raise"),
        pytest.raises(FloatingPointError) as info,
    ):
        dask_ex.execute(plan, plan.outputs)
    # the task's own traceback (a lone task's or its batch's)
    assert {"task_fn", "batch_fn"} & {entry.name for entry in info.traceback}
    assert dask_ex.last_stats is None
    del info  # its traceback's frames hold this run's futures
    gc.collect()
    # cancelled: nothing of this run is left on the scheduler (parts, steps, payloads)
    prefixes = (*plan.stages, *(dask_stats.PAYLOAD_PREFIX + n for n in plan.stages))
    assert _left_on_scheduler(dask_ex.client(), prefixes) == []


def _left_on_scheduler(client, prefixes):
    def ours(dask_scheduler, prefixes=prefixes):
        return [k for k in dask_scheduler.tasks if isinstance(k, str) and k.startswith(prefixes)]

    deadline = time.monotonic() + 10
    while client.run_on_scheduler(ours) and time.monotonic() < deadline:
        time.sleep(0.05)
    return client.run_on_scheduler(ours)


@pytest.fixture
def sent(monkeypatch):
    """The keys each graph sent to the cluster asked to keep, one list per send."""
    keys: list[list] = []
    send = DaskGraph.send

    def recording(self, client, wanted):
        keys.append(list(wanted))
        return send(self, client, wanted)

    monkeypatch.setattr(DaskGraph, "send", recording)
    return keys


@pytest.mark.parametrize("watched", [True, False])
def test_the_client_holds_every_block_only_while_progress_is_watched(watched, dask_ex, sent):
    """Batches off: a key per block; with batches the test below counts batches."""
    x = la.random.random((6, 6), chunks=(2, 3), seed=9)
    y = la.exp(x).sum(axis=1)
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    progress = conformance.Recorder() if watched else None
    with config.set({"dask.batch-tasks": False}):
        (got,) = dask_ex.execute(plan, plan.outputs, progress)
    np.testing.assert_allclose(got, np.exp(x.compute(executor="numpy")).sum(axis=1))
    (keys,) = sent
    out = plan.stages[plan.outputs[0]]
    # x's blocks are drawn inside exp's tasks, and exp's inside the partials that read
    # them (each block read once): no key of their own
    assert {"-".join(k.split("-")[:2]) for k in keys} == {out.name}
    # watched: a key per task the bar counts (the sum's partials, each counting its exp
    # block too) and the results; the bar counts as numba does: exp's 6 blocks, the 6 the
    # partials read
    graph = lower(plan, generate_in_place=True)
    ticks = progress_ticks(graph)
    counted = {t for t, n in enumerate(ticks) if n and graph.tasks[t].stage == graph.outputs[0]}
    counted |= set(graph.producers[-1].ravel().tolist())
    assert len(keys) == (len(counted) if watched else out.nblocks)
    if watched:
        assert progress.done == progress.total == sum(ticks) == 12 and progress.finished


def test_progress_counts_every_block_of_a_batch(dask_ex, sent):
    """Batches on: the client holds a key per batch, yet progress counts every block."""
    x = la.random.random((6, 60), chunks=(1, 3), seed=9)
    y = la.exp(x).sum(axis=1)
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    progress = conformance.Recorder()
    (got,) = dask_ex.execute(plan, plan.outputs, progress)
    np.testing.assert_allclose(got, np.exp(x.compute(executor="numpy")).sum(axis=1))
    (keys,) = sent
    graph = lower(plan, generate_in_place=True)
    counted = sum(progress_ticks(graph))  # exp's 120 blocks, the 120 the partials read
    batches = dask_ex.last_stats.extra["batches"]
    assert sum(batches.values()) >= 2 * 2  # two workers of one thread: two batches each
    assert len(keys) < graph.nblocks / 4
    assert progress.done == progress.total == counted == 240 and progress.finished


def _sin(b):
    return np.sin(b)


def test_a_batchs_getters_run_at_their_blocks_rank(dask_ex, graph_log):
    """A block made in a batch and read on the other worker reaches its reader through a
    getter task: the getter takes its block's rank, so a worker hands a finished batch's
    blocks on before it makes the stage's next batch. Before, getters had no priority and
    ran after every batch of the stage (a resample's worker held 145 MiB of blocks for 70)."""
    x = la.random.random(640, chunks=10, seed=1)
    y = la.map_blocks(_sin, x, dtype=x.dtype).rechunk(130) * 2
    plan = api.make_plan([y._expr], "dask", ("cse", "simplify"))
    (got,) = dask_ex.execute(plan, plan.outputs)
    np.testing.assert_allclose(got, np.sin(la.random.random(640, chunks=10, seed=1).compute()) * 2)
    (graph,) = graph_log()
    priorities = dask_ex.client().run_on_scheduler(_priorities)
    lowered = lower(plan, generate_in_place=True)
    order = lowered.schedule.ready
    names = [s.name for s in lowered.stages]
    (sines,) = [n for n, s in plan.stages.items() if s.expr.op.label() == "_sin"]
    getters = [k for k in graph if k.startswith(sines + "-") and "-batch" not in k]
    assert getters  # blocks of a batch read on the other worker
    for k in getters:
        _, index, _ = _split(k, [sines])
        assert priorities[k] == int(order[lowered.producers[names.index(sines)][index]]), k
