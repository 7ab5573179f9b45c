"""The ``dask`` executor: one Dask task per block, on a distributed cluster.

A plan becomes one Dask graph, sent in one message (:mod:`.dask_graph`;
per-task ``client.submit`` costs a scheduler message and client CPU per
block). Block ``index`` of a stage is a task whose arguments are the stage's
payload and the input blocks it reads (``blockwork.reads`` -> ``kernels.blocks.blocks_for_region``);
on the worker it assembles the regions and calls ``blockwork.compute_block``
with the worker's kernel set (generated Numba kernels when available, else NumPy;
config ``dask.kernels``). Stages the ``place`` pass marked ``"tree"``
(reductions, contractions) run as planned: one task per part on its
worker, the combine steps of ``placement.combine_schedule``, the block on
its owner. What a task needs of its stage is its payload: the stage with
its input expressions detached (no upstream user data, no futures), small
enough to ride inside each task (pickled once, unpickled once per worker),
else one payload task per stage that each worker fetches once. User arrays (``FromArray``,
locally persisted blocks) are split here and scattered, each block to its
planned worker; every other source is a task, so it has lineage and
survives a lost worker. The client holds futures of the kept stages'
blocks and, while a progress reporter counts finished blocks, of every
block; the other tasks (tree parts and steps, payloads) are the
scheduler's to free once read.

Placement (config ``dask.placement``): ``soft`` turns the planned workers
(``stage.worker``, tree parts) into loose worker restrictions (others may
take over: a lost worker never loses the computation), ``hard`` into
strict ones (a lost worker can stall the compute), ``scheduler`` ignores
them. Without a placement pass, tasks are unrestricted. A compute whose
scattered input died with its worker is submitted once more.

Which cluster: see :mod:`.dask_cluster`; what is measured: :mod:`.dask_stats`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
from dask.task_spec import TaskRef
from distributed import Client, Future, as_completed
from distributed.client import FutureCancelledError

from lazyarr import config
from lazyarr.graph.blockrules import contraction
from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import BlockStore, FromArray, FromBlocks
from lazyarr.graph.rewrite import swap_leaves
from lazyarr.kernels.blocks import blocks_for_region
from lazyarr.optimize.placement import (
    combine_schedule,
    contraction_part_reads,
    contraction_parts,
    host_ids,
    reduce_part_reads,
    reduce_parts,
)
from lazyarr.optimize.plan import Plan, Stage

from . import dask_stats
from .base import NullProgress, Progress, RunStats
from .blockwork import reads
from .dask_cluster import ClusterManager, SchedulerUnreachable, worker_info
from .dask_graph import TaskGraph
from .dask_tasks import (
    StagePayload,
    block_task,
    combine_task,
    detached,
    finalize_task,
    identity,
    part_task,
)
from .local import gather_owned

__all__ = ["DaskExecutor", "SchedulerUnreachable"]

Index = tuple[int, ...]
Blocks = dict[Index, TaskRef]
"""A stage's blocks: futures (scattered, persisted, kept) or tasks of the run's graph."""
Layout = tuple[tuple[int, Index], ...]
_CONTEXT_FRESH_S = 1.0
"""How long the workers :meth:`DaskExecutor.plan_context` saw stand for the live ones."""


def _is_local_data(stage: Stage) -> bool:
    """A source whose blocks are in this process (user data, locally persisted blocks)."""
    op = stage.expr.op
    return isinstance(op, FromArray) or (
        isinstance(op, FromBlocks) and op.store.executor != DaskExecutor.name
    )


def _is_dask_blocks(stage: Stage) -> bool:
    op = stage.expr.op
    return isinstance(op, FromBlocks) and op.store.executor == DaskExecutor.name


def _local_block(stage: Stage, index: Index) -> np.ndarray:
    op = stage.expr.op
    if isinstance(op, FromArray):
        return op.data.array[(*block_slices(stage.expr.chunks, index), Ellipsis)]
    return op.store.blocks[index]


def dependencies(
    stage: Stage, reads_: Sequence[tuple[int, Region]], inputs: Sequence[Blocks]
) -> tuple[Layout, list[TaskRef]]:
    """The input blocks that ``reads_`` touch: their (position, block index) and futures."""
    seen: dict[tuple[int, Index], None] = {}
    for pos, region in reads_:
        for bidx, _ in blocks_for_region(stage.input_exprs[pos].chunks, region):
            seen[(pos, bidx)] = None
    layout = tuple(seen)
    return layout, [inputs[pos][bidx] for pos, bidx in layout]


def _tree_parts(stage: Stage) -> np.ndarray | None:
    """The worker of every part of a "tree" stage (``place`` pass), shaped (*numblocks, parts)."""
    placement = stage.placement
    if placement is None or not placement.tree:
        return None
    if stage.worker is None or (stage.kind != "reduce" and contraction(stage.expr) is None):
        return None
    return placement.parts


class _LostData(Exception):
    """A scattered input block died with its worker (it has no lineage)."""


class _Run:
    """One submission of a plan: the futures of the kept stages and the tasks to wait for."""

    def __init__(
        self,
        client: Client,
        plan: Plan,
        keep: Sequence[str],
        placement: str,
        live: tuple,
        *,
        watched: bool = True,
    ) -> None:
        self.client = client
        # ``watched``: someone counts finished blocks (the client then holds a future
        # of every block until it finishes; unwatched, only of the kept blocks)
        self.watched = watched
        self.plan = plan
        self.keep = set(keep)
        self.placement = placement
        # worker numbers refer to the addresses the plan was made for
        self.workers = plan.workers or tuple(live)
        self.live = set(live)
        self.host_of = host_ids(plan.hosts, len(self.workers))
        self.token = uuid.uuid4().hex[:12]
        self.errstate = tuple(sorted(np.geterr().items()))
        settings = tuple(sorted(config.get("numba").items()))
        self.settings = () if config.get("dask.kernels") == "numpy" else settings
        self.graph = TaskGraph(f"lazyarr-{self.token}")
        self.kept: dict[str, dict[Index, Future]] = {}
        self.tasks: list[Future] = []
        self.block_keys: dict[str, None] = {}  # tasks that finish a block (progress counts)
        self.ready_blocks = 0  # blocks that exist without a task (scattered, persisted)

    def key(self, stage: Stage, index: Index, part: str = "") -> str:
        return f"{stage.name}-{'_'.join(map(str, index))}{part}-{self.token}"

    def address(self, w: int | None) -> str | None:
        """The address of worker number ``w`` (None: placement off, or not a live worker)."""
        if w is None or self.placement == "scheduler" or not 0 <= w < len(self.workers):
            return None
        addr = self.workers[w]
        return addr if addr in self.live else None

    def where(self, stage: Stage, index: Index) -> str | None:
        """The planned worker of a block, or None (no plan, placement off, unknown worker)."""
        return None if stage.worker is None else self.address(int(stage.worker[index]))

    def task(self, fn: Any, *args: Any, key: str, worker: int | None, block: bool) -> TaskRef:
        """Task ``key`` = ``fn(*args)`` in this run's graph, restricted to ``worker`` as planned."""
        ref = self.graph.add(
            key, fn, *args, worker=self.address(worker), loose=self.placement != "hard"
        )
        if block:
            self.block_keys[key] = None
        return ref

    def submit(self) -> None:
        """Scatter this process's blocks, then send every task of the plan as one graph."""
        futures: dict[str, Blocks] = {}
        for name, stage in self.plan.stages.items():
            if _is_local_data(stage):
                futures[name] = self._scatter_blocks(stage)
            elif _is_dask_blocks(stage):
                futures[name] = self._persisted(stage)
            else:
                futures[name] = self._stage_tasks(stage, [futures[i] for i in stage.inputs])
        if self.watched:
            wanted = list(self.block_keys)
        else:
            refs = (r for o in self.keep for r in futures[o].values())
            wanted = list(dict.fromkeys(r.key for r in refs if r.key in self.graph))
        sent = self.graph.send(self.client, wanted)
        self.tasks = list(sent.values())
        self.kept = {o: {i: sent.get(r.key, r) for i, r in futures[o].items()} for o in self.keep}

    def _stage_tasks(self, stage: Stage, sources: list[Blocks]) -> Blocks:
        """The tasks of every block of a computed stage (their references)."""
        parts = _tree_parts(stage)
        payload = self._payload(stage)
        blocks: Blocks = {}
        for index in block_index_iter(stage.numblocks):
            if parts is None:
                w = None if stage.worker is None else int(stage.worker[index])
                layout, args = dependencies(stage, reads(stage, index), sources)
                blocks[index] = self.task(
                    block_task,
                    *(payload, index, self.errstate, layout, *args),
                    key=self.key(stage, index),
                    worker=w,
                    block=True,
                )
            else:
                blocks[index] = self._tree_block(
                    stage, index, payload, sources, parts[index].tolist()
                )
        return blocks

    def _tree_block(
        self, stage: Stage, index: Index, payload: TaskRef, sources: list[Blocks], part_ws: list
    ) -> TaskRef:
        """Block ``index`` of a tree stage: parts on their workers, combined as planned."""
        owner = int(stage.worker[index])
        if stage.kind == "reduce":
            specs = [
                (("reduce", b), reduce_part_reads(stage, b)) for b in reduce_parts(stage, index)
            ]
        else:
            specs = [
                (("product", index, regions), contraction_part_reads(stage, regions))
                for regions in contraction_parts(stage, index)
            ]
        if len(specs) != len(part_ws):
            raise ValueError(
                f"stage {stage.name!r} block {index}: the plan places {len(part_ws)} parts, "
                f"the stage has {len(specs)}"
            )
        steps = combine_schedule(part_ws, owner, self.host_of)
        last_on = steps[-1][2] if steps else part_ws[0]
        moved = stage.kind != "reduce" and last_on != owner
        finished = stage.kind != "reduce" and not moved  # the last part or step is the block
        slots = []
        for k, ((part, part_reads), w) in enumerate(zip(specs, part_ws)):
            layout, args = dependencies(stage, part_reads, sources)
            final = finished and not steps
            slots.append(
                self.task(
                    part_task,
                    *(payload, part, self.errstate, layout, *args),
                    key=self.key(stage, index, "" if final else f"-p{k}"),
                    worker=w,
                    block=final,
                )
            )
        for j, (a, b, w) in enumerate(steps):
            final = finished and j == len(steps) - 1
            slots.append(
                self.task(
                    combine_task,
                    *(payload, self.errstate, slots[a], slots[b]),
                    key=self.key(stage, index, "" if final else f"-c{j}"),
                    worker=w,
                    block=final,
                )
            )
        if finished:
            return slots[-1]
        fn, args = (
            (finalize_task, (payload, self.errstate, slots[-1]))
            if stage.kind == "reduce"
            else (identity, (slots[-1],))  # move the sum to the block's owner
        )
        return self.task(fn, *args, key=self.key(stage, index), worker=owner, block=True)

    def _payload(self, stage: Stage) -> StagePayload | TaskRef:
        """The stage's payload: itself when small (it rides inside each task), else a task.

        A small payload is pickled once here and unpickled once per worker
        process (:class:`StagePayload`), and adds no task and no fetch
        before a stage's first blocks. A big one is a task (with lineage,
        unlike scattered data) that workers fetch once each; the statistics
        do not count it as data.
        """
        key = f"{dask_stats.PAYLOAD_PREFIX}{stage.name}-{self.token}"
        payload = StagePayload(detached(stage), self.settings, key)
        if payload.inline:
            return payload
        return self.graph.add(key, identity, payload, worker=None, loose=False)

    def _scatter_blocks(self, stage: Stage) -> Blocks:
        by_worker: dict[str | None, dict[str, Any]] = {}
        keys: dict[str, Index] = {}
        for index in block_index_iter(stage.numblocks):
            k = self.key(stage, index)
            keys[k] = index
            by_worker.setdefault(self.where(stage, index), {})[k] = _local_block(stage, index)
        out: Blocks = {}
        for addr, data in by_worker.items():
            futs = self.client.scatter(data, workers=[addr] if addr else None, hash=False)
            out.update({keys[k]: f for k, f in futs.items()})
        self.ready_blocks += stage.nblocks
        return out

    def _persisted(self, stage: Stage) -> Blocks:
        store = stage.expr.op.store
        blocks = dict(store.blocks)
        if set(blocks) != set(block_index_iter(stage.numblocks)):
            raise ValueError(f"persisted blocks of {stage.name!r} do not match its chunks")
        for f in blocks.values():
            if f.client is not self.client or f.status == "cancelled":
                raise RuntimeError(
                    f"{stage.name!r} was persisted on another Dask cluster or client, which "
                    "is closed or not the one in use now; persist it again"
                )
        self.ready_blocks += stage.nblocks
        return blocks

    def wait(self, progress: Progress) -> None:
        """Block until every task is done, advancing ``progress``; cancel all on error or Ctrl-C."""
        done = as_completed(self.tasks, loop=self.client.loop)
        self.tasks = []  # ``done`` holds the pending ones: finished blocks can be freed
        fut = None
        try:
            if self.ready_blocks:
                progress.advance(self.ready_blocks)
            for fut in done:
                if fut.status == "error":
                    fut.result()  # raises the task's exception, with its traceback
                if fut.status == "cancelled":
                    raise _LostData(str(fut.key))
                if fut.key in self.block_keys:
                    progress.advance(1)
        except BaseException:
            # only this run's tasks: the pending ones, the finished ones not yet taken
            # and the one at hand (the traceback keeps ``done`` and ``fut`` alive, an
            # erred one with the tasks it blames); persisted or scattered inputs stay
            ours = [*done.futures, *done.next_batch(block=False)]
            self.client.cancel([*ours, *([fut] if fut is not None else [])])
            self.kept = {}
            raise


