"""One submission of a plan on the ``dask`` executor: its Dask graph, sent, and the wait.

:class:`_Run` turns the lowered tasks (:mod:`lazyarr.optimize.lower`) into one
:class:`.dask_graph.DaskGraph`: this process's blocks (user arrays, locally
persisted blocks) scattered to their planned workers, tiny ones in slabs;
the tasks of one stage, kind and worker in batches (:mod:`.dask_batches`),
each one Dask task calling :func:`.dask_tasks.batch_fn`; the other tasks
one Dask task each (:func:`.dask_tasks.task_fn`), with the schedule's order
facts as priorities and token tasks. A task reads a value made in a batch
straight from the batch's values when it runs on the batch's worker or reads
all of them (an unplaced batch: at least half); else a getter task (the
value's own key, on the batch's worker) hands it that value alone, so only
it moves, as the placement plan predicts. Where workers share hosts, a
value several workers of another host read crosses once, to a relay task on
the first of them (:class:`.dask_hosts.Relays`), as the plan counts it. Kept
blocks in a batch
are fetched with the batch (``execute``) or get a getter each (``persist``:
every kept block keeps a key and a future of its own). :meth:`_Run.wait`
follows the futures, counts finished blocks and raises
:class:`ComputeStalled` for a compute that cannot progress.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
from dask.task_spec import Task, TaskRef
from dask.utils import format_bytes
from distributed import Client, Future, as_completed

from lazyarr import config
from lazyarr.graph.ops import FromArray, FromBlocks
from lazyarr.optimize.fanout import handed_off
from lazyarr.optimize.placement.clustersim import grouped, host_ids
from lazyarr.optimize.plan import Stage
from lazyarr.optimize.schedule import Schedule
from lazyarr.optimize.tasks import TaskGraph, TaskKind

from . import dask_stats
from .base import Progress
from .dask_batches import plan_batches
from .dask_fetch import BatchItem, FetchBatch, Index
from .dask_graph import DaskGraph
from .dask_hosts import Relays
from .dask_slabs import Pick, scatter_blocks
from .dask_tasks import (
    StagePayload,
    after_token,
    batch_fn,
    detached,
    done_token,
    identity,
    joint_payload,
    pack_batch,
    pick_value,
    task_fn,
)

__all__ = ["ComputeStalled"]

EXECUTOR = "dask"
"""The executor's registered name (blocks it persisted are futures)."""

_SUFFIX = {
    TaskKind.PARTIAL: "-p{}",
    TaskKind.PRODUCT: "-p{}",
    TaskKind.COMBINE: "-c{}",
    TaskKind.FINALIZE: "-f",
    TaskKind.BLOCK: "-b",
    TaskKind.SOURCE: "-s",
    TaskKind.JOINT: "-joint{}",
}
"""Key suffix of a task that is not the one producing its block (parts, steps)."""


def _is_local_data(stage: Stage) -> bool:
    """A source whose blocks are in this process (user data, locally persisted blocks)."""
    op = stage.expr.op
    return isinstance(op, FromArray) or (
        isinstance(op, FromBlocks) and op.store.executor != EXECUTOR
    )


def _is_dask_blocks(stage: Stage) -> bool:
    op = stage.expr.op
    return isinstance(op, FromBlocks) and op.store.executor == EXECUTOR


