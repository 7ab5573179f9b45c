"""Which input blocks each block task of a stage reads, and how big its result is.

The stage-level face of :mod:`lazyarr.graph.blockrules`: the placement
search and the lowering both ask a :class:`StageReads`, so they agree on
every dependency. Per block the work is constant (offsets of each axis are
computed once per array, block ranges by bisection), never proportional to
the number of blocks.

A task of a stage reads *regions* of its inputs (global coordinates); the
blocks a region touches are what moves between workers, and what a
scheduler waits for.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from itertools import product

import numpy as np

from lazyarr.graph.blockrules import (
    Read,
    group_reads,
    is_elementwise_group,
    n_contraction_parts,
    reduce_block_inputs,
    region_parts,
)
from lazyarr.graph.chunks import Chunks, Grid, block_index_iter, blocks_in_range, offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads
from lazyarr.graph.ops._reshape import reshape_groups
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.ops.manipulation import Concat, Reshape
from lazyarr.optimize.plan import Stage

__all__ = [
    "BlockRef",
    "StageReads",
    "TaskReads",
    "reads_elementwise",
    "region_blocks",
]

BlockRef = tuple[int, tuple[int, ...]]
"""(input position, block index of that input)."""

TaskReads = tuple[np.ndarray, np.ndarray]
"""Every read of one input by a stage's tasks: the task's number (C order) and the flat
(C order) index of the input block read, as two int64 arrays ordered by task."""


def region_blocks(chunks: Chunks, region: Region) -> list[tuple[int, ...]]:
    """Indices of the blocks of an array with ``chunks`` that ``region`` touches (C order)."""
    if len(chunks) == 1:  # the common 1-d case without ``product``
        s = region[0]
        return [(b,) for b in blocks_in_range(chunks[0], s.start, s.stop)]
    ranges = [blocks_in_range(c, s.start, s.stop) for c, s in zip(chunks, region)]
    return list(product(*ranges))


def _partial_itemsize(stage: Stage) -> int:
    """Bytes per kept element of a reduction's partial state (the op's own estimate)."""
    expr = stage.expr
    return expr.op.state_itemsize(expr.inputs[0], expr)


def _kept_axes(stage: Stage) -> list[int]:
    op = stage.expr.op
    if getattr(op, "flat", False):
        return []
    return [ax for ax in range(stage.expr.inputs[0].ndim) if ax not in op.axes]


# How one input axis of an elementwise read follows the block grid (see ``_Projection``).
_SAME, _FIXED, _ONE, _MANY = range(4)


class _Projection:
    """Elementwise reads as per-axis tables: block ``i`` of the grid reads these input blocks.

    When every member is elementwise, an input's region is the block's
    region broadcast into it, so each input axis depends on one grid axis
    only: the input blocks along it are looked up per grid block once per
    stage, and a block's reads are a tuple built from the tables (no
    region arithmetic per block).
    """

    def __init__(
        self, input_exprs: Sequence[Expr], positions: Sequence[int], shape: tuple, grid: Chunks
    ) -> None:
        self.specs = []
        self.simple = True
        self.work = 0
        for pos in positions:
            e = input_exprs[pos]
            lead = len(shape) - e.ndim
            axes = []
            for j, n in enumerate(e.shape):
                a = lead + j
                mine = e.chunks[j]
                if n == 1 and shape[a] != 1:
                    fixed = tuple(blocks_in_range(mine, 0, 1))
                    axes.append((_FIXED, a, fixed[0]) if len(fixed) == 1 else (_MANY, -1, fixed))
                    continue
                if mine == grid[a] and all(mine):
                    axes.append((_SAME, a, None))
                    continue
                o = offsets(grid[a])
                table = [tuple(blocks_in_range(mine, o[i], o[i + 1])) for i in range(len(grid[a]))]
                self.work += len(table)
                if all(len(t) == 1 for t in table):
                    axes.append((_ONE, a, [t[0] for t in table]))
                else:
                    axes.append((_MANY, a, table))
            self.simple = self.simple and all(m != _MANY for m, _, _ in axes)
            self.specs.append((pos, axes))
        # every input is the grid itself (same blocks on every axis): a block reads its own index
        own = [
            pos
            for pos, axes in self.specs
            if len(axes) == len(shape)
            and all(m == _SAME and a == j for j, (m, a, _) in enumerate(axes))
        ]
        self.own = own if len(own) == len(self.specs) else None

    def __call__(self, index: Sequence[int]) -> list[BlockRef]:
        if self.own is not None:
            index = tuple(index)
            return [(pos, index) for pos in self.own]
        if self.simple:
            return [
                (
                    pos,
                    tuple(
                        [
                            index[a] if m == _SAME else (t if m == _FIXED else t[index[a]])
                            for m, a, t in axes
                        ]
                    ),
                )
                for pos, axes in self.specs
            ]
        out: dict[BlockRef, None] = {}
        for pos, axes in self.specs:
            ranges = []
            for m, a, t in axes:
                if m == _SAME:
                    ranges.append((index[a],))
                elif m == _FIXED:
                    ranges.append((t,))
                elif m == _ONE:
                    ranges.append((t[index[a]],))
                else:
                    ranges.append(t if a < 0 else t[index[a]])
            for b in product(*ranges):
                out[(pos, b)] = None
        return list(out)


def reads_elementwise(stage: Stage) -> bool:
    """Each task of ``stage`` reads the input blocks at its own position (or a broadcast
    row of them): a map stage of elementwise members, a reduction of such a body."""
    kind = stage.kind
    if kind == "map":
        return is_elementwise_group(stage.members)
    if kind == "reduce":
        return is_elementwise_group(stage.members[:-1]) and not stage.expr.op.own_partials
    return False


def _read_positions(members: Sequence[Expr], input_exprs: Sequence[Expr]) -> list[int]:
    """The input positions a group's kernels read: all for one op, else each input's first."""
    if len(members) <= 1:
        return list(range(len(input_exprs)))
    first: dict[str, int] = {}
    for pos, e in enumerate(input_exprs):
        first.setdefault(e.key, pos)
    return sorted(first.values())


class StageReads:
    """The block rules of one stage, looked up once: what each of its tasks reads.

    * :meth:`block`: a whole block of a map stage (a contraction reads whole
      panels and sums its parts itself);
    * :meth:`partial`: the partial state of one body block of a reduction;
    * :meth:`products`: the partial products of a contraction block, one per
      contracted block range.

    Each returns the region computed and the input blocks read, as
    ``(input position, block index)`` pairs, each once, in order of first use.
    Elementwise reads (a group of elementwise members, a reduction of one)
    come from per-axis tables (:class:`_Projection`); other ops derive each
    block's regions from their rules.
    """

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.expr = stage.expr
        self.members = stage.members
        self.input_exprs = stage.input_exprs
        self.chunks = [e.chunks for e in stage.input_exprs]
        self.grid = Grid(self.expr.chunks)
        kind = stage.kind
        self.body_members = stage.members[:-1] if kind == "reduce" else ()
        self.body = self.expr.inputs[0] if kind == "reduce" else None
        op = self.expr.op
        self.body_grid = Grid(op.body_chunks(self.expr)) if self.body is not None else None
        self._own_partials = kind == "reduce" and op.own_partials
        """The op's partials read regions of their own (:meth:`ReduceOp.partial_regions`)."""
        self.contraction_parts = n_contraction_parts(self.expr) if kind == "map" else 1
        self.regions_computed = 0
        """Regions this object derived (tests check it grows linearly with blocks)."""
        self._projection: _Projection | None = None
        if reads_elementwise(stage):
            group = self.body_members if kind == "reduce" else self.members
            grid = self.body_grid if kind == "reduce" else self.grid
            shape = self.body.shape if kind == "reduce" else self.expr.shape
            positions = (
                [0] if kind == "reduce" and not group else _read_positions(group, self.input_exprs)
            )
            self._projection = _Projection(self.input_exprs, positions, shape, grid.chunks)
            self.regions_computed += self._projection.work
        self._block_bytes: np.ndarray | None = None
        self._partial_bytes: np.ndarray | None = None

    @property
    def elementwise(self) -> bool:
        """Each task reads the input blocks at its own position (or a broadcast row of them),
        looked up from per-axis tables."""
        return self._projection is not None

    def blocks_of(self, reads: Sequence[Read]) -> list[BlockRef]:
        """The (input position, block index) pairs that ``reads`` touch, each once, in order."""
        out: dict[BlockRef, None] = {}
        chunks = self.chunks
        for pos, region in reads:
            for b in region_blocks(chunks[pos], region):
                out[(pos, b)] = None
        return list(out)

    def block(self, index: Sequence[int]) -> tuple[Region, list[BlockRef]]:
        """Block ``index`` computed as one task: its region and the input blocks it reads."""
        region = self.grid.region(index)
        kind = self.stage.kind
        if kind == "source":
            return region, []
        if kind == "reduce":
            refs: dict[BlockRef, None] = {}
            for bi in reduce_block_inputs(self.expr, index):
                refs.update(dict.fromkeys(self.partial(bi)[1]))
            return region, list(refs)
        self.regions_computed += 1
        if self._projection is not None:
            return region, self._projection(index)
        return region, self.blocks_of(group_reads(self.members, self.input_exprs, region))

    def partial(self, body_index: Sequence[int]) -> tuple[Region, list[BlockRef]]:
        """The partial of one body block of a reduce stage: the body region and what it reads."""
        assert self.body_grid is not None, "partial() of a stage that is not a reduction"
        region = self.body_grid.region(body_index)
        self.regions_computed += 1
        if self._own_partials:
            regions = self.expr.op.partial_regions(self.expr, region)
            return region, self.blocks_of(list(enumerate(regions)))
        if self._projection is not None:
            return region, self._projection(body_index)
        return region, self.blocks_of(group_reads(self.body_members, self.input_exprs, region))

    def partial_region(self, body_index: Sequence[int]) -> Region:
        """The body region of one partial, for a stage whose inputs no task makes."""
        assert self.body_grid is not None, "partial_region() of a stage that is not a reduction"
        return self.body_grid.region(body_index)

    def parts(self, index: Sequence[int]) -> list[tuple[int, ...]]:
        """The body block indices a reduce block combines, in the order partials combine."""
        return list(reduce_block_inputs(self.expr, index))

    def products(
        self, index: Sequence[int]
    ) -> tuple[Region, list[tuple[tuple[Region, ...], list[BlockRef]]]]:
        """A contraction block's region and, per partial product, its regions and blocks read."""
        region = self.grid.region(index)
        out = []
        for regions in region_parts(self.expr, region):
            self.regions_computed += 1
            if self.stage.fused:
                reads = external_reads(self.members, self.input_exprs, regions)
            else:
                reads = [(i, tuple(r)) for i, r in enumerate(regions)]
            out.append((regions, self.blocks_of(reads)))
        return region, out

    def task_reads(self, positions: Collection[int]) -> dict[int, TaskReads]:
        """Per input position in ``positions``: every block its tasks read (:data:`TaskReads`).

        The tasks are the blocks of a map stage and the body blocks (partials)
        of a reduce stage, numbered in C order; each reads a block once, in
        the order of :meth:`block` / :meth:`partial`. Ops whose regions follow
        the grid axis by axis (:func:`_separable`: concatenations, most
        indexing) are read from per-axis tables; others task by task.
        """
        kind = self.stage.kind
        if kind not in ("map", "reduce") or not positions:
            return {}
        if kind == "map" and len(self.members) == 1 and _worth_probing(self.expr):
            found = _separable_reads(self.expr, self.input_exprs, positions)
            if found is not None:
                self.regions_computed += found[1]
                return found[0]
        read = self.block if kind == "map" else self.partial
        shape = self.stage.numblocks if kind == "map" else self.body_grid.numblocks
        lists: dict[int, tuple[list[int], list[tuple[int, ...]]]] = {p: ([], []) for p in positions}
        for t, index in enumerate(block_index_iter(shape)):
            for pos, b in read(index)[1]:
                got = lists.get(pos)
                if got is not None:
                    got[0].append(t)
                    got[1].append(b)
        return {
            p: (np.array(tasks, np.int64), _flat(blocks, self.input_exprs[p].numblocks))
            for p, (tasks, blocks) in lists.items()
        }

    def block_nbytes(self, index: Sequence[int]) -> int:
        """Bytes of output block ``index`` (sizes of all blocks computed once)."""
        if self._block_bytes is None:
            self._block_bytes = self.grid.block_sizes() * self.expr.dtype.itemsize
        return int(self._block_bytes[tuple(index)])

    def partial_nbytes(self, body_index: Sequence[int]) -> int:
        """Estimated bytes of one body block's partial state.

        The state has the body block's extent on kept axes and length one on
        the reduced ones; its element size is the op's
        (:meth:`~lazyarr.graph.expr.ReduceOp.state_itemsize`: the built-in
        reductions' from their state description, ``graph/ops/reduction_state.py``).
        """
        if self._partial_bytes is None and self._own_partials:
            # a partial keeps an estimated share of its body block (see the op)
            assert self.body_grid is not None
            sizes = self.body_grid.block_sizes()
            self._partial_bytes = self.expr.op.partial_nbytes(self.expr, sizes)
        if self._partial_bytes is None:
            assert self.body_grid is not None
            kept = self.body_grid.block_sizes(_kept_axes(self.stage))
            self._partial_bytes = kept * _partial_itemsize(self.stage)
        return int(self._partial_bytes[tuple(body_index)])


