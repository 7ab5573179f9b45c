"""Memory planning: what one block holds, and what a whole run holds at its peak.

:func:`block_peak_bytes` is one task's working set (input regions, fused
temporaries, output; a reduce block adds its partials). :func:`estimate`
predicts the peak of one process (numba, numpy) or one worker (dask):
the tasks that run at once times the largest working set, plus the
blocks that stay stored at once: one block per task at once waiting for
its reader, stages that two stages read are held
whole (the second reader may start only after the first has read every
block, as with ``(x - x.mean(0)) / x.std(0)``), blocks each read by many
later blocks kept until their last reader (:mod:`lazyarr.optimize.fanout`:
a rechunk to other strips holds its whole input), and the results gathered
into this process. The ``memory`` pass uses it to make large generated and
read sources inside each reader instead of holding them; compute refuses
a plan whose estimate exceeds ``memory-limit`` (:class:`MemoryLimitError`),
unless the executor bounds its tasks at once by bytes
(:func:`in_flight_budget`) and one task at a time fits.
"""

from __future__ import annotations

import dataclasses
import math

from dask.utils import format_bytes

from lazyarr.graph.blockrules import contraction, n_contraction_parts, region_parts
from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads, member_regions, root_input_regions
from lazyarr.graph.ops.creation import Windowed
from lazyarr.graph.ops.overlap import Overlap
from lazyarr.graph.ops.store import Write
from lazyarr.optimize.fanout import already_in_memory, fanout_holds, handed_off, worker_share
from lazyarr.optimize.heap import heap_page_slack
from lazyarr.optimize.placement.planner import (
    fan_in,
    fold_width,
    folds_parts,
    gathers,
    parts_kept_folding,
)
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "MemoryEstimate",
    "MemoryLimitError",
    "block_peak_bytes",
    "estimate",
    "gathered_bytes",
    "held_whole",
    "in_flight_budget",
    "threads_that_fit",
    "largest_block",
    "largest_block_bytes",
    "region_size",
]


def largest_block(expr: Expr) -> tuple[tuple[int, ...], Region]:
    """The index and region of the block with the largest chunk along every axis (the
    first such block: C-level ``max`` and ``index`` on the chunk tuples, and their offsets
    remembered, as this runs for every stage several times per plan)."""
    index = tuple(c.index(max(c)) if c else 0 for c in expr.chunks)
    region = []
    for c, i in zip(expr.chunks, index):
        start = offsets(c)[i] if c else 0
        region.append(slice(start, start + (c[i] if c else 0)))
    return index, tuple(region)


def largest_block_shape(expr: Expr) -> tuple[int, ...]:
    """The shape of ``expr``'s largest block."""
    return tuple(r.stop - r.start for r in largest_block(expr)[1])


def largest_block_bytes(expr: Expr) -> int:
    """Bytes of ``expr``'s largest block."""
    return region_size(largest_block(expr)[1]) * expr.dtype.itemsize


def region_size(region: Region) -> int:
    return math.prod(max(r.stop - r.start, 0) for r in region)


def _group_bytes(
    stage: Stage, members: tuple[Expr, ...], root_inputs: tuple, temporaries: bool = True
) -> int:
    """Bytes held computing ``members``' root once: the input regions it reads and one
    temporary per non-root member (the NumPy reference keeps them; generated kernels
    keep fewer)."""
    need = member_regions(members, root_inputs)
    temps = sum(region_size(need[m.key]) * m.dtype.itemsize for m in members[:-1])
    if not temporaries:
        temps = 0
    reads = external_reads(members, stage.input_exprs, root_inputs, need)
    held = sum(region_size(r) * stage.input_exprs[pos].dtype.itemsize for pos, r in reads)
    return temps + held


def _padded_bytes(expr: Expr, out: Region) -> int:
    """Bytes of a ``map_overlap`` function's result for block ``out``: the block with its
    lead array's halo on every side (at most), before the halo is cut off."""
    depth = expr.op.depths[expr.op.lead]
    lead = expr.ndim - len(depth)
    extent = [s.stop - s.start for s in out]
    for ax, (before, after) in enumerate(depth):
        extent[lead + ax] += before + after
    return math.prod(extent) * expr.dtype.itemsize


