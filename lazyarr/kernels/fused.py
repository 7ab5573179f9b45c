"""Fused groups of elementwise ops, evaluated with NumPy (the reference).

A fused group is a tuple of member expressions in dependency order; every
member is elementwise with the group's shape and chunks, so a member's
inputs that are members themselves are read over the same region. Inputs
outside the group ("external" inputs) are read through ``get_region``,
with NumPy broadcasting mapping the output region onto them.

Generated kernels (Numba) must return exactly what these functions return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.kernels.reference.registry import kernel_for

__all__ = ["evaluate", "external_regions"]

GetRegion = Callable[[int, Region], np.ndarray]


def _positions(input_exprs: Sequence[Expr]) -> dict[str, int]:
    return {e.key: i for i, e in reversed(list(enumerate(input_exprs)))}


def external_regions(
    members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region
) -> list[tuple[int, Region]]:
    """Which region of which external input the group reads for ``region`` of its last member."""
    inside = {m.key for m in members}
    pos = _positions(input_exprs)
    seen: set[tuple[int, tuple[tuple[int, int], ...]]] = set()  # slices hash only from 3.12
    out: list[tuple[int, Region]] = []
    for m in members:
        for inp, r in zip(m.inputs, m.op.regions(m, region)):
            if inp.key not in inside:
                key = (pos[inp.key], tuple((s.start, s.stop) for s in r))
                if key not in seen:
                    seen.add(key)
                    out.append((key[0], tuple(r)))
    return out


def evaluate(
    members: Sequence[Expr], input_exprs: Sequence[Expr], region: Region, get_region: GetRegion
) -> np.ndarray:
    """The values of the last member over ``region`` (global coordinates)."""
    pos = _positions(input_exprs)
    values: dict[str, np.ndarray] = {}
    for m in members:
        args = []
        for inp, r in zip(m.inputs, m.op.regions(m, region)):
            v = values.get(inp.key)
            args.append(v if v is not None else get_region(pos[inp.key], tuple(r)))
        values[m.key] = kernel_for(m.op)(m.op, m, region, *args)
    return values[members[-1].key]
