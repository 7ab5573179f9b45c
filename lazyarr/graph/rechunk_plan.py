"""Chunk arithmetic of a rechunk through a store: the grids read, stored and written back.

A rechunk from row strips to column strips (or any change where output
blocks gather pieces of many input blocks and input blocks scatter into
many output blocks) holds its whole input in memory when run directly. The
bounded alternative, after rechunker's algorithm: read the input in *read*
blocks (input chunks grown along the axes where the target is bigger, up to
a byte budget), store them in *intermediate* chunks (per axis the smaller of
read and write blocks), and read the store back in *write* blocks (target
chunks grown along the axes where the input is bigger, up to the budget),
which split into the target blocks. Every task then touches at most the
budget, and each element is stored and read back once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lazyarr.graph.chunks import Chunks

__all__ = ["StagedGrids", "block_shape", "is_all_to_all", "staged_grids"]


def _chunk(blocks: Sequence[int]) -> int:
    """The representative (largest) block length of one axis (1 for empty axes)."""
    return max(max(blocks, default=1), 1)


def block_shape(chunks: Chunks) -> tuple[int, ...]:
    """The largest block length of each axis (at least 1)."""
    return tuple(_chunk(c) for c in chunks)


def is_all_to_all(old: Chunks, new: Chunks) -> bool:
    """Some axis gathers several old blocks per new block while another scatters one old
    block into several new ones: run directly, such a rechunk holds its whole input."""
    grows = [_chunk(n) > _chunk(o) and len(o) > 1 for o, n in zip(old, new)]
    shrinks = [_chunk(n) < _chunk(o) and len(n) > 1 for o, n in zip(old, new)]
    return any(grows) and any(shrinks)


def _grow(base: list[int], limit: Sequence[int], shape: Sequence[int], budget: int) -> list[int]:
    """``base`` grown axis by axis, last axis first, by whole multiples up to ``limit`` and
    while the block's elements fit ``budget``."""
    out = list(base)
    for ax in reversed(range(len(out))):
        cap = min(limit[ax], shape[ax])
        if cap <= out[ax]:
            continue
        room = budget // max(1, math.prod(out) // out[ax])
        factor = max(1, min(cap // out[ax], room // out[ax]))
        out[ax] = min(out[ax] * factor, shape[ax])
    return out


class StagedGrids:
    """The three block shapes of a staged rechunk (one length per axis each)."""

    def __init__(self, read: list[int], inter: list[int], write: list[int]) -> None:
        self.read = tuple(read)
        self.inter = tuple(inter)
        self.write = tuple(write)

    def __repr__(self) -> str:
        return f"StagedGrids(read={self.read}, inter={self.inter}, write={self.write})"


def staged_grids(
    shape: Sequence[int],
    itemsize: int,
    old: Sequence[int],
    new: Sequence[int],
    budget_bytes: int,
    grow_write: bool = True,
    grow_read: bool = True,
) -> StagedGrids:
    """Read, intermediate and write block shapes for moving blocks of shape ``old`` (the
    blocks the input is cheapest to read in) to blocks of shape ``new``, with at most
    ``budget_bytes`` per read or write block (never below one old or new block).

    ``grow_write`` False: the store is read back in the new blocks themselves (reads of a
    local file cost little each; the grown blocks would need splitting again).
    ``grow_read`` False: the input is written in its own blocks (a computed input: grown
    blocks would gather several of them in one more task first).
    """
    budget = max(1, budget_bytes // itemsize)
    src = [max(1, c) for c in old]
    dst = [max(1, c) for c in new]
    read = _grow(src, [max(s, d) for s, d in zip(src, dst)] if grow_read else src, shape, budget)
    limit = [max(s, d) for s, d in zip(src, dst)] if grow_write else dst
    write = _grow(dst, limit, shape, budget)
    inter = [min(r, w) for r, w in zip(read, write)]
    # a read block writes whole intermediate chunks: a multiple of them on every axis
    read = [r if r >= n else max(i, r // i * i) for r, i, n in zip(read, inter, shape)]
    return StagedGrids(read, inter, write)