def block_peak_bytes(stage: Stage, temporaries: bool = True) -> int:
    """Inputs read, temporaries and output of the largest block, in bytes.

    A map block holds the input regions it reads, its fused temporaries and
    its output; a contraction computed part by part holds one part's worth
    plus the sum. A reduce block also holds one partial result per reduced
    block.
    """
    expr = stage.expr
    _, out = largest_block(expr)
    out_bytes = region_size(out) * expr.dtype.itemsize
    if stage.kind == "source":
        return out_bytes
    members = stage.members
    if stage.kind == "map":
        if contraction(expr) is not None and (stage.fused or n_contraction_parts(expr) > 1):
            parts = region_parts(expr, out)
            worst = max((_group_bytes(stage, members, p, temporaries) for p in parts), default=0)
            return 2 * out_bytes + worst  # the running sum and one partial product
        held = out_bytes + _group_bytes(
            stage, members, root_input_regions(members, out), temporaries
        )
        if isinstance(expr.op, Overlap) and expr.op.trim:  # the function's padded result
            held += _padded_bytes(expr, out)
        if isinstance(expr.op, Write) and not getattr(expr.op.target, "in_memory", False):
            copy = getattr(expr.op.target, "copy_bytes", None)  # what the writer copies
            block = expr.inputs[0]
            held += largest_block_bytes(block) if copy is None else copy(largest_block_shape(block))
        return held
    # reduce: one body block at a time, plus the partials of every reduced block
    body = expr.inputs[0]
    _, body_region = largest_block(body)
    body_members = members[:-1]
    if body_members:
        held = _group_bytes(
            stage, body_members, root_input_regions(body_members, body_region), temporaries
        )
        if temporaries:  # NumPy kernels make the body block; a generated loop folds as it goes
            held += region_size(body_region) * body.dtype.itemsize
    else:
        held = region_size(body_region) * body.dtype.itemsize
    return held + partials_bytes(stage)


def partials_bytes(stage: Stage, workers: int = 1, folded: bool = True, in_flight: int = 0) -> int:
    """What a reduce block keeps besides its body block: the partial state of every reduced
    block (a variance's count, mean and squared deviations: its op's ``state_itemsize``) and
    the output block. ``folded``, ``in_flight``: on a cluster, as :func:`kept_parts`."""
    expr = stage.expr
    _, out = largest_block(expr)
    out_bytes = region_size(out) * expr.dtype.itemsize
    if expr.op.gathers:  # the partials are slices of the block: together its size
        return 2 * out_bytes
    body = expr.inputs[0]
    reduced = math.prod(body.numblocks[a] for a in expr.op.axes if a < body.ndim)
    kept = kept_parts(stage, reduced, workers, folded, in_flight)
    return kept * part_bytes(stage) + out_bytes


def part_bytes(stage: Stage) -> int:
    """Bytes of one partial state of a reduce stage's largest output block."""
    expr = stage.expr
    _, out = largest_block(expr)
    state = region_size(out) * expr.op.state_itemsize(expr.inputs[0], expr)
    return max(state, region_size(out) * expr.dtype.itemsize, expr.dtype.itemsize)


def kept_parts(
    stage: Stage, parts: int, workers: int = 1, folded: bool = True, in_flight: int = 0
) -> int:
    """Partial states of one output block alive at once in one process: all of them, or,
    where the lowering combines them in a tree as they are made in one process
    (``folds_parts``), a group being filled, the groups' combined states and one more made
    while a combine runs. On a cluster a worker combines its share of them ``fan_in`` at a
    time (``combine_schedule``): as they are made where its ready tasks follow the
    schedule's ready order (``folded``: combines first, parts in the tree's order), plus
    ``in_flight`` parts made while a combine goes round the scheduler (two batches of
    them: the quadratic means, 44 parts of a worker in batches of 4, measured 24 kept;
    this says 28); else all of them until the tree combines them (Dask's own order ran the
    partials first: measured, 22 x 3 of 1 MiB per worker)."""
    if workers > 1:
        share = math.ceil(parts / workers)
        folding = parts_kept_folding(share, fan_in(stage)) + in_flight
        return min(share, folding) if folded else share
    if not folds_parts(stage, parts):
        return parts
    return parts_kept_folding(parts, fold_width(stage, parts))


