"""The write op: a sink stage that stores each block of its input into a target.

``write(x, target)`` is an expression whose value is tiny (one count per
block of ``x``: the elements that block wrote), so computing it never
gathers ``x``; each of its blocks reads one whole block of ``x`` and writes
it where the block is computed (a numba thread, a dask worker). A block's
write starts only after the whole block is computed, and no two blocks
write one chunk of the target (:func:`write` refuses blocks that do not
align with the target's chunks; the namespace re-blocks them first).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, MapOp, Region

__all__ = ["Write", "misaligned_axes", "write"]


@dataclasses.dataclass(frozen=True)
class Write(MapOp):
    """Writes the input's blocks into ``target`` at ``offset`` + the block's position.

    ``target`` has ``write(where, block)``, ``describe()`` and a token
    (see :mod:`lazyarr.io.writers`); the output holds, per input block, the
    number of elements written.
    """

    name = "write"
    target: Any = None
    offset: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        x = expr.inputs[0]
        return (
            tuple(slice(offsets(c)[sl.start], offsets(c)[sl.stop]) for c, sl in zip(x.chunks, out)),
        )

    def label(self) -> str:
        return "write"


def misaligned_axes(
    chunks: tuple[tuple[int, ...], ...], stored: tuple[int, ...], offset: tuple[int, ...]
) -> list[int]:
    """Axes where a block boundary falls inside a stored chunk (two blocks would write it)."""
    bad = []
    for ax, (blocks, c) in enumerate(zip(chunks, stored)):
        o = offsets(blocks)
        if any((offset[ax] + b) % c for b in o[1:-1]):
            bad.append(ax)
    return bad


def write(x: Expr, target: Any, offset: tuple[int, ...] | None = None) -> Expr:
    """The sink expression writing ``x`` into ``target`` (its region starting at ``offset``)."""
    offset = tuple(offset) if offset is not None else (0,) * x.ndim
    stored = getattr(target, "chunks", None)
    if hasattr(target, "boundaries"):  # a grid of its own (a scratch array's)
        bad = [
            ax
            for ax, blocks in enumerate(x.chunks)
            if not {offset[ax] + b for b in offsets(blocks)} <= set(target.boundaries(ax))
        ]
    elif stored is not None:
        bad = misaligned_axes(x.chunks, stored, offset)
    else:
        bad = []
    if bad:
        raise ValueError(
            f"blocks of {x.chunks} would share chunks {stored} of {target.describe()} "
            f"along axes {bad}: re-block the array first (lazyarr.store does)"
        )
    shape = tuple(len(c) for c in x.chunks)
    chunks = tuple((1,) * n for n in shape)
    return Expr(Write(target=target, offset=offset), (x,), shape, np.dtype(np.int64), chunks)
