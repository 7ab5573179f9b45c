"""What one task on a cluster holds before it starts: the whole values it reads, fetched.

A Dask worker gathers every input of a task (whole blocks, whatever region the
task reads of them) before the task runs, and keeps them until it ends. The
memory estimate (:mod:`lazyarr.optimize.memory`) works on stages; this looks at
the lowered :class:`~lazyarr.optimize.tasks.TaskGraph` itself, so a task whose
inputs cannot fit a worker thread's share is refused before anything runs
(distributed's own refusal comes mid-run: "Task ... has 2.00 GiB worth of input
dependencies, but worker ... has memory_limit set to 1.00 GiB").
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lazyarr.optimize.tasks import TaskGraph

__all__ = ["Fetch", "largest_fetch"]


@dataclasses.dataclass(frozen=True)
class Fetch:
    """The task that holds the most: its id, its inputs' bytes and its value's bytes."""

    task: int
    inputs: int
    output: int

    @property
    def total(self) -> int:
        return self.inputs + self.output


def largest_fetch(graph: TaskGraph) -> Fetch | None:
    """The task whose distinct input values and own value take the most bytes (None: a
    graph without tasks)."""
    tasks = graph.tasks
    n = len(tasks)
    if not n:
        return None
    sizes = np.fromiter((t.nbytes for t in tasks), dtype=np.int64, count=n)
    counts = np.fromiter((len(t.deps) for t in tasks), dtype=np.int64, count=n)
    inputs = np.zeros(n, dtype=np.int64)
    if counts.any():
        deps = np.fromiter((d for t in tasks for d in t.deps), dtype=np.int64, count=counts.sum())
        owner = np.repeat(np.arange(n, dtype=np.int64), counts)
        # a value read at two positions of one task is fetched once
        pairs = np.unique(owner * n + deps)
        owner, deps = pairs // n, pairs % n
        inputs = np.bincount(owner, weights=sizes[deps], minlength=n).astype(np.int64)
    total = inputs + sizes
    tid = int(np.argmax(total))
    return Fetch(tid, int(inputs[tid]), int(sizes[tid]))
