"""The ``reblock`` pass: block shapes chosen for the machine, for sources whose values
do not depend on their blocks.

**Tiny blocks merged** (every executor): a block costs tens of microseconds
of bookkeeping whatever its size, so blocks of generated sources (below)
and of in-memory arrays (``asarray``) smaller than ``array.min-chunk-size``
are merged, whole runs of blocks at a time (:func:`coarse_chunks`): 100,000
blocks of 100 elements become 77 blocks of about 1 MiB. Boundaries only
disappear, so arrays that shared a grid still line up.

**Blocks for the cluster** (several workers): ``chunks="auto"`` is decided
when an expression is written, before any executor is known. Generated
sources (random with a seed, zeros, ones, full, arange, linspace, eye:
:class:`~lazyarr.graph.ops.creation.Generated`) have values that do not
depend on their blocks, so when the user left their chunks to lazyarr
(``op.auto_chunks``) and the plan runs on several workers, this pass gives
them NumS's block shapes instead
(:func:`~lazyarr.optimize.placement.layout.suggest_chunks`: about
``placement.blocks-per-worker`` blocks per worker, never blocks over
``array.chunk-size`` (nor, under ``memory-limit``, over a sixth of a worker
thread's share of it), one block size per axis length across the whole plan
so matmul and elementwise operands align). Sources under
``placement.reblock-min-bytes`` keep their blocks.

**Stored sources for the cluster** (several workers): a zarr, HDF5 or
``.npy`` source whose blocks lazyarr chose (multiples of the stored chunks
near ``array.chunk-size``) and that has fewer than
:data:`READ_BLOCKS_PER_WORKER` blocks per worker thread is read in smaller
multiples of its stored chunks, so the workers share it evenly.

Every stage downstream is rebuilt over the new inputs with its chunks
derived again by its op's own rule (:func:`~lazyarr.graph.rewrite.rederive`);
stage names stay. A rechunk keeps its given chunks (what follows it is
unchanged). When a changed grid would reach an op without such a rule
(scans, sorts, indexing, ...: their structure was built for their input's
grid), the sources behind it keep their blocks. Values never change.

Runs first (before ``cse`` and ``fuse``: stage grids depend on chunks); the
cluster part only when ``ctx.n_workers > 1`` (executors with workers: Dask;
the local executors report none). ``plan.notes["reblock"]``: per source
stage, what was done and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dask.utils import format_bytes

from lazyarr.graph.chunks import Chunks, aligned_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.creation import FromArray, FromReader, Generated
from lazyarr.graph.rewrite import follows_inputs, rederive
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.placement.layout import suggest_chunks
from lazyarr.optimize.plan import Plan

__all__ = ["describe_chunks", "run"]

WORKING_SETS_PER_BLOCK = 6
"""Under ``memory-limit``, a generated source's blocks for a cluster take at most this
fraction of a worker thread's share: a task's inputs, temporaries and output, a block
waiting and the blocks fetched ahead (a 190 MB random chain was made in 4 blocks of 48 MB
for 2 workers under 64 MiB each, and refused)."""


def describe_chunks(chunks: Chunks) -> str:
    """A short text of a block grid: ``(2x2000, 2x2000)``, ``(3x1334+1332)``."""
    parts = []
    for c in chunks:
        if len(c) == 1:
            parts.append(str(c[0]))
        elif len(set(c[:-1])) == 1 and c[-1] <= c[0]:
            body = f"{len(c) - 1}x{c[0]}" if len(c) > 2 else str(c[0])
            parts.append(f"{len(c)}x{c[0]}" if c[-1] == c[0] else f"{body}+{c[-1]}")
        else:
            parts.append("+".join(map(str, c)))
    return "(" + ", ".join(parts) + ")"


def _candidates(plan: Plan, min_bytes: int) -> list[str]:
    """Auto-chunked generated source stages worth re-blocking, largest first."""
    out = []
    for name, s in plan.stages.items():
        op = s.expr.op
        if (
            len(s.members) == 1
            and isinstance(op, Generated)
            and op.auto_chunks
            and s.expr.size > 0
            and s.expr.nbytes >= min_bytes
        ):
            out.append(name)
    return sorted(out, key=lambda n: (-plan.stages[n].expr.nbytes, n))


READ_BLOCKS_PER_WORKER = 4
"""Blocks per worker an auto-chunked stored source is read in, at least (where its stored
chunks allow): with about one per worker, the last block decides the stage's time (5
blocks on 2 workers ran 3 against 2)."""


def _stored_candidates(plan: Plan, n_workers: int) -> dict[str, Chunks]:
    """Auto-chunked stored sources with fewer than :data:`READ_BLOCKS_PER_WORKER` blocks per
    worker, and the smaller multiples of their stored chunks that give them more."""
    out = {}
    for name, s in plan.stages.items():
        e = s.expr
        op = e.op
        stored = getattr(getattr(op, "reader", None), "chunks", None)
        if (
            len(s.members) != 1
            or not isinstance(op, FromReader)
            or not op.auto_chunks
            or op.window is not None
            or stored is None
            or e.size == 0
            or math.prod(e.numblocks) >= READ_BLOCKS_PER_WORKER * n_workers
        ):
            continue
        target = -(-e.nbytes // (READ_BLOCKS_PER_WORKER * n_workers))
        chunks = aligned_chunks(e.shape, e.dtype.itemsize, stored, target)
        if math.prod(len(c) for c in chunks) > math.prod(e.numblocks):
            out[name] = chunks
    return out


def _propagate(
    plan: Plan, chunks: dict[str, Chunks]
) -> tuple[dict[str, Expr], tuple[str, frozenset[str]] | None]:
    """New expressions of every stage that changes, or the first stage that cannot follow.

    ``chunks``: new chunks of source stages. On a conflict returns the stage
    whose op has no chunk rule and the sources whose grids reached it.
    """
    new: dict[str, Expr] = {}
    origin: dict[str, frozenset[str]] = {}
    for name, s in plan.stages.items():
        e = s.expr
        if name in chunks:
            new[name] = Expr(e.op, (), e.shape, e.dtype, chunks[name], e.user_name)
            origin[name] = frozenset((name,))
            continue
        if not any(i in new for i in s.inputs):
            continue
        src = frozenset().union(*(origin[i] for i in s.inputs if i in origin))
        if len(s.members) != 1:
            return new, (name, src)
        inputs = tuple(new.get(i, x) for i, x in zip(s.inputs, e.inputs, strict=True))
        if all(a.chunks == b.chunks for a, b in zip(inputs, e.inputs)):
            new[name] = Expr(e.op, inputs, e.shape, e.dtype, e.chunks, e.user_name)
        elif follows_inputs(e):
            new[name] = rederive(e, inputs)
        else:
            return new, (name, src)
        origin[name] = src
    return new, None


def coarse_chunks(chunks: Chunks, itemsize: int, min_bytes: int) -> Chunks:
    """``chunks`` with runs of whole blocks merged until a full block holds ``min_bytes``.

    Merges along the last axis first (C-ordered rows stay contiguous), then
    the ones before it; block boundaries only disappear, none is added, so
    arrays that shared a grid still line up after the same merge.
    """
    full = itemsize
    for c in chunks:
        full *= max(c)
    need = -(-min_bytes // max(full, 1))
    out = list(chunks)
    for ax in range(len(chunks) - 1, -1, -1):
        if need <= 1:
            break
        blocks = chunks[ax]
        k = min(need, len(blocks))
        if k > 1:
            out[ax] = tuple(sum(blocks[i : i + k]) for i in range(0, len(blocks), k))
            need = -(-need // k)
    return tuple(out)


def _coarse_candidates(plan: Plan, min_bytes: int) -> list[str]:
    """Generated or in-memory source stages whose full blocks are under ``min_bytes``."""
    out = []
    for name, s in plan.stages.items():
        e = s.expr
        if len(s.members) != 1 or not isinstance(e.op, (Generated, FromArray)) or e.size == 0:
            continue
        full = e.dtype.itemsize
        for c in e.chunks:
            full *= max(c)
        if full < min_bytes and math.prod(e.numblocks) > 1:
            out.append(name)
    return out


def _rechunk(
    plan: Plan,
    todo: list[str],
    choose: Callable[[list[str]], dict[str, Chunks]],
    notes: dict[str, str],
    why: str,
) -> Plan:
    """``plan`` with the sources ``todo`` given the chunks ``choose`` picks, downstream rebuilt.

    Sources whose new grid would reach an op without a chunk rule keep
    their blocks (and ``choose`` is asked again without them).
    """
    while True:
        chunks = {n: c for n, c in choose(todo).items() if c != plan.stages[n].expr.chunks}
        new, conflict = _propagate(plan, chunks)
        if conflict is None:
            break
        stage, sources = conflict
        op = plan.stages[stage].expr.op.label()
        for src in sources:
            old = describe_chunks(plan.stages[src].expr.chunks)
            notes[src] = f"kept {old}: feeds {op} ({stage}), whose blocks follow its input's"
        todo = [t for t in todo if t not in sources]
    for name, c in chunks.items():
        old = describe_chunks(plan.stages[name].expr.chunks)
        notes[name] = f"rechunked {old} -> {describe_chunks(c)} {why}"
    if not new:
        return plan
    stages = {}
    for name, s in plan.stages.items():
        e = new.get(name)
        stages[name] = s if e is None else s.replace(expr=e, members=(e,), input_exprs=e.inputs)
    return plan.with_stages(stages)


def run(plan: Plan, ctx: PassContext) -> Plan:
    notes: dict[str, str] = {}
    small = ctx.min_block_bytes
    if small > 0:
        todo = _coarse_candidates(plan, small)
        if todo:

            def merged(names: list[str]) -> dict[str, Chunks]:
                out = {}
                for name in names:
                    e = plan.stages[name].expr
                    out[name] = coarse_chunks(e.chunks, e.dtype.itemsize, small)
                return out

            why = f"(blocks under {format_bytes(int(small))} merged)"
            plan = _rechunk(plan, todo, merged, notes, why)
    n = ctx.n_workers
    todo = _candidates(plan, ctx.reblock_min_bytes) if n > 1 else []
    if todo:
        per_worker, max_block = ctx.blocks_per_worker, ctx.chunk_size
        if ctx.memory_limit is not None:  # a task's working set fits a thread's share
            share = ctx.memory_limit // (WORKING_SETS_PER_BLOCK * max(1, ctx.threads))
            max_block = max(1, min(max_block, share))

        def suggested(names: list[str]) -> dict[str, Chunks]:
            memo: dict[int, int] = {}
            out = {}
            for name in names:
                e = plan.stages[name].expr
                size = e.dtype.itemsize
                c = suggest_chunks(e.shape, size, n, per_worker, None, 0, memo, max_block)
                out[name] = c
                if c == e.chunks:
                    notes[name] = f"kept {describe_chunks(c)}: already right for {n} workers"
            return out

        plan = _rechunk(plan, todo, suggested, notes, f"for {n} workers")
    slots = n * max(1, ctx.threads)
    stored = _stored_candidates(plan, slots) if n > 1 else {}
    if stored:

        def smaller(names: list[str]) -> dict[str, Chunks]:
            return {name: stored[name] for name in names}

        why = f"(read in more blocks for {slots} worker threads)"
        plan = _rechunk(plan, list(stored), smaller, notes, why)
    if not notes:
        return plan
    out = plan.with_stages(dict(plan.stages))
    out.notes["reblock"] = dict(sorted(notes.items()))
    return out
