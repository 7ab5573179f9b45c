"""The cost model's seconds (``optimize/timing.py``) on hand-set speeds: closed forms.

Speeds are chosen so each term is a round number: 1 GB/s of memory, 100 M
cheap flops/s, 1 G matmul flops/s. A stage's predicted seconds are its bytes
touched over the memory bandwidth plus its flops over the rates; on a cluster
the busiest worker's share over its threads plus its bytes in over the
network, or the scheduler's handing out when longer, plus a round trip per
combine level.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph import build
from lazyarr.optimize.cost import RANDOM_FLOPS, UNIFORM_FLOPS
from lazyarr.optimize.passes import layout, memory, place
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.plan import Placement, Plan
from lazyarr.optimize.timing import (
    DEFAULT_COSTS,
    Costs,
    Speed,
    hop_residuals,
    made_in_readers,
    median_ratio,
    placement_weights,
    remake_seconds,
    stage_seconds,
    stage_work,
    task_residuals,
)

SPEED = Speed(memory_bandwidth=1e9, flop_rate=1e8, matmul_rate=1e9)
COSTS = Costs((SPEED,), measured=True)


def plan_of(*arrays, passes=("cse", "simplify", "fuse"), ctx=None) -> Plan:
    return optimize(Plan.from_graph(build([a._expr for a in arrays])), passes, ctx or PassContext())


def only(plan: Plan, prefix: str):
    (s,) = [s for n, s in plan.stages.items() if n.startswith(prefix)]
    return s


def test_speeds_must_be_positive():
    with pytest.raises(ValueError, match="memory_bandwidth"):
        Speed(0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="matmul_rate"):
        Speed(1.0, 1.0, float("inf"))


def test_elementwise_stage_closed_form():
    x = la.asarray(np.ones(400), chunks=100)
    plan = plan_of(x + 1)
    add = only(plan, "elementwise")
    # bytes: 3,200 in + 3,200 out over 1 GB/s; flops: 400 cheap adds over 100 M/s
    want = 6400 / 1e9 + 400 / 1e8
    got = stage_seconds(plan, COSTS)
    assert got[add.name] == pytest.approx(want)
    assert set(got) == {add.name}  # the user's array exists: no task, no seconds
    # a per-task cost adds once per block
    costs = Costs((SPEED,), call_seconds=1e-3)
    assert stage_seconds(plan, costs)[add.name] == pytest.approx(want + 4e-3)


def test_matmul_counts_at_the_blas_rate():
    a = la.asarray(np.ones((40, 30)), chunks=(40, 30))
    b = la.asarray(np.ones((30, 20)), chunks=(30, 20))
    plan = plan_of(a @ b, passes=("cse", "simplify"))
    mm = only(plan, "matmul")
    work = stage_work(plan)[mm.name]
    assert work.matrix_flops == 2 * 40 * 20 * 30
    assert work.vector_flops == 0
    want = (40 * 30 + 30 * 20 + 40 * 20) * 8 / 1e9 + 2 * 40 * 20 * 30 / 1e9
    assert stage_seconds(plan, COSTS)[mm.name] == pytest.approx(want)


def test_span_takes_the_busiest_worker_and_its_bytes_in():
    x = la.asarray(np.ones(400), chunks=100)
    plan = plan_of(x + 1)
    add = only(plan, "elementwise")
    one = 6400 / 1e9 + 400 / 1e8  # the whole stage on one thread
    placed = plan.with_stages(
        {
            **plan.stages,
            add.name: add.replace(
                worker=np.array([0, 0, 0, 1], dtype=np.int32),
                est_bytes=np.array([0, 0, 0, 800], dtype=np.int64),
            ),
        }
    )
    slow_net = Costs((SPEED, SPEED), network_bandwidth=1e6)
    got = stage_seconds(placed, slow_net, threads=1, span=True)[add.name]
    assert got == pytest.approx(max(0.75 * one, 0.25 * one + 800 / 1e6))
    fast_net = Costs((SPEED, SPEED), network_bandwidth=1e12)
    got = stage_seconds(placed, fast_net, threads=2, span=True)[add.name]
    assert got == pytest.approx(0.75 * one / 2 + 0.0 / 1e12)
    # the scheduler hands out 4 tasks one after another: 3 gaps of 1 s
    handing = Costs((SPEED, SPEED), network_bandwidth=1e12, task_seconds=1.0)
    assert stage_seconds(placed, handing, span=True)[add.name] == pytest.approx(3.0)


def test_more_busy_threads_than_cores_share_them():
    x = la.asarray(np.ones(400), chunks=100)
    plan = plan_of(x + 1)
    add = only(plan, "elementwise")
    one = 6400 / 1e9 + 400 / 1e8
    spread = add.replace(worker=np.arange(4, dtype=np.int32), est_bytes=np.zeros(4, dtype=np.int64))
    placed = plan.with_stages({**plan.stages, add.name: spread}).replace(
        workers=("a", "b", "c", "d"), hosts=("h",) * 4
    )
    free = Costs((SPEED,) * 4, network_bandwidth=1e12)
    assert stage_seconds(placed, free, span=True)[add.name] == pytest.approx(one / 4)
    # four busy workers of one thread on a host of two cores: each runs at half speed
    shared = Costs((SPEED,) * 4, network_bandwidth=1e12, cores=(2, 2, 2, 2))
    assert stage_seconds(placed, shared, span=True)[add.name] == pytest.approx(one / 2)
    # on two hosts of two cores each, nobody waits
    apart = placed.replace(hosts=("h", "h", "g", "g"))
    assert stage_seconds(apart, shared, span=True)[add.name] == pytest.approx(one / 4)


def test_a_tree_stage_pays_a_round_trip_per_combine_level():
    x = la.asarray(np.ones(400), chunks=100)
    plan = plan_of(x.sum(), passes=("cse", "simplify"))
    red = only(plan, "reduce")
    # four partials on two workers: each worker folds its two (level 1), the two results
    # are combined (level 2), the owner finishes the block (level 3)
    tree = red.replace(
        worker=np.array(0, dtype=np.int32),
        est_bytes=np.array(0, dtype=np.int64),
        placement=Placement("tree", np.array([0, 1, 0, 1], dtype=np.int32)),
    )
    placed = plan.with_stages({**plan.stages, red.name: tree})
    work = stage_work(placed)[red.name]
    assert (work.tasks, work.levels) == (4, 3)
    costs = Costs((SPEED, SPEED), network_bandwidth=1e12, hop_seconds=1.0)
    got = stage_seconds(placed, costs, span=True)[red.name]
    assert 3.0 < got < 3.0 + 1e-4  # three round trips and microseconds of work
    # a measured span of 7.5 s beyond the work: 2.5 s per level
    (hop,) = hop_residuals(placed, costs, {red.name: got - 3.0 + 7.5})
    assert hop == pytest.approx(2.5)
    assert hop_residuals(placed, costs, {}) == []


def test_random_sources_cost_by_distribution_and_fold_into_their_one_reader():
    n = la.random.standard_normal((400,), chunks=100, seed=1)
    u = la.random.random((400,), chunks=100, seed=2)
    plan = plan_of(n + u, passes=("cse", "simplify"))
    folded = made_in_readers(plan)
    add = only(plan, "elementwise")
    sources = {n for n, s in plan.stages.items() if s.kind == "source"}
    assert folded == sources and len(sources) == 2
    seconds = stage_seconds(plan, COSTS)
    assert set(seconds) == {add.name}  # the sources are made inside the adds
    # made in the task instead of read: the same bytes (each draw written to a buffer and
    # read back, the output written); flops: the draws and the add
    want = 3 * 3200 / 1e9 + (400 * RANDOM_FLOPS + 400 * UNIFORM_FLOPS + 400) / 1e8
    assert seconds[add.name] == pytest.approx(want)


def test_a_source_whose_blocks_are_read_twice_stays_apart():
    a = la.random.random((40, 40), chunks=20, seed=1)
    plan = plan_of(a @ a.T, passes=("cse", "simplify"))
    assert made_in_readers(plan) == frozenset()
    # as the lowering says: made inside the product's tasks, its work counts there
    src = only(plan, "random").name
    assert src not in stage_seconds(plan, COSTS, made_in={src})
    assert only(plan, "random").name in stage_seconds(plan, COSTS)


def test_placement_weights_follow_the_measured_bandwidths():
    assert placement_weights(None) == (1.0, 1.0, 1.0)
    assert placement_weights(Costs((SPEED,))) == (1.0, 1.0, 1.0)  # network not measured
    assert placement_weights(Costs((SPEED,), network_bandwidth=2e9)) == (1.0, 0.5, 0.5)
    assert placement_weights(Costs((SPEED,), network_bandwidth=8e8)) == (1.0, 1.25, 1.25)
    # never above twice a byte held: the memory row is also the search's load balance
    assert placement_weights(Costs((SPEED,), network_bandwidth=1e8)) == (1.0, 2.0, 2.0)


def test_the_place_pass_uses_the_measured_weights():
    workers = ("w0", "w1")
    base = PassContext(n_workers=2, workers=workers, hosts=("h", "h"), check=True)
    a = la.random.random((40, 40), chunks=20, seed=1)
    raw = plan_of(a @ a, passes=("cse", "simplify"))
    plain = place.run(layout.run(raw, base), base)
    assert plain.notes["place"]["weights"] == [1.0, 1.0, 1.0]
    measured = PassContext(
        n_workers=2,
        workers=workers,
        hosts=("h", "h"),
        check=True,
        costs=Costs((SPEED, SPEED), network_bandwidth=6.25e8),
    )
    got = place.run(layout.run(raw, measured), measured)
    assert got.notes["place"]["weights"] == [1.0, 1.6, 1.6]


def test_costs_are_not_part_of_the_plan_cache_key():
    a = PassContext(n_workers=2)
    b = PassContext(n_workers=2, costs=Costs((SPEED,), network_bandwidth=5.0))
    assert a == b and hash(a) == hash(b)


def test_the_memory_pass_says_what_making_a_source_again_costs():
    x = la.random.random((400,), chunks=100, seed=1)
    y = x - x.sum()
    ctx = PassContext(memory_limit=4 * 3200 // 2, costs=COSTS)  # holding x: over a quarter
    plan = plan_of(y, passes=("cse", "simplify", "fuse", "memory"), ctx=ctx)
    (src,) = [s for s in plan.stages.values() if s.regenerate]
    seconds = remake_seconds(src, SPEED)
    assert seconds == pytest.approx(3200 / 1e9 + 400 * UNIFORM_FLOPS / 1e8)
    assert f"about {seconds:.3g} s of one thread" in plan.notes["memory"][src.name]
    assert memory.hold_budget(ctx) == 1600


def test_task_residuals_are_seconds_per_task_beyond_the_work():
    x = la.asarray(np.ones(400), chunks=100)
    plan = plan_of(x + 1)
    add = only(plan, "elementwise")
    work = 6400 / 1e9 + 400 / 1e8
    got = task_residuals(plan, COSTS, {add.name: (work + 4 * 2e-4, 4)})
    assert got == {add.name: pytest.approx(2e-4)}
    assert task_residuals(plan, COSTS, {}) == {}
    # big tasks teach nothing of the code around the kernel
    slow = Costs((Speed(1e3, 1e3, 1e3),))
    assert task_residuals(plan, slow, {add.name: (100.0, 4)}) == {}


def test_median_ratio():
    assert median_ratio({"a": 1.0, "b": 4.0, "c": 3.0}, {"a": 2.0, "b": 2.0, "c": 1.0}) == 2.0
    assert median_ratio({"a": 1.0}, {"b": 1.0}) is None


def test_default_costs_are_the_cost_model_constants():
    s = DEFAULT_COSTS.slowest()
    assert s.memory_bandwidth == pytest.approx(5e9)
    assert DEFAULT_COSTS.network() == s.memory_bandwidth
    assert not DEFAULT_COSTS.measured
