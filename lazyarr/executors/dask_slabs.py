"""This process's blocks (a user's array, blocks persisted by another executor) scattered
to the workers the plan gave them, tiny ones stacked into slabs.

A block of a few hundred bytes scattered alone costs a key on the scheduler, a future
here and a slice of the user's array: at 10^5 blocks, more than running them. Blocks
up to :data:`SLAB_BLOCK_BYTES` of one shape planned for one worker are stacked into one
array of up to :data:`SLAB_BYTES` instead (cut from a NumPy array in one gather, one
key), each worker's slabs and lone blocks go in one ``scatter`` call, and a task reads
its block as a row of its slab (:class:`Pick`; ``dask_tasks.pick_value``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from distributed import Client, Future

from lazyarr.graph.chunks import block_slices, offsets
from lazyarr.graph.ops import FromArray
from lazyarr.optimize.plan import Stage
from lazyarr.optimize.tasks import Task

__all__ = ["SLAB_BLOCK_BYTES", "SLAB_BYTES", "Pick", "scatter_blocks"]

Index = tuple[int, ...]

SLAB_BYTES = 1 << 20
"""Tiny blocks of a user's array are scattered in slabs of about this many bytes."""
SLAB_BLOCK_BYTES = 64 << 10
"""Blocks up to this size travel in slabs; bigger ones are scattered one by one."""


class Pick(NamedTuple):
    """A scattered block inside a slab: the slab (its future) and the block's row in it."""

    slab: Any
    row: int


def scatter_blocks(
    client: Client,
    stage: Stage,
    tasks: Sequence[Task],
    packed: bool,
    key: Callable[..., str],
    address: Callable[[int | None], str | None],
) -> list[Future | Pick]:
    """The ``SOURCE`` tasks' blocks of one source stage in this process, scattered each to
    its planned worker: a future, or where the block sits in a slab, per task.

    ``packed``: tiny blocks travel in slabs (not for an output stage, whose blocks the
    client keeps one by one); ``key(stage, index, suffix)``: a block's or slab's key;
    ``address(worker)``: the planned worker's address (None: any worker).
    """
    out: list[Future | Pick | None] = [None] * len(tasks)
    by_worker: dict[str | None, dict[str, Any]] = {}
    slab_of: dict[str, list[tuple[int, int]]] = {}  # slab key -> (position in tasks, row)
    alone: dict[str, int] = {}  # block key -> position in tasks
    starts = [np.asarray(offsets(blocks), dtype=np.int64) for blocks in stage.expr.chunks]
    for members in slab_groups(stage, tasks) if packed else []:
        if len(members) < 2:
            continue  # alone: no slab
        first = tasks[members[0]]
        where = address(first.worker if first.worker >= 0 else None)
        rows = max(1, SLAB_BYTES // max(1, _block_bytes(stage, first.index)))
        for lo in range(0, len(members), rows):
            chunk = members[lo : lo + rows]
            indices = [tasks[k].index for k in chunk]
            k = key(stage, indices[0], "-slab")
            by_worker.setdefault(where, {})[k] = stacked_blocks(stage, indices, starts)
            slab_of[k] = [(pos, row) for row, pos in enumerate(chunk)]
    in_slabs = {pos for members in slab_of.values() for pos, _ in members}
    for pos, task in enumerate(tasks):
        if pos in in_slabs:
            continue
        k = key(stage, task.index)
        where = address(task.worker if task.worker >= 0 else None)
        by_worker.setdefault(where, {})[k] = local_block(stage, task.index)
        alone[k] = pos
    for addr, data in by_worker.items():
        futures = client.scatter(data, workers=[addr] if addr else None, hash=False)
        for k, fut in futures.items():
            if k in alone:
                out[alone[k]] = fut
                continue
            for pos, row in slab_of[k]:
                out[pos] = Pick(fut, row)
    return out  # type: ignore[return-value]


def local_block(stage: Stage, index: Index) -> np.ndarray:
    """Block ``index`` of a source in this process (a view of the user's array)."""
    op = stage.expr.op
    if isinstance(op, FromArray):
        return op.data.array[(*block_slices(stage.expr.chunks, index), Ellipsis)]
    return op.store.blocks[index]


def _block_bytes(stage: Stage, index: Index) -> int:
    """Bytes of block ``index`` of a source, from its chunks (no block is cut)."""
    return math.prod(c[i] for c, i in zip(stage.expr.chunks, index)) * stage.expr.dtype.itemsize


def slab_groups(stage: Stage, tasks: Sequence[Task]) -> list[list[int]]:
    """The source blocks that may share a slab: per planned worker and block shape, the
    positions in ``tasks`` of blocks up to :data:`SLAB_BLOCK_BYTES`, in order."""
    chunks = stage.expr.chunks
    n, ndim = len(tasks), len(chunks)
    if not n:
        return []
    at = np.array([t.index for t in tasks], dtype=np.int64).reshape(n, ndim)
    worker = np.fromiter((t.worker for t in tasks), dtype=np.int64, count=n)
    shape = np.empty((n, ndim), dtype=np.int64)
    for ax, blocks in enumerate(chunks):
        shape[:, ax] = np.asarray(blocks, dtype=np.int64)[at[:, ax]]
    small = np.flatnonzero(shape.prod(axis=1) * stage.expr.dtype.itemsize <= SLAB_BLOCK_BYTES)
    if not len(small):
        return []
    kinds, which = np.unique(
        np.column_stack([worker[small], shape[small]]), axis=0, return_inverse=True
    )
    order = np.argsort(which.ravel(), kind="stable")  # by kind, each in block order
    cuts = np.searchsorted(which.ravel()[order], np.arange(1, len(kinds)))
    return [small[part].tolist() for part in np.split(order, cuts)]


def stacked_blocks(
    stage: Stage, indices: Sequence[Index], starts: Sequence[np.ndarray] | None = None
) -> np.ndarray:
    """Blocks ``indices`` of one shape of a source in this process, stacked (block ``k`` is
    row ``k``): cut from a NumPy array in one gather, else copied block by block.
    ``starts``: per axis, every block's first element (``offsets``, as arrays)."""
    op = stage.expr.op
    array = op.data.array if isinstance(op, FromArray) else None
    chunks = stage.expr.chunks
    if not isinstance(array, np.ndarray) or array.ndim != len(chunks):
        return np.stack([local_block(stage, i) for i in indices])
    if starts is None:
        starts = [np.asarray(offsets(blocks), dtype=np.int64) for blocks in chunks]
    at = np.asarray(indices, dtype=np.int64).reshape(len(indices), len(chunks))
    picks = []
    for ax, blocks in enumerate(chunks):
        along = np.arange(blocks[indices[0][ax]], dtype=np.int64)
        shape = [len(indices)] + [1] * len(chunks)
        shape[ax + 1] = len(along)
        picks.append((starts[ax][at[:, ax], None] + along[None, :]).reshape(shape))
    return array[tuple(picks)]
