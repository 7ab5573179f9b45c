"""Placement across host groups: bytes between hosts first, then the per-worker load.

Four workers on two hosts (``h0 h0 h1 h1``, and the same hosts in other worker
orders). Every plan is replayed (``tests/placement_replay.py``: each task on its
planned worker) to check values against NumPy and that the bytes the replay
moves between hosts equal the plan's prediction; the predictions have closed
forms:

* an elementwise chain: 0 (every block stays with its inputs);
* ``A @ B`` (4x4 blocks): ``nbytes(C)``: each block of C sums products from both
  hosts, so at least one C-sized message per block crosses, and one does;
* a column sum of 8 row blocks: one partial crosses;
* a rechunk from row blocks to column blocks: half of X (each host's half of X
  is read by every output block; one host's half is shipped once);
* the gradient and Hessian of a logistic regression step: ``w`` goes once to
  the other host, then one partial of ``g`` and one of ``H`` come back.
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
from lazyarr.optimize.placement import ClusterSim, Planner, SimOp
from lazyarr.optimize.placement.clustersim import grouped
from lazyarr.optimize.placement.layout import device_order, plan_layouts
from lazyarr.optimize.plan import Plan

WORKERS = tuple(f"w{i}" for i in range(4))
TWO_HOSTS = ("h0", "h0", "h1", "h1")
ORDERS = [TWO_HOSTS, ("h0", "h1", "h1", "h0"), ("h0", "h1", "h0", "h1")]
BLIND = ("h",) * 4  # one host: the search cannot see the two


def planned(exprs, hosts, passes=("cse", "simplify", "fuse")) -> Plan:
    ctx = PassContext(n_workers=4, workers=WORKERS, hosts=hosts, check=True)
    plan = optimize(Plan.from_graph(build([e._expr for e in exprs])), passes, ctx)
    plan = place.run(layout.run(plan, ctx), ctx)
    check_plan(plan, "place")
    return plan


def replayed(plan: Plan, hosts, want) -> int:
    """Bytes the replay moves between ``hosts``, after checking values against ``want``."""
    run = Replay(plan, hosts)
    for got, w in zip(run.results(), want):
        np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)
    return run.between_hosts


def _cases():
    rng = np.random.default_rng(3)
    an, bn = rng.random((8, 8)), rng.random((8, 8))
    xn, wn, yn = rng.random((64, 4)), rng.random(4), rng.random(64)
    a, b = la.asarray(an, chunks=2), la.asarray(bn, chunks=2)
    x, w, y = la.asarray(xn, chunks=(8, 4)), la.asarray(wn), la.asarray(yn, chunks=8)
    p = 1.0 / (1.0 + la.exp(-(x @ w)))
    pn = 1.0 / (1.0 + np.exp(-(xn @ wn)))
    return {
        "elementwise": ([(x + 1) * 2 - x], [(xn + 1) * 2 - xn], 0),
        "matmul": ([a @ b], [an @ bn], (an @ bn).nbytes),
        "sum": ([x.sum(axis=0)], [xn.sum(axis=0)], 4 * 8),
        "rechunk": ([x.rechunk((64, 1))], [xn], xn.nbytes // 2),
        "logreg": (
            [x.T @ (p - y), x.T @ (x * (p * (1.0 - p))[:, None])],
            [xn.T @ (pn - yn), xn.T @ (xn * (pn * (1.0 - pn))[:, None])],
            wn.nbytes + 4 * 8 + 4 * 4 * 8,
        ),
    }


CASES = _cases()


@pytest.mark.parametrize("hosts", ORDERS, ids=["h0h0h1h1", "h0h1h1h0", "h0h1h0h1"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bytes_between_hosts_have_closed_forms(name, hosts):
    exprs, want, between = CASES[name]
    plan = planned(exprs, hosts)
    notes = plan.notes["place"]
    assert notes["hosts_first"] is True
    assert notes["bytes_between_hosts"] == between
    assert replayed(plan, hosts, want) == between


@pytest.mark.parametrize("name", ["matmul", "rechunk", "logreg"])
def test_knowing_the_hosts_moves_fewer_bytes_between_them(name):
    exprs, want, between = CASES[name]
    hosts = ("h0", "h1", "h1", "h0")
    blind = replayed(planned(exprs, BLIND), hosts, want)
    assert between < blind
    for other in ORDERS:  # never more than a plan blind to the hosts
        assert replayed(planned(exprs, other), other, want) <= replayed(
            planned(exprs, BLIND), other, want
        )


def test_hosts_first_is_what_lowers_the_bytes():
    """The same layouts and hosts, the search with and without bytes between hosts first."""
    exprs, _, between = CASES["rechunk"]
    ctx = PassContext(n_workers=4, workers=WORKERS, hosts=TWO_HOSTS, check=True)
    plan = optimize(Plan.from_graph(build([e._expr for e in exprs])), ("cse", "simplify"), ctx)
    layouts, _ = plan_layouts(plan, 4, TWO_HOSTS)
    owners = {n: layouts[n].owners(s.numblocks) for n, s in plan.stages.items()}
    scores = {}
    for first in (True, False):
        planner = Planner(plan, owners, 4, TWO_HOSTS)
        planner.sim.hosts_first = first
        planner.run()
        scores[first] = planner.sim.cross
    assert scores[True] == between
    assert scores[True] < scores[False]


def test_layout_pass_says_which_worker_order_it_kept():
    exprs, _, _ = CASES["sum"]
    ctx = PassContext(n_workers=4, workers=WORKERS, hosts=TWO_HOSTS, check=True)
    plan = optimize(Plan.from_graph(build([e._expr for e in exprs])), ("cse", "simplify"), ctx)
    out = layout.run(plan, ctx)
    notes = out.notes["layout"]
    assert "predicted bytes between hosts" in notes["order_why"]
    assert notes["order"] in (list(device_order(4, TWO_HOSTS, hm)) for hm in (True, False))
    one_host = PassContext(n_workers=4, workers=WORKERS, hosts=BLIND, check=True)
    assert layout.run(plan, one_host).notes["layout"]["order_why"] == "hosts round robin"


# ----------------------------------------------------------------- the simulator


def test_device_order_host_by_host():
    assert device_order(4, TWO_HOSTS) == (0, 2, 1, 3)
    assert device_order(4, TWO_HOSTS, host_major=True) == (0, 1, 2, 3)
    assert device_order(4, ("b", "a", "b", "a"), host_major=True) == (0, 2, 1, 3)
    assert device_order(3, (), host_major=True) == (0, 1, 2)


@pytest.mark.parametrize(
    ("hosts", "expected"),
    [
        ((0, 0, 1, 1), True),
        ((0, 1, 2, 2), True),
        ((0, 0, 0, 0), False),  # one host
        ((0, 1, 2, 3), False),  # every worker its own host
        ((), False),
    ],
)
def test_grouped_hosts(hosts, expected):
    assert grouped(hosts) is expected


def test_cross_counts_raw_bytes_between_hosts_only():
    sim = ClusterSim(4, hosts=TWO_HOSTS)
    assert sim.hosts_first
    sim.place("a", 1000, 0)
    sim.move("a", 1)  # same host
    assert sim.cross == 0
    sim.move("a", 2)  # other host
    assert sim.cross == 1000
    sim.move("a", 3)  # from its same-host replica on 2
    assert sim.cross == 1000
    assert sim.score() == (1000, sim.objective())


def test_score_ranks_bytes_between_hosts_first():
    """The objective alone would run ``op`` on worker 2 (idle); the score keeps it on h0."""
    sim = ClusterSim(4, hosts=TWO_HOSTS)
    sim.place("a", 100, 0)
    sim.place("load", 10_000, 1)
    op = SimOp(("a",), "b", 100)
    on_host, off_host = sim.simulate_score(op, 1), sim.simulate_score(op, 2)
    assert on_host[0] == 0 and off_host[0] == 100
    assert off_host[1] < on_host[1]  # the objective prefers the other host
    assert on_host < off_host
    blind = ClusterSim(4, hosts=TWO_HOSTS, hosts_first=False)
    blind.place("a", 100, 0)
    assert blind.simulate_score(op, 2)[0] == 0.0  # not ranked: the objective decides
    assert blind.simulate(op, 2) == blind.simulate_score(op, 2)[1]


def test_simulated_score_matches_the_commit():
    sim = ClusterSim(4, hosts=TWO_HOSTS)
    for i, w in enumerate([0, 1, 2, 3]):
        sim.place(("x", i), 100 * (i + 1), w)
    op = SimOp((("x", 0), ("x", 1), ("x", 3)), "y", 50)
    predicted = sim.simulate_score(op, 2)
    sim.commit(op, 2)
    assert sim.score() == predicted
    assert sim.cross == 100 + 200
