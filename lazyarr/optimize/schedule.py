"""Scheduling as data: the order facts lowering writes beside the tasks, for executors to honour.

An op declares how its tasks should be ordered (``ReduceOp.gathers``,
``partials_wait_for``, ``serial_finalizes``); :func:`schedule` turns that into
per-task facts on the :class:`~lazyarr.optimize.tasks.TaskGraph`, the same
for every executor:

* ``priority``: higher runs first among a worker's ready tasks (0: the
  executor's own order);
* ``barriers``: groups of tasks that must all finish before any task of a
  given set may start (``waits[task]`` names its barrier);
* ``after``: a task that must finish before this one starts on the same
  worker (chains that run one at a time per worker);
* ``ready``: the order of ready tasks where no op orders them
  (:func:`ready_priorities`), every executor's default.

The dask executor translates them into priorities and token tasks; the numba
executor runs in one process with its tasks bounded by bytes, where the
order of ready tasks already keeps one exchange block in flight per thread.

Where nothing asks for order, a worker takes the deepest stage's ready task
first, so a chain of stages streams block by block (the numba pool, and the
dask executor through priorities: in Dask's own order a worker ran a staged
pencil rechunk's reads ahead of their writes, 3.7 blocks waiting). That order
fails where a task reads blocks of two stored stages (``a + c`` of two
``map_blocks`` results): the later stage ran whole before the earlier one
began, and every one of its blocks waited (a 400 MiB limit, 5 GiB held).
:func:`depth_first_ranks` gives such graphs the order of one thread that
finishes each output block before it starts the next (a depth-first walk
from the outputs), so a block waits only for its siblings.
The facts of the sample sort's exchange: partials first, the ``k``-th of
every block before the next ``k`` (each input block is released as soon as it
is split), every partial after the whole offsets input (a few integers per
block), finalizes block by block in the same order everywhere, one at a time
per worker. In Dask's own order a worker held its blocks, the parts and the
values of many blocks at once (2.4x its share at 2e7 float64 in 32 blocks on 4
workers; 1.15-1.36x with these facts).
"""

from __future__ import annotations

import numpy as np

from lazyarr.optimize.placement.planner import gathers
from lazyarr.optimize.plan import Stage
from lazyarr.optimize.tasks import Schedule, Task, TaskGraph, TaskKind

__all__ = ["Schedule", "depth_first_ranks", "ready_priorities", "schedule"]


def schedule(graph: TaskGraph) -> Schedule:
    """The order facts the ops of ``graph``'s stages ask for, and the ready order."""
    out = _ordered(graph)
    out.ready = ready_priorities(graph, ordered=bool(out.priority))
    return out


def ready_priorities(graph: TaskGraph, ordered: bool = False) -> np.ndarray:
    """Each task's rank among a worker's ready tasks, higher first, one per task: the
    deepest stage first (a chain of stages streams block by block), a combine or finalize
    before the other tasks of its stage (it frees its parts), then the lowering's order
    (a block's parts in the order its combine tree takes them, so a worker folds them as
    they are made); where a task reads blocks of two stored stages, the depth-first walk
    from the outputs (:func:`depth_first_ranks`), combines and finalizes still first.
    ``ordered``: an op ordered some tasks (the stage order for the others)."""
    tasks = graph.tasks
    n = len(tasks)
    final = np.fromiter((t.kind in _FREES_PARTS for t in tasks), np.int64, n)
    rank = None if ordered else depth_first_ranks(graph)
    if rank is None:
        stage = np.fromiter((t.stage for t in tasks), np.int64, n)
        return (2 * stage + final) * n + (n - 1 - np.arange(n, dtype=np.int64))
    return (n - 1 - np.asarray(rank, np.int64)) + n * final


_FREES_PARTS = frozenset({TaskKind.COMBINE, TaskKind.FINALIZE})


