"""Replacing stages by other stages (shared by the passes that drop or rewrite stages).

After any rewiring, :func:`reconcile` rebuilds the expressions downstream
so that a stage's ``input_exprs[i]`` is always the expression of the stage
``inputs[i]`` (the checker enforces it): fused groups and every executor
follow expressions, so a stale one would read a dropped stage.
"""

from __future__ import annotations

from lazyarr.graph.expr import Expr
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["prune", "reconcile", "replace_stages"]


def replace_stages(plan: Plan, alias: dict[str, str]) -> Plan:
    """Drop every stage in ``alias`` and point its readers at ``alias[name]``."""

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
    return prune(reconcile(plan.with_stages(stages, [target(o) for o in plan.outputs])))


def _rebuilt(e: Expr, subst: dict[str, Expr]) -> Expr:
    inputs = [subst.get(i.key, i) for i in e.inputs]
    if all(a is b for a, b in zip(inputs, e.inputs)):
        return e
    return Expr(e.op, inputs, e.shape, e.dtype, e.chunks, e.user_name)


def reconcile(plan: Plan) -> Plan:
    """Rebuild expressions downstream of rewired inputs (keys change, names do not)."""
    stages: dict[str, Stage] = {}
    changed = False
    for name, s in plan.stages.items():
        subst: dict[str, Expr] = {}
        for old, src in zip(s.input_exprs, s.inputs):
            new = stages[src].expr if src in stages else plan.stages[src].expr
            if new.key != old.key:
                subst[old.key] = new
        if not subst:
            stages[name] = s
            continue
        changed = True
        members = []
        for m in s.members:
            nm = _rebuilt(m, subst)
            if nm is not m:
                subst[m.key] = nm
            members.append(nm)
        input_exprs = tuple(subst.get(e.key, e) for e in s.input_exprs)
        stages[name] = s.replace(expr=members[-1], members=tuple(members), input_exprs=input_exprs)
    return plan.with_stages(stages) if changed else plan


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
