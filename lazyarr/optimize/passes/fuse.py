"""Vertical fusion: chains of elementwise ops (and a trailing reduction) become one stage.

Walks the stages from the outputs back. Each elementwise stage either joins
the stage(s) of its readers or stays materialized, with the reason recorded
in ``plan.notes["fuse"]``. A stage read by several groups joins all of them
(it is recomputed in each) only when the cost model says recomputing is
cheaper than storing it; outputs are always materialized. The rules of who
may join whom live in ``optimize.fusion``.
"""

from __future__ import annotations

from lazyarr.optimize.cost import recompute_or_store
from lazyarr.optimize.fusion import can_join, may_root
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["run"]


def _groups(plan: Plan) -> tuple[dict[str, set[str]], dict[str, str]]:
    """For each stage, the group roots it is computed in; and a reason per stage."""
    readers = plan.readers
    groups: dict[str, set[str]] = {}
    why: dict[str, str] = {}
    outputs = set(plan.outputs)
    for name in reversed(list(plan.stages)):
        s = plan.stages[name]
        rs = readers[name]
        if s.fused:
            groups[name] = {name}
            why[name] = "already fused"
            continue
        if name in outputs or not rs:
            groups[name] = {name}
            why[name] = "not fused: a requested output is stored"
            continue
        refusals = []
        for r in rs:
            reader = plan.stages[r]
            if reader.fused or not may_root(reader.expr):
                refusals.append(f"its reader {reader.expr.op.label()} is not fusible")
                continue
            ok, reason = can_join(s.expr, reader.expr)
            if not ok:
                refusals.append(f"not fused: {reason}")
        if refusals:
            groups[name] = {name}
            why[name] = (
                refusals[0]
                if refusals[0].startswith("not fused")
                else (f"not fused: {refusals[0]}")
            )
            continue
        target = set().union(*(groups[r] for r in rs))
        if len(target) == 1:
            groups[name] = target
            why[name] = f"fused into {next(iter(target))}"
            continue
        recompute, ratio = recompute_or_store(s.expr, len(target))
        if recompute:
            groups[name] = target
            why[name] = f"fused into {len(target)} stages: recomputing costs {ratio:.2f}x storing"
        else:
            groups[name] = {name}
            why[name] = (
                f"not fused: {len(target)} consumers, recompute costs {ratio:.1f}x more "
                "than storing"
            )
    return groups, why


def run(plan: Plan, ctx: object) -> Plan:
    groups, why = _groups(plan)
    members: dict[str, list[str]] = {}
    for name in plan.stages:  # topological order: members come out in dependency order
        for root in groups[name]:
            members.setdefault(root, []).append(name)
    stages: dict[str, Stage] = {}
    for name, s in plan.stages.items():
        if groups[name] != {name}:
            continue  # computed inside other stages
        group = members[name]
        if len(group) == 1:
            stages[name] = s
            continue
        inside = set(group)
        input_names: list[str] = []
        input_exprs = []
        for m in group:
            ms = plan.stages[m]
            for src, e in zip(ms.inputs, ms.input_exprs):
                if src not in inside and src not in input_names:
                    input_names.append(src)
                    input_exprs.append(e)
        exprs = tuple(plan.stages[m].expr for m in group)
        stages[name] = s.replace(
            members=exprs,
            inputs=tuple(input_names),
            input_exprs=tuple(input_exprs),
            notes={**s.notes, "fused_ops": [e.op.label() for e in exprs]},
        )
        why[name] = f"root of a fused stage of {len(group)} ops"
    out = plan.with_stages(stages)
    out.notes["fuse"] = why
    return out
