"""dask's ``reshape_blockwise``: every block reshaped on its own, not NumPy's C order.

Block ``k`` of the output (C order over its block grid) is block ``k`` of the
input reshaped, so nothing moves between blocks. Going down in dimensions,
consecutive axes collapse and the output chunks follow (one block per
combination of the merged axes' blocks); going up, the caller gives the
output chunks and every block must keep its size. xarray's least squares
uses a pair of these to fit every column of an N-d array at once.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._reshape import flat_index, reshape_groups
from lazyarr.graph.ops.userfunc import block_index

__all__ = ["BlockReshape", "reshape_blockwise"]


@dataclasses.dataclass(frozen=True)
class BlockReshape(MapOp):
    """Output block ``k`` (C order) is input block ``k`` reshaped to the output block's shape."""

    name = "reshape_blockwise"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        k = flat_index(block_index(expr.chunks, out, self.name), expr.numblocks)
        index = np.unravel_index(k, x.numblocks) if x.ndim else ()
        region = []
        for blocks, b in zip(x.chunks, index):
            o = offsets(blocks)
            region.append(slice(o[int(b)], o[int(b) + 1]))
        return (tuple(region),)


def _merged_chunks(x: Expr, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The output chunks when consecutive axes of ``x`` collapse into ``shape``."""
    chunks: list[tuple[int, ...]] = [(1,)] * len(shape)
    for ins, outs in reshape_groups(x.shape, shape):
        if len(outs) != 1:
            raise ValueError(
                f"reshape_blockwise: {x.shape} -> {shape} splits an axis; reducing the number "
                "of dimensions only collapses consecutive axes"
            )
        combos = itertools.product(*(x.chunks[a] for a in ins))
        chunks[outs[0]] = tuple(math.prod(c) for c in combos)
    return tuple(chunks)


def reshape_blockwise(x: Expr, shape: Any, chunks: Any = None) -> Expr:
    """``x`` reshaped block by block to ``shape`` (dask's ``reshape_blockwise``).

    ``chunks`` (the output's) is required when the number of dimensions grows
    and refused when it shrinks, as in dask.
    """
    if shape in (-1, (-1,)):
        shape = (x.size,)
    shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if math.prod(shape) != x.size:
        raise ValueError("total size of new array must be unchanged")
    if shape == x.shape:
        return x
    if x.size == 0:
        raise NotImplementedError("reshape_blockwise of an empty array is not supported")
    if len(shape) > x.ndim:
        if chunks is None:
            raise TypeError("Need to specify chunks if expanding dimensions.")
        out_chunks = tuple(tuple(int(c) for c in axis) for axis in chunks)
        if len(out_chunks) != len(shape) or any(sum(c) != n for c, n in zip(out_chunks, shape)):
            raise ValueError(f"reshape_blockwise: chunks {out_chunks} do not fit shape {shape}")
        in_sizes = [math.prod(c) for c in itertools.product(*x.chunks)]
        out_sizes = [math.prod(c) for c in itertools.product(*out_chunks)]
        if in_sizes != out_sizes:
            raise ValueError(
                "reshape_blockwise: every block must keep its size; block sizes "
                f"{in_sizes[:5]} (input) and {out_sizes[:5]} (output), the first five"
            )
    else:
        if chunks is not None:
            raise ValueError(
                "Setting chunks is not allowed when reducing the number of dimensions."
            )
        out_chunks = _merged_chunks(x, shape)
    return Expr(BlockReshape(), (x,), shape, x.dtype, out_chunks)
