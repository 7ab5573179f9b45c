"""The memory pass on a cluster: a source whose blocks a few tasks read is made in each."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph import build
from lazyarr.optimize.passes import memory
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.plan import Plan


def _plan(y, workers: int) -> Plan:
    ctx = PassContext(n_workers=workers)
    return optimize(Plan.from_graph(build([y._expr])), ("cse", "simplify", "memory"), ctx)


def _remade(plan: Plan) -> list[str]:
    return [n for n, s in plan.stages.items() if s.regenerate]


@pytest.mark.parametrize(
    ("make", "reads"),
    [
        (lambda x: la.map_overlap(np.negative, x, depth=5, boundary="none"), 3),  # a window
        (lambda x: x.rechunk(150), 2),  # a rechunk by half a block
        (lambda x: x.rechunk(30), 5),  # many readers a block: held, not read five times
    ],
)
def test_a_source_read_by_a_few_tasks_is_made_in_each_on_a_cluster(make, reads):
    x = la.random.random(1_000, chunks=100, seed=0)
    on_cluster = _plan(make(x), 2)
    (src,) = [n for n, s in on_cluster.stages.items() if s.kind == "source"]
    if reads <= memory.REMAKE_READS:
        assert _remade(on_cluster) == [src]
        assert f"read by {reads} tasks" in on_cluster.notes["memory"][src]
    else:
        assert _remade(on_cluster) == []
    assert _remade(_plan(make(x), 1)) == []  # one process: a block's readers run next
