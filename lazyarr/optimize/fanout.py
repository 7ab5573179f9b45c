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
from lazyarr.graph.ops.creation import Windowed
from lazyarr.optimize.blockreads import StageReads, reads_elementwise
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["FanOut", "already_in_memory", "fanout_holds", "handed_off", "worker_share"]


@dataclasses.dataclass(frozen=True)
class FanOut:
    """What one stage's fan-out holds: ``held`` bytes at the peak, read by ``reader``."""

    stage: str
    reader: str
    held: int
    task_inputs: int
    """The largest sum of whole input blocks (of ``stage``) that one reader task reads."""
    most_reads: int = 0
    """The most reader tasks that read one block of ``stage``."""


def _hand_off(tasks: np.ndarray, flat: np.ndarray, n: int) -> bool:
    """Each task reads at most one block and each block is read by at most one task."""
    if flat.size and np.any(tasks[1:] == tasks[:-1]):
        return False
    return bool(np.bincount(flat, minlength=n).max(initial=0) <= 1)


def _sweep(sizes: np.ndarray, tasks: np.ndarray, flat: np.ndarray) -> tuple[int, int]:
    """Peak bytes of input blocks alive, and the largest input bytes of one task.

    ``sizes``: bytes of each input block (flat, C order, the order they are
    made); ``tasks``, ``flat``: each read, the reader task's number (ordered)
    and the block's flat index (:data:`~lazyarr.optimize.blockreads.TaskReads`).
    A task runs as soon as its last input exists; a block is released after
    its last reader.
    """
    n = sizes.size
    if flat.size == 0:
        return 0, 0
    first = np.flatnonzero(np.concatenate(([True], tasks[1:] != tasks[:-1])))
    ready = np.maximum.reduceat(flat, first)  # the task's last input, in making order
    task_inputs = int(np.add.reduceat(sizes[flat], first).max())
    release = np.full(n, -1, dtype=np.int64)
    np.maximum.at(release, flat, np.repeat(ready, np.diff(np.append(first, flat.size))))
    read = release >= 0
    alive = np.zeros(n + 1, dtype=np.int64)
    made = np.arange(n)[read]
    np.add.at(alive, made, sizes[read])
    np.add.at(alive, release[read] + 1, -sizes[read])
    return int(np.cumsum(alive).max(initial=0)), task_inputs


def handed_off(plan: Plan, name: str) -> bool:
    """Every block of stage ``name`` is its one reader task's only stored input: the block
    is that task's input the moment it is made (a local executor runs a ready reader of
    the deepest stage first), so it never waits beside it. Not so when the reader also
    waits for blocks of another stage, or reads many blocks, or the stage has two readers."""
    readers = plan.readers.get(name, ())
    if len(readers) != 1:
        return False
    reader = plan.stages[readers[0]]
    if reader.kind not in ("map", "reduce"):
        return False
    own = [p for p, src in enumerate(reader.inputs) if src == name]
    others = [src for src in reader.inputs if src != name]
    if len(own) != 1 or not all(_made_in_place(plan.stages[o]) for o in others):
        return False
    reads = StageReads(reader).task_reads(own).get(own[0])
    if reads is None:
        return False
    tasks, flat = reads
    return tasks.size == plan.stages[name].nblocks and _hand_off(
        tasks, flat, plan.stages[name].nblocks
    )


def _made_in_place(stage: Stage) -> bool:
    """A source a local executor makes inside its readers' tasks, or one already in memory."""
    return already_in_memory(stage) or isinstance(stage.expr.op, Windowed)


def already_in_memory(stage: Stage) -> bool:
    """Blocks that are in memory before the run and after it (the user's arrays, persists)."""
    return isinstance(stage.expr.op, (FromArray, FromBlocks))


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
        candidates = [
            pos
            for pos, src in enumerate(stage.inputs)
            if src not in skip
            and not plan.stages[src].regenerate
            and len(readers[src]) == 1
            # in memory before the run and after it: holding them adds nothing
            and not already_in_memory(plan.stages[src])
        ]
        if not candidates or reads_elementwise(stage):
            continue  # no input held for this stage alone, or no fan-out to speak of
        for pos, (tasks, flat) in StageReads(stage).task_reads(candidates).items():
            src = stage.inputs[pos]
            source = plan.stages[src]
            sizes = Grid(source.expr.chunks).block_sizes().reshape(-1) * source.expr.dtype.itemsize
            if _hand_off(tasks, flat, sizes.size):
                continue  # one block per task, one task per block: counted as waiting
            held, task_inputs = _sweep(sizes, tasks, flat)
            most = int(np.bincount(flat, minlength=sizes.size).max(initial=0))
            found.append(FanOut(src, name, held, task_inputs, most))
    return found


def worker_share(plan: Plan, name: str, workers: int) -> int:
    """The most bytes of stage ``name`` one worker of a cluster holds while the stage is
    kept whole: its own blocks and a copy of every block its readers' tasks on that worker
    fetch from others (a worker keeps a fetched copy while the block is needed: an
    anomaly's rechunk to pencils fetched every block of the store it also subtracts from,
    650 MiB on each worker, where half the store was counted). Without a placement an
    even share; a reduction's reads are taken as local (its parts run where they read)."""
    stage = plan.stages[name]
    even = -(-stage.expr.nbytes // max(1, workers))
    if stage.worker is None or workers < 2:
        return even
    owner = np.asarray(stage.worker, dtype=np.int64).reshape(-1)
    sizes = Grid(stage.expr.chunks).block_sizes().reshape(-1) * stage.expr.dtype.itemsize
    n = sizes.size
    fetched = []  # worker * n + block, for every copy a reader's task fetches
    for r in dict.fromkeys(plan.readers.get(name, ())):
        reader = plan.stages[r]
        if reader.kind != "map" or reader.worker is None:
            continue
        at = np.asarray(reader.worker, dtype=np.int64).reshape(-1)
        own = [p for p, src in enumerate(reader.inputs) if src == name]
        for tasks, flat in StageReads(reader).task_reads(own).values():
            where = at[tasks]
            away = where != owner[flat]
            fetched.append(where[away] * n + flat[away])
    held = np.bincount(owner, weights=sizes, minlength=workers)
    if fetched:
        copies = np.unique(np.concatenate(fetched))
        held = held + np.bincount(copies // n, weights=sizes[copies % n], minlength=workers)
    return max(even, int(held.max(initial=0)))
