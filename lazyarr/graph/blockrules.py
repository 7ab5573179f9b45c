"""What a block reads: the one home of the block rules that fusion, placement,
lowering, kernels and pictures all ask.

* A map op's block reads one bounding region of each input (``MapOp.regions``).
* A fused group's block reads regions of the inputs outside the group
  (:func:`group_reads`): straight from the root's region when every member is
  elementwise (they all cover the root's region, inputs broadcast into it),
  else by walking the members' region rules back from the root
  (:mod:`lazyarr.graph.group`).
* A reduction's block combines one partial per body block along the reduced
  axes, in C order (:func:`reduce_block_inputs`).
* A contraction (``matmul``, ``tensordot``, ``einsum`` with summed labels)
  can also run as one partial product per contracted block range, summed in
  a tree (:func:`region_parts`); each part reads the same regions with the
  contracted axes cut to that range. Ranges of tiny blocks are merged until a
  part reads about :data:`PART_MIN_BYTES` (a part's Python costs ~10 us).

A region is a bounding box in global coordinates (one step-1 slice per axis).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from itertools import pairwise, product

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads, root_input_regions
from lazyarr.graph.ops.elementwise import Elementwise
from lazyarr.graph.ops.linalg import Einsum, Matmul, Tensordot
from lazyarr.graph.ops.reduction import reduce_block_inputs

__all__ = [
    "PART_MIN_BYTES",
    "Contraction",
    "Read",
    "broadcast_region",
    "contracted_pairs",
    "contraction",
    "group_reads",
    "is_elementwise_group",
    "n_contraction_parts",
    "reduce_block_inputs",
    "region_parts",
]

Read = tuple[int, Region]
"""(input position, region in that input's global coordinates)."""


def broadcast_region(in_shape: Sequence[int], out_shape: Sequence[int], out: Region) -> Region:
    """The region of an input broadcast (NumPy's rules, axes right-aligned) into ``out``."""
    lead = len(out_shape) - len(in_shape)
    return tuple(
        slice(0, 1) if (n == 1 and out_shape[lead + j] != 1) else out[lead + j]
        for j, n in enumerate(in_shape)
    )


def is_elementwise_group(members: Sequence[Expr]) -> bool:
    """Every member is elementwise: each covers its root's region (fusion keeps their grids)."""
    return all(isinstance(m.op, Elementwise) for m in members)


def group_reads(members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region) -> list[Read]:
    """Each (input position, region) a group computing ``region`` of its root reads from outside.

    ``members``: the group's expressions in dependency order, root last (a
    single op: ``(expr,)`` with ``input_exprs = expr.inputs``). Each read
    appears once, in the order of first use.
    """
    if len(members) == 1:
        root = members[0]
        if isinstance(root.op, Elementwise):
            out = root.shape
            return [(i, broadcast_region(e.shape, out, region)) for i, e in enumerate(input_exprs)]
        return [(i, tuple(r)) for i, r in enumerate(root.op.regions(root, region))]
    if is_elementwise_group(members):
        return _broadcast_reads(input_exprs, members[-1].shape, region)
    return external_reads(members, input_exprs, root_input_regions(members, region))


def _broadcast_reads(input_exprs: Sequence[Expr], shape: tuple, region: Region) -> list[Read]:
    out: list[Read] = []
    seen: set[str] = set()
    for pos, e in enumerate(input_exprs):
        if e.key in seen:  # one read per distinct input (its first position)
            continue
        seen.add(e.key)
        out.append((pos, broadcast_region(e.shape, shape, region)))
    return out


# ----------------------------------------------------------------- contractions


PART_MIN_BYTES = 1 << 20
"""A partial product reads about this many input bytes at least: the contracted ranges of
blocks smaller than that are merged (the Python around a part costs more than its kernel)."""


def _merged(spans: list[tuple[int, int]], per_unit: int, min_bytes: int) -> list[tuple[int, int]]:
    """Neighbouring ``spans`` joined while a joined range reads at most ``min_bytes``."""
    out = [spans[0]]
    for a, b in spans[1:]:
        lo = out[-1][0]
        if (b - lo) * per_unit <= min_bytes:
            out[-1] = (lo, b)
        else:
            out.append((a, b))
    return out


@dataclasses.dataclass(frozen=True)
class Contraction:
    """The summed axes of a contraction: per label, its length and (input, axis) uses."""

    labels: tuple[tuple[int, tuple[tuple[int, int], ...]], ...]

    def intervals(
        self, inputs: Sequence[Expr], min_bytes: int | None = None
    ) -> list[list[tuple[int, int]]]:
        """Per label, the ranges of the common refinement of every use's chunks.

        Neighbouring ranges of the last label are merged while one part reads
        at most ``min_bytes`` of its inputs (None: :data:`PART_MIN_BYTES`; 0: never).
        """
        if min_bytes is None:
            min_bytes = PART_MIN_BYTES
        out = []
        for length, uses in self.labels:
            cuts = {0, length}
            for pos, ax in uses:
                cuts.update(offsets(inputs[pos].chunks[ax]))
            edges = sorted(cuts)
            spans = [(a, b) for a, b in pairwise(edges) if b > a]
            out.append(spans or [(0, length)])
        if min_bytes and len(out[-1]) > 1:
            out[-1] = _merged(out[-1], self._bytes_per_unit(inputs, out), min_bytes)
        return out

    def _bytes_per_unit(self, inputs: Sequence[Expr], spans: list[list[tuple[int, int]]]) -> int:
        """Input bytes one part reads per unit length of the last label's range (largest
        chunk on free axes, largest range on the other labels)."""
        widest = {
            (pos, ax): max(b - a for a, b in spans[i])
            for i, (_, uses) in enumerate(self.labels[:-1])
            for pos, ax in uses
        }
        last = {pos: ax for pos, ax in self.labels[-1][1]}
        total = 0
        for pos, ax_last in last.items():
            e = inputs[pos]
            size = e.dtype.itemsize
            for ax, c in enumerate(e.chunks):
                if ax != ax_last:
                    size *= widest.get((pos, ax), max(c, default=1))
            total += size
        return max(total, 1)


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


def region_parts(expr: Expr, out: Region) -> list[tuple[Region, ...]]:
    """Per partial product of region ``out`` of contraction ``expr``: its inputs' regions.

    Running the op's kernel on part ``k``'s regions gives the partial product
    over that contracted range; the block is the sum of all parts. Parts are
    in C order over the contracted labels' ranges.
    """
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
