"""The ``dask`` executor: the lowered plan as one Dask graph, on a distributed cluster.

The plan is lowered once (:func:`lazyarr.optimize.lower.lower`, the same
typed tasks every executor runs) and every task becomes one Dask task,
sent in one message (:mod:`.dask_graph`; per-task ``client.submit`` costs a
scheduler message and client CPU per block). A task's arguments are its
stage's payload, the typed task and the values it reads; on the worker
``blockwork.run_task`` computes it with the worker's kernel set (generated
Numba kernels when available, else NumPy; config ``dask.kernels``). Stages
the ``place`` pass made trees (reductions, contractions) run as planned:
one task per part on its worker, the combine steps of
``placement.combine_schedule``, the block on its owner; the lowering
decides all of it. What a task needs of its stage is its payload: the
stage with its input expressions detached (no upstream user data, no
futures), small enough to ride inside each task (pickled once, unpickled
once per worker), else one payload task per stage that each worker
fetches once. User arrays (``FromArray``, locally persisted blocks) are
split here and scattered, each block to its planned worker; every other
source is a task, so it has lineage and survives a lost worker. The client
holds futures of the kept stages' blocks and, while a progress reporter
counts finished blocks, of every block; the other tasks (tree parts and
steps, payloads) are the scheduler's to free once read.

Placement (config ``dask.placement``): ``soft`` turns the planned workers
(``stage.worker``, tree parts) into loose worker restrictions (others may
take over: a lost worker never loses the computation), ``hard`` into
strict ones (a lost worker can stall the compute), ``scheduler`` ignores
them. Without a placement pass, tasks are unrestricted. A compute whose
scattered input died with its worker is submitted once more.

Which cluster: see :mod:`.dask_cluster`; what is measured: :mod:`.dask_stats`.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from dask.task_spec import TaskRef
from dask.utils import format_bytes
from distributed import Client, Future, as_completed, get_worker
from distributed.client import FutureCancelledError

from lazyarr import config
from lazyarr.graph.chunks import block_slices
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import BlockStore, FromArray, FromBlocks
from lazyarr.graph.rewrite import swap_leaves
from lazyarr.optimize.lower import lower
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.optimize.schedule import Schedule
from lazyarr.optimize.tasks import TaskGraph, TaskKind

from . import dask_stats
from .base import NullProgress, Progress, RunStats, Traits
from .blockwork import gather_owned
from .dask_cluster import ClusterManager, SchedulerUnreachable
from .dask_fetch import FetchBatch, Index, fetch_all
from .dask_graph import DaskGraph
from .dask_tasks import Slab, StagePayload, after_token, detached, done_token, identity, task_fn

__all__ = ["ComputeStalled", "DaskExecutor", "SchedulerUnreachable"]

_SUFFIX = {
    TaskKind.PARTIAL: "-p{}",
    TaskKind.PRODUCT: "-p{}",
    TaskKind.COMBINE: "-c{}",
    TaskKind.FINALIZE: "-f",
    TaskKind.BLOCK: "-b",
    TaskKind.SOURCE: "-s",
}
"""Key suffix of a task that is not the one producing its block (parts, steps)."""


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


SLAB_BYTES = 1 << 20
"""Tiny blocks of a user's array are scattered in slabs of about this many bytes."""
SLAB_BLOCK_BYTES = 64 << 10
"""Blocks up to this size travel in slabs; bigger ones are scattered one by one."""


class _Pick(NamedTuple):
    """A scattered block inside a slab: the slab (its key, then its future) and the block's key."""

    slab: Any
    key: str


class _LostData(Exception):
    """A scattered input block died with its worker (it has no lineage)."""


