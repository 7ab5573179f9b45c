"""NumPy kernel of the TSQR stages (see ``lazyarr/graph/ops/tsqr.py``).

Each output block is computed from its own row block: the block's own
TSQR over its row panels (``factor``: ``numpy.linalg.qr`` of each panel,
then of the stacked panel R's), the ``R1`` rows of its factors (``r``), or
its panels' ``Q`` times ``F_i @ Q2_i`` (``q``), written panel by panel into
one array. A region that
spans several blocks (never asked for by the lowering, which computes whole
blocks) is computed block by block and cut.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.tsqr import TSQRStage, panel_bounds
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _starts(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(accumulate(sizes, initial=0))


def _factor(xi: np.ndarray, k: int, dtype: np.dtype) -> np.ndarray:
    """``P`` (the ``k`` panels' ``Q``) over ``F`` over ``R1`` of one row block ``xi``.

    Each panel's factors go straight into their rows of the result. With
    ``k == 1`` the stack is the block's ``R``, already upper triangular:
    ``F`` is the identity and ``R1`` is that ``R``.
    """
    r, n = xi.shape
    out = np.empty((r + (k + 1) * n, n), dtype=dtype)
    stack = out[r : r + k * n]
    for p, (lo, hi) in enumerate(panel_bounds(r, k)):
        out[lo:hi], stack[p * n : (p + 1) * n] = np.linalg.qr(xi[lo:hi])
    if k == 1:
        out[r + n :] = stack
        out[r : r + n] = np.eye(n, dtype=dtype)
    else:
        out[r : r + k * n], out[r + k * n :] = np.linalg.qr(stack)
    return out


def _q(fi: np.ndarray, r: int, k: int, q2: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``Q1 @ q2`` from one block's factors ``fi``: each panel's ``Q`` times its rows of ``F @ q2``.

    The panels' products are written straight into one ``r x n`` array.
    """
    n = q2.shape[1]
    g = fi[r : r + k * n] @ q2
    out = np.empty((r, n), dtype=dtype)
    for p, (lo, hi) in enumerate(panel_bounds(r, k)):
        np.matmul(fi[lo:hi], g[p * n : (p + 1) * n], out=out[lo:hi])
    return out


def _block(
    op: TSQRStage, expr: Expr, i: int, first: int, arrays: tuple[np.ndarray, ...]
) -> np.ndarray:
    """Output block ``i`` from the input regions, which start at block ``first``."""
    n, k, dtype = op.n, op.panels[i], expr.dtype
    if op.part == "factor":
        xs = _starts(op.rows)
        return _factor(arrays[0][xs[i] - xs[first] : xs[i + 1] - xs[first]], k, dtype)
    fs = _starts(op.factor_sizes())
    fi = arrays[0][fs[i] - fs[first] : fs[i + 1] - fs[first]]
    if op.part == "r":
        return fi[-n:]
    q2 = arrays[1][(i - first) * n : (i - first + 1) * n]
    return _q(fi, op.rows[i], k, q2, dtype)


@register(TSQRStage)
def tsqr_stage(op: TSQRStage, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    blocks = op.blocks(out)
    first = blocks[0]
    pieces = [_block(op, expr, i, first, arrays) for i in blocks]
    whole = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    lo = out[0].start - _starts(op.out_sizes())[first]
    result = whole[lo : lo + out[0].stop - out[0].start, out[1]]
    return np.ascontiguousarray(result, dtype=expr.dtype)
