"""The ``dask`` executor: the lowered plan as one Dask graph, on a distributed cluster.

The plan is lowered once, by ``api`` (:data:`LOWERING`: sibling sets as joint
tasks, generated sources made by their single readers; the same typed tasks
every executor runs), and the tasks become one Dask graph, sent
in one message (:mod:`.dask_run`, :mod:`.dask_graph`; per-task
``client.submit`` costs a scheduler message and client CPU per block); the
tasks of one stage planned for one worker run as a few batch tasks
(:mod:`.dask_batches`, config ``dask.batch-tasks``), so the scheduler's cost
per task is paid per batch. A task's arguments are its
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

Which cluster: see :mod:`.dask_cluster` (each worker's host, or its group under
``dask.host-groups``: :mod:`.dask_hosts`); what is measured: :mod:`.dask_stats`
(``last_stats.extra``: ``transfers`` per receiving and sending worker,
``bytes_between_hosts`` over the hosts the plan was made for, ``network``: the bytes
and seconds of the fetches between workers); the cluster's speeds for the cost model
(probed once per cluster, then learnt from each run): :mod:`.dask_calibrate`.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from distributed import Client, get_worker
from distributed.client import FutureCancelledError
from distributed.comm.core import CommClosedError

from lazyarr import config
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import BlockStore, FromBlocks
from lazyarr.graph.rewrite import swap_leaves
from lazyarr.optimize.memory import BATCH_SHARES, WORKER_BATCH_FLOOR, estimate
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.tasks import TaskGraph

from . import dask_hosts, dask_stats
from .base import Lowering, NullProgress, Progress, RunStats, Traits
from .blockwork import gather_owned
from .dask_calibrate import Calibrations, RunMeasures
from .dask_cluster import ClusterManager, SchedulerUnreachable
from .dask_fetch import Index, fetch_all
from .dask_run import ComputeStalled, _LostData, _Run, progress_ticks
from .dask_slabs import SLAB_BLOCK_BYTES, SLAB_BYTES
from .dask_slabs import Pick as _Pick
from .dask_tasks import detached

# re-exported: the run's pieces tests and tools reach through this module
_REEXPORTED = (SLAB_BLOCK_BYTES, SLAB_BYTES, _Pick, detached)

__all__ = ["ComputeStalled", "DaskExecutor", "SchedulerUnreachable"]

_CONTEXT_FRESH_S = 1.0
"""How long the workers :meth:`DaskExecutor.plan_context` saw stand for the live ones."""


def _planned_memory(info: dict[str, Any], plan: Plan) -> int | None:
    """The bytes a worker's batches may take: under lazyarr's ``memory-limit``, what the
    plan's predicted peak per worker leaves of it (a batch holds its outputs until it
    ends: at the whole limit, a staged rechunk under 48 MiB grew both workers by 66 MiB),
    at most one task's working set per worker thread, split between its
    ``BATCH_SHARES`` batches; else the workers' own limit."""
    limit = config.get("memory-limit")
    if limit is None:
        return info.get("memory_limit")
    workers = max(1, len(info.get("workers") or ()))
    threads = max(1, int(info.get("threads") or 1))
    est = estimate(plan, threads, workers, gathered=False, temporaries=False)
    # and no more in a worker thread's BATCH_SHARES batches (running, read, finished and
    # waiting for readers) than the one task's working set the prediction counts per thread
    # (the quick pencil rechunk: workers +80/+74 MiB batched at the headroom, predicted 63;
    # batches of one working set each: a staged pencil under 64 MiB measured up to 1.24x
    # its prediction per worker, 0.75-0.90 at a quarter of it)
    per_task = est.per_task * threads  # the chunk buffers are beside the batches' blocks
    floor = BATCH_SHARES * WORKER_BATCH_FLOOR * threads  # counted in the prediction
    return max(floor, min(config.parse_bytes(limit) - est.peak, per_task))