def progress_ticks(graph: TaskGraph) -> list[int]:
    """Per task, the blocks the progress bar counts when it finishes, as the numba
    executor counts them (:meth:`TaskGraph.progress_blocks`: a block made, or the blocks a
    partial reduction reads); blocks that exist before the run (scattered, persisted),
    which the numba executor reads in place, count nothing."""
    ticks = graph.progress_blocks()
    for si, stage in enumerate(graph.stages):
        if _is_local_data(stage) or _is_dask_blocks(stage):
            made = graph.producers[si]
            for tid in made[made >= 0].tolist():
                if graph.tasks[tid].kind == TaskKind.SOURCE:
                    ticks[tid] = 0
    return ticks


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
        fetch: bool = True,
        threads: int = 1,
        memory_limit: int | None = None,
        batch: bool = True,
        ticks: list[int] | None = None,
    ) -> None:
        self.client = client
        # ``watched``: someone counts finished blocks (the client then holds a future
        # of every block until it finishes; unwatched, only of the kept blocks)
        self.watched = watched
        # ``fetch``: the kept blocks come to this process (else they stay, as futures)
        self.fetch = fetch
        # worker threads and the memory a worker's blocks may take: the batches' sizes
        self.threads, self.memory_limit = threads, memory_limit
        self.batch = batch  # config ``dask.batch-tasks``: a stage's tasks in batches
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
        # the keys of tasks the progress bar counts, and how many blocks each
        # (``TaskGraph.progress_blocks``: a partial counts the blocks it reads)
        self.block_keys: dict[str, int] = {}
        self.ticks = progress_ticks(lowered) if ticks is None else ticks
        self.per_stage: dict[str, int] = {}  # Dask tasks made per stage (payloads aside)

    def key(self, stage: Stage, index: Index, part: str = "") -> str:
        return f"{stage.name}-{'_'.join(map(str, index))}{part}-{self.token}"

    def address(self, w: int | None) -> str | None:
        """The address of worker number ``w`` (None: placement off, or not a live worker)."""
        if w is None or self.placement == "scheduler" or not 0 <= w < len(self.workers):
            return None
        addr = self.workers[w]
        return addr if addr in self.live else None

    def task(
        self,
        fn: Any,
        *args: Any,
        key: str,
        stage: Stage,
        worker: int | None,
        block: int,
        priority: int = 0,
    ) -> TaskRef:
        """Task ``key`` of ``stage`` = ``fn(*args)`` in this run's graph, restricted to
        ``worker`` as planned; ``block``: how many blocks the progress bar counts for it."""
        loose = self.placement != "hard"
        ref = self.graph.add(
            key, fn, *args, worker=self.address(worker), loose=loose, priority=priority
        )
        if block:
            self.block_keys[key] = block
        self.per_stage[stage.name] = self.per_stage.get(stage.name, 0) + 1
        return ref

    def submit(self) -> None:
        """Scatter this process's blocks, then send every lowered task as one graph.

        Tasks of a batch (:mod:`.dask_batches`) are one Dask task; how a task reads a
        value made in a batch: :meth:`_value`.
        """
        graph = self.lowered
        tasks = graph.tasks
        refs: list[Any] = [None] * len(tasks)
        is_block = [False] * len(tasks)
        for p in graph.producers:
            for tid in p[p >= 0].tolist():
                is_block[tid] = True
        self._sources(graph, refs)
        made_elsewhere = {t.stage for t, r in zip(tasks, refs) if r is not None}
        if not self.batch:  # every task alone
            made_elsewhere = set(range(len(graph.stages)))
        self.batches = plan_batches(
            graph,
            workers=len(self.workers),
            threads=self.threads,
            memory_limit=self.memory_limit,
            made_elsewhere=made_elsewhere,
        )
        self._batch_of: list[int] = self.batches.batch_of.tolist()  # per task, read per dep
        self._refs, self._is_block = refs, is_block
        self._batch_refs = [
            TaskRef(f"{graph.stages[b.stage].name}-batch{i}-{self.token}")
            for i, b in enumerate(self.batches.batches)
        ]
        self._getters: dict[tuple[int, int], TaskRef] = {}
        self._relays, self._relay_refs = self._plan_relays(refs), {}
        payloads: dict[int, Any] = {}
        order = self._order = graph.schedule or Schedule()
        barriers: dict[int, Any] = {}  # barrier index: a token task over its tasks
        batch_of = self._batch_of
        chained = self._chained(order)
        ticks = list(self.ticks)
        for tid, task in enumerate(tasks):
            if refs[tid] is not None or batch_of[tid] >= 0:
                continue
            stage = graph.stages[task.stage]
            payload = self._payload_of(payloads, task)
            suffix = self._suffix(tid)
            values, picks = self._task_reads(task.deps, task.slots, task.worker)
            fn, args = task_fn, (payload, task, self.errstate, picks, *values)
            reader = chained.get(tid)
            if reader is not None:  # made inside its one reader's Dask task
                refs[tid] = self.graph.inline(fn, *args)
                ticks[reader] += ticks[tid]
                continue
            # the order facts lowering wrote (optimize/schedule.py), as token tasks
            b = order.waits.get(tid)
            if b is not None:
                if b not in barriers:
                    barriers[b] = self.task(
                        done_token,
                        *(refs[d] for d in order.barriers[b]),
                        key=self.key(stage, (b,), "-o"),
                        stage=stage,
                        worker=None,
                        block=0,
                    )
                fn, args = after_token, (barriers[b], *args)
            prev = order.after.get(tid)
            if prev is not None:
                token = self.task(
                    done_token,
                    refs[prev],
                    key=self.key(stage, task.index, "-t"),
                    stage=stage,
                    worker=task.worker,
                    block=0,
                )
                fn, args = after_token, (token, *args)
            refs[tid] = self.task(
                fn,
                *args,
                key=self.key(stage, task.index, suffix),
                stage=stage,
                worker=task.worker if task.worker >= 0 else None,
                block=ticks[tid],
                priority=self._priority(order, tid),
            )
        for i, batch in enumerate(self.batches.batches):
            stage = graph.stages[batch.stage]
            payload = self._payload_of(payloads, tasks[batch.tids[0]])
            members = [tasks[t] for t in batch.tids]
            values, reads = self._reads(
                tuple(t.deps for t in members), tuple(t.slots for t in members), batch.worker
            )
            self.task(
                batch_fn,
                payload,
                pack_batch(members, reads),
                self.errstate,
                *values,
                key=self._batch_refs[i].key,
                stage=stage,
                worker=batch.worker if batch.worker >= 0 else None,
                block=sum(self.ticks[t] for t in batch.tids),
                priority=max(self._priority(order, t) for t in batch.tids),
            )
        kept = {
            graph.stages[o].name: {
                idx: self._kept(tid, graph.slot_of.get(o, -1)) for idx, tid in graph.blocks_of(o)
            }
            for o in graph.outputs
        }
        kept_refs = (r for blocks in kept.values() for r in blocks.values())
        wanted = [r.key for r in kept_refs if r.key in self.graph]
        if self.watched:
            wanted = [*self.block_keys, *wanted]
        sent = self.graph.send(self.client, list(dict.fromkeys(wanted)))
        self.tasks = list(sent.values())
        self.kept = {o: {i: _sent(sent, r) for i, r in b.items()} for o, b in kept.items()}

    def _chained(self, order: Schedule) -> dict[int, int]:
        """Task -> its one reader, for the tasks made inside their reader's Dask task: every
        task of a stage the memory model counts as handed off (``fanout.handed_off``: each
        block its one reader's only stored input) that runs alone, read by a task that runs
        alone. The block then never waits for its reader, nor for the scheduler to free it
        once read (a staged pencil rechunk's worker held three of its blocks at once)."""
        graph = self.lowered
        plan, tasks, batch_of = graph.plan, graph.tasks, self._batch_of
        if order.priority:
            return {}
        stages = {
            si
            for si, s in enumerate(graph.stages)
            if si not in graph.outputs and handed_off(plan, s.name)
        }
        if not stages:
            return {}
        readers: dict[int, list[int]] = {}
        for tid, t in enumerate(tasks):
            for d in t.deps:
                if tasks[d].stage in stages:
                    readers.setdefault(d, []).append(tid)
        return {
            d: r[0]
            for d, r in readers.items()
            if len(r) == 1
            and batch_of[d] < 0
            and batch_of[r[0]] < 0
            and tasks[d].kind == TaskKind.BLOCK
            and self._refs[d] is None
            and r[0] not in order.waits
            and r[0] not in order.after
        }

    @staticmethod
    def _priority(order: Schedule, tid: int) -> int:
        """Task ``tid``'s Dask priority: the op's where one ordered tasks (the others 0, Dask's
        own order), else the schedule's ready order (a worker ran staged reads of a pencil
        rechunk ahead of their writes in Dask's order: 3.7 blocks waiting, 1-2 in this)."""
        if order.priority or order.ready is None:
            return order.priority_of(tid)
        return int(order.ready[tid])

    def _payload_of(self, payloads: dict[Any, Any], task: Any) -> Any:
        """The payload ``task`` runs with: its stage's, or its sibling set's (made once)."""
        graph = self.lowered
        joint = task.kind == TaskKind.JOINT
        key = ("joint", task.stage) if joint else task.stage
        payload = payloads.get(key)
        if payload is None:
            if joint:
                payload = payloads[key] = self._joint_payload(task.stage, task.members)
            else:
                stage = graph.stages[task.stage]
                in_place = tuple(graph.inputs_in_place(task.stage))
                payload = payloads[key] = self._payload(stage, in_place)
        return payload

    def _suffix(self, tid: int) -> str:
        """Key suffix of task ``tid``: none for the task that makes a block (a joint task's
        siblings take their blocks' keys through getters), else its kind's and part's."""
        task = self.lowered.tasks[tid]
        if self._is_block[tid] and task.kind != TaskKind.JOINT:
            return ""
        return _SUFFIX[task.kind].format(task.part)

    def _plan_relays(self, refs: list[Any]) -> Relays | None:
        """The values to relay to another host (None: workers do not share hosts)."""
        plan = self.lowered.plan
        n = len(plan.workers)
        if self.placement == "scheduler" or not n or not grouped(host_ids(plan.hosts, n)):
            return None
        tasks, batch_of, batches = self.lowered.tasks, self._batch_of, self.batches.batches

        def worker_of(t: int) -> int:
            b = batch_of[t]
            return batches[b].worker if b >= 0 else tasks[t].worker

        reads = (
            (d, worker_of(d), worker_of(tid))
            for tid, task in enumerate(tasks)
            if refs[tid] is None
            for d in task.deps
        )
        return Relays(host_ids(plan.hosts, n), reads)

    def _value(
        self, d: int, worker: int, readers: dict[int, int] | None, slot: int = -1
    ) -> tuple[Any, Any]:
        """:meth:`_direct_value`, through a relay where the value crosses to ``worker``'s
        host for several readers there (:class:`.dask_hosts.Relays`)."""
        ref, pick = self._direct_value(d, worker, readers, slot)
        if type(ref) is Task:  # made inside its one reader's task (:meth:`_chained`)
            return ref, pick
        via = self._relays.via(d, worker) if self._relays is not None else None
        if via is None:
            return ref, pick
        key = f"{ref.key}-via{via}"
        relay = self._relay_refs.get(key)
        if relay is None:
            where = {"worker": self.address(via), "loose": self.placement != "hard"}
            relay = self._relay_refs[key] = self.graph.add(
                key, identity, ref, **where, priority=self._priority(self._order, d)
            )
        return relay, pick

    def _direct_value(
        self, d: int, worker: int, readers: dict[int, int] | None, slot: int = -1
    ) -> tuple[Any, Any]:
        """``(reference, where inside it)`` of task ``d``'s value for a reader on planned
        ``worker``; ``readers``: how many of each batch's values the reader reads;
        ``slot``: the sibling's value a reader takes out of a joint task's (-1: all).

        The batch's values themselves on the batch's worker, or where the reader reads
        all of them (moving them all moves the bytes the plan predicts); a placed batch's
        single value elsewhere through a getter; an unplaced batch whole when the reader
        reads at least half of it. A sibling's value likewise: from the joint task's
        value where it ran, else alone through a getter.
        """
        b = self._batch_of[d]
        if b < 0:
            ref = self._refs[d]
            if type(ref) is Pick:
                return ref.slab, ref.row
            if slot < 0:
                return ref, None
            made_on = self.lowered.tasks[d].worker
            if made_on < 0 or worker < 0 or made_on == worker:
                return ref, slot
            return self._getter(d, slot), None
        batch = self.batches.batches[b]
        pos = int(self.batches.position[d])
        read = readers.get(b, 0) if readers is not None else 0
        # placed: the batch moves only where the planned bytes say so (its worker, or every
        # value read); unplaced: the whole batch when most of it is read
        whole = read == len(batch.tids) or (batch.worker < 0 and 2 * read >= len(batch.tids))
        if (batch.worker >= 0 and batch.worker == worker) or whole:
            return self._batch_refs[b], (pos if slot < 0 else (pos, slot))
        return self._getter(d, slot), None

    def _getter(self, d: int, slot: int = -1) -> TaskRef:
        """Task ``d``'s value alone (or sibling ``slot``'s out of a joint task's), under its
        own key, on the worker that made it, at ``d``'s priority: it runs once its batch is
        made, not after the stage's other batches (a resample's worker held 145 MiB)."""
        ref = self._getters.get((d, slot))
        if ref is None:
            task = self.lowered.tasks[d]
            stage = self.lowered.stages[task.stage]
            suffix = self._suffix(d)
            if slot >= 0:  # the sibling's own key (its block's, where it makes a block)
                stage = self.lowered.stages[task.members[slot]]
                suffix = "" if self._is_block[d] else _SUFFIX[TaskKind.PARTIAL].format(task.part)
            b = self._batch_of[d]
            if b >= 0:
                pos = int(self.batches.position[d])
                source, where = self._batch_refs[b], (pos if slot < 0 else (pos, slot))
            else:
                source, where = self._refs[d], slot
            ref = self._getters[(d, slot)] = self.task(
                pick_value,
                source,
                where,
                key=self.key(stage, task.index, suffix),
                stage=stage,
                worker=task.worker if task.worker >= 0 else None,
                block=0,
                priority=self._priority(self._order, d),
            )
        return ref

    def _task_reads(
        self, deps: tuple[int, ...], slots: tuple[int, ...] | None, worker: int
    ) -> tuple[list[Any], Any]:
        """A single task's values (one per dependency) and :func:`task_fn`'s ``picks``."""
        readers: dict[int, int] = {}
        for d in set(deps):
            b = self._batch_of[d]
            if b >= 0:
                readers[b] = readers.get(b, 0) + 1
        slots = slots or (-1,) * len(deps)
        got = [self._value(d, worker, readers, s) for d, s in zip(deps, slots, strict=True)]
        picks = tuple(p for _, p in got)
        return [r for r, _ in got], (picks if any(p is not None for p in picks) else None)

    def _reads(
        self,
        deps_of: tuple[tuple[int, ...], ...],
        slots_of: tuple[tuple[int, ...] | None, ...],
        worker: int,
    ) -> tuple[list[Any], tuple[tuple[tuple[int, Any], ...], ...]]:
        """The distinct values tasks with dependencies ``deps_of`` (and joint slots
        ``slots_of``) read, and per task, per dependency, ``(index in those values, where
        inside it)``."""
        readers: dict[int, int] = {}
        batch_of, refs = self._batch_of, self._refs
        for d in {d for deps in deps_of for d in deps}:
            b = batch_of[d]
            if b >= 0:
                readers[b] = readers.get(b, 0) + 1
        values: list[Any] = []
        index: dict[str, int] = {}
        out = []
        no_relays = self._relays is None
        for deps, slots in zip(deps_of, slots_of, strict=True):
            where = []
            for d, slot in zip(deps, slots or (-1,) * len(deps), strict=True):
                ref = refs[d]
                if no_relays and type(ref) is Pick and batch_of[d] < 0:
                    ref, pick = ref.slab, ref.row  # a scattered block's row (:meth:`_value`)
                else:
                    ref, pick = self._value(d, worker, readers, slot)
                key = ref.key
                i = index.get(key)
                if i is None:
                    i = index[key] = len(values)
                    values.append(ref)
                where.append((i, pick))
            out.append(tuple(where))
        return values, tuple(out)

    def _kept(self, tid: int, slot: int = -1) -> Any:
        """What the client keeps of output task ``tid`` (``slot``: a sibling's value out of
        a joint task's): its own reference, or, in a batch or a joint task, the value
        holding it and its place there (fetched) or a getter (persisted blocks)."""
        b = self._batch_of[tid]
        if b < 0 and slot < 0:
            return self._refs[tid]
        if self.fetch:
            if b < 0:
                return BatchItem(self._refs[tid], slot)
            pos = int(self.batches.position[tid])
            return BatchItem(self._batch_refs[b], pos if slot < 0 else (pos, slot))
        return self._getter(tid, slot)

    def _sources(self, graph: TaskGraph, refs: list[Any]) -> None:
        """Futures of the source blocks that exist without a task (user data, persisted)."""
        for si, stage in enumerate(graph.stages):
            local, persisted = _is_local_data(stage), _is_dask_blocks(stage)
            if not (local or persisted):
                continue
            made = graph.producers[si].ravel()  # C order: the order lowering made them
            tids = [t for t in made[made >= 0].tolist() if graph.tasks[t].kind == TaskKind.SOURCE]
            if persisted:
                for tid in tids:
                    refs[tid] = self._persisted(stage, graph.tasks[tid].index)
                continue
            packed = si not in graph.outputs
            got = scatter_blocks(
                self.client, stage, [graph.tasks[t] for t in tids], packed, self.key, self.address
            )
            for tid, fut in zip(tids, got, strict=True):
                refs[tid] = fut

    def _joint_payload(self, lead: int, members: tuple[int, ...]) -> Any:
        """The payload of the sibling set led by stage ``lead``: itself when small, else a
        task (as :meth:`_payload`)."""
        graph = self.lowered
        stages = graph.stages
        space = graph.joint_inputs[lead]
        here = graph.read_in_place(space)
        key = f"{dask_stats.PAYLOAD_PREFIX}{stages[lead].name}-joint-{self.token}"
        payload = joint_payload(
            [stages[m] for m in members],
            [(stages[s].name, stages[s].expr, h) for s, h in zip(space, here, strict=True)],
            [graph.inputs_in_place(m) for m in members],
            self.settings,
            key,
        )
        if payload.inline:
            return payload
        return self.graph.add(key, identity, payload, worker=None, loose=False)

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
        batch = (
            FetchBatch(self.client, self.lowered, self.kept, self._check_stalled) if fetch else None
        )
        try:
            for fut in _completed(done, self._check_stalled):
                if fut.status == "error":
                    fut.result()  # raises the task's exception, with its traceback
                if fut.status == "cancelled":
                    raise _LostData(str(fut.key))
                blocks = self.block_keys.get(fut.key)
                if blocks:
                    progress.advance(blocks)
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


def _sent(sent: dict[str, Future], ref: Any) -> Any:
    """A kept reference with the graph's tasks swapped for the futures the client got."""
    if type(ref) is BatchItem:
        return BatchItem(sent[ref.key], ref.position)
    return sent.get(ref.key, ref)


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
