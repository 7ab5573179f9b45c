"""The optimization pipeline: named passes run in order, each ``Plan -> Plan``.

Read :func:`optimize` top to bottom to see everything that happens to a
plan. Any pass can be left out (config ``optimize.passes``) and results
stay identical; only speed and placement change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from lazyarr.optimize.check import check_plan
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.passes import cse, fuse, layout, memory, place, pushdown, reblock, simplify
from lazyarr.optimize.plan import PassRecord, Plan

__all__ = ["PASSES", "PassContext", "optimize", "optimize_until"]


PassFn = Callable[[Plan, PassContext], Plan]

# The order passes run in. reblock, layout and place only act when there are several workers.
PASSES: dict[str, PassFn] = {
    "pushdown": pushdown.run,
    "reblock": reblock.run,
    "cse": cse.run,
    "simplify": simplify.run,
    "fuse": fuse.run,
    "layout": layout.run,
    "place": place.run,
    "memory": memory.run,
}


def optimize(plan: Plan, passes: Sequence[str], ctx: PassContext) -> Plan:
    """Run ``passes`` (names, in pipeline order) over ``plan``."""
    unknown = [p for p in passes if p not in PASSES]
    if unknown:
        raise KeyError(f"unknown optimization pass(es) {unknown}; known: {list(PASSES)}")
    if ctx.check:
        check_plan(plan, "build")
    history = list(plan.history)
    for name, fn in PASSES.items():
        if name not in passes:
            continue
        t0 = time.perf_counter()
        before = len(plan.stages)
        plan = fn(plan, ctx)
        seconds = time.perf_counter() - t0
        history.append(PassRecord(name, seconds, f"{before} -> {len(plan.stages)} stages"))
        if ctx.check:
            check_plan(plan, name)
    return plan.replace(history=tuple(history), memory_limit=ctx.memory_limit, joint=ctx.joint)


def optimize_until(plan: Plan, last: str, passes: Sequence[str], ctx: PassContext) -> Plan:
    """Run the enabled passes up to and including ``last`` (for tests and pictures)."""
    if last not in PASSES:
        raise KeyError(f"unknown optimization pass {last!r}; known: {list(PASSES)}")
    names = list(PASSES)
    upto = names[: names.index(last) + 1]
    return optimize(plan, [p for p in upto if p in passes], ctx)
