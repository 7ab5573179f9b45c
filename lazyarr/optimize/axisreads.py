"""A stage's block reads derived axis by axis, for ops whose regions allow it.

Concatenations, indexing with slices, integers and one axis of arrays, and
reshapes cut along one output axis per axis group are *separable*: each
input axis's region follows one output axis, and a block reads an empty
region exactly where one of its axes says so. Their reads are then the op's
regions along each output axis (a few per block of each axis, not one per
block of the grid) combined with NumPy: what block-by-block derivation gives
(``tests/optimize/test_fanout_reads.py`` compares them), for
:meth:`~lazyarr.optimize.blockreads.StageReads.task_reads` and the fan-out
sweep it feeds.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np

from lazyarr.graph.chunks import Chunks, Grid, blocks_in_range
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops._reshape import reshape_groups
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.ops.manipulation import Concat, Reshape

__all__ = ["TaskReads", "separable", "separable_reads", "worth_probing"]

TaskReads = tuple[np.ndarray, np.ndarray]
"""Every read of one input by a stage's tasks: the task's number (C order) and the flat
(C order) index of the input block read, as two int64 arrays ordered by task."""


def separable(expr: Expr) -> bool:
    """Each input axis's region follows one output axis (or none), and a block reads an
    empty region exactly where one of its axes says so: concatenations, indexing with
    slices, integers and at most one axis of arrays, reshapes whose axis groups are cut
    in blocks along one output axis each (adding or dropping length-one axes, coarsen's
    splits)."""
    op = expr.op
    if isinstance(op, Concat):
        return True
    if isinstance(op, GetItem):
        return len(op.layout.bshape) <= 1
    if isinstance(op, Reshape):
        # each group of input axes follows the one output axis of its group cut in blocks
        cut = [n > 1 for n in expr.numblocks]
        shape = expr.inputs[0].shape
        return math.prod(shape) > 0 and all(
            sum(cut[a] for a in outs) <= 1 for _, outs in reshape_groups(shape, expr.shape)
        )
    return False


def worth_probing(expr: Expr) -> bool:
    """A separable op (:func:`separable`) with many more blocks than its grid has along
    its axes: deriving regions axis by axis is then much less work than block by block."""
    numblocks = expr.numblocks
    return math.prod(numblocks) >= 4 * sum(numblocks) and separable(expr)


def separable_reads(
    expr: Expr, input_exprs: Sequence[Expr], positions: Collection[int]
) -> tuple[dict[int, TaskReads], int] | None:
    """``StageReads.task_reads`` of a one-op stage that :func:`separable` says is
    separable, from the op's regions along each output axis; and the regions derived
    (the blocks along each axis, not their product). None where that does not hold.

    For each output axis the op's regions are derived for its blocks (the other axes
    at a reference block where the input's region is not empty); an input axis whose
    region changes along one output axis takes its blocks from that axis's table, one
    that never changes is fixed. A block reads an empty region (the block holding each
    axis's start, as ``region_blocks`` gives it) where any axis's table says so;
    otherwise the product of its axes' block ranges, expanded with NumPy.
    """
    if tuple(input_exprs) != tuple(expr.inputs):
        return None
    out = expr.chunks
    ndim = len(out)
    numblocks = tuple(len(c) for c in out)
    if any(n == 0 for n in numblocks):
        return None
    grid = Grid(out)
    cache: dict[tuple[int, tuple[int, ...]], list[tuple[Region, ...] | None]] = {}

    def probe(j: int, ref: list[int]) -> list[tuple[Region, ...] | None]:
        """The regions of every input for each block along output axis ``j`` (the other
        axes at ``ref``); None for an empty block."""
        key = (j, tuple(ref[:j] + ref[j + 1 :]))
        along = cache.get(key)
        if along is None:
            along = cache[key] = []
            for i in range(numblocks[j]):
                region = grid.region([*ref[:j], i, *ref[j + 1 :]])
                along.append(None if _empty(region) else tuple(expr.op.regions(expr, region)))
        return along

    base = [next((i for i, n in enumerate(c) if n > 0), 0) for c in out]
    first = [probe(j, base) for j in range(ndim)]
    first_hits = [_hit_matrix(along, len(input_exprs)) for along in first]
    found: dict[int, TaskReads] = {}
    for k in positions:
        chunks = input_exprs[k].chunks
        if any(not c for c in chunks):
            return None
        # a block whose region of input k is not empty: the other axes are probed there
        at = next(
            ((j, int(h[:, k].argmax())) for j, h in enumerate(first_hits) if h[:, k].any()),
            None,
        )
        if at is None:
            return None
        ref = list(base)
        ref[at[0]] = at[1]
        probes = [first[j] if j == at[0] else probe(j, ref) for j in range(ndim)]
        hits = [
            first_hits[j][:, k] if j == at[0] else _hit_matrix(along, len(input_exprs), k)
            for j, along in enumerate(probes)
        ]
        rules = _axis_rules(probes, hits, k, chunks)
        if rules is None:
            return None
        found[k] = _expand(numblocks, chunks, hits, rules)
    return found, sum(len(along) for along in cache.values())


def _hit_matrix(along: list[tuple[Region, ...] | None], n: int, k: int | None = None) -> np.ndarray:
    """Which blocks of a probe read a region that is not empty: per block and input
    (``k``: of that input only)."""
    cols = range(n) if k is None else (k,)
    out = np.zeros((len(along), len(cols)), dtype=bool)
    for i, regions in enumerate(along):
        if regions is not None:
            out[i] = [min([s.stop - s.start for s in regions[c]], default=1) > 0 for c in cols]
    return out if k is None else out[:, 0]


def _empty(region: Region) -> bool:
    return any(s.stop <= s.start for s in region)


def _axis_rules(
    probes: list[list[tuple[Region, ...] | None]],
    hits: list[np.ndarray],
    k: int,
    chunks: Chunks,
) -> list[tuple[int | None, np.ndarray, np.ndarray]] | None:
    """For input ``k``, per input axis: (the output axis it follows or None, first block,
    block count per block of that axis). None where an input axis follows two."""
    base = next(along[int(h.argmax())][k] for along, h in zip(probes, hits) if h.any())
    rules: list[tuple[int | None, np.ndarray, np.ndarray]] = []
    for a, c in enumerate(chunks):
        driver = None
        for j, (along, h) in enumerate(zip(probes, hits)):
            spans = {(along[i][k][a].start, along[i][k][a].stop) for i in np.flatnonzero(h)}
            if len(spans) > 1:
                if driver is not None:
                    return None
                driver = j
        if driver is None:
            b = blocks_in_range(c, base[a].start, base[a].stop)
            rules.append((None, np.array([b.start]), np.array([len(b)])))
            continue
        lo, count = [], []
        for r, ok in zip(probes[driver], hits[driver]):
            b = blocks_in_range(c, r[k][a].start, r[k][a].stop) if ok else range(0, 1)
            lo.append(b.start)
            count.append(len(b))
        rules.append((driver, np.array(lo), np.array(count)))
    return rules


def _expand(
    numblocks: tuple[int, ...],
    chunks: Chunks,
    hits: list[np.ndarray],
    rules: list[tuple[int | None, np.ndarray, np.ndarray]],
) -> TaskReads:
    """Every (task, flat input block) pair: each task's box of blocks (per input axis a
    range picked by one output axis), or the empty region's block where a task misses."""
    ndim = len(numblocks)
    real = np.ones(numblocks, dtype=bool)
    for j, h in enumerate(hits):
        real &= _along(h, j, ndim)
    real = real.reshape(-1)
    first, count = [], []
    for a, (driver, lo, n) in enumerate(rules):
        if driver is None:
            lo_t = np.full(real.size, lo[0], dtype=np.int64)
            n_t = np.full(real.size, n[0], dtype=np.int64)
        else:
            lo_t = np.broadcast_to(_along(lo, driver, ndim), numblocks).reshape(-1).astype(np.int64)
            n_t = np.broadcast_to(_along(n, driver, ndim), numblocks).reshape(-1).astype(np.int64)
        empty_block = blocks_in_range(chunks[a], 0, 0)[0]
        first.append(np.where(real, lo_t, empty_block))
        count.append(np.where(real, n_t, 1))
    per_task = np.ones(real.size, dtype=np.int64)
    for n_t in count:
        per_task *= n_t
    tasks = np.repeat(np.arange(real.size, dtype=np.int64), per_task)
    # each read's position inside its task's box, in C order (last axis fastest)
    starts = np.cumsum(per_task) - per_task
    local = np.arange(tasks.size, dtype=np.int64) - np.repeat(starts, per_task)
    flat = np.zeros(tasks.size, dtype=np.int64)
    stride = 1
    for a in range(len(chunks) - 1, -1, -1):
        n_r = count[a][tasks]
        flat += (first[a][tasks] + local % n_r) * stride
        local //= n_r
        stride *= len(chunks[a])
    return tasks, flat


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """``values`` shaped to broadcast along ``axis`` of an ``ndim``-d grid."""
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)
