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

import dataclasses
import math
from collections.abc import Iterable, Sequence
from itertools import pairwise, product

from lazyarr.graph.chunks import Chunks, block_slices, blocks_in_range, offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads, root_input_regions
from lazyarr.graph.ops.linalg import Einsum, Matmul, Tensordot
from lazyarr.graph.ops.reduction import reduce_block_inputs
from lazyarr.optimize.plan import Stage

__all__ = [
    "Contraction",
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


@dataclasses.dataclass(frozen=True)
class Contraction:
    """The summed axes of a contraction: per label, its length and (input, axis) uses."""

    labels: tuple[tuple[int, tuple[tuple[int, int], ...]], ...]

    def intervals(self, inputs: Sequence[Expr]) -> list[list[tuple[int, int]]]:
        """Per label, the ranges of the common refinement of every use's chunks."""
        out = []
        for length, uses in self.labels:
            cuts = {0, length}
            for pos, ax in uses:
                cuts.update(offsets(inputs[pos].chunks[ax]))
            edges = sorted(cuts)
            spans = [(a, b) for a, b in pairwise(edges) if b > a]
            out.append(spans or [(0, length)])
        return out


def contraction(expr: Expr) -> Contraction | None:
    """The summed axes of ``expr`` when it is a matmul/tensordot/einsum that sums any."""
    op = expr.op
    labels: list[tuple[int, tuple[tuple[int, int], ...]]] = []
    if isinstance(op, Matmul):
        a, b = expr.inputs
        bax = 0 if b.ndim == 1 else b.ndim - 2
        labels.append((a.shape[-1], ((0, a.ndim - 1), (1, bax))))
    elif isinstance(op, Tensordot):
        a, _ = expr.inputs
        for ax_a, ax_b in zip(op.axes_a, op.axes_b):
            labels.append((a.shape[ax_a], ((0, ax_a), (1, ax_b))))
    elif isinstance(op, Einsum):
        kept = set(op.output)
        uses: dict[int, list[tuple[int, int]]] = {}
        for pos, subs in enumerate(op.subscripts):
            for ax, lab in enumerate(subs):
                if lab not in kept:
                    uses.setdefault(lab, []).append((pos, ax))
        for lab in sorted(uses):
            lengths = {expr.inputs[p].shape[ax] for p, ax in uses[lab]}
            if len(lengths) == 1:  # a broadcast (length-1) use is not split
                labels.append((lengths.pop(), tuple(uses[lab])))
    if not labels:
        return None
    return Contraction(tuple(labels))


def contracted_pairs(expr: Expr) -> list[tuple[int, int]]:
    """(axis of input 0, axis of input 1) pairs summed together by a two-operand contraction."""
    if len(expr.inputs) != 2:
        return []
    c = contraction(expr)
    if c is None:
        return []
    pairs = []
    for _, uses in c.labels:
        a = [ax for p, ax in uses if p == 0]
        b = [ax for p, ax in uses if p == 1]
        if len(a) == 1 and len(b) == 1:
            pairs.append((a[0], b[0]))
    return pairs


def n_contraction_parts(expr: Expr) -> int:
    """How many partial products a contraction block splits into (1: not splittable)."""
    c = contraction(expr)
    if c is None:
        return 1
    return math.prod(len(s) for s in c.intervals(expr.inputs))


def contraction_parts(stage: Stage, index: Sequence[int]) -> list[tuple[Region, ...]]:
    """For block ``index`` of a contraction stage: per partial product, one region per input.

    Running the stage's kernel on part ``k``'s regions gives the partial
    product over that contracted range; the block is the sum of all parts.
    Parts are in C order over the contracted labels' ranges.
    """
    return region_parts(stage.expr, block_slices(stage.expr.chunks, index))


def region_parts(expr: Expr, out: Region) -> list[tuple[Region, ...]]:
    """:func:`contraction_parts` for the output region ``out`` of contraction ``expr``."""
    c = contraction(expr)
    base = [list(r) for r in expr.op.regions(expr, out)]
    if c is None:
        return [tuple(tuple(r) for r in base)]
    spans = c.intervals(expr.inputs)
    parts = []
    for combo in product(*spans):
        regions = [list(r) for r in base]
        for (lo, hi), (_, uses) in zip(combo, c.labels):
            for pos, ax in uses:
                regions[pos][ax] = slice(lo, hi)
        parts.append(tuple(tuple(r) for r in regions))
    return parts


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
