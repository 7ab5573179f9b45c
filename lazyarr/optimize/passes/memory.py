"""Memory pass: large sources that two stages read are made again by each reader, not held.

``(x - x.mean(0)) / x.std(0)`` reads ``x`` twice, and the second read can
start only after the first has seen every block; holding ``x`` whole
between them costs its full size. A generated source (``la.random``...)
or a stored one (zarr, HDF5, ``.npy``) can instead be made again inside
each task that reads it: random values cost a few ns per element, a disk
read costs a second pass over the file. Such a source is marked
``regenerate`` when holding it would take more than a quarter of the
memory limit (per worker), or, without a limit, more than
:data:`HOLD_CHUNKS` blocks of ``array.chunk-size``. The lowering then makes
its blocks inside every reader (local executors).

``plan.notes["memory"]``: per regenerated source, why, and what making it
once more costs in seconds of one thread at the measured speeds
(``ctx.costs``; the cost model's constants without them).
"""

from __future__ import annotations

from lazyarr.graph.ops.creation import Windowed
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.memory import held_whole
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.timing import DEFAULT_COSTS, remake_seconds

__all__ = ["HOLD_CHUNKS", "hold_budget", "run"]

HOLD_CHUNKS = 16
"""Without a memory limit, sources up to this many ``array.chunk-size`` blocks are held."""


def hold_budget(ctx: PassContext) -> int:
    """Bytes (per worker) a source read by two stages may take while held whole."""
    if ctx.memory_limit is not None:
        return ctx.memory_limit // 4
    return HOLD_CHUNKS * ctx.chunk_size


def run(plan: Plan, ctx: PassContext) -> Plan:
    budget = hold_budget(ctx)
    speed = (ctx.costs or DEFAULT_COSTS).slowest()
    stages = dict(plan.stages)
    notes: dict[str, str] = {}
    for name in held_whole(plan, ctx.joint):
        s = stages[name]
        if not isinstance(s.expr.op, Windowed):
            continue
        per_worker = s.expr.nbytes // max(1, ctx.n_workers)
        if per_worker > budget:
            stages[name] = s.replace(regenerate=True)
            n = len(plan.readers[name])
            notes[name] = (
                f"made inside each task of its {n} readers: holding it whole would take "
                f"{per_worker:,} bytes per worker, over {budget:,}; making it again costs "
                f"about {remake_seconds(s, speed):.3g} s of one thread"
            )
    if not notes:
        return plan
    out = plan.with_stages(stages)
    out.notes["memory"] = notes
    return out
