"""A toy distributed run of a placed plan, for checking placement predictions.

:class:`Replay` runs the plan's lowered tasks (:func:`lazyarr.optimize.lower.lower`,
what the dask executor submits) one by one, each on its planned worker: a
task fetches every input it does not hold and keeps the copy, as Dask
workers do with replica dropping off. It counts the bytes each block's
tasks pull in, to compare with ``stage.est_bytes``, and, given each
worker's host, the bytes that cross between hosts (a copy comes from a
same-host holder when there is one, as in ``ClusterSim``).
"""

from __future__ import annotations

import numpy as np

from lazyarr.executors.blockwork import StageCode, gather, run_task
from lazyarr.kernels.sets import ReferenceKernels
from lazyarr.optimize.lower import lower
from lazyarr.optimize.plan import Plan

__all__ = ["Replay"]


def _nbytes(value) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return value.nbytes if isinstance(value, np.ndarray) else 0


class Replay:
    """A toy distributed run of a placed plan that counts the bytes each block pulls in."""

    def __init__(self, plan: Plan, hosts=None):
        self.plan = plan
        self.graph = graph = lower(plan)
        kernels = ReferenceKernels()
        codes = [StageCode(s, kernels) for s in graph.stages]
        self.values: list = [None] * len(graph.tasks)
        held: list[set[int]] = [set() for _ in graph.tasks]
        self.moved = {n: np.zeros(s.numblocks, dtype=np.int64) for n, s in plan.stages.items()}
        self.between_hosts = 0
        host = list(hosts) if hosts else None
        for tid, task in enumerate(graph.tasks):
            stage = graph.stages[task.stage]
            assert task.worker >= 0, f"{task!r} has no planned worker"
            count = 0
            for d in task.deps:
                if task.worker not in held[d]:
                    count += _nbytes(self.values[d])
                    if host is not None and all(host[w] != host[task.worker] for w in held[d]):
                        self.between_hosts += _nbytes(self.values[d])
                    held[d].add(task.worker)
            inputs = [self.values[d] for d in task.deps]
            self.values[tid] = run_task(task, codes[task.stage], inputs)
            held[tid].add(task.worker)
            self.moved[stage.name][task.index] += count

    def results(self) -> list[np.ndarray]:
        out = []
        position = self.graph.position
        for o in self.plan.outputs:
            si = position[o]
            e = self.plan.stages[o].expr
            blocks = {idx: self.values[tid] for idx, tid in self.graph.blocks_of(si)}
            out.append(np.asarray(gather(e.numblocks, blocks), dtype=e.dtype).reshape(e.shape))
        return out
