"""Which lowered tasks of a plan run together as one Dask task (a batch), for the dask executor.

Distributed spends a fixed cost per task (a scheduler transition, a message,
a worker's bookkeeping) that dwarfs the kernel of a small block. The tasks of
one stage, of one kind, planned for one worker, read nothing of each other:
they run as one Dask task that loops over them with the compiled kernels, as
the numba executor's pool does (:func:`.dask_tasks.batch_fn`).

How many batches a group of tasks becomes:

* **memory**: a batch's planned working set (its tasks' values plus the
  distinct values they read, from the lowering's ``Task.nbytes``) fits
  :data:`BATCH_SHARES` -th of a worker thread's share of the worker's memory
  limit: a worker holds, per thread, the batch running, the batches it reads
  and its finished output until its readers are done;
* **balance**: at least :data:`BATCHES_PER_THREAD` batches per worker thread
  the group may run on (its planned worker's threads, every thread when it
  is unplaced), so a lost or slow worker's share can move (work stealing
  moves a batch) and stages pipeline;
* **order**: a batch's tasks never read each other: a tree's combine steps
  are grouped by their level (their depth among their stage's tasks); tasks
  the schedule orders (priorities, barriers, ``after`` chains:
  ``optimize/schedule.py``) stay single, as do tasks whose values are not
  made by a task (scattered or persisted blocks).

A group of one task, and a task alone over its budget, stays a plain task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import numpy as np

from lazyarr.optimize.memory import BATCH_SHARES
from lazyarr.optimize.schedule import Schedule
from lazyarr.optimize.tasks import TaskGraph, TaskKind

__all__ = [
    "BATCHES_PER_THREAD",
    "BATCH_SHARES",
    "Batch",
    "BatchPlan",
    "batch_budget",
    "plan_batches",
]


BATCHES_PER_THREAD = 2
"""At least this many batches per worker thread a group may run on (when it has the tasks)."""

BATCHED_KINDS = frozenset(
    {
        TaskKind.SOURCE,
        TaskKind.BLOCK,
        TaskKind.PARTIAL,
        TaskKind.PRODUCT,
        TaskKind.COMBINE,
        TaskKind.FINALIZE,
        TaskKind.JOINT,
    }
)
"""Kinds run in batches (all of them)."""

_READ_OWN_STAGE = frozenset({TaskKind.COMBINE, TaskKind.FINALIZE})
"""Kinds whose tasks read tasks of their own stage (the others read other stages' blocks)."""


@dataclasses.dataclass(frozen=True)
class Batch:
    """Tasks ``tids`` (ids in the task graph, in its order) of one stage, kind and worker (and
    level, for a tree's combine steps)."""

    stage: int
    kind: TaskKind
    worker: int
    tids: tuple[int, ...]
    nbytes: int
    """Planned working set: the tasks' values plus the distinct values they read."""


@dataclasses.dataclass
class BatchPlan:
    """The batches of one task graph and where each task sits in them."""

    batches: list[Batch]
    batch_of: np.ndarray
    """Per task id: its batch's index in :attr:`batches`, -1 when it runs alone."""
    position: np.ndarray
    """Per task id: its place in its batch's value (a tuple), -1 when alone."""
    budget: int | None
    """Bytes a batch's working set may take (None: no memory limit known)."""

    def per_stage(self, graph: TaskGraph) -> dict[str, int]:
        """Batches per stage name (for statistics and structural tests)."""
        out: dict[str, int] = {}
        for b in self.batches:
            name = graph.stages[b.stage].name
            out[name] = out.get(name, 0) + 1
        return out


def batch_budget(memory_limit: int | None, threads: int) -> int | None:
    """Bytes one batch's working set may take on a worker with ``memory_limit`` and
    ``threads``."""
    if memory_limit is None:
        return None
    return max(1, int(memory_limit) // (BATCH_SHARES * max(1, threads)))


def plan_batches(
    graph: TaskGraph,
    *,
    workers: int,
    threads: int,
    memory_limit: int | None,
    made_elsewhere: Collection[int] = (),
) -> BatchPlan:
    """The batches of ``graph`` on ``workers`` workers of ``threads`` threads each.

    ``made_elsewhere``: stages whose blocks no task makes (scattered user
    data, blocks persisted earlier).
    """
    tasks = graph.tasks
    order = graph.schedule or Schedule()
    ordered = _ordered_stages(graph, order)
    skip = set(made_elsewhere) | ordered
    # a task's depth among its own stage's tasks (a tree's combine steps by level): tasks
    # of one stage, kind, worker and depth never read each other
    depth = np.zeros(len(tasks), dtype=np.int64)
    groups: dict[tuple[int, int, int, int], list[int]] = {}
    for tid, t in enumerate(tasks):
        level = 0
        if t.kind in _READ_OWN_STAGE:
            stage = t.stage
            level = max((int(depth[d]) + 1 for d in t.deps if tasks[d].stage == stage), default=0)
            depth[tid] = level
        if t.kind in BATCHED_KINDS and t.stage not in skip:
            groups.setdefault((t.stage, int(t.kind), t.worker, level), []).append(tid)
    budget = batch_budget(memory_limit, threads)
    batch_of = np.full(len(tasks), -1, dtype=np.int64)
    position = np.full(len(tasks), -1, dtype=np.int64)
    batches: list[Batch] = []
    for (si, kind, w, _), tids in groups.items():
        if len(tids) < 2:
            continue
        runners = threads if w >= 0 else threads * max(1, workers)
        for part, nbytes in _split(graph, tids, BATCHES_PER_THREAD * runners, budget):
            if len(part) < 2:
                continue
            b = len(batches)
            batches.append(Batch(si, TaskKind(kind), w, tuple(part), nbytes))
            batch_of[part] = b
            position[part] = np.arange(len(part))
    return BatchPlan(batches, batch_of, position, budget)


def _split(
    graph: TaskGraph, tids: list[int], at_least: int, budget: int | None
) -> list[tuple[list[int], int]]:
    """``tids`` cut in order into ``at_least`` runs of nearly equal counts (fewer when there
    are fewer tasks), each cut again where its working set would pass ``budget``."""
    tasks = graph.tasks
    k = max(1, min(len(tids), at_least))
    out: list[tuple[list[int], int]] = []
    for i in range(k):
        run: list[int] = []
        seen: set[int] = set()
        nbytes = 0
        for tid in tids[i * len(tids) // k : (i + 1) * len(tids) // k]:
            t = tasks[tid]
            deps = t.deps
            cost = t.nbytes + (sum(tasks[d].nbytes for d in set(deps) - seen) if deps else 0)
            if run and budget is not None and nbytes + cost > budget:
                out.append((run, nbytes))
                run, seen, nbytes = [], set(), 0
                cost = t.nbytes + sum(tasks[d].nbytes for d in set(t.deps))
            run.append(tid)
            if deps:
                seen.update(deps)
            nbytes += cost
        if run:
            out.append((run, nbytes))
    return out


def _ordered_stages(graph: TaskGraph, order: Schedule) -> set[int]:
    """Stages with a task the schedule orders (its tasks keep their own priorities, tokens)."""
    tids = {*order.priority, *order.waits, *order.after, *order.after.values()}
    for barrier in order.barriers:
        tids.update(barrier)
    return {graph.tasks[t].stage for t in tids}
