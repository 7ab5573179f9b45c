"""The reference executor: every task computed with NumPy, one after another.

It defines the semantics: the other executors must return what it returns.
It runs the shared lowering (:func:`lazyarr.optimize.lower.lower`) in task
order and frees each value as soon as its last reader has run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr.graph.ops import BlockStore
from lazyarr.kernels.sets import ReferenceKernels
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.tasks import TaskGraph

from .base import Lowering, NullProgress, Progress, RunStats, Traits
from .blockwork import StageCode, gather_owned, run_task
from .malloc import bound_allocator

__all__ = ["NumpyExecutor"]

Blocks = dict[tuple[int, ...], np.ndarray]


class NumpyExecutor:
    """Runs plans task by task with NumPy (the reference semantics)."""

    name = "numpy"
    traits = Traits(one_process=True, lowering=Lowering(in_place=True))

    def __init__(self) -> None:
        self.last_stats: RunStats | None = None

    def execute(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[np.ndarray]:
        blocks = self.run(plan, outputs, progress, graph)
        return [gather_owned(plan.stages[o].numblocks, blocks[o]) for o in outputs]

    def persist(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[BlockStore]:
        blocks = self.run(plan, outputs, progress, graph)
        stores = []
        for o in outputs:
            # own the data, so a persisted array never aliases a user's array
            kept = {i: b if b.flags.owndata else b.copy() for i, b in blocks[o].items()}
            stores.append(BlockStore(kept, self.name, uuid.uuid4().hex))
        return stores

    def run(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> dict[str, Blocks]:
        """Every block of the ``outputs`` stages (other values are freed on the way);
        ``graph``: the plan lowered for this executor, else it is lowered here."""
        if plan.memory_limit is not None:
            bound_allocator()
        progress = progress or NullProgress()
        stats = RunStats(self.name)
        t_start = time.perf_counter()
        if graph is None:
            graph = self.traits.lowering.lower(plan, outputs, 1)
        kernels = ReferenceKernels()
        codes = [
            StageCode(s, kernels, graph.inputs_in_place(i)) for i, s in enumerate(graph.stages)
        ]
        tasks = graph.tasks
        remaining = graph.reader_counts().tolist()
        is_block = [False] * len(tasks)
        for p in graph.producers:
            for tid in p[p >= 0].tolist():
                is_block[tid] = True
        keep = {int(t) for o in graph.outputs for t in graph.producers[o].ravel()}
        values: list[Any] = [None] * len(tasks)
        seconds = [0.0] * len(graph.stages)
        stats.extra["tasks"] = len(tasks)
        stats.extra["task_kinds"] = graph.kinds()
        ticks = graph.progress_blocks()
        progress.start(sum(ticks))
        try:
            for tid, task in enumerate(tasks):
                t0 = time.perf_counter()
                deps = task.deps
                values[tid] = run_task(task, codes[task.stage], [values[d] for d in deps])
                seconds[task.stage] += time.perf_counter() - t0
                for d in deps:
                    remaining[d] -= 1
                    if remaining[d] == 0 and d not in keep:
                        values[d] = None
                if is_block[tid]:
                    stats.blocks += 1
                if ticks[tid]:
                    progress.advance(ticks[tid])
        finally:
            progress.finish()
        stats.stage_seconds = {
            s.name: seconds[i] for i, s in enumerate(graph.stages) if graph.producers[i].max() >= 0
        }
        stats.seconds = time.perf_counter() - t_start
        self.last_stats = stats
        return {
            graph.stages[o].name: {idx: values[tid] for idx, tid in graph.blocks_of(o)}
            for o in graph.outputs
        }