class MemoryLimitError(MemoryError):
    """A plan's predicted peak exceeds ``memory-limit``; raised before anything runs."""


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """The predicted peak bytes of one process or worker, and where they come from."""

    peak: int
    block_bytes: int
    """The largest working set of one task."""
    block_stage: str
    """The stage with that working set ("" for a plan without tasks)."""
    tasks_at_once: int
    held: int
    """Bytes of blocks stored at once: stages held whole, and gathered results."""
    held_stages: tuple[str, ...]
    waiting: int = 0
    """The largest stored block: one per task at once may wait for its reader."""
    fanout: int = 0
    """Of ``held``: blocks kept until their last reader where each is read many times
    (a rechunk, a transpose in other chunks: :mod:`lazyarr.optimize.fanout`)."""

    io_buffer: int = 0
    """The chunk buffers each thread keeps: one stored chunk decoded, one chunk gathered.
    A thread keeps them between its tasks: they count per thread, not per running task."""
    fetched: int = 0
    """On a cluster, blocks a worker fetches for its next tasks while one runs."""
    runtime: int = 0
    """The executor's own growth: its bookkeeping per block (:data:`TASK_BYTES`) and per
    running thread (:data:`THREAD_STATE_BYTES`) and the huge page its heap may hold beyond
    its blocks (:mod:`lazyarr.optimize.heap`); on a Dask worker its batches' floor and
    its heap's share of a task (:data:`WORKER_HEAP_SHARE`)."""
    threads: int = 0
    """Threads that keep chunk buffers (0: as many as tasks at once)."""
    partials: int = 0
    """Reductions' partial states kept until their output block is finished (and the
    partly made output blocks), for as many output blocks as run at once."""

    @property
    def fixed(self) -> int:
        """What does not grow with the tasks at once: blocks held and fetched ahead, partial
        states, bookkeeping."""
        return self.held + self.fetched + self.partials + self.runtime

    @property
    def buffers(self) -> int:
        """The chunk buffers of every thread."""
        return (self.threads or self.tasks_at_once) * self.io_buffer

    @property
    def per_task(self) -> int:
        """Bytes each task at once accounts for: its working set and a block waiting."""
        return self.block_bytes + self.waiting

    def peak_with(self, threads: int) -> int:
        """The peak when ``threads`` threads keep their chunk buffers and one task runs."""
        return self.fixed + threads * self.io_buffer + self.per_task

    def parts(self) -> str:
        """What the peak is made of: tasks at once, blocks held, blocks fetched ahead."""
        where = f" ({self.block_stage})" if self.block_stage else ""
        parts = f"{self.tasks_at_once} x {_fmt(self.per_task)} per task{where}"
        if self.io_buffer:
            threads = self.threads or self.tasks_at_once
            parts += f" + {threads} x {_fmt(self.io_buffer)} chunk buffers per thread"
        if self.partials:
            parts += f" + {_fmt(self.partials)} partial states"
        if self.held:
            parts += f" + {_fmt(self.held)} held ({', '.join(self.held_stages) or 'results'})"
        if self.fetched:
            parts += f" + {_fmt(self.fetched)} fetched ahead"
        if self.runtime:
            parts += f" + {_fmt(self.runtime)} run bookkeeping and heap slack"
        return parts

    def explain(self, limit: int | None) -> str:
        """One line: the peak and its parts (and the limit, when there is one)."""
        over = f" > memory-limit {_fmt(limit)}" if limit is not None and self.peak > limit else ""
        return f"predicted peak {_fmt(self.peak)}{over}: {self.parts()}"


