"""Algebraic simplification: drop stages that return their input unchanged.

Rules (each a plain function, tested on its own):
* ``astype`` to the dtype the input already has;
* ``rechunk`` to the chunks the input already has;
* a ``rechunk`` of a ``rechunk``: the inner one is skipped when it has no
  other reader.
"""

from __future__ import annotations

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise, Rechunk
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.passes._rewire import reconcile, replace_stages
from lazyarr.optimize.plan import Plan

__all__ = ["is_identity", "run"]


def is_identity(e: Expr) -> bool:
    """True when ``e`` returns its single input as it is."""
    if len(e.inputs) != 1:
        return False
    x = e.inputs[0]
    same = (x.shape, x.dtype, x.chunks) == (e.shape, e.dtype, e.chunks)
    if isinstance(e.op, Rechunk):
        return same
    if isinstance(e.op, Elementwise) and e.op.func in ("astype", "positive"):
        return same and (e.op.func == "astype" or e.dtype.kind in "iufc")
    return False


def run(plan: Plan, ctx: PassContext) -> Plan:
    alias: dict[str, str] = {}
    readers = plan.consumers()
    stages = dict(plan.stages)
    for name, s in plan.stages.items():
        if len(s.members) == 1 and is_identity(s.expr):
            alias[name] = s.inputs[0]
        elif isinstance(s.expr.op, Rechunk):
            inner = plan.stages[s.inputs[0]]
            if (
                isinstance(inner.expr.op, Rechunk)
                and readers[inner.name] == [name]
                and inner.name not in plan.outputs
            ):
                new_expr = Expr(
                    s.expr.op, inner.expr.inputs, s.expr.shape, s.expr.dtype, s.expr.chunks
                )
                stages[name] = s.replace(
                    expr=new_expr,
                    members=(new_expr,),
                    inputs=inner.inputs,
                    input_exprs=new_expr.inputs,
                )
    return replace_stages(reconcile(plan.with_stages(stages)), alias)
