"""NumPy kernels of the write op (store one computed block, report its element count) and of
the staged read (read a stored block back once it is written)."""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.staged import StagedRead
from lazyarr.graph.ops.store import Write
from lazyarr.kernels.reference.registry import register

__all__ = ["WriteError"]


class WriteError(RuntimeError):
    """Writing a block to its target failed (the message names the target and the region)."""


@register(Write)
def write(op: Write, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    (region,) = op.regions(expr, out)
    where = tuple(slice(o + sl.start, o + sl.stop) for o, sl in zip(op.offset, region))
    try:
        op.target.write(where, x)
    except Exception as e:
        raise WriteError(
            f"writing {where} of {op.target.describe()} failed: {type(e).__name__}: {e}"
        ) from e
    return np.full(tuple(sl.stop - sl.start for sl in out), x.size, dtype=np.int64)


@register(StagedRead)
def staged_read(op: StagedRead, expr: Expr, out: Region, written: np.ndarray) -> np.ndarray:
    """Read the block back once the counts of the writes under it have arrived."""
    return np.asarray(op.reader.read(tuple(out)), dtype=expr.dtype)
