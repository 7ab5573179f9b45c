"""Random draws with array parameters: a map over the parameters that knows each element's position.

``la.random.normal(loc_array, 2.0)`` and the like cannot be a source (its
parameters are arrays, maybe lazy ones), but each element is still drawn
from the Philox words at its own flat index of the output, exactly as the
:class:`~lazyarr.graph.ops.creation.Random` source draws it: a block reads
the matching region of each parameter (broadcast as NumPy does) and the
words of its own elements, so values are the same for every chunking and
equal to the source's where the parameters are equal.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.token import HOLE, Hole

__all__ = ["RandomMap", "fill_params", "random_map"]


@dataclasses.dataclass(frozen=True)
class RandomMap(MapOp):
    """Draws of ``dist`` with parameters ``template`` (``HOLE`` where an input array goes)."""

    name = "random_params"
    dist: str = "normal"
    seed: int = 0
    template: tuple = ()

    def label(self) -> str:
        return f"random.{self.dist}"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        regions = []
        for x in expr.inputs:
            lead = expr.ndim - x.ndim
            regions.append(
                tuple(
                    slice(0, 1) if (n == 1 and expr.shape[lead + j] != 1) else out[lead + j]
                    for j, n in enumerate(x.shape)
                )
            )
        return tuple(regions)


def fill_params(template: tuple, arrays: tuple) -> tuple:
    """The parameters of a :class:`RandomMap` with its input blocks in the holes."""
    it = iter(arrays)
    return tuple(next(it) if isinstance(t, Hole) else t for t in template)


def random_map(
    dist: str, seed: int, params: tuple, shape: tuple[int, ...], dtype: np.dtype, chunks: Chunks
) -> Expr:
    """Draws of ``dist`` over ``shape``; ``params`` mixes scalars and Exprs that broadcast to it."""
    inputs = tuple(p for p in params if isinstance(p, Expr))
    template = tuple(HOLE if isinstance(p, Expr) else p for p in params)
    op = RandomMap(dist=dist, seed=seed, template=template)
    return Expr(op, inputs, shape, dtype, chunks)
