"""Rechunks that move data all-to-all, run through a scratch store when memory cannot hold them.

A rechunk whose output blocks each gather pieces of many input blocks (time
chunks to pixel time series, row strips to column strips) keeps every input
block until its last reader has run: its whole input. When a plan's
predicted peak exceeds ``memory-limit`` because of such rechunks,
:func:`stage_rechunks` rewrites each of them as a write into a scratch
store (:class:`~lazyarr.io.scratch.ScratchArray`: one sparse raw file,
exactly the array's bytes) in the blocks the input is read in, and a read back
in the blocks the output wants (:mod:`lazyarr.graph.rechunk_plan` chooses both, so that every
task fits its share of the limit). A generated input is made in the target's
blocks instead, and a stored one read in them when that decodes its chunks at most
twice over. A concatenation is staged part by part into one scratch array
(each part read in its own blocks, written at its place) and read back as one,
so no task joins pieces of several parts. Intermediates stay in memory whenever
the direct plan fits: only a plan that would not fit is rewritten. The
scratch store lives under ``temporary-directory`` and is removed when the
compute ends, after success and after failure.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
from collections.abc import Sequence
from typing import Any

from lazyarr.graph.chunks import offsets, regular_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.creation import FromReader, Generated, Windowed
from lazyarr.graph.ops.manipulation import Concat, concat
from lazyarr.graph.ops.rechunk import Rechunk, rechunk
from lazyarr.graph.ops.staged import staged_read
from lazyarr.graph.ops.store import write
from lazyarr.graph.rechunk_plan import block_shape, is_all_to_all, staged_grids
from lazyarr.graph.rewrite import rebuild
from lazyarr.io.scratch import ScratchArray

__all__ = ["Staging", "stage_rechunks", "task_budget"]

WORKING_SETS_PER_BLOCK = 6
"""A task's working set, in read or write blocks: its inputs, its output, the block it
hands on and a copy while encoding, with room for the threads' other blocks."""


