"""NumPy kernel of the TSQR stages (see ``lazyarr/graph/ops/tsqr.py``).

Each output block is computed from its own row block: ``numpy.linalg.qr``
of the block (``factor``), the ``R1`` rows of its factors (``r``), or its
``Q1`` times its slice of the second-level ``Q2`` (``q``). A region that
spans several blocks (never asked for by the lowering, which computes whole
blocks) is computed block by block and cut.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.tsqr import TSQRStage
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _starts(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(accumulate(sizes, initial=0))


def _block(op: TSQRStage, i: int, first: int, arrays: tuple[np.ndarray, ...]) -> np.ndarray:
    """Output block ``i`` from the input regions, which start at block ``first``."""
    n = op.n
    if op.part == "factor":
        xs = _starts(op.rows)
        xi = arrays[0][xs[i] - xs[first] : xs[i + 1] - xs[first]]
        q, r = np.linalg.qr(xi, mode="reduced")
        return np.concatenate([q, r])
    fs = _starts(tuple(r + n for r in op.rows))
    fi = arrays[0][fs[i] - fs[first] : fs[i + 1] - fs[first]]
    if op.part == "r":
        return fi[op.rows[i] :]
    q2 = arrays[1][(i - first) * n : (i - first + 1) * n]
    return fi[: op.rows[i]] @ q2


@register(TSQRStage)
def tsqr_stage(op: TSQRStage, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    blocks = op.blocks(out)
    first = blocks[0]
    pieces = [_block(op, i, first, arrays) for i in blocks]
    whole = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    lo = out[0].start - _starts(op.out_sizes())[first]
    result = whole[lo : lo + out[0].stop - out[0].start, out[1]]
    return np.ascontiguousarray(result, dtype=expr.dtype)
