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

On a cluster, a source whose blocks are each read by a few tasks of one
stage (at most :data:`REMAKE_READS`: a window's neighbours, a rechunk by a
little) is made inside each of those tasks too. Held, a block waits for
readers placed on other workers, and a worker with nothing else ready reads
on: a 7-day rolling mean's worker read 40 blocks (150 MiB) ahead of their
readers, for 26 MiB predicted. Made again, each task reads just its region,
and no block moves.

``plan.notes["memory"]``: per regenerated source, why, and what making it
once more costs in seconds of one thread at the measured speeds
(``ctx.costs``; the cost model's constants without them).
"""

from __future__ import annotations

from lazyarr.graph.ops.creation import Windowed
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.fanout import fanout_holds
from lazyarr.optimize.memory import held_whole
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.timing import DEFAULT_COSTS, remake_seconds

__all__ = ["HOLD_CHUNKS", "REMAKE_READS", "hold_budget", "run"]

HOLD_CHUNKS = 16
"""Without a memory limit, sources up to this many ``array.chunk-size`` blocks are held."""

REMAKE_READS = 3
"""On a cluster, a source whose blocks are each read by at most this many tasks is made
inside each of them (a window reaching both neighbours; more reads would multiply the
source's reading cost)."""


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
    if ctx.n_workers > 1:
        for f in fanout_holds(plan, skip=set(held_whole(plan))):
            s = stages[f.stage]
            if not isinstance(s.expr.op, Windowed) or not 2 <= f.most_reads <= REMAKE_READS:
                continue
            stages[f.stage] = s.replace(regenerate=True)
            notes[f.stage] = (
                f"made inside each task that reads it: on a cluster a block read by "
                f"{f.most_reads} tasks would wait for readers on other workers; making it "
                f"again costs about {remake_seconds(s, speed) * (f.most_reads - 1):.3g} s of "
                "one thread"
            )
    if not notes:
        return plan
    out = plan.with_stages(stages)
    out.notes["memory"] = notes
    return out