def _fmt(n: float) -> str:
    return format_bytes(int(n))  # lazyarr's one byte formatter: dask's binary units


def held_whole(plan: Plan, joint: bool | None = None) -> list[str]:
    """Stored stages that two or more stages read: all their blocks may be alive at once.

    ``joint`` (default: ``plan.joint``): siblings computed as joint tasks are one reader
    (their joint task reads a shared block once, and makes a source's in place).
    """
    joint = plan.joint if joint is None else joint
    unit = {}
    if joint:
        for names in plan.siblings:
            unit.update(dict.fromkeys(names, names[0]))
    readers = plan.readers
    return [
        n
        for n, s in plan.stages.items()
        if len({unit.get(r, r) for r in readers[n]}) >= 2
        and not s.regenerate
        and not already_in_memory(s)
    ]


def gathered_bytes(plan: Plan) -> int:
    """Bytes of the results a compute brings into the calling process (writes bring counts)."""
    return sum(
        plan.stages[o].expr.nbytes
        for o in plan.outputs
        if not isinstance(plan.stages[o].expr.op, Write) and not already_in_memory(plan.stages[o])
    )


FETCHED_AHEAD = 3
"""Stored blocks a Dask worker may hold for its queued tasks beyond one per running task."""

TASK_BYTES = 256
"""What the executor's bookkeeping grows by per block of the plan (its lists, heaps and small
objects per task): measured on the numba executor at 100,000 blocks, 234 bytes per block in
the first run at that size (Python's small-object arenas growing), 30-75 after.
"""

WORKER_TASK_BYTES = 1024
"""The same on a Dask worker, per block it runs: its task states and their transition log
(an allowance: a 5.3 MiB axis mean measured 0.75 KiB over a prediction counting 256)."""

WORKER_HEAP_SHARE = 8
"""A Dask worker thread's heap keeps up to this fraction (1/8) of what one task and its
chunk buffers take beyond them, the first time it runs a plan's tasks (pieces of chunks
freed but not returned, its objects): the 2 GiB pencil rechunk, its staged reads made
inside their writes' tasks, measured 33.7 MiB on a worker for 31.3 counted without it
(22.9 on the same worker's second run)."""

BATCH_SHARES = 4
"""A Dask worker thread runs, reads and keeps finished this many batches of tasks at once
(``executors/dask_batches.py``): under a limit they share one task's working set."""

WORKER_BATCH_FLOOR = 64 << 10
"""The least a batch may hold on a Dask worker, so tasks of a few kB still run many to a
batch; a running thread's :data:`BATCH_SHARES` batches of it are counted."""

THREAD_STATE_BYTES = 16 << 10
"""What each thread running tasks adds while it runs them besides their blocks (frames, a
kernel call's arguments, a random generator's state): measured, 2.7 KiB per thread over the
blocks of a fused random chain.

Not counted, as one-time costs of the process rather than of a plan: compiling a kernel
(LLVM: 100-200 MiB while it runs, none once it is in numba's on-disk cache) and the first
start of the executor's threads (about 100 KiB each, kept for later runs)."""


