"""The ``layout`` pass: the owner worker of every block (block-cyclic, aligned contractions).

Writes ``stage.worker`` (int32 per block) for every stage that has none
yet: the block's layout owner (see ``optimize/placement/layout.py``).
Stages that already carry workers (blocks persisted on a cluster) keep
them. ``plan.notes["layout"]`` says, per stage, which layout and why.
With one worker (or none) the plan is returned unchanged.
"""

from __future__ import annotations

from lazyarr.optimize.context import PassContext
from lazyarr.optimize.placement.layout import device_order, plan_layouts
from lazyarr.optimize.plan import Plan

__all__ = ["run"]


def run(plan: Plan, ctx: PassContext) -> Plan:
    n = ctx.n_workers
    if n <= 1:
        return plan
    hosts = ctx.hosts
    fixed = [name for name, s in plan.stages.items() if s.worker is not None]
    layouts, why = plan_layouts(plan, n, hosts, fixed)
    stages = {}
    for name, s in plan.stages.items():
        if name in layouts:
            s = s.replace(worker=layouts[name].owners(s.numblocks))
        stages[name] = s
    out = plan.with_stages(stages)
    out.notes["layout"] = {
        "n_workers": n,
        "order": list(device_order(n, hosts)),
        "stages": {
            name: {**layouts[name].to_json(), "why": why[name]}
            if name in layouts
            else {"why": "kept the workers the stage already had"}
            for name in plan.stages
        },
    }
    return out
