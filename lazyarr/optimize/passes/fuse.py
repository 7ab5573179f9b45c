"""Fusion: elementwise chains (and a trailing reduction) become one stage; contractions
compute their cheap operands themselves, or map their blocks through an elementwise epilogue.

Walks the stages from the outputs back. Each fusible stage either joins
the group(s) of its readers or stays materialized, with the reason recorded
in ``plan.notes["fuse"]``. A stage that several groups read, or that a
contraction reads more than once (an operand row panel used by every
column block), is recomputed only when the cost model says recomputing
beats storing it; outputs are always materialized. The rules of who may
join whom live in ``optimize.fusion``.
"""

from __future__ import annotations

import math

from lazyarr.optimize.context import PassContext
from lazyarr.optimize.cost import read_amplification, recompute_or_store
from lazyarr.optimize.fusion import can_join, is_contraction, is_operand_op, may_root
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.optimize.siblings import sibling_groups

__all__ = ["run"]


def _folds_operands(plan: Plan, s: Stage) -> bool:
    """Whether contraction stage ``s`` reads a stage it could compute itself (an operand)."""
    outputs = set(plan.outputs)
    return any(i not in outputs and is_operand_op(plan.stages[i].expr) for i in s.inputs)


def _refusal(plan: Plan, name: str, groups: dict[str, set[str]], ctx: PassContext) -> str | None:
    """Why stage ``name`` cannot join its readers' groups (None: it can)."""
    s = plan.stages[name]
    if is_contraction(s.expr) and _folds_operands(plan, s):
        return "not fused: it reads operands it can compute itself (kept foldable)"
    for r in plan.readers[name]:
        reader = plan.stages[r]
        roots = groups[r]
        operand = all(is_contraction(plan.stages[g].expr) for g in roots)
        own_stage = roots == {r}
        if reader.fused or (own_stage and not may_root(reader.expr)):
            return f"not fused: its reader {reader.expr.op.label()} is not fusible"
        if not own_stage and operand and not is_operand_op(reader.expr):
            return f"not fused: its reader {reader.expr.op.label()} is not fusible"
        for root in sorted(roots):
            root_expr = plan.stages[root].expr
            ok, reason = can_join(s.expr, reader.expr, operand, root_expr, ctx.supports)
            if not ok:
                return f"not fused: {reason}"
    return None


def _groups(plan: Plan, ctx: PassContext) -> tuple[dict[str, set[str]], dict[str, str]]:
    """For each stage, the group roots it is computed in; and a reason per stage."""
    groups: dict[str, set[str]] = {}
    later: dict[str, list[str]] = {}  # root -> members decided so far, reverse order
    why: dict[str, str] = {}
    outputs = set(plan.outputs)
    for name in reversed(list(plan.stages)):
        s = plan.stages[name]
        if s.fused:
            groups[name], why[name] = {name}, "already fused"
            later[name] = [name]
            continue
        if name in outputs or not plan.readers[name]:
            groups[name], why[name] = {name}, "not fused: a requested output is stored"
            later[name] = [name]
            continue
        refusal = _refusal(plan, name, groups, ctx)
        if refusal is not None:
            groups[name], why[name] = {name}, refusal
            later[name] = [name]
            continue
        target = set().union(*(groups[r] for r in plan.readers[name]))
        copies = 0.0
        for root in sorted(target):
            if is_contraction(plan.stages[root].expr):
                members = [s.expr] + [plan.stages[m].expr for m in reversed(later[root])]
                copies += read_amplification(members, s.expr.key)
            else:
                copies += 1
        if copies <= 1:
            groups[name] = target
            why[name] = f"fused into {next(iter(target))}"
        else:
            recompute, ratio = recompute_or_store(s.expr, copies)
            if len(target) > 1:
                into, times = f"{len(target)} stages", f"{len(target)} consumers"
            else:
                into = next(iter(target))
                times = f"computed {copies:g}x in {into}"
            if recompute:
                groups[name] = target
                why[name] = f"fused into {into}: recomputing costs {ratio:.2f}x storing"
            else:
                groups[name] = {name}
                later[name] = [name]
                why[name] = (
                    f"not fused: {times}, recompute costs {ratio:.1f}x more than storing"
                    if math.isfinite(ratio)
                    else f"not fused: {times}, and a {s.expr.op.label()} is never computed twice"
                )
                continue
        for root in groups[name]:
            later[root].append(name)
    return groups, why


def run(plan: Plan, ctx: PassContext) -> Plan:
    groups, why = _groups(plan, ctx)
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
    return out.replace(siblings=tuple(tuple(g) for g in sibling_groups(out)))