def _ordered(graph: TaskGraph) -> Schedule:
    """The facts of the stages whose op orders its tasks (the sample sort's exchange)."""
    out = Schedule()
    ordered = {si for si, s in enumerate(graph.stages) if gathers(s)}
    if not ordered:
        return out
    priorities = {si: _Priorities(graph.stages[si]) for si in ordered}
    barrier_of: dict[int, int] = {}
    last_final: dict[tuple[int, int], int] = {}
    for tid, task in enumerate(graph.tasks):
        if task.stage not in ordered:
            continue
        op = graph.stages[task.stage].expr.op
        out.priority[tid] = priorities[task.stage].of(task)
        if task.kind == TaskKind.PARTIAL and op.partials_wait_for is not None:
            b = barrier_of.get(task.stage)
            if b is None:
                b = barrier_of[task.stage] = len(out.barriers)
                out.barriers.append(_input_tasks(graph, task.stage, op.partials_wait_for))
            out.waits[tid] = b
        if task.kind == TaskKind.FINALIZE and op.serial_finalizes and task.worker >= 0:
            chain = (task.stage, task.worker)
            if chain in last_final:
                out.after[tid] = last_final[chain]
            last_final[chain] = tid
    return out


class _Priorities:
    """Partials first, the ``k``-th of every body block before the next ``k``; then steps and
    finalizes block by block in C order (the stage's grid counted once, not per task)."""

    def __init__(self, stage: Stage) -> None:
        expr = stage.expr
        self.numblocks = tuple(len(c) for c in expr.chunks)
        self.blocks = int(np.prod(self.numblocks))
        body = expr.op.body_chunks(expr)
        self.parts = int(np.prod([len(body[a]) for a in expr.op.axes]))

    def of(self, task: Task) -> int:
        if task.kind == TaskKind.PARTIAL:
            return self.blocks + self.parts - task.part
        return self.blocks - int(np.ravel_multi_index(task.index, self.numblocks))


def _input_tasks(graph: TaskGraph, si: int, position: int) -> tuple[int, ...]:
    """The tasks producing the blocks of input ``position`` that stage ``si``'s partials read."""
    key = graph.stages[si].expr.inputs[position].key
    return tuple(
        sorted(
            {
                d
                for t in graph.tasks
                if t.stage == si and t.kind == TaskKind.PARTIAL
                for d in t.deps
                if graph.stages[graph.tasks[d].stage].expr.key == key
            }
        )
    )


def depth_first_ranks(graph: TaskGraph) -> list[int] | None:
    """Each task's place in a depth-first walk from the graph's last tasks (outputs, in
    order), inputs before their readers: the order of one thread that finishes every output
    block before starting the next. None where the deepest-stage-first order already streams
    (no task reads blocks of two stages besides its own) or an op ordered its tasks."""
    tasks = graph.tasks
    if (graph.schedule is not None and graph.schedule.priority) or not _reads_two_stages(tasks):
        return None
    n = len(tasks)
    has_reader = bytearray(n)
    for t in tasks:
        for d in t.deps:
            has_reader[d] = 1
    rank = [0] * n
    seen = bytearray(n)
    r = 0
    for root in range(n):
        if has_reader[root] or seen[root]:
            continue
        seen[root] = 1
        stack, at = [root], [0]
        while stack:
            deps = tasks[stack[-1]].deps
            i = at[-1]
            while i < len(deps) and seen[deps[i]]:
                i += 1
            if i < len(deps):
                at[-1] = i + 1
                seen[deps[i]] = 1
                stack.append(deps[i])
                at.append(0)
            else:
                rank[stack.pop()] = r
                at.pop()
                r += 1
    return rank


def _reads_two_stages(tasks: list[Task]) -> bool:
    """Some task depends on tasks of two stages other than its own."""
    for t in tasks:
        if len(t.deps) < 2:
            continue
        other = {tasks[d].stage for d in t.deps} - {t.stage}
        if len(other) >= 2:
            return True
    return False
