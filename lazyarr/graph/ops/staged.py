"""Reading back what a write stage stored: the second half of an exchange through a store.

``staged_read(written, reader, chunks)`` is an array on the block grid
``chunks`` whose values are read from ``reader`` (the store that
``written``, a :func:`~lazyarr.graph.ops.store.write` expression, fills).
Its input is the write itself (one count per written block), so each block
is read only after every written block under its region is in the store:
the dependency is exact, block by block, never a barrier over the whole
write. A rechunk through a scratch store is a write in the grid its reads
prefer and a staged read in the grid its readers want.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lazyarr.graph.chunks import Chunks, blocks_in_range
from lazyarr.graph.expr import Expr, MapOp, Region

__all__ = ["StagedRead", "staged_read"]


@dataclasses.dataclass(frozen=True)
class StagedRead(MapOp):
    """Blocks read from ``reader`` once the written blocks under them are stored.

    ``written_chunks`` is the block grid of the array the write stored: block
    ``i`` of it is element ``i`` of this op's input (the write's counts).
    """

    name = "staged-read"
    reader: Any = None
    written_chunks: tuple[tuple[int, ...], ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        counts = []
        for blocks, sl in zip(self.written_chunks, out):
            r = blocks_in_range(blocks, sl.start, sl.stop)
            counts.append(slice(r.start, r.stop))
        return (tuple(counts),)

    def label(self) -> str:
        return "read staged"


def staged_read(written: Expr, reader: Any, chunks: Chunks, written_chunks: Chunks) -> Expr:
    """The array stored by ``written`` read back from ``reader`` in blocks ``chunks``."""
    return Expr(
        StagedRead(reader=reader, written_chunks=tuple(written_chunks)),
        (written,),
        reader.shape,
        reader.dtype,
        chunks,
    )