class _Run:
    """One submission of a plan: the futures of the kept stages and the tasks to wait for."""

    def __init__(
        self,
        client: Client,
        lowered: TaskGraph,
        placement: str,
        live: tuple,
        *,
        watched: bool = True,
    ) -> None:
        self.client = client
        # ``watched``: someone counts finished blocks (the client then holds a future
        # of every block until it finishes; unwatched, only of the kept blocks)
        self.watched = watched
        self.lowered = lowered
        plan = lowered.plan
        self.placement = placement
        # worker numbers refer to the addresses the plan was made for
        self.workers = plan.workers or tuple(live)
        self.live = set(live)
        self.token = uuid.uuid4().hex[:12]
        self.errstate = tuple(sorted(np.geterr().items()))
        settings = tuple(sorted(config.get("numba").items()))
        self.settings = () if config.get("dask.kernels") == "numpy" else settings
        self.graph = DaskGraph(f"lazyarr-{self.token}")
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

    def task(
        self, fn: Any, *args: Any, key: str, worker: int | None, block: bool, priority: int = 0
    ) -> TaskRef:
        """Task ``key`` = ``fn(*args)`` in this run's graph, restricted to ``worker`` as planned."""
        loose = self.placement != "hard"
        ref = self.graph.add(
            key, fn, *args, worker=self.address(worker), loose=loose, priority=priority
        )
        if block:
            self.block_keys[key] = None
        return ref

    def submit(self) -> None:
        """Scatter this process's blocks, then send every lowered task as one graph."""
        graph = self.lowered
        tasks = graph.tasks
        refs: list[Any] = [None] * len(tasks)
        is_block = [False] * len(tasks)
        for p in graph.producers:
            for tid in p[p >= 0].tolist():
                is_block[tid] = True
        self._sources(graph, refs)
        payloads: dict[int, Any] = {}
        order = graph.schedule or Schedule()
        barriers: dict[int, Any] = {}  # barrier index: a token task over its tasks
        for tid, task in enumerate(tasks):
            if refs[tid] is not None:
                continue
            stage = graph.stages[task.stage]
            payload = payloads.get(task.stage)
            if payload is None:
                in_place = tuple(graph.inputs_in_place(task.stage))
                payload = payloads[task.stage] = self._payload(stage, in_place)
            suffix = "" if is_block[tid] else _SUFFIX[task.kind].format(task.part)
            values = [refs[d] for d in task.deps]
            picks = None
            if any(type(v) is _Pick for v in values):
                picks = tuple(v.key if type(v) is _Pick else None for v in values)
                values = [v.slab if type(v) is _Pick else v for v in values]
            fn, args = task_fn, (payload, task, self.errstate, picks, *values)
            # the order facts lowering wrote (optimize/schedule.py), as token tasks
            b = order.waits.get(tid)
            if b is not None:
                if b not in barriers:
                    barriers[b] = self.task(
                        done_token,
                        *(refs[d] for d in order.barriers[b]),
                        key=self.key(stage, (b,), "-o"),
                        worker=None,
                        block=False,
                    )
                fn, args = after_token, (barriers[b], *args)
            prev = order.after.get(tid)
            if prev is not None:
                token = self.task(
                    done_token,
                    refs[prev],
                    key=self.key(stage, task.index, "-t"),
                    worker=task.worker,
                    block=False,
                )
                fn, args = after_token, (token, *args)
            refs[tid] = self.task(
                fn,
                *args,
                key=self.key(stage, task.index, suffix),
                worker=task.worker if task.worker >= 0 else None,
                block=is_block[tid],
                priority=order.priority_of(tid),
            )
        kept = {
            graph.stages[o].name: {idx: refs[tid] for idx, tid in graph.blocks_of(o)}
            for o in graph.outputs
        }
        if self.watched:
            wanted = list(self.block_keys)
        else:
            kept_refs = (r for blocks in kept.values() for r in blocks.values())
            wanted = list(dict.fromkeys(r.key for r in kept_refs if r.key in self.graph))
        sent = self.graph.send(self.client, wanted)
        self.tasks = list(sent.values())
        self.kept = {o: {i: sent.get(r.key, r) for i, r in b.items()} for o, b in kept.items()}

    def _sources(self, graph: TaskGraph, refs: list[Any]) -> None:
        """Futures of the source blocks that exist without a task (user data, persisted)."""
        local: dict[int, list[int]] = {}
        for tid, task in enumerate(graph.tasks):
            if task.kind != TaskKind.SOURCE:
                continue
            stage = graph.stages[task.stage]
            if _is_local_data(stage):
                local.setdefault(task.stage, []).append(tid)
            elif _is_dask_blocks(stage):
                refs[tid] = self._persisted(stage, task.index)
                self.ready_blocks += 1
        for si, tids in local.items():
            packed = si not in graph.outputs
            for tid, fut in zip(tids, self._scatter_blocks(graph, si, tids, packed)):
                refs[tid] = fut
            self.ready_blocks += len(tids)

    def _payload(self, stage: Stage, in_place: tuple[bool, ...]) -> StagePayload | TaskRef:
        """The stage's payload: itself when small (it rides inside each task), else a task.

        A small payload is pickled once here and unpickled once per worker
        process (:class:`StagePayload`), and adds no task and no fetch
        before a stage's first blocks. A big one is a task (with lineage,
        unlike scattered data) that workers fetch once each; the statistics
        do not count it as data.
        """
        key = f"{dask_stats.PAYLOAD_PREFIX}{stage.name}-{self.token}"
        payload = StagePayload(detached(stage, in_place), self.settings, key, in_place)
        if payload.inline:
            return payload
        return self.graph.add(key, identity, payload, worker=None, loose=False)

    def _scatter_blocks(
        self, graph: TaskGraph, si: int, tids: list[int], packed: bool
    ) -> list[Future | _Pick]:
        """One source stage's blocks scattered from this process, each to its planned worker.

        ``packed``: blocks under :data:`SLAB_BLOCK_BYTES` travel in slabs (one
        scattered dict of consecutive blocks per worker, up to :data:`SLAB_BYTES`),
        so tiny blocks do not each cost a key on the scheduler and a future here;
        tasks pick their blocks out of the slab (:func:`task_fn`'s ``picks``).
        """
        stage = graph.stages[si]
        # each block: (worker, its key, the block, its slab's key or None)
        placed: list[tuple[str | None, str, np.ndarray, str | None]] = []
        slabs: dict[str, Slab] = {}
        slab_bytes: dict[str, int] = {}
        filling: dict[str | None, str] = {}  # per worker: the slab being filled
        for tid in tids:
            task = graph.tasks[tid]
            k = self.key(stage, task.index)
            where = self.address(task.worker if task.worker >= 0 else None)
            block = _local_block(stage, task.index)
            slab_key = None
            if packed and block.nbytes <= SLAB_BLOCK_BYTES:
                slab_key = filling.get(where)
                if slab_key is None or slab_bytes[slab_key] + block.nbytes > SLAB_BYTES:
                    slab_key = filling[where] = self.key(stage, task.index, "-slab")
                    slabs[slab_key], slab_bytes[slab_key] = Slab(), 0
                slabs[slab_key][k] = block
                slab_bytes[slab_key] += block.nbytes
            placed.append((where, k, block, slab_key))
        by_worker: dict[str | None, dict[str, Any]] = {}
        for where, k, block, slab_key in placed:
            if slab_key is None or len(slabs[slab_key]) == 1:  # alone: no slab
                by_worker.setdefault(where, {})[k] = block
            elif slab_key not in by_worker.setdefault(where, {}):
                by_worker[where][slab_key] = slabs[slab_key]
        futures: dict[str, Future] = {}
        for addr, data in by_worker.items():
            futures.update(self.client.scatter(data, workers=[addr] if addr else None, hash=False))
        return [
            futures[k] if k in futures else _Pick(futures[slab_key], k)
            for _, k, _, slab_key in placed
        ]

    def _persisted(self, stage: Stage, index: Index) -> Future:
        store = stage.expr.op.store
        fut = store.blocks.get(index)
        if fut is None or len(store.blocks) != stage.nblocks:
            raise ValueError(f"persisted blocks of {stage.name!r} do not match its chunks")
        if fut.client is not self.client or fut.status == "cancelled":
            raise RuntimeError(
                f"{stage.name!r} was persisted on another Dask cluster or client, which "
                "is closed or not the one in use now; persist it again"
            )
        return fut

    def wait(self, progress: Progress, fetch: bool = False) -> None:
        """Block until every task is done, advancing ``progress``; cancel all on error or Ctrl-C.

        ``fetch``: finished kept blocks are brought here in batches while the rest
        runs (:data:`.dask_fetch.FETCH_BATCH_BYTES`), their values replacing their futures in
        ``kept``, so the workers let them go. While nothing finishes, the cluster is
        looked at every second: a run that cannot progress (a worker paused at its
        memory limit, a planned worker gone under ``placement: hard``) raises
        :class:`ComputeStalled` instead of hanging.
        """
        done = as_completed(self.tasks, loop=self.client.loop)
        self.tasks = []  # ``done`` holds the pending ones: finished blocks can be freed
        fut = None
        batch = FetchBatch(self.client, self.lowered, self.kept) if fetch else None
        try:
            if self.ready_blocks:
                progress.advance(self.ready_blocks)
            for fut in _completed(done, self._check_stalled):
                if fut.status == "error":
                    fut.result()  # raises the task's exception, with its traceback
                if fut.status == "cancelled":
                    raise _LostData(str(fut.key))
                if fut.key in self.block_keys:
                    progress.advance(1)
                if batch is not None:
                    batch.add(fut)
            if batch is not None:
                batch.flush()
        except BaseException:
            # only this run's tasks: the pending ones, the finished ones not yet taken
            # and the one at hand (the traceback keeps ``done`` and ``fut`` alive, an
            # erred one with the tasks it blames); persisted or scattered inputs stay
            ours = [*done.futures, *done.next_batch(block=False)]
            self.client.cancel([*ours, *([fut] if fut is not None else [])])
            self.kept = {}
            raise

    def _check_stalled(self, idle: float) -> None:
        """Raise :class:`ComputeStalled` when ``idle`` seconds without a finished task are
        explained by the cluster: a paused worker, or a planned worker gone (``hard``)."""
        stall = config.get("dask.stall-timeout")
        timeout = config.parse_duration(config.get("dask.timeout"))
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
        if self.placement == "hard" and idle >= timeout:
            planned = {self.address(w) for w in range(len(self.workers))} - {None}
            gone = sorted(planned - set(workers))
            if gone:
                raise ComputeStalled(
                    f"no task finished for {idle:.0f} s: planned worker(s) {', '.join(gone)} "
                    "left the cluster and dask.placement is 'hard' (their blocks may run "
                    "nowhere else); set dask.placement: soft"
                )
        if stall is None or idle < config.parse_duration(stall):
            return
        paused = {a: w for a, w in workers.items() if w.get("status") == "paused"}
        if paused:
            told = "; ".join(
                f"{a} holds {format_bytes(int(w.get('metrics', {}).get('memory', 0)))} of its "
                f"{format_bytes(int(w.get('memory_limit', 0)))} limit"
                for a, w in sorted(paused.items())
            )
            raise ComputeStalled(
                f"no task finished for {idle:.0f} s while worker(s) are paused at their memory "
                f"limit: {told}. Give the workers more memory (dask.memory-limit), use smaller "
                "chunks, or set memory-limit so lazyarr plans for it (dask.stall-timeout)"
            )


