"""Running a lowered task graph on local threads: ready tasks, dependents, freeing.

Worker threads take the next ready task themselves (deepest stage first,
so a chain of stages streams block by block; in a depth-first order from the
outputs where a task reads two stored stages), run it, and mark its
dependents ready; a value is dropped as soon as its last reader has run.
No task makes a round trip through the calling thread: a 100-element
block costs a lock and a heap operation on top of its kernel. The calling
thread only waits, reports progress (every ``tick`` seconds and at the
end, never from a worker) and turns Ctrl-C or a task's error into one
clean stop: no new task starts, running ones finish, nothing is left
behind. Under a memory limit the tasks running at once are bounded by
bytes, not only by threads: a task starts only while the working sets of
the running ones and its own fit the budget (one task always may run).
"""

from __future__ import annotations

import contextvars
import heapq
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from lazyarr.optimize.schedule import ready_priorities
from lazyarr.optimize.tasks import TaskGraph, TaskKind

from .base import Progress

__all__ = ["nbytes_owned", "run_graph"]


def nbytes_owned(value: Any) -> int:
    """Bytes a block or partial state owns (views of other memory count zero)."""
    if isinstance(value, np.ndarray):
        return value.nbytes if value.flags.owndata else 0
    if isinstance(value, (tuple, list)):
        return sum(nbytes_owned(v) for v in value)
    return 0


class _State:
    """What the threads share, guarded by one lock."""

    def __init__(
        self,
        graph: TaskGraph,
        keep: set[int],
        values: list[Any],
        live: int,
        need: list[int] | None = None,
        budget: int | None = None,
    ) -> None:
        tasks = graph.tasks
        n = len(tasks)
        self.tasks = tasks
        self.values = values
        self.keep = keep
        self.readers = graph.reader_counts().tolist()
        self.dependents: list[list[int]] = [[] for _ in range(n)]
        self.waiting = [0] * n
        for tid, task in enumerate(tasks):
            self.waiting[tid] = len(task.deps)
            for d in task.deps:
                self.dependents[d].append(tid)
        blocks = [0] * n
        for p in graph.producers:
            for tid in p[p >= 0].tolist():
                task = tasks[tid]
                blocks[tid] = len(task.members) if task.kind == TaskKind.JOINT else 1
        self.block_count = blocks
        self.ticks = graph.progress_blocks()  # what the progress bar counts per task
        self.ticks_done = 0
        # the schedule's ready order (deepest stage first, or a depth-first walk from the
        # outputs where a task reads two stored stages: schedule.py), lower keys first
        order = graph.schedule.ready if graph.schedule is not None else None
        if order is None:
            order = ready_priorities(graph)
        self.key = (-order).tolist()
        self.ready: list[tuple[int, int]] = []
        for tid in range(n):
            if self.waiting[tid] == 0:
                self.push(tid)
        self.cond = threading.Condition()
        self.done = 0
        self.blocks_done = 0
        self.running = 0
        self.stop = False
        self.error: BaseException | None = None
        self.live = live
        self.peak = live
        self.seconds = [0.0] * len(graph.stages)
        self.need = need if budget is not None else None  # working-set bytes per stage
        self.budget = budget
        self.in_flight = 0
        self.most_at_once = 0

    def may_start(self) -> bool:
        """A ready task exists and its working set fits beside the running ones'."""
        if not self.ready:
            return False
        if self.need is None or self.running == 0:
            return True
        cost = self.need[self.tasks[self.ready[0][1]].stage]
        return self.in_flight + cost <= self.budget

    def start(self) -> int:
        """Take the next ready task (the lock is held)."""
        tid = heapq.heappop(self.ready)[1]
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        if self.need is not None:
            self.in_flight += self.need[self.tasks[tid].stage]
        return tid

    def finish(self, tid: int) -> None:
        """A started task stopped running (the lock is held)."""
        self.running -= 1
        if self.need is not None:
            self.in_flight -= self.need[self.tasks[tid].stage]

    def push(self, tid: int) -> None:
        heapq.heappush(self.ready, (self.key[tid], tid))

    def complete(self, tid: int, value: Any, seconds: float) -> None:
        """Record a finished task (the lock is held)."""
        task = self.tasks[tid]
        values = self.values
        values[tid] = value
        self.live += nbytes_owned(value)
        self.peak = max(self.peak, self.live)
        self.seconds[task.stage] += seconds
        self.done += 1
        self.blocks_done += self.block_count[tid]
        self.ticks_done += self.ticks[tid]
        readers = self.readers
        for d in task.deps:
            readers[d] -= 1
            if readers[d] == 0 and d not in self.keep:
                self.live -= nbytes_owned(values[d])
                values[d] = None
        waiting = self.waiting
        for t in self.dependents[tid]:
            waiting[t] -= 1
            if waiting[t] == 0:
                self.push(t)