def _scheduler_lost(client: Client, wait: float = 1.0) -> bool:
    """The client lost its scheduler (it notices a closed stream within ``wait`` seconds)."""
    deadline = time.monotonic() + wait
    while True:
        comm = getattr(client.scheduler_comm, "comm", None)
        if client.status != "running" or comm is None or comm.closed():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _scheduler_address(client: Client) -> str:
    with contextlib.suppress(Exception):
        return str(client.scheduler.address)
    return "(unknown address)"


LOWERING = Lowering(joint=True, generate_in_place=True)
"""How plans are lowered for the workers: sibling sets as joint tasks (shared inputs read
once); generated sources read by one task each are made by that task (no task, no stored
block, no transfer for them); this process's arrays are scattered, not read in place."""


class DaskExecutor:
    """Runs plans on a Dask distributed cluster, one task per block."""

    name = "dask"
    differential_tests = False

    @property
    def traits(self) -> Traits:
        """Blocks on workers; a scratch store is shared by the LocalCluster started here, and
        by an external scheduler's workers only where the user says ``dask.shared-scratch``
        (they may be on other machines)."""
        return Traits(
            one_process=False,
            scratch_local=config.get("dask.address") is None
            or bool(config.get("dask.shared-scratch")),
            lowering=LOWERING,
        )

    @property
    def supports(self) -> Callable[[Any], bool] | None:
        """Whether the workers' kernels compile an expression (the ``fuse`` pass asks, and
        the memory check then counts no temporaries in a fused group, as the workers' batch
        budget does): Numba's, unless ``dask.kernels: numpy`` (None: NumPy's kernels keep a
        temporary per fused op, as on the numpy executor)."""
        if config.get("dask.kernels") == "numpy":
            return None
        from lazyarr.kernels.numba_set import NumbaKernels

        return NumbaKernels.supports

    def __init__(self) -> None:
        self._cluster = ClusterManager()
        self.last_stats: RunStats | None = None
        self._context: tuple[Client, float, dict] | None = None  # plan_context's workers
        self.calibrations = Calibrations()
        """Measured speeds per cluster (:meth:`plan_context` hands them to the passes)."""

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
        """Worker count, sorted worker addresses, their hosts, memory limit and measured
        speeds (``costs``: the workers are probed at first contact), for the passes."""
        client = self.client()
        info = self._cluster.workers(client)
        self._context = (client, time.monotonic(), info)
        return {**info, "costs": self.calibrations.costs(client, info["workers"])}

    def _live_workers(self, client: Client, fresh: bool) -> dict[str, Any]:
        """The workers now (:func:`.dask_cluster.worker_info`): those :meth:`plan_context` just
        saw (one scheduler call less), or asked.

        ``fresh``: ask the scheduler (a resubmission after lost blocks).
        """
        seen, self._context = self._context, None
        if not fresh and seen is not None:
            who, when, info = seen
            if who is client and time.monotonic() - when < _CONTEXT_FRESH_S:
                return info
        return self._cluster.workers(client)

    def execute(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[np.ndarray]:
        """One NumPy array per output; ``graph``: the plan lowered for this executor
        (:attr:`traits`), else it is lowered here."""
        got = self._run(plan, outputs, progress, fetch=True, graph=graph)
        results = []
        for o in outputs:
            results.append(gather_owned(plan.stages[o].numblocks, got[o]))
        return results

    def persist(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[BlockStore]:
        blocks = self._run(plan, outputs, progress, fetch=False, graph=graph)
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
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None,
        fetch: bool,
        graph: TaskGraph | None = None,
    ) -> dict[str, dict[Index, Any]]:
        """Blocks of ``outputs``: futures, or their values when ``fetch``.

        A run that lost blocks without lineage (scattered inputs) is
        submitted once more.
        """
        with self._cluster.using() as client:  # not closed under us by another thread
            if graph is None:
                graph = LOWERING.lower(plan, outputs, 1)
            return self._run_on(client, graph, progress, fetch)

    def _run_on(
        self,
        client: Client,
        graph: TaskGraph,
        progress: Progress | None,
        fetch: bool,
    ) -> dict[str, dict[Index, Any]]:
        self.last_stats = None
        watched = progress is not None
        plan = graph.plan
        ticks = progress_ticks(graph)  # the blocks made or read, as numba counts them
        progress = _Clamped(progress or NullProgress(), sum(ticks))
        placement = str(config.get("dask.placement"))
        batch = bool(config.get("dask.batch-tasks"))
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
        progress.start(sum(ticks))
        try:
            while True:
                live = self._live_workers(client, fresh=retries > 0)
                run = _Run(
                    client,
                    graph,
                    placement,
                    live["workers"],
                    watched=watched,
                    fetch=fetch,
                    threads=int(live.get("threads") or 1),
                    memory_limit=_planned_memory(live, graph.plan),
                    batch=batch,
                    ticks=ticks,
                )
                try:
                    run.submit()
                    run.wait(progress, fetch=fetch)
                    result = fetch_all(client, run.kept, run._check_stalled) if fetch else run.kept
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
                except CommClosedError as e:  # a fetch or gather met the scheduler gone
                    if not _scheduler_lost(client):
                        raise
                    raise SchedulerUnreachable(
                        f"the Dask scheduler at {_scheduler_address(client)} was lost "
                        f"during the compute ({e}); nothing was kept"
                    ) from e
                break
        finally:
            progress.finish()
        stats.seconds = time.perf_counter() - t0
        stats.blocks = graph.nblocks
        stats.extra["tasks"] = len(graph)
        stats.extra["task_kinds"] = graph.kinds()
        # what was sent: Dask tasks per stage (a batch is one), the batches per stage
        stats.extra["dask_tasks"] = dict(run.per_stage)
        stats.extra["batches"] = run.batches.per_stage(graph)
        stats.extra["batch_budget"] = run.batches.budget
        stats.extra["relays"] = len(run._relays or ())  # values relayed to another host
        made_in = {graph.stages[i].name for i in graph.in_place}  # sources made by readers
        self._record(client, plan, stats, retries, live, made_in)
        return result

    def _record(
        self,
        client: Client,
        plan: Plan,
        stats: RunStats,
        retries: int,
        live: dict[str, Any],
        made_in: set[str],
    ) -> None:
        """Fill ``stats`` from the workers' counters; the cluster's calibration learns from
        them (``made_in``: the sources the lowering made inside their readers' tasks)."""
        snaps = dask_stats.snapshot(client)
        stage_seconds, workers, measured = dask_stats.summarize(snaps)
        moved = dask_hosts.transfers(snaps)
        host_of = dict(zip(live["workers"], live["hosts"]))
        fetched = dask_stats.transfer_totals(snaps)
        measures = RunMeasures(
            dask_stats.stage_busy(snaps), stage_seconds, fetched, int(live.get("threads") or 1)
        )
        self.calibrations.record_run(client, plan, measures, made_in)
        stats.extra["network"] = {"bytes": fetched[0], "seconds": fetched[1]}
        stats.stage_seconds = {n: stage_seconds[n] for n in plan.stages if n in stage_seconds}
        stats.peak_bytes = max((w["peak_memory"] for w in workers.values()), default=0)
        stats.rss_growth = max((w.get("rss_growth", 0) for w in workers.values()), default=0)
        est = [s.est_bytes for s in plan.stages.values() if s.est_bytes is not None]
        stats.extra = {
            **stats.extra,
            "workers": workers,
            "predicted_bytes": int(sum(int(e.sum()) for e in est)) if est else None,
            "measured_bytes": measured,
            # receiver -> sender -> bytes, and those between the hosts the plan was made for
            "transfers": moved,
            "bytes_between_hosts": dask_hosts.bytes_between_hosts(moved, host_of),
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