class DaskExecutor:
    """Runs plans on a Dask distributed cluster, one task per block."""

    name = "dask"
    differential_tests = False

    def __init__(self) -> None:
        self._cluster = ClusterManager()
        self.last_stats: RunStats | None = None
        self._context: tuple[Client, float, tuple] | None = None  # plan_context's workers

    def client(self) -> Client:
        """The ``distributed.Client`` in use (connects or starts a cluster on first use)."""
        return self._cluster.client()

    def close(self) -> None:
        """Close the client and cluster this executor started (a user's client stays open)."""
        self._cluster.close()

    def plan_context(self) -> dict[str, Any]:
        """Worker count, sorted worker addresses, their hosts and memory limit, for the passes."""
        client = self.client()
        info = worker_info(client)
        self._context = (client, time.monotonic(), info["workers"])
        return info

    def _live_workers(self, client: Client, fresh: bool) -> tuple:
        """The workers now: those :meth:`plan_context` just saw (one scheduler call less), or asked.

        ``fresh``: ask the scheduler (a resubmission after lost blocks).
        """
        seen, self._context = self._context, None
        if not fresh and seen is not None:
            who, when, workers = seen
            if who is client and time.monotonic() - when < _CONTEXT_FRESH_S:
                return workers
        return worker_info(client)["workers"]

    def execute(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[np.ndarray]:
        got = self._run(plan, outputs, progress, fetch=True)
        results = []
        for o in outputs:
            results.append(gather_owned(plan.stages[o].expr, got[o]))
        return results

    def persist(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[BlockStore]:
        blocks = self._run(plan, outputs, progress, fetch=False)
        return [BlockStore(blocks[o], self.name, uuid.uuid4().hex) for o in outputs]

    def local_store(self, store: BlockStore) -> BlockStore:
        """A Dask-persisted ``store`` with its blocks fetched into this process.

        Lets other executors (which cannot read futures) compute arrays
        persisted here.
        """
        if store.executor != self.name:
            return store
        indices = list(store.blocks)
        futures = [store.blocks[i] for i in indices]
        values = futures[0].client.gather(futures) if futures else []
        return BlockStore(dict(zip(indices, values)), "numpy", f"{store.token}-local")

    def who_has(self, store: BlockStore) -> dict[Index, tuple[str, ...]]:
        """Where each block persisted here is now (worker addresses), e.g. for the planner."""
        if store.executor != self.name or not store.blocks:
            return {}
        futures = list(store.blocks.values())
        where = futures[0].client.who_has(futures)
        return {i: tuple(sorted(where.get(f.key, ()))) for i, f in store.blocks.items()}

    def localize(self, exprs: Sequence[Expr]) -> list[Expr]:
        """``exprs`` with every block persisted here swapped for a copy in this process.

        For the other executors, which cannot read futures. Expressions
        that read nothing persisted here come back as they are.
        """

        def fetched(e: Expr) -> Expr | None:
            op = e.op
            if not (isinstance(op, FromBlocks) and op.store.executor == self.name):
                return None
            store = self.local_store(op.store)
            return Expr(FromBlocks(store=store), (), e.shape, e.dtype, e.chunks)

        return swap_leaves(exprs, fetched)

    def _run(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None, fetch: bool
    ) -> dict[str, dict[Index, Any]]:
        """Blocks of ``outputs``: futures, or their values when ``fetch``.

        A run that lost blocks without lineage (scattered inputs) is
        submitted once more.
        """
        self.last_stats = None
        watched = progress is not None
        progress = _Clamped(progress or NullProgress(), plan.total_blocks)
        client = self.client()
        placement = str(config.get("dask.placement"))
        stats = RunStats(self.name)
        t0 = time.perf_counter()
        dask_stats.ensure_plugin(client)
        dask_stats.reset(client)
        retries = 0
        progress.start(plan.total_blocks)
        try:
            while True:
                live = self._live_workers(client, fresh=retries > 0)
                run = _Run(client, plan, outputs, placement, live, watched=watched)
                try:
                    run.submit()
                    run.wait(progress)
                    result = _fetch(client, run.kept) if fetch else run.kept
                except (_LostData, FutureCancelledError) as e:
                    if retries >= 1:
                        raise RuntimeError(
                            f"blocks were cancelled twice ({e}): an input scattered from this "
                            "process was lost with its worker, or the futures were cancelled"
                        ) from e
                    retries += 1
                    continue
                break
        finally:
            progress.finish()
        stats.seconds = time.perf_counter() - t0
        stats.blocks = plan.total_blocks
        self._record(client, plan, stats, retries)
        return result

    def _record(self, client: Client, plan: Plan, stats: RunStats, retries: int) -> None:
        stage_seconds, workers, measured = dask_stats.summarize(dask_stats.snapshot(client))
        stats.stage_seconds = {n: stage_seconds[n] for n in plan.stages if n in stage_seconds}
        stats.peak_bytes = max((w["peak_memory"] for w in workers.values()), default=0)
        est = [s.est_bytes for s in plan.stages.values() if s.est_bytes is not None]
        stats.extra = {
            "workers": workers,
            "predicted_bytes": int(sum(int(e.sum()) for e in est)) if est else None,
            "measured_bytes": measured,
            "retries": retries,
        }
        self.last_stats = stats


def _fetch(client: Client, blocks: dict[str, Blocks]) -> dict[str, dict[Index, np.ndarray]]:
    """The values of every block, fetched in one call."""
    order = [(o, i) for o, bl in blocks.items() for i in bl]
    values = client.gather([blocks[o][i] for o, i in order])
    got: dict[str, dict[Index, np.ndarray]] = {o: {} for o in blocks}
    for (o, i), v in zip(order, values):
        got[o][i] = v
    return got


class _Clamped:
    """Forwards progress, never past ``total`` (a resubmitted run counts its blocks again)."""

    def __init__(self, inner: Progress, total: int) -> None:
        self.inner, self.total, self.done = inner, total, 0

    def start(self, total_blocks: int) -> None:
        self.inner.start(total_blocks)

    def advance(self, blocks: int = 1) -> None:
        n = min(blocks, self.total - self.done)
        if n > 0:
            self.done += n
            self.inner.advance(n)

    def finish(self) -> None:
        self.inner.finish()