def _scheduler_address(client: Client) -> str:
    with contextlib.suppress(Exception):
        return str(client.scheduler.address)
    return "(unknown address)"


def _completed(done: as_completed, on_idle: Any, every: float = 1.0) -> Any:
    """The futures of ``done`` as they finish; ``on_idle(seconds)`` each ``every`` seconds
    in which none did (it may raise)."""
    since = checked = time.monotonic()
    while True:
        batch = done.next_batch(block=False)
        if batch:
            since = checked = time.monotonic()
            yield from batch
            continue
        if done.is_empty():
            return
        with done.thread_condition:
            done.thread_condition.wait(timeout=0.1)
        now = time.monotonic()
        if now - checked >= every:
            checked = now
            on_idle(now - since)


class ComputeStalled(RuntimeError):
    """A Dask compute could not progress (a paused or lost worker); the message says which."""


class DaskExecutor:
    """Runs plans on a Dask distributed cluster, one task per block."""

    name = "dask"
    differential_tests = False

    @property
    def traits(self) -> Traits:
        """Blocks on workers; a scratch store is shared only by the LocalCluster started here
        (an external scheduler's workers may be on other machines)."""
        return Traits(one_process=False, scratch_local=config.get("dask.address") is None)

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

    @staticmethod
    def inside_worker() -> bool:
        """True in a task running on a Dask worker (where no cluster may be started)."""
        try:
            get_worker()
        except ValueError:
            return False
        return True

    def plan_context(self) -> dict[str, Any]:
        """Worker count, sorted worker addresses, their hosts and memory limit, for the passes."""
        client = self.client()
        info = self._cluster.workers(client)
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
        return self._cluster.workers(client)["workers"]

    def execute(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[np.ndarray]:
        got = self._run(plan, outputs, progress, fetch=True)
        results = []
        for o in outputs:
            results.append(gather_owned(plan.stages[o].numblocks, got[o]))
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
        with self._cluster.using() as client:  # not closed under us by another thread
            return self._run_on(client, plan, outputs, progress, fetch)

    def _run_on(
        self,
        client: Client,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None,
        fetch: bool,
    ) -> dict[str, dict[Index, Any]]:
        self.last_stats = None
        watched = progress is not None
        # generated sources read by one task each are made by that task: no task, no
        # stored block, no transfer for them
        graph = lower(plan, outputs, generate_in_place=True)
        progress = _Clamped(progress or NullProgress(), graph.nblocks)
        placement = str(config.get("dask.placement"))
        stats = RunStats(self.name)
        t0 = time.perf_counter()
        try:
            dask_stats.ensure_plugin(client)
            dask_stats.reset(client)
        except OSError as e:  # the client has not noticed yet that the scheduler is gone
            raise SchedulerUnreachable(
                f"the Dask scheduler at {_scheduler_address(client)} does not answer ({e}); "
                "nothing was computed"
            ) from e
        retries = 0
        progress.start(graph.nblocks)
        try:
            while True:
                live = self._live_workers(client, fresh=retries > 0)
                run = _Run(client, graph, placement, live, watched=watched)
                try:
                    run.submit()
                    run.wait(progress, fetch=fetch)
                    result = fetch_all(client, run.kept) if fetch else run.kept
                except (_LostData, FutureCancelledError) as e:
                    if client.status != "running":
                        raise SchedulerUnreachable(
                            f"the Dask scheduler at {_scheduler_address(client)} was lost "
                            f"during the compute (client {client.status}); nothing was kept"
                        ) from e
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
        stats.blocks = graph.nblocks
        stats.extra["tasks"] = len(graph)
        stats.extra["task_kinds"] = graph.kinds()
        self._record(client, plan, stats, retries)
        return result

    def _record(self, client: Client, plan: Plan, stats: RunStats, retries: int) -> None:
        stage_seconds, workers, measured = dask_stats.summarize(dask_stats.snapshot(client))
        stats.stage_seconds = {n: stage_seconds[n] for n in plan.stages if n in stage_seconds}
        stats.peak_bytes = max((w["peak_memory"] for w in workers.values()), default=0)
        est = [s.est_bytes for s in plan.stages.values() if s.est_bytes is not None]
        stats.extra = {
            **stats.extra,
            "workers": workers,
            "predicted_bytes": int(sum(int(e.sum()) for e in est)) if est else None,
            "measured_bytes": measured,
            "retries": retries,
        }
        self.last_stats = stats


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
