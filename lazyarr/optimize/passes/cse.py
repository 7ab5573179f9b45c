"""Common subexpression elimination: stages with equal keys are computed once.

Two expressions built separately but equal in structure (same op, params,
inputs, shape, dtype, chunks) have the same key; all but the first stage of
each key are dropped and their readers rewired to the first.
"""

from __future__ import annotations

from lazyarr.optimize.context import PassContext
from lazyarr.optimize.passes._rewire import replace_stages
from lazyarr.optimize.plan import Plan

__all__ = ["run"]


def run(plan: Plan, ctx: PassContext) -> Plan:
    first: dict[str, str] = {}
    alias: dict[str, str] = {}
    for name, s in plan.stages.items():
        if len(s.members) != 1:
            continue  # fused stages are compared by their members elsewhere
        keep = first.setdefault(s.expr.key, name)
        if keep != name:
            alias[name] = keep
    return replace_stages(plan, alias)
