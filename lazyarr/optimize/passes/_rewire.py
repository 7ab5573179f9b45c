"""Replacing stages by other stages (shared by the passes that drop stages)."""

from __future__ import annotations

from lazyarr.optimize.plan import Plan

__all__ = ["prune", "replace_stages"]


def replace_stages(plan: Plan, alias: dict[str, str]) -> Plan:
    """Drop every stage in ``alias`` and point its readers at ``alias[name]``."""
    if not alias:
        return prune(plan)

    def target(n: str) -> str:
        while n in alias:
            n = alias[n]
        return n

    stages = {}
    for name, s in plan.stages.items():
        if name in alias:
            continue
        inputs = tuple(target(i) for i in s.inputs)
        stages[name] = s if inputs == s.inputs else s.replace(inputs=inputs)
    return prune(plan.with_stages(stages, [target(o) for o in plan.outputs]))


def prune(plan: Plan) -> Plan:
    """Drop stages that no output depends on."""
    live: set[str] = set()
    stack = list(plan.outputs)
    while stack:
        n = stack.pop()
        if n not in live:
            live.add(n)
            stack.extend(plan.stages[n].inputs)
    if len(live) == len(plan.stages):
        return plan
    return plan.with_stages({n: s for n, s in plan.stages.items() if n in live})
