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
from lazyarr.optimize.axisreads import TaskReads, separable_reads, worth_probing
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

    def partial_blocks(self, body_index: Sequence[int]) -> list[BlockRef]:
        """The input blocks the partial of one body block reads (:meth:`partial` without its
        region, which elementwise reads do not need)."""
        if self._projection is not None and not self._own_partials:
            return self._projection(body_index)
        return self.partial(body_index)[1]

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
        if kind == "map" and len(self.members) == 1 and worth_probing(self.expr):
            found = separable_reads(self.expr, self.input_exprs, positions)
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
        return int(self.blocks_nbytes()[tuple(index)])

    def blocks_nbytes(self) -> np.ndarray:
        """Bytes of every output block, shaped like the block grid (computed once)."""
        if self._block_bytes is None:
            self._block_bytes = self.grid.block_sizes() * self.expr.dtype.itemsize
        return self._block_bytes

    def partial_nbytes(self, body_index: Sequence[int]) -> int:
        """Estimated bytes of one body block's partial state (:meth:`partials_nbytes`)."""
        return int(self.partials_nbytes()[tuple(body_index)])

    def partials_nbytes(self) -> np.ndarray:
        """Estimated bytes of every body block's partial state, shaped like the body grid.

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
        return self._partial_bytes


def _flat(indices: list[tuple[int, ...]], numblocks: tuple[int, ...]) -> np.ndarray:
    """Flat (C order) positions of block ``indices`` in a grid of ``numblocks`` (int64)."""
    if not numblocks or not indices:
        return np.zeros(len(indices), np.int64)
    return np.ravel_multi_index(tuple(np.array(indices).T), numblocks).astype(np.int64)
