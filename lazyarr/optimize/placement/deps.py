"""Block dependencies of a stage, from the graph ops alone (no kernels, no executor).

The planner needs to know which input blocks each block task reads and how
big the intermediate pieces are. Everything is derived from the op
contracts in ``lazyarr.graph`` the same way the executors read regions
(``executors/blockwork.py`` and ``kernels/fused.py`` cannot be imported
from ``optimize``; this module re-derives the same facts):

* a map block reads, per input, the bounding region its op's ``regions``
  names; a fused map stage reads the external regions of its members;
* a reduce block combines one partial per block of its body along the
  reduced axes (:func:`reduce_parts`);
* a contraction (``matmul``, ``tensordot``, ``einsum`` with summed labels)
  can also run as one partial product per contracted block range, summed
  in a tree (:func:`contraction_parts`); each part reads the same regions
  with the contracted axes cut to that range.

A region covers whole or partial blocks; the blocks it touches
(``blocks_in_range`` per axis, an empty range still touching one block)
are what moves between workers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import product

from lazyarr.graph.blockrules import (
    contracted_pairs,
    contraction,
    n_contraction_parts,
    reduce_block_inputs,
    region_parts,
)
from lazyarr.graph.chunks import Chunks, block_slices, blocks_in_range
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads, root_input_regions
from lazyarr.optimize.plan import Stage

__all__ = [
    "block_nbytes",
    "contracted_pairs",
    "contraction",
    "contraction_part_reads",
    "contraction_parts",
    "n_contraction_parts",
    "partial_nbytes",
    "reads_blocks",
    "reduce_part_reads",
    "region_parts",
    "reduce_parts",
    "region_blocks",
    "stage_reads",
]

Read = tuple[int, Region]
"""(input position, region in that input's global coordinates)."""


def block_nbytes(expr: Expr, index: Sequence[int]) -> int:
    """Bytes of block ``index`` of ``expr``: its element count times the itemsize."""
    n = 1
    for blocks, i in zip(expr.chunks, index):
        n *= blocks[i]
    return n * expr.dtype.itemsize


def region_blocks(chunks: Chunks, region: Region) -> list[tuple[int, ...]]:
    """Indices of the blocks of an array with ``chunks`` that ``region`` touches (C order)."""
    ranges = [blocks_in_range(c, s.start, s.stop) for c, s in zip(chunks, region)]
    return list(product(*ranges))


def _region_key(read: Read) -> tuple:
    """A hashable form of a read (slices are unhashable before Python 3.12)."""
    pos, region = read
    return (pos, tuple((r.start, r.stop) for r in region))


def _unique(reads: Iterable[Read]) -> list[Read]:
    seen: dict[tuple, Read] = {}
    for r in reads:
        seen.setdefault(_region_key(r), r)
    return list(seen.values())


def _member_reads(
    members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region
) -> list[Read]:
    """External reads of a fused group computed over ``region`` of its root."""
    return external_reads(members, input_exprs, root_input_regions(members, region))


def _map_reads(stage: Stage, out: Region) -> list[Read]:
    if stage.fused:
        return _member_reads(stage.members, stage.input_exprs, out)
    expr = stage.expr
    return [(i, tuple(r)) for i, r in enumerate(expr.op.regions(expr, out))]


def reduce_parts(stage: Stage, index: Sequence[int]) -> list[tuple[int, ...]]:
    """Body block indices that reduce block ``index`` combines (the executors' order)."""
    return list(reduce_block_inputs(stage.expr, index))


def reduce_part_reads(stage: Stage, body_index: Sequence[int]) -> list[Read]:
    """What the partial of one body block reads (the block itself, or a fused body's inputs)."""
    body = stage.expr.inputs[0]
    region = block_slices(body.chunks, body_index)
    if stage.fused:
        return _member_reads(stage.members[:-1], stage.input_exprs, region)
    return [(0, region)]


def stage_reads(stage: Stage, index: Sequence[int]) -> list[Read]:
    """Every (input position, region) block ``index`` reads when computed as one task."""
    kind = stage.kind
    if kind == "source":
        return []
    if kind == "map":
        return _map_reads(stage, block_slices(stage.expr.chunks, index))
    if kind == "reduce":
        return _unique(r for b in reduce_parts(stage, index) for r in reduce_part_reads(stage, b))
    raise NotImplementedError(f"stage kind {kind!r} has no block rule")


def reads_blocks(stage: Stage, reads: Sequence[Read]) -> list[tuple[int, tuple[int, ...]]]:
    """The (input position, block index) pairs that ``reads`` touch, each once, in order."""
    out: dict[tuple[int, tuple[int, ...]], None] = {}
    for pos, region in reads:
        chunks = stage.input_exprs[pos].chunks
        for b in region_blocks(chunks, region):
            out[(pos, b)] = None
    return list(out)


# ----------------------------------------------------------------- contractions


def contraction_parts(stage: Stage, index: Sequence[int]) -> list[tuple[Region, ...]]:
    """For block ``index`` of a contraction stage: per partial product, one region per input."""
    return region_parts(stage.expr, block_slices(stage.expr.chunks, index))


# ----------------------------------------------------------------- partial sizes

_STATE_FACTOR = {"var": 3, "std": 3}


def contraction_part_reads(stage: Stage, regions: Sequence[Region]) -> list[Read]:
    """What one partial product reads, given the regions of the contraction's own inputs.

    ``regions`` is one entry of :func:`contraction_parts`. A stage whose
    operands were folded into it (a transpose, a scaled operand) reads
    their inputs instead.
    """
    if stage.fused:
        return external_reads(stage.members, stage.input_exprs, regions)
    return [(i, tuple(r)) for i, r in enumerate(regions)]


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
