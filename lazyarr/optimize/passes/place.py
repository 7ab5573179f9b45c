"""The ``place`` pass: choose the worker of every block task (greedy load-aware search).

Reads the layout owners from ``stage.worker`` (written by the ``layout``
pass; the default block-cyclic layout when it did not run) and writes, per
stage:

* ``stage.worker`` (int32 per block): the worker that produces the block
  and holds it afterwards;
* ``stage.est_bytes`` (int64 per block): predicted bytes copied between
  workers to compute that block, its parts and combine steps included;
* ``stage.notes["place"]``: ``{"strategy": ...}``, plus ``"parts"`` (nested
  lists shaped ``(*numblocks, n_parts)``) for ``"tree"`` stages: the worker
  of each reduction partial or partial product; executors combine them with
  ``placement.combine_schedule(parts, owner, host_ids)``.

``plan.notes["place"]`` is the JSON summary: predicted bytes and moves,
per-worker memory / network in / network out, and a "why" per stage. With
one worker (or none) the plan is returned unchanged.

``ctx.placement_trees`` (default True): False for an executor that runs
every block as one task; then no stage gets the ``"tree"`` strategy and the
predicted bytes are those of one task per block on ``stage.worker``.
"""

from __future__ import annotations

from typing import Any

from lazyarr.optimize.placement.layout import plan_layouts
from lazyarr.optimize.placement.planner import LOCAL_COEFF, Planner
from lazyarr.optimize.plan import Plan

__all__ = ["run"]


def run(plan: Plan, ctx: object) -> Plan:
    n = int(getattr(ctx, "n_workers", 1) or 1)
    if n <= 1:
        return plan
    hosts = tuple(getattr(ctx, "hosts", ()) or ())
    fixed = [name for name, s in plan.stages.items() if s.worker is not None]
    layouts, _ = plan_layouts(plan, n, hosts, fixed)
    owners = {
        name: s.worker if s.worker is not None else layouts[name].owners(s.numblocks)
        for name, s in plan.stages.items()
    }
    trees = bool(getattr(ctx, "placement_trees", True))
    planner = Planner(plan, owners, n, hosts, getattr(ctx, "memory_limit", None), trees=trees)
    decided = planner.run()
    stages = {}
    for name, s in plan.stages.items():
        d = decided[name]
        note: dict[str, Any] = {"strategy": d.strategy}
        if d.parts is not None:
            note["parts"] = d.parts.tolist()
        stages[name] = s.replace(
            worker=d.worker, est_bytes=d.est_bytes, notes={**s.notes, "place": note}
        )
    out = plan.with_stages(stages)
    sim = planner.sim
    out.notes["place"] = {
        "n_workers": n,
        "workers": list(getattr(ctx, "workers", ()) or ()),
        "hosts": list(hosts),
        "local_coeff": LOCAL_COEFF,
        "trees": trees,
        "total_bytes": int(sum(int(d.est_bytes.sum()) for d in decided.values())),
        "total_moves": int(sim.moves),
        "objective": float(sim.objective()),
        "per_worker": {
            "memory": sim.load[0].tolist(),
            "net_in": sim.load[1].tolist(),
            "net_out": sim.load[2].tolist(),
            "bytes_in": sim.bytes_in.tolist(),
        },
        "stages": {name: decided[name].why for name in plan.stages},
    }
    return out