def _worker(state: _State, run: Callable[[int], Any]) -> None:
    """One thread's loop: take a ready task, run it, record it, until done or stopped."""
    cond = state.cond
    n = len(state.tasks)
    while True:
        with cond:
            while not state.may_start() and not state.stop and state.done < n:
                cond.wait()
            if state.stop or state.done >= n:
                return
            tid = state.start()
        t0 = time.perf_counter()
        try:
            value = run(tid)
        except BaseException as e:
            with cond:
                state.finish(tid)
                if state.error is None:
                    state.error = e
                state.stop = True
                cond.notify_all()
            return
        seconds = time.perf_counter() - t0
        with cond:
            state.finish(tid)
            state.complete(tid, value, seconds)
            if state.ready or state.done >= n:
                cond.notify_all()
        # the value's readers may drop it while this thread runs its next task: no
        # reference here may keep it alive meanwhile (a block more per thread at the peak)
        del value


def run_graph(
    graph: TaskGraph,
    run: Callable[[int], Any],
    values: list[Any],
    keep: set[int],
    pool: ThreadPoolExecutor | None,
    threads: int,
    progress: Progress,
    live: int = 0,
    tick: float = 0.05,
    need: list[int] | None = None,
    budget: int | None = None,
) -> tuple[int, list[float], int, int]:
    """Run every task of ``graph`` (``run(tid)`` returns its value) into ``values``.

    ``keep``: task ids whose values stay (the outputs' blocks). With no
    ``pool`` the tasks run here, one after another. ``budget``: bytes the
    working sets of running tasks may take together, ``need[stage]`` being
    one task's of each stage (None: only the threads bound them). Returns
    the peak of bytes held, the seconds spent per stage, the blocks
    computed and the most tasks that ran at once. Raises the first error a
    task raised (or the calling thread's Ctrl-C) after every running task
    has finished.
    """
    state = _State(graph, keep, values, live, need, budget)
    n = len(graph.tasks)
    if pool is None:
        for _ in range(n):
            tid = heapq.heappop(state.ready)[1]
            t0 = time.perf_counter()
            value = run(tid)
            state.complete(tid, value, time.perf_counter() - t0)
            if state.ticks[tid]:
                progress.advance(state.ticks[tid])
        return state.peak, state.seconds, state.blocks_done, min(n, 1)
    cond = state.cond
    reported = 0
    futures = []
    try:
        for _ in range(threads):
            ctx = contextvars.copy_context()
            futures.append(pool.submit(ctx.run, _worker, state, run))
        while True:
            with cond:
                if state.done < n and state.error is None:
                    cond.wait(tick)
                finished = state.done >= n
                error = state.error
                blocks = state.ticks_done
            if error is not None:
                raise error
            progress.advance(blocks - reported)  # 0 too: a delayed bar appears on time
            reported = blocks
            if finished:
                break
    finally:
        with cond:
            state.stop = True
            cond.notify_all()
        for f in futures:
            f.result() if state.error is None else f.exception()
    return state.peak, state.seconds, state.blocks_done, state.most_at_once