def estimate(
    plan: Plan,
    tasks_at_once: int,
    workers: int = 1,
    gathered: bool = True,
    temporaries: bool = True,
) -> MemoryEstimate:
    """The peak of one process (``workers=1``) or of each of ``workers`` sharing the blocks.

    ``gathered``: the results end up in this process (local executors).
    ``temporaries``: fused members keep a temporary each (NumPy kernels); generated
    kernels compute a fused group in one loop without them.
    """
    # per task: its working set less a reduction's partials; the partials of one output
    # block are kept once, however many threads make them (for up to ``tasks_at_once``
    # output blocks at a time), and a joint task keeps every sibling's
    worst, where = 0, ""
    ready_order = not any(gathers(s) for s in plan.stages.values())  # schedule.ready_priorities
    reduces = []
    for s in plan.stages.values():
        if already_in_memory(s) or isinstance(s.expr.op, Windowed):
            continue  # a source's blocks are counted in its readers' working sets
        b = block_peak_bytes(s, temporaries)
        if s.kind == "reduce":  # its working set counts one process's partials: apart here
            b -= partials_bytes(s)
            reduces.append(s)
        if b > worst:
            worst, where = b, s.name
    held_names = held_whole(plan)
    fans = fanout_holds(plan, skip=set(held_names))
    fanout = sum(f.held for f in fans)
    # on a cluster each worker keeps its share of a stage held whole, and copies of the
    # blocks its tasks fetch from other workers
    whole = sum(worker_share(plan, n, workers) for n in held_names)
    if workers > 1:  # a worker fetches every whole input block of a task before it starts
        for f in fans:
            need = f.task_inputs + largest_block_bytes(plan.stages[f.reader].expr)
            if need > worst:
                worst, where = need, f.reader
    held_names = held_names + [f.stage for f in fans if f.held]
    results = gathered_bytes(plan)
    held = whole + math.ceil(fanout / max(1, workers)) + (results if gathered else 0)
    # a stored block waits for its reader: up to one per task at once, where a reader waits
    # for other blocks too (a block handed straight to its one reader is counted in that
    # reader's working set: locally its reader runs next; on Dask it is made inside its
    # reader's task, or its batch shares the reader's budget; not where an op orders tasks)
    hands_off = gathered or ready_order
    swept = {f.stage for f in fans}  # read many times over: not handed off (no second sweep)
    waiting = max(
        (
            largest_block_bytes(s.expr)
            for s in plan.stages.values()
            if s.kind != "source"
            and s.name not in plan.outputs
            and not (hands_off and s.name not in swept and handed_off(plan, s.name))
        ),
        default=0,
    )
    partials = _kept_partials(
        plan, reduces, tasks_at_once, workers, ready_order, (worst + waiting) * tasks_at_once
    )
    io_buffer = _read_buffer(plan)
    # a Dask worker gathers the inputs of the tasks queued on it while one runs: measured,
    # up to three blocks beyond the one waiting per task (a 0.66 GiB pencil rechunk on 2
    # workers: +73/+71 MiB, with 13.5 MB blocks and one task's working set of 38 MB)
    fetched = 0 if gathered else FETCHED_AHEAD * waiting
    per_block = TASK_BYTES if gathered else WORKER_TASK_BYTES
    runtime = math.ceil(per_block * plan.total_blocks / max(1, workers))
    blocks = [largest_block_bytes(s.expr) for s in plan.stages.values()]
    runtime += (THREAD_STATE_BYTES + heap_page_slack(blocks)) * tasks_at_once
    if not gathered:
        heap = math.ceil((worst + waiting + io_buffer) / WORKER_HEAP_SHARE)
        runtime += (BATCH_SHARES * WORKER_BATCH_FLOOR + heap) * tasks_at_once
    peak = tasks_at_once * (worst + waiting + io_buffer) + partials + held + fetched + runtime
    # (``tasks_at_once`` threads, each with its chunk buffers)
    return MemoryEstimate(
        peak,
        worst,
        where,
        tasks_at_once,
        held,
        tuple(held_names),
        waiting,
        math.ceil(fanout / max(1, workers)),
        io_buffer,
        fetched,
        runtime,
        partials=partials,
    )


