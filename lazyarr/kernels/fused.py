"""Fused groups, evaluated with NumPy (the reference).

A fused group is a tuple of member expressions in dependency order, the
root last. Each member is computed over the region its readers need
(``graph.group``: the root's region for elementwise members; what a
contraction reads for an operand folded into it), from the values of
earlier members (sliced when a reader needs less) and from inputs outside
the group, read through ``get_region``.

Generated kernels (Numba) must return exactly what these functions return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.group import external_reads, member_regions, positions, root_input_regions
from lazyarr.kernels.reference.registry import kernel_for

__all__ = ["evaluate", "external_regions", "root_operands"]

GetRegion = Callable[[int, Region], np.ndarray]


def external_regions(
    members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region
) -> list[tuple[int, Region]]:
    """Which region of which external input the group reads for ``region`` of its root."""
    return external_reads(members, input_exprs, root_input_regions(members, region))


def _within(value: np.ndarray, have: Region, want: Region) -> np.ndarray:
    """The part ``want`` of ``value``, which covers ``have`` (both global coordinates)."""
    if all(h.start == w.start and h.stop == w.stop for h, w in zip(have, want)):
        return value
    return value[tuple(slice(w.start - h.start, w.stop - h.start) for h, w in zip(have, want))]


def root_operands(
    members: Sequence[Expr],
    input_exprs: Sequence[Expr],
    root_inputs: Sequence[Region],
    get_region: GetRegion,
) -> list[np.ndarray]:
    """The values of the root's inputs over ``root_inputs`` (one region per root input)."""
    need = member_regions(members, root_inputs)
    pos = positions(input_exprs)
    values: dict[str, np.ndarray] = {}

    def value(inp: Expr, r: Region) -> np.ndarray:
        v = values.get(inp.key)
        if v is None:
            return get_region(pos[inp.key], tuple(r))
        return _within(v, need[inp.key], r)

    for m in members[:-1]:
        region = need[m.key]
        args = [value(inp, r) for inp, r in zip(m.inputs, m.op.regions(m, region))]
        values[m.key] = kernel_for(m.op)(m.op, m, region, *args)
    return [value(inp, r) for inp, r in zip(members[-1].inputs, root_inputs)]


def evaluate(
    members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region, get_region: GetRegion
) -> np.ndarray:
    """The values of the root (the last member) over ``region`` (global coordinates)."""
    root = members[-1]
    args = root_operands(members, input_exprs, root_input_regions(members, region), get_region)
    return kernel_for(root.op)(root.op, root, region, *args)
