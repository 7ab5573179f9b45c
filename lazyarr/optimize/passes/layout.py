"""The ``layout`` pass: the owner worker of every block (block-cyclic, aligned contractions).

Writes ``stage.worker`` (int32 per block) for every stage that has none
yet: the block's layout owner (see ``optimize/placement/layout.py``).
Where workers share hosts (at least two hosts, one with several workers),
the placement search is run on both worker orders (hosts round robin, host
by host) and the order with fewer predicted bytes between hosts (then the
lower objective) is kept.
Stages that already carry workers (blocks persisted on a cluster) keep
them. ``plan.notes["layout"]`` says, per stage, which layout and why.
With one worker (or none) the plan is returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from lazyarr.optimize.context import PassContext
from lazyarr.optimize.placement.clustersim import grouped, host_ids
from lazyarr.optimize.placement.layout import device_order, plan_layouts
from lazyarr.optimize.placement.planner import Planner
from lazyarr.optimize.plan import Plan

__all__ = ["run"]


def run(plan: Plan, ctx: PassContext) -> Plan:
    n = ctx.n_workers
    if n <= 1:
        return plan
    hosts = ctx.hosts
    fixed = [name for name, s in plan.stages.items() if s.worker is not None]
    host_major, order_why = False, "hosts round robin"
    if hosts and grouped(host_ids(hosts, n)):
        by_host = _placed_score(plan, ctx, fixed, host_major=True)
        round_robin = _placed_score(plan, ctx, fixed, host_major=False)
        host_major = by_host < round_robin
        order_why = (
            f"{'host by host' if host_major else 'hosts round robin'}: predicted bytes between "
            f"hosts {int(by_host[0])} host by host, {int(round_robin[0])} round robin"
        )
    layouts, why = plan_layouts(plan, n, hosts, fixed, host_major)
    stages = {}
    for name, s in plan.stages.items():
        if name in layouts:
            s = s.replace(worker=layouts[name].owners(s.numblocks))
        stages[name] = s
    out = plan.with_stages(stages)
    out.notes["layout"] = {
        "n_workers": n,
        "order": list(device_order(n, hosts, host_major)),
        "order_why": order_why,
        "stages": {
            name: {**layouts[name].to_json(), "why": why[name]}
            if name in layouts
            else {"why": "kept the workers the stage already had"}
            for name in plan.stages
        },
    }
    return out


def _placed_score(
    plan: Plan, ctx: PassContext, fixed: Sequence[str], host_major: bool
) -> tuple[float, float]:
    """The placement search's score (bytes between hosts, objective) on one worker order."""
    layouts, _ = plan_layouts(plan, ctx.n_workers, ctx.hosts, fixed, host_major)
    owners = {
        name: s.worker if s.worker is not None else layouts[name].owners(s.numblocks)
        for name, s in plan.stages.items()
    }
    planner = Planner(plan, owners, ctx.n_workers, ctx.hosts, ctx.memory_limit)
    planner.run()
    return planner.sim.score()