def _kept_partials(
    plan: Plan, reduces: list[Stage], tasks_at_once: int, workers: int, folded: bool, task: int
) -> int:
    """The partial states kept at once, for up to ``tasks_at_once`` output blocks: the
    largest reduce stage's, or a joint task's siblings' together. On a cluster, with the
    tasks in the ready order (``folded``), a worker keeps two batches of parts beyond its
    fold: a batch of partials takes a :data:`BATCH_SHARES`-th of the ``task`` bytes a
    thread's batches share, in parts of a joint task's states together."""
    unit = {s.name: (s.name,) for s in reduces}
    if plan.joint:
        for names in plan.siblings:
            together = tuple(n for n in names if plan.stages[n].kind == "reduce")
            unit.update(dict.fromkeys(together, together))

    def kept(s: Stage) -> int:
        in_flight = 0
        if workers > 1 and folded:
            per_part = sum(part_bytes(plan.stages[n]) for n in unit[s.name])
            in_flight = 2 * max(1, task // BATCH_SHARES // max(1, per_part))
        return min(tasks_at_once, s.nblocks) * partials_bytes(s, workers, folded, in_flight)

    units = set(unit.values())
    return max((sum(kept(plan.stages[n]) for n in names) for names in units), default=0)


def _read_buffer(plan: Plan) -> int:
    """The buffers each thread keeps for chunk files (``io/zarr_chunks.py``): what reading
    the largest stored chunk keeps (its encoded bytes, or for zarr chunks that stream from
    their files zstd's window or nothing: ``ChunkFiles.read_buffer_bytes``), one of the
    largest chunk a reader decodes whole to copy a part of it (its blocks cut the stored
    chunks, or the array's edge does), and one of the largest chunk any writer gathers out
    of its block."""
    read, gather = 0, 0
    for s in plan.stages.values():
        for m in s.members:
            reader = getattr(m.op, "reader", None)
            chunks = getattr(reader, "chunks", None)
            if chunks:
                cuts = _cuts_chunks(reader, chunks, m)
                files = getattr(reader, "files", None)
                if files is not None:  # a zarr array's chunk files (ZarrReader)
                    read = max(read, files.read_buffer_bytes(cuts))
                else:
                    chunk = math.prod(chunks) * m.dtype.itemsize
                    read = max(read, chunk * (2 if cuts else 1))
        kept = getattr(getattr(s.expr.op, "target", None), "buffer_bytes", None)
        if isinstance(s.expr.op, Write) and kept is not None:
            gather = max(gather, kept(largest_block_shape(s.expr.inputs[0])))
    return read + gather


def _cuts_chunks(reader: object, chunks: tuple[int, ...], expr: Expr) -> bool:
    """Some block of ``expr`` (a read of ``reader``) takes part of a stored chunk, copied
    out of a buffer (a piece as it streams, or the chunk decoded whole): a block edge
    inside a chunk, or a chunk cut by the stored array's edge. Cuts along the first axis
    alone are not, where the reader decodes a chunk's rows straight into the block
    (``ZarrReader``: raw or zstd chunks)."""
    shape = getattr(reader, "shape", None)
    if shape is None or len(shape) != len(chunks) or expr.shape != tuple(shape):
        return True  # a region of the store (pushed-down slicing): any chunk may be cut
    cut = [
        n % c != 0 or any(b % c for b in offsets(bs))
        for n, c, bs in zip(shape, chunks, expr.chunks)
    ]
    files = getattr(reader, "files", None)
    if any(cut[1:]) or files is None or not files.streams():
        return any(cut)
    return False


def threads_that_fit(est: MemoryEstimate, limit: int) -> int:
    """The most threads, up to ``est.tasks_at_once``, whose chunk buffers leave room under
    ``limit`` for one task besides what is held (0: not even one thread)."""
    for threads in range(est.tasks_at_once, 0, -1):
        if est.peak_with(threads) <= limit:
            return threads
    return 0


def in_flight_budget(
    plan: Plan, limit: int, gathered: bool = True, temporaries: bool = True, threads: int = 1
) -> tuple[int, dict[str, int]]:
    """Bytes the running tasks' working sets may take together under ``limit`` (what the
    held stages, gathered results, bookkeeping and the chunk buffers of ``threads`` threads
    leave), and one task's working set per stage (a stored block waiting for its reader
    included)."""
    est = estimate(plan, 1, 1, gathered, temporaries)
    need = {}
    for name, s in plan.stages.items():
        if already_in_memory(s) or isinstance(s.expr.op, Windowed):
            need[name] = largest_block_bytes(s.expr)
        else:
            kept = partials_bytes(s) if s.kind == "reduce" else 0
            need[name] = block_peak_bytes(s, temporaries) - kept + est.waiting
    budget = limit - est.fixed - threads * est.io_buffer
    return max(0, budget), need
