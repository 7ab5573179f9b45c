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

from collections.abc import Sequence
from itertools import product

from lazyarr.graph.blockrules import (
    Read,
    group_reads,
    is_elementwise_group,
    n_contraction_parts,
    reduce_block_inputs,
    region_parts,
)
from lazyarr.graph.chunks import Chunks, block_slices, blocks_in_range
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads
from lazyarr.optimize.plan import Stage

__all__ = [
    "BlockRef",
    "StageReads",
    "block_nbytes",
    "partial_nbytes",
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


def block_nbytes(expr: Expr, index: Sequence[int]) -> int:
    """Bytes of block ``index`` of ``expr``: its element count times the itemsize."""
    n = expr.dtype.itemsize
    for blocks, i in zip(expr.chunks, index):
        n *= blocks[i]
    return n


_STATE_FACTOR = {"var": 3, "std": 3}


def partial_nbytes(stage: Stage, body_index: Sequence[int]) -> int:
    """Estimated bytes of the partial state a reduce stage keeps for one body block.

    The state has the body block's extent on kept axes and length one on the
    reduced ones; its element size depends on the reduction (an estimate:
    ``mean`` adds a count, ``var``/``std`` keep three arrays, ``argmin``/
    ``argmax`` a value and an index).
    """
    expr = stage.expr
    op = expr.op
    body = expr.inputs[0]
    func = getattr(op, "func", "sum")
    n = 1
    if not getattr(op, "flat", False):
        for ax, (blocks, i) in enumerate(zip(body.chunks, body_index)):
            if ax not in op.axes:
                n *= blocks[i]
    acc = getattr(op, "dtype", None)
    if func in ("argmin", "argmax"):
        item = body.dtype.itemsize + 8
    elif func == "count_nonzero":
        item = 8
    elif func in ("mean", "nanmean", "var", "std"):
        base = acc.itemsize if acc is not None else max(body.dtype.itemsize, 8)
        if body.dtype.kind in "fc" and acc is None:
            base = body.dtype.itemsize
        item = base * _STATE_FACTOR.get(func, 1) + (8 if func == "nanmean" else 0)
    else:
        item = acc.itemsize if acc is not None else expr.dtype.itemsize
    return n * item


class StageReads:
    """The block rules of one stage, looked up once: what each of its tasks reads.

    * :meth:`block`: a whole block of a map stage (a contraction reads whole
      panels and sums its parts itself);
    * :meth:`partial`: the partial state of one body block of a reduction;
    * :meth:`products`: the partial products of a contraction block, one per
      contracted block range.

    Each returns the region computed and the input blocks read, as
    ``(input position, block index)`` pairs, each once, in order of first use.
    """

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.expr = stage.expr
        self.members = stage.members
        self.input_exprs = stage.input_exprs
        self.chunks = [e.chunks for e in stage.input_exprs]
        self.body_members = stage.members[:-1] if stage.kind == "reduce" else ()
        self.body = self.expr.inputs[0] if stage.kind == "reduce" else None
        self.contraction_parts = (
            n_contraction_parts(self.expr) if stage.kind == "map" else 1
        )
        self.regions_computed = 0
        """How many regions this object derived (tests check it grows linearly with blocks)."""

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
        region = block_slices(self.expr.chunks, index)
        if self.stage.kind == "source":
            return region, []
        if self.stage.kind == "reduce":
            refs: dict[BlockRef, None] = {}
            for bi in reduce_block_inputs(self.expr, index):
                refs.update(dict.fromkeys(self.partial(bi)[1]))
            return region, list(refs)
        self.regions_computed += 1
        return region, self.blocks_of(group_reads(self.members, self.input_exprs, region))

    def partial(self, body_index: Sequence[int]) -> tuple[Region, list[BlockRef]]:
        """The partial of one body block of a reduce stage: the body region and what it reads."""
        assert self.body is not None, "partial() of a stage that is not a reduction"
        region = block_slices(self.body.chunks, body_index)
        self.regions_computed += 1
        if not self.body_members:  # the body is the input itself
            return region, self.blocks_of([(0, region)])
        return region, self.blocks_of(group_reads(self.body_members, self.input_exprs, region))

    def parts(self, index: Sequence[int]) -> list[tuple[int, ...]]:
        """The body block indices a reduce block combines, in the order partials combine."""
        return list(reduce_block_inputs(self.expr, index))

    def products(
        self, index: Sequence[int]
    ) -> tuple[Region, list[tuple[tuple[Region, ...], list[BlockRef]]]]:
        """A contraction block's region and, per partial product, its regions and blocks read."""
        region = block_slices(self.expr.chunks, index)
        out = []
        for regions in region_parts(self.expr, region):
            self.regions_computed += 1
            if self.stage.fused:
                reads = external_reads(self.members, self.input_exprs, regions)
            else:
                reads = [(i, tuple(r)) for i, r in enumerate(regions)]
            out.append((regions, self.blocks_of(reads)))
        return region, out

    @property
    def elementwise(self) -> bool:
        """Every member is elementwise (reads follow the block grid, inputs broadcast)."""
        members = self.body_members if self.stage.kind == "reduce" else self.members
        return is_elementwise_group(members)
