"""NumPy kernels of the sample sort (see ``lazyarr/graph/ops/samplesort.py``).

Keys are ``(value, block, position)``; values compare as ``np.sort`` orders
them (NaN last) through ``np.searchsorted`` and stable sorts only, never
``<``, so NaNs need no special case. The lowering computes whole blocks,
so each kernel computes exactly one block of its stage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.samplesort import Exchange, SampleSortStage, sample_positions
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__: list[str] = []


def _candidates(op: SampleSortStage, s: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each candidate's value, block and position, in key order."""
    block, pos = sample_positions(op.rows, op.k)
    return s[c], block[c], pos[c]


def _bracket(
    ncount: np.ndarray, ranks: np.ndarray, r: int, rows: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Per block (rows of ``ncount``, sizes ``rows``), the elements below the candidates that
    bracket rank ``r``: (lo, hi)."""
    lo = int(np.searchsorted(ranks, r, side="right")) - 1  # ranks[0] == 0 <= r
    below = ncount[:, lo]
    if lo + 1 < ncount.shape[1]:
        return below, ncount[:, lo + 1]
    return below, np.asarray(rows, dtype=ncount.dtype)


def _boundary(op: SampleSortStage, j: int) -> int:
    return sum(op.rows[:j])


def stable_values(v: np.ndarray) -> np.ndarray:
    """``np.sort(v, kind="stable")`` by NumPy's fastest sort.

    Equal values are identical but for floats' ``-0.0``/``0.0`` and NaNs
    (payloads, signs): those runs are put back in input order.
    """
    out = np.sort(v)
    if v.dtype.kind != "f" or out.size == 0:
        return out
    zero = v == 0
    nz = int(np.count_nonzero(zero))
    if nz:
        lo = int(np.searchsorted(out, 0, side="left"))
        out[lo : lo + nz] = v[zero]
    nan = np.isnan(v)
    nn = int(np.count_nonzero(nan))
    if nn:
        out[out.size - nn :] = v[nan]
    return out


def _local(op: SampleSortStage, out: Region, x: np.ndarray, *idx: np.ndarray) -> np.ndarray:
    if idx:  # the values in the order of their (global) sorting indices
        return x[idx[0] - out[0].start]
    if not op.arg:
        return stable_values(x)
    return np.argsort(x, kind="stable").astype(np.intp) + out[0].start


def _block(op: SampleSortStage, expr: Expr, out: Region, *a: np.ndarray) -> np.ndarray:
    part = op.part
    if part == "local":
        return _local(op, out, *a)
    if part == "samples":
        (lv,) = a
        if lv.size == 0:
            return lv[:0]
        g = -(-lv.size // op.k)
        return np.ascontiguousarray(lv[::g])
    if part == "candidates":  # sample ids by (value, block, position): a stable sort
        return np.argsort(a[0], kind="stable").astype(np.intp)
    if part == "counts":
        lv, s, c = a
        i = out[0].start
        w, ci, cp = _candidates(op, s, c)
        row = np.where(
            ci > i,
            np.searchsorted(lv, w, side="right"),  # equal values here are smaller keys
            np.searchsorted(lv, w, side="left"),
        )
        row = np.where(ci == i, cp, row)
        return row.astype(np.intp).reshape(1, -1)
    if part == "ranks":
        return a[0].sum(axis=0).astype(np.intp)
    if part == "brackets":
        lv, nrow, ranks = a
        i, j = out[0].start, out[1].start
        lo, hi = _bracket(nrow, ranks, _boundary(op, j), op.rows[i : i + 1])
        got = lv[lo[0] : hi[0]]
        block = np.zeros((1, 1, op.cap()), dtype=expr.dtype)
        block[0, 0, : got.size] = got
        return block
    # offsets: column j of O
    e, ncount, ranks = a
    j = out[1].start
    r = _boundary(op, j)
    lo, hi = _bracket(ncount, ranks, r, op.rows)
    sizes = hi - lo
    vals = np.concatenate([e[i, 0, : sizes[i]] for i in range(op.nb)])
    owner = np.repeat(np.arange(op.nb), sizes)
    first = np.argsort(vals, kind="stable")[: r - int(lo.sum())]  # keys in (block, position) order
    taken = np.bincount(owner[first], minlength=op.nb)
    return (lo + taken).astype(np.intp).reshape(-1, 1)


@register(SampleSortStage)
def samplesort_stage(op: SampleSortStage, expr: Expr, out: Region, *a: np.ndarray) -> np.ndarray:
    return _block(op, expr, out, *a)


State = dict[int, tuple[np.ndarray, ...]]


def _partial(op: Exchange, expr: Expr, arrays: tuple, region: Region, in_shape: Any) -> State:
    rows = region[1]
    if rows.stop <= rows.start:
        return {}
    i = int(np.searchsorted(np.cumsum(op.rows), rows.start, side="right"))
    o = arrays[-1]
    a, b = int(o[i, 0]), int(o[i, 1])
    return {i: tuple(np.ascontiguousarray(v[a:b]) for v in arrays[:-1])}


def _combine(op: Exchange, a: State, b: State) -> State:
    return {**a, **b}


def _finalize(op: Exchange, expr: Expr, state: State) -> np.ndarray:
    pieces = [state[i] for i in sorted(state)]
    if not pieces:
        return np.empty((0,), dtype=expr.dtype)
    vals = np.concatenate([p[0] for p in pieces])
    if not op.arg:
        return stable_values(vals)  # runs in block order: ties by (block, position)
    order = np.argsort(vals, kind="stable")  # runs in block order: ties by (block, position)
    return np.concatenate([p[1] for p in pieces])[order].astype(expr.dtype)


exchange_kernel = register(Exchange)(
    ReduceKernel(partial=_partial, combine=_combine, finalize=_finalize)
)
