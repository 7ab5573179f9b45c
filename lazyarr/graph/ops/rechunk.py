"""Rechunk: the same values on a different block grid."""

from __future__ import annotations

import dataclasses

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Expr, MapOp, Region

__all__ = ["Rechunk", "rechunk"]


@dataclasses.dataclass(frozen=True)
class Rechunk(MapOp):
    """Each output block is the same region of the input."""

    name = "rechunk"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (out,)


def rechunk(x: Expr, chunks: Chunks) -> Expr:
    """``x`` on the block grid ``chunks`` (already normalised); no-op if equal."""
    if tuple(chunks) == x.chunks:
        return x
    return Expr(Rechunk(), (x,), x.shape, x.dtype, chunks)