def _flat(indices: list[tuple[int, ...]], numblocks: tuple[int, ...]) -> np.ndarray:
    """Flat (C order) positions of block ``indices`` in a grid of ``numblocks`` (int64)."""
    if not numblocks or not indices:
        return np.zeros(len(indices), np.int64)
    return np.ravel_multi_index(tuple(np.array(indices).T), numblocks).astype(np.int64)


def _separable(expr: Expr) -> bool:
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


def _worth_probing(expr: Expr) -> bool:
    """A separable op (:func:`_separable`) with many more blocks than its grid has along
    its axes: deriving regions axis by axis is then much less work than block by block."""
    numblocks = expr.numblocks
    return math.prod(numblocks) >= 4 * sum(numblocks) and _separable(expr)


def _separable_reads(
    expr: Expr, input_exprs: Sequence[Expr], positions: Collection[int]
) -> tuple[dict[int, TaskReads], int] | None:
    """:meth:`StageReads.task_reads` of a one-op stage whose rule :func:`_separable` says
    is separable, from the op's regions along each output axis; and the regions derived
    (the blocks along each axis, not their product). None where that does not hold.

    For each output axis the op's regions are derived for its blocks (the other axes
    at a reference block); an input axis whose region changes along one output axis
    takes its blocks from that axis's table, one that never changes is fixed. A block
    reads an empty region (the first block of each axis, as :func:`region_blocks`
    gives it) where any axis's table says so; otherwise the product of its axes' block
    ranges, expanded with NumPy.
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
