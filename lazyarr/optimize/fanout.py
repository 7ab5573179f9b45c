"""Blocks held for their readers when each is read by many later blocks (fan-out).

A rechunk from row strips to column strips, a transpose written in other
chunks, an exchange: each output block reads a piece of many input blocks,
and an input block can be dropped only after its *last* reader has run. Run
in the order executors follow (input blocks made in C order, each reader as
soon as its inputs exist), the input blocks alive at once are all those made
and not yet released. :func:`fanout_holds` sweeps that order per pair of
stages and returns the peak bytes held, and the bytes of the whole input
blocks one reader task depends on (a worker of a cluster fetches whole
blocks before the task starts).

Stages read elementwise (a block reads the blocks at its own position, or a
broadcast row) are skipped: their hand-off is one block waiting per task.
"""

from __future__ import annotations

import dataclasses
import weakref

import numpy as np

from lazyarr.graph.chunks import Grid
from lazyarr.graph.ops import FromArray, FromBlocks
from lazyarr.optimize.blockreads import StageReads
from lazyarr.optimize.plan import Plan

__all__ = ["FanOut", "fanout_holds"]


@dataclasses.dataclass(frozen=True)
class FanOut:
    """What one stage's fan-out holds: ``held`` bytes at the peak, read by ``reader``."""

    stage: str
    reader: str
    held: int
    task_inputs: int
    """The largest sum of whole input blocks (of ``stage``) that one reader task reads."""


def _reads_per_task(reads: StageReads) -> list[list[tuple[int, tuple[int, ...]]]]:
    """The input blocks each task of a stage reads, tasks in the order they are made."""
    stage = reads.stage
    if stage.kind == "map":
        return [reads.block(i)[1] for i in np.ndindex(*stage.numblocks)]
    if stage.kind == "reduce":
        return [reads.partial(i)[1] for i in np.ndindex(*reads.body_grid.numblocks)]
    return []


_NONE = np.empty(0, np.int64)


def _by_input(
    per_task: list[list[tuple[int, tuple[int, ...]]]],
) -> list[dict[int, list[tuple[int, ...]]]]:
    """Each task's reads grouped by input position, in read order: one pass over the reads,
    not one per input (a concatenation of 365 groups read them 365 times over)."""
    grouped = []
    for refs in per_task:
        by_pos: dict[int, list[tuple[int, ...]]] = {}
        for pos, block in refs:
            by_pos.setdefault(pos, []).append(block)
        grouped.append(by_pos)
    return grouped


def _flat(indices: list[tuple[int, ...]], shape: tuple[int, ...]) -> np.ndarray:
    """Flat (C order) positions of block ``indices`` in a grid of ``shape`` (0-d: one block)."""
    if not shape:
        return np.zeros(len(indices), np.int64)
    return np.ravel_multi_index(tuple(np.array(indices).T), shape).astype(np.int64).reshape(-1)


def _hand_off(tasks: list[np.ndarray], n: int) -> bool:
    """Each task reads at most one block and each block is read by at most one task."""
    if any(t.size > 1 for t in tasks):
        return False
    read = np.concatenate(tasks) if tasks else np.empty(0, np.int64)
    return bool(np.bincount(read, minlength=n).max(initial=0) <= 1)


def _sweep(sizes: np.ndarray, tasks: list[np.ndarray]) -> tuple[int, int]:
    """Peak bytes of input blocks alive, and the largest input bytes of one task.

    ``sizes``: bytes of each input block (flat, C order, the order they are
    made); ``tasks``: the flat indices each reader task reads. A task runs as
    soon as its last input exists; a block is released after its last reader.
    """
    n = sizes.size
    release = np.full(n, -1, dtype=np.int64)
    task_inputs = 0
    for flat in tasks:
        if flat.size == 0:
            continue
        ready = int(flat.max())
        np.maximum.at(release, flat, ready)
        task_inputs = max(task_inputs, int(sizes[np.unique(flat)].sum()))
    read = release >= 0
    alive = np.zeros(n + 1, dtype=np.int64)
    made = np.arange(n)[read]
    np.add.at(alive, made, sizes[read])
    np.add.at(alive, release[read] + 1, -sizes[read])
    return int(np.cumsum(alive).max(initial=0)), task_inputs


_MEMO: dict[int, tuple[weakref.ref, frozenset[str], tuple[FanOut, ...]]] = {}
"""id(plan) -> (the plan, ``skip``, the answer): a compute under a memory limit asks twice
(the check before the run, the numba executor's byte budget), each a sweep over every
block read (6.5 s each for a 1,100-stage groupby plan)."""


def fanout_holds(plan: Plan, skip: set[str] | frozenset[str] = frozenset()) -> list[FanOut]:
    """Every stage (not in ``skip``) whose blocks a later stage reads many times over."""
    key, skipped = id(plan), frozenset(skip)
    hit = _MEMO.get(key)
    if hit is not None and hit[0]() is plan and hit[1] == skipped:
        return list(hit[2])
    found = _fanout_holds(plan, skipped)
    _MEMO[key] = (weakref.ref(plan, lambda _, k=key: _MEMO.pop(k, None)), skipped, tuple(found))
    return found


def _fanout_holds(plan: Plan, skip: frozenset[str]) -> list[FanOut]:
    found: list[FanOut] = []
    readers = plan.readers
    for name, stage in plan.stages.items():
        if stage.kind not in ("map", "reduce") or not stage.inputs:
            continue
        reads = StageReads(stage)
        if reads.elementwise:  # no fan-out to speak of
            continue
        per_task = _by_input(_reads_per_task(reads))
        for pos, src in enumerate(stage.inputs):
            source = plan.stages[src]
            if src in skip or source.regenerate or len(readers[src]) != 1:
                continue
            if isinstance(source.expr.op, (FromArray, FromBlocks)):
                continue  # in memory before the run and after it: holding them adds nothing
            grid = Grid(source.expr.chunks)
            sizes = grid.block_sizes().reshape(-1) * source.expr.dtype.itemsize
            shape = source.numblocks
            tasks = [_flat(ix, shape) if (ix := refs.get(pos)) else _NONE for refs in per_task]
            if _hand_off(tasks, sizes.size):
                continue  # one block per task, one task per block: counted as waiting
            held, task_inputs = _sweep(sizes, tasks)
            found.append(FanOut(src, name, held, task_inputs))
    return found
