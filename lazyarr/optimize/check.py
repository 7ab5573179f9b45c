"""Plan invariants, run after every pass when ``optimize.check`` is on (always in tests)."""

from __future__ import annotations

from lazyarr.graph.check import InvariantError, check_expr
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["check_plan"]


def check_plan(plan: Plan, after: str = "") -> None:
    """Stages are in dependency order, wired to their inputs, outputs exist."""
    where = f" after pass {after!r}" if after else ""
    seen: set[str] = set()
    for name, s in plan.stages.items():
        if name != s.name:
            raise InvariantError(f"stage stored as {name!r} is named {s.name!r}{where}")
        for m in s.members:
            check_expr(m)
        _check_members(s, where)
        if len(s.inputs) != len(s.input_exprs):
            raise InvariantError(
                f"{name}: {len(s.inputs)} input stages for {len(s.input_exprs)} inputs{where}"
            )
        for pos, i in enumerate(s.inputs):
            if i not in seen:
                raise InvariantError(f"{name}: input {i!r} is not an earlier stage{where}")
            src = plan.stages[i].expr
            want = s.input_exprs[pos]
            if src.key != want.key:
                raise InvariantError(
                    f"{name}: input {pos} reads stage {i} ({src.name}) but expects "
                    f"{want.name}{where}"
                )
        for arr in (s.worker, s.est_bytes):
            if arr is not None and arr.shape != s.numblocks:
                raise InvariantError(f"{name}: per-block array of shape {arr.shape}{where}")
        seen.add(name)
    for o in plan.outputs:
        if o not in plan.stages:
            raise InvariantError(f"output {o!r} is not a stage{where}")


def _check_members(s: Stage, where: str) -> None:
    """A stage's members are in dependency order and read only members or its inputs."""
    if s.members[-1] is not s.expr and s.members[-1].key != s.expr.key:
        raise InvariantError(f"{s.name}: the root is not the last member{where}")
    known = {e.key for e in s.input_exprs}
    for m in s.members:
        for inp in m.inputs:
            if inp.key not in known:
                raise InvariantError(
                    f"{s.name}: member {m.name} reads {inp.name}, which is neither an earlier "
                    f"member nor a stage input{where}"
                )
        known.add(m.key)
