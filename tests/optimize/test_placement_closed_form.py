"""Reductions placed in closed form: partials where their blocks are, no search per partial.

A reduction whose partials each read blocks one worker holds, and keep no more bytes
than they read, runs every partial on that worker (``Planner._data_local_parts``): the
search would copy inputs of at least the partial's bytes to run it anywhere else. The
tests count simulator calls (no candidate is scored) and compare the plan with the
answer worked out by hand, and with a replay of the lowered tasks.
"""

from __future__ import annotations

import numpy as np
import pytest
from placement_replay import Replay

import lazyarr as la
from lazyarr.graph import build
from lazyarr.optimize.check import check_plan
from lazyarr.optimize.passes import layout, place
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.placement.clustersim import ClusterSim
from lazyarr.optimize.plan import Plan

WORKERS = tuple(f"w{i}" for i in range(4))
CTX = PassContext(n_workers=4, workers=WORKERS, hosts=("h0",) * 4, check=True)
CTX2 = PassContext(n_workers=4, workers=WORKERS, hosts=("h0", "h0", "h1", "h1"), check=True)


def placed(arr, ctx=CTX) -> Plan:
    plan = optimize(Plan.from_graph(build([arr._expr])), ("cse", "simplify", "fuse"), ctx)
    plan = place.run(layout.run(plan, ctx), ctx)
    check_plan(plan, "place")
    return plan


def reduce_stage(plan: Plan):
    (s,) = [s for s in plan.stages.values() if s.kind == "reduce"]
    return s


class Counting:
    """Counts the simulator's scoring and committing calls while placing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = {"simulate_score": 0, "commit_counting": 0}
        for name in self.calls:
            original = getattr(ClusterSim, name)

            def counted(sim, *args, _name=name, _original=original, **kwargs):
                self.calls[_name] += 1
                return _original(sim, *args, **kwargs)

            monkeypatch.setattr(ClusterSim, name, counted)


def test_sum_of_many_blocks_is_placed_without_a_search(monkeypatch):
    # 64 blocks of 10 float64 on 4 workers: the layout deals them out cyclically
    xn = np.random.default_rng(0).random(640)
    x = la.asarray(xn, chunks=10)
    counting = Counting(monkeypatch)
    with la.config.set({"array.min-chunk-size": 0}):
        plan = placed((la.sin(x) * 2).sum())
    red = reduce_stage(plan)
    src = plan.stages[red.inputs[0]]
    # every partial on the worker of the block it reads
    assert red.placement.parts.tolist() == src.worker.tolist()  # output shape ()
    assert "partials where their blocks are" in plan.notes["place"]["stages"][red.name]
    # no candidate scored; committed: the 3 combines across workers and the result
    assert counting.calls["simulate_score"] == 0
    assert counting.calls["commit_counting"] == 3 + 1
    # one 8-byte partial per other worker crosses to the owner
    assert int(red.est_bytes.sum()) == 3 * 8
    run = Replay(plan)
    assert np.array_equal(run.moved[red.name], red.est_bytes)
    np.testing.assert_allclose(run.results()[0], (np.sin(xn) * 2).sum(), rtol=1e-12)


def test_partials_follow_blocks_along_kept_axes_on_hosts():
    xn = np.random.default_rng(1).random((9, 8))
    x = la.asarray(xn, chunks=(3, 2))  # 3x4 blocks
    plan = placed((x + 1).sum(axis=0), ctx=CTX2)
    red = reduce_stage(plan)
    src = plan.stages[red.inputs[0]]
    # parts[j, i]: the partial of body block (i, j), on that block's worker
    assert red.placement.parts.tolist() == src.worker.T.tolist()
    run = Replay(plan, CTX2.hosts)
    assert np.array_equal(run.moved[red.name], red.est_bytes)
    np.testing.assert_allclose(run.results()[0], (xn + 1).sum(axis=0), rtol=1e-12)


def test_partials_bigger_than_their_blocks_are_searched(monkeypatch):
    # (1, 8) float32 blocks reduced along axis 0: a variance state per element
    # (count, mean, M2) outweighs the 4 bytes read, so the search decides
    xn = np.random.default_rng(2).random((8, 8)).astype(np.float32)
    x = la.asarray(xn, chunks=(1, 8))
    counting = Counting(monkeypatch)
    plan = placed(x.var(axis=0))
    red = reduce_stage(plan)
    assert "where their blocks are" not in plan.notes["place"]["stages"][red.name]
    assert counting.calls["simulate_score"] > 0
    run = Replay(plan)
    assert np.array_equal(run.moved[red.name], red.est_bytes)
    np.testing.assert_allclose(run.results()[0], xn.var(axis=0), rtol=1e-5)


def test_a_partial_reading_blocks_of_two_workers_is_searched(monkeypatch):
    # y's one block (broadcast) sits on worker 0; x's other blocks elsewhere
    xn = np.arange(32.0).reshape(4, 8)
    x = la.asarray(xn, chunks=(1, 8))
    y = la.asarray(np.arange(8.0), chunks=8)
    counting = Counting(monkeypatch)
    plan = placed((x * y).sum())
    red = reduce_stage(plan)
    assert "where their blocks are" not in plan.notes["place"]["stages"][red.name]
    assert counting.calls["simulate_score"] > 0
    np.testing.assert_allclose(Replay(plan).results()[0], (xn * np.arange(8.0)).sum())


def test_place_many_equals_place_block_by_block():
    keys = [("a", (i,)) for i in range(7)]
    sizes = np.array([8, 16, 8, 0, 24, 8, 8])
    workers = np.array([0, 1, 2, 0, 1, 2, 0])
    one, many = ClusterSim(3), ClusterSim(3)
    for k, n, w in zip(keys, sizes.tolist(), workers.tolist()):
        one.place(k, n, w)
    many.place_many(keys, sizes, workers)
    assert one.loc == many.loc and one.size == many.size
    assert np.array_equal(one.load, many.load) and one.objective() == many.objective()
    with pytest.raises(KeyError, match="already placed"):
        many.place_many(keys[:1], sizes[:1], workers[:1])
    with pytest.raises(IndexError):
        ClusterSim(3).place_many(keys[:1], sizes[:1], np.array([3]))
    with pytest.raises(ValueError, match="7 blocks, 1 sizes"):
        ClusterSim(3).place_many(keys, sizes[:1], workers[:1])


def test_hold_and_add_memory_make_the_state_of_local_commits():
    from lazyarr.optimize.placement.clustersim import SimOp

    committed, bulk = ClusterSim(2), ClusterSim(2)
    for sim in (committed, bulk):
        sim.place("x", 80, 1)
    committed.commit(SimOp(("x",), "p", 8), 1)  # runs where its input is: no copy
    bulk.add_memory(np.array([0.0, 8.0]))
    bulk.hold("p", 8, 1)
    assert committed.loc == bulk.loc and committed.size == bulk.size
    assert np.array_equal(committed.load, bulk.load)
    assert committed.objective() == bulk.objective() and bulk.moves == 0
    with pytest.raises(KeyError, match="already placed"):
        bulk.hold("p", 8, 0)
