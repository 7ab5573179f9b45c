"""The ``place`` pass: choose the worker of every block task (greedy load-aware search).

Reads the layout owners from ``stage.worker`` (written by the ``layout``
pass; the default block-cyclic layout when it did not run) and writes, per
stage:

* ``stage.worker`` (int32 per block): the worker that produces the block
  and holds it afterwards;
* ``stage.est_bytes`` (int64 per block): predicted bytes copied between
  workers to compute that block, its parts and combine steps included;
* ``stage.placement``: the strategy, plus for ``"tree"`` stages the worker
  of each reduction partial or partial product (``parts``, shaped
  ``(*numblocks, n_parts)``); the lowering combines them with
  ``placement.combine_schedule(parts, owner, host_ids)``.

``plan.workers``/``plan.hosts`` name the workers the numbers refer to;
``plan.notes["place"]`` is the human-readable summary: predicted bytes and
moves, bytes between hosts (ranked first when workers share hosts:
``hosts_first``), per-worker memory / network in / network out, the
objective's weights, and a "why" per stage. The weights come from the
measured speeds (``ctx.costs``: a byte moved weighs memory bandwidth /
network bandwidth times a byte held, at most twice), else the search's defaults. With one
worker (or none) the plan is returned unchanged.
"""

from __future__ import annotations

from lazyarr.optimize.context import PassContext
from lazyarr.optimize.placement.layout import plan_layouts
from lazyarr.optimize.placement.planner import LOCAL_COEFF, Planner
from lazyarr.optimize.plan import Placement, Plan
from lazyarr.optimize.timing import placement_weights

__all__ = ["run"]


def run(plan: Plan, ctx: PassContext) -> Plan:
    n = ctx.n_workers
    if n <= 1:
        return plan
    hosts = ctx.hosts
    fixed = [name for name, s in plan.stages.items() if s.worker is not None]
    layouts, _ = plan_layouts(plan, n, hosts, fixed)
    owners = {
        name: s.worker if s.worker is not None else layouts[name].owners(s.numblocks)
        for name, s in plan.stages.items()
    }
    weights = placement_weights(ctx.costs)  # bytes moved weigh what they cost in time
    planner = Planner(plan, owners, n, hosts, ctx.memory_limit, weights=weights)
    decided = planner.run()
    stages = {}
    for name, s in plan.stages.items():
        d = decided[name]
        placement = Placement(d.strategy, d.parts)
        stages[name] = s.replace(worker=d.worker, est_bytes=d.est_bytes, placement=placement)
    out = plan.with_stages(stages).replace(workers=tuple(ctx.workers), hosts=tuple(hosts))
    sim = planner.sim
    out.notes["place"] = {
        "n_workers": n,
        "workers": list(ctx.workers),
        "hosts": list(hosts),
        "local_coeff": LOCAL_COEFF,
        "weights": list(weights),
        "total_bytes": int(sum(int(d.est_bytes.sum()) for d in decided.values())),
        "total_moves": int(sim.moves),
        "objective": float(sim.objective()),
        "hosts_first": sim.hosts_first,
        "bytes_between_hosts": int(sim.cross),
        "per_worker": {
            "memory": sim.load[0].tolist(),
            "net_in": sim.load[1].tolist(),
            "net_out": sim.load[2].tolist(),
            "bytes_in": sim.bytes_in.tolist(),
        },
        "stages": {name: decided[name].why for name in plan.stages},
    }
    return out