def task_budget(memory_limit: int, threads: int) -> int:
    """Bytes one read or write block of a staged rechunk may take under ``memory_limit``."""
    return max(1, memory_limit // (WORKING_SETS_PER_BLOCK * max(1, threads)))


DIRECT_READ_FACTOR = 2.0
"""A stored source is read straight in the target's blocks when that decodes at most this
many times its bytes (each stored chunk once per target block it touches): a staged copy
costs two more passes (written, read back)."""


def _made_in_any_blocks(x: Expr, chunks: tuple[tuple[int, ...], ...]) -> bool:
    """``x`` is a source cheaper to make in ``chunks`` than to move: a generated array (its
    values never depend on its blocks), or a stored one whose chunks the target blocks cut
    little (:data:`DIRECT_READ_FACTOR`)."""
    if isinstance(x.op, Generated):
        return True
    if not isinstance(x.op, FromReader) or x.op.window is not None:
        return False
    stored = getattr(x.op.reader, "chunks", None)
    if stored is None:
        return False
    factor = math.prod(max(1.0, c / max(1, max(t))) for c, t in zip(stored, chunks))
    return factor <= DIRECT_READ_FACTOR


def _source_blocks(x: Expr) -> tuple[int, ...]:
    """The block shape ``x`` is cheapest to read in: a stored source's own chunks, any
    block of a generated one (one element), else ``x``'s blocks."""
    if isinstance(x.op, FromReader) and x.op.window is None:
        stored = getattr(x.op.reader, "chunks", None)
        if stored is not None:
            return tuple(stored)
    if isinstance(x.op, Generated):
        return (1,) * x.ndim
    return block_shape(x.chunks)


def _parts_in_target_blocks(joined: Expr, chunks: tuple[tuple[int, ...], ...]) -> list[Expr]:
    """Each input of a concatenation rechunked to the target ``chunks`` of its own extent.

    A concatenation splits its inputs to the finest grid among them, so a rechunk after it
    can hold a whole input (row strips joined to column strips, then gathered into
    columns) without being all-to-all itself; moved part by part, each part's own rechunk
    shows it (and is staged), and the join in the target's blocks reads one block of each
    part it spans.
    """
    ax = joined.op.axis
    out = []
    start = 0
    for part in joined.inputs:
        n = part.shape[ax]
        inside = (b for b in offsets(chunks[ax]) if start < b < start + n)
        cuts = sorted({start, start + n, *inside})
        piece = tuple(b - a for a, b in itertools.pairwise(cuts)) or (0,)
        out.append(rechunk(part, (*chunks[:ax], piece, *chunks[ax + 1 :])))
        start += n
    return out


def _regular(x: Expr) -> bool:
    """Every block of ``x`` has its axis's largest length but the last of each axis."""
    return x.chunks == tuple(regular_chunks(n, b) for n, b in zip(x.shape, block_shape(x.chunks)))


def _in_blocks(x: Expr, chunks: tuple[tuple[int, ...], ...]) -> Expr:
    """``x`` in blocks ``chunks``: a generated or stored source made or read region by region
    in them, anything else rechunked."""
    if isinstance(x.op, Windowed):
        return Expr(x.op, (), x.shape, x.dtype, chunks, x.user_name)
    return rechunk(x, chunks)


def _read_back(written: Expr, store: ScratchArray, back: Any, blocks: Any, target: Any) -> Expr:
    """What ``written`` stored (in ``blocks``) read back in ``back``, then in ``target``."""
    got = staged_read(written, store, back, blocks)
    return got if back == target else rechunk(got, target)


class Staging:
    """Rewritten outputs and the scratch directory their stores live in (removed by ``close``)."""

    def __init__(self, exprs: list[Expr], scratch: str | None) -> None:
        self.exprs = exprs
        self.scratch = scratch

    def close(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def stage_rechunks(
    exprs: Sequence[Expr], budget: int, make_scratch: Any, min_bytes: int = 0
) -> Staging | None:
    """``exprs`` with every all-to-all rechunk of more than ``min_bytes`` staged through a
    scratch store (``make_scratch()`` returns its new directory); None when there is none."""
    scratch: list[str] = []
    count = 0  # rechunks through the store
    remade = False  # sources made again in the target's blocks

    def new_store(e: Expr, inter: Sequence) -> ScratchArray:
        """The next scratch array, shaped as ``e``, in chunks ``inter``."""
        nonlocal count
        if not scratch:
            scratch.append(make_scratch())
        store = ScratchArray(os.path.join(scratch[0], str(count)), e.shape, e.dtype, inter)
        count += 1
        return store

    def staged(e: Expr, x: Expr) -> Expr:
        old = _source_blocks(x)
        new = block_shape(e.chunks)
        # a regular target is read back in its own blocks: no split stage after the read,
        # and on a cluster no block handed to another worker to be split there
        direct = _regular(e)
        # a computed input is written in its own blocks where they are regular: grown blocks
        # would gather several in one more task (on dask, from several workers) first
        computed = not isinstance(x.op, (FromReader, Windowed)) and _regular(x)
        grids = staged_grids(
            e.shape,
            e.dtype.itemsize,
            old,
            new,
            budget,
            grow_write=not direct,
            grow_read=not computed,
        )
        read = tuple(regular_chunks(n, r) for n, r in zip(e.shape, grids.read))
        back = tuple(regular_chunks(n, w) for n, w in zip(e.shape, grids.write))
        store = new_store(e, grids.inter)
        blocks = _in_blocks(x, read)
        return _read_back(write(blocks, store), store, back, blocks.chunks, e.chunks)

    def joined(e: Expr, x: Expr) -> Expr:
        """``x``, a concatenation, staged part by part into one scratch array: each part
        made or read in blocks of one read grid (its own extent along the axis), written
        at its place, and the whole read back in the target's blocks."""
        ax = x.op.axis
        parts = [p for p in x.inputs if p.shape[ax]]
        # a computed part is written in its own blocks (as a computed input is alone)
        computed = [not isinstance(p.op, Windowed) for p in parts]
        olds = [_source_blocks(p) for p in parts]
        old = tuple(max(o[d] for o in olds) for d in range(x.ndim))
        grids = staged_grids(
            e.shape,
            e.dtype.itemsize,
            old,
            block_shape(e.chunks),
            budget,
            grow_write=not _regular(e),
            grow_read=not any(computed),
        )
        across = [regular_chunks(n, r) for n, r in zip(e.shape, grids.read)]  # but along ax

        def pieces(blocks: tuple[int, ...]) -> list[int]:
            """Intermediate chunks along ``ax`` under write blocks ``blocks``."""
            return [c for b in blocks for c in regular_chunks(b, min(b, grids.inter[ax]))]

        reads, along = [], []
        for p, own in zip(parts, computed):
            mine = [p.chunks[d] if d == ax else across[d] for d in range(x.ndim)]
            if own and tuple(p.chunks) == tuple(mine):
                mine[ax] = tuple(c for c in p.chunks[ax] if c)
            else:
                mine[ax] = regular_chunks(p.shape[ax], grids.read[ax])
            reads.append(tuple(mine))
            along += pieces(mine[ax])
        inter = [
            along if d == ax else regular_chunks(e.shape[d], grids.inter[d]) for d in range(x.ndim)
        ]
        store = new_store(e, inter)
        writes, start = [], 0
        for p, read in zip(parts, reads):
            offset = tuple(start if d == ax else 0 for d in range(x.ndim))
            writes.append(write(_in_blocks(p, read), store, offset))
            start += p.shape[ax]
        written = tuple(
            tuple(c for w in writes for c in w.inputs[0].chunks[ax])
            if d == ax
            else writes[0].inputs[0].chunks[d]
            for d in range(x.ndim)
        )
        back = tuple(regular_chunks(n, w) for n, w in zip(e.shape, grids.write))
        return _read_back(concat(writes, ax), store, back, written, e.chunks)

    def visit(e: Expr) -> Expr | None:
        nonlocal remade
        big = isinstance(e.op, Rechunk) and e.nbytes > min_bytes
        if not big:
            return None
        x = e.inputs[0]
        if isinstance(x.op, Concat) and not is_all_to_all(x.chunks, e.chunks):
            parts = _parts_in_target_blocks(x, e.chunks)
            if not any(is_all_to_all(p.inputs[0].chunks, p.chunks) for p in parts):
                return None
            # each part moved on its own (staged where it is all-to-all), then joined in the
            # target's blocks: a block across a boundary reads one block of each part
            moved = tuple(visit(p) or p for p in parts)
            return Expr(x.op, moved, x.shape, x.dtype, e.chunks, e.user_name)
        if not is_all_to_all(x.chunks, e.chunks):
            return None
        if isinstance(x.op, Concat) and sum(1 for p in x.inputs if p.shape[x.op.axis]) > 1:
            return joined(e, x)
        if _made_in_any_blocks(x, e.chunks):  # the source itself in the target's blocks
            remade = True
            return Expr(x.op, (), x.shape, x.dtype, e.chunks, x.user_name)
        return staged(e, x)

    out = rebuild(exprs, visit)
    if not count and not remade:
        return None
    return Staging(out, scratch[0] if scratch else None)
