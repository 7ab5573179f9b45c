"""NumPy kernels of the sample sort (see ``lazyarr/graph/ops/samplesort.py``).

Keys are ``(value, block, position)``; values compare as ``np.sort`` orders
them (NaN last) through ``np.searchsorted`` and stable sorts only, never
``<``, so NaNs need no special case. The lowering computes whole blocks,
so each kernel computes exactly one block of its stage.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.samplesort import (
    Exchange,
    SampleSortStage,
    count_dtype,
    sample_positions,
)
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__ = [
    "LineCounts",
    "counts_block",
    "line_counts",
    "merge_sorted",
    "search_rows",
    "stable_values",
]


def _tie_runs(out: np.ndarray) -> tuple[slice, slice]:
    """The zeros and the NaNs of the sorted float ``out``: the only equal values whose bits
    may differ (``-0.0``/``0.0``; NaN signs and payloads). Three binary searches."""
    lo = int(np.searchsorted(out, 0, side="left"))
    hi = int(np.searchsorted(out, 0, side="right"))
    return slice(lo, hi), slice(int(np.searchsorted(out, np.nan, side="left")), out.size)


def stable_values(v: np.ndarray) -> np.ndarray:
    """``np.sort(v, kind="stable")`` of a 1-d ``v`` by NumPy's fastest sort.

    Equal values are identical but for floats' ``-0.0``/``0.0`` and NaNs
    (payloads, signs), whose bits NumPy's SIMD sort does not keep: the runs of
    zeros and of NaNs are put back in input order. They are found by binary
    searches in the sorted values, so data without zeros or NaNs costs no pass
    beyond the sort.
    """
    out = np.sort(v)
    if v.dtype.kind != "f" or v.size == 0:
        return out
    zeros, nans = _tie_runs(out)
    if zeros.stop > zeros.start:
        out[zeros] = v[v == 0]
    if nans.stop > nans.start:
        out[nans] = v[np.isnan(v)]
    return out


MERGE_PART_BYTES = 512 << 10
"""Bytes :func:`merge_sorted` sorts at once: parts that fit a core's L2 cache sort
faster (625,000 float64 in 32 runs: 5.5 ms in one sort, 4.5 ms in 8 parts)."""


def merge_sorted(pieces: list[np.ndarray], out: np.ndarray) -> np.ndarray:
    """``out`` (1-d): the stably sorted pieces (each in key order, in block order) merged.

    They are gathered into ``out`` and sorted there by NumPy's fastest sort: its
    SIMD sort beats merging the sorted runs (625,000 float64 in 32 runs on an
    AVX-512 machine: 4.7 ms, against 17 ms for compiled two-way merges of
    runs and 39 ms for a compiled heap over them). A large ``out`` is sorted in
    parts of about :data:`MERGE_PART_BYTES`, cut by value: pivots from the
    largest piece split every piece by binary searches (no pass over the data),
    and each part's slices are gathered and sorted on their own.
    """
    parts = min(out.nbytes // MERGE_PART_BYTES, max((p.size for p in pieces), default=0))
    if parts < 2:
        return _merge_part(pieces, out)
    big = max(pieces, key=len)
    pivots = big[np.arange(1, parts) * big.size // parts]
    # per piece, where each part starts: equal values (zeros of either sign, NaNs) all
    # fall in one part, so each part keeps its ties in block order on its own
    cuts = [(0, *np.searchsorted(p, pivots, side="left").tolist(), p.size) for p in pieces]
    at = 0
    for k in range(parts):
        part = [p[c[k] : c[k + 1]] for p, c in zip(pieces, cuts)]
        size = sum(q.size for q in part)
        _merge_part(part, out[at : at + size])
        at += size
    return out


def _merge_part(pieces: list[np.ndarray], out: np.ndarray) -> np.ndarray:
    """:func:`merge_sorted` in one sort: the runs of zeros and of NaNs are then put back
    in block order from each piece's own runs (binary searches, no pass over the data)."""
    np.concatenate(pieces, out=out)
    out.sort()
    if out.dtype.kind != "f" or out.size == 0:
        return out
    for which, at in enumerate(_tie_runs(out)):
        if at.stop > at.start:
            out[at] = np.concatenate([p[_tie_runs(p)[which]] for p in pieces])
    return out


def _lines(a: np.ndarray, ax: int, q: int) -> np.ndarray:
    """``a`` with its ``q`` axes at ``ax`` last and the other axes flattened first (lines)."""
    moved = np.moveaxis(a, tuple(range(ax, ax + q)), tuple(range(a.ndim - q, a.ndim)))
    batch = int(np.prod(moved.shape[: moved.ndim - q], dtype=np.int64))
    return moved.reshape(batch, *moved.shape[moved.ndim - q :])


def _unlines(a: np.ndarray, like: np.ndarray, ax: int, q_like: int) -> np.ndarray:
    """Lines back in place: the batch axes of ``like`` (whose ``q_like`` axes at ``ax`` are
    replaced by ``a``'s axes after the first)."""
    batch = like.shape[:ax] + like.shape[ax + q_like :]
    q = a.ndim - 1
    out = a.reshape(*batch, *a.shape[1:])
    return np.moveaxis(out, tuple(range(len(batch), out.ndim)), tuple(range(ax, ax + q)))


def _boundary(op: SampleSortStage, j: int) -> int:
    return sum(op.rows[:j])


def _bracket(
    ncount: np.ndarray, ranks: np.ndarray, r: int, rows: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Per block (rows of ``ncount``, sizes ``rows``), the elements below the candidates that
    bracket rank ``r`` in one line: (lo, hi)."""
    lo = int(np.searchsorted(ranks, r, side="right")) - 1  # ranks[0] == 0 <= r
    below = ncount[:, lo]
    if lo + 1 < ncount.shape[1]:
        return below, ncount[:, lo + 1]
    return below, np.asarray(rows, dtype=ncount.dtype)


def _local(op: SampleSortStage, out: Region, x: np.ndarray, *idx: np.ndarray) -> np.ndarray:
    ax = op.axis
    if idx:  # the values in the order of their (global) sorting indices
        return np.take_along_axis(x, idx[0] - out[ax].start, axis=ax)
    if op.arg:
        return np.argsort(x, axis=ax, kind="stable").astype(np.intp) + out[ax].start
    if x.ndim == 1:
        return stable_values(x)
    return np.sort(x, axis=ax, kind="stable")


def search_rows(line: np.ndarray, w: np.ndarray, later: np.ndarray) -> np.ndarray:
    """Per value of the ascending ``w``, how many elements of the sorted ``line`` are below
    it, or (where ``later``) at or below it, by ``np.searchsorted`` (NaN last)."""
    row = np.searchsorted(line, w, side="left")
    # only where a value equal to ``w`` sits at ``row`` (rare but for repeated values) is
    # the right side searched again
    again = np.flatnonzero(later & (row < line.size))
    if again.size:
        at = line[row[again]]
        tied = at == w[again]
        if w.dtype.kind in "fc":
            tied |= np.isnan(at) & np.isnan(w[again])  # NaNs sort as equals
        again = again[tied]
        row[again] = np.searchsorted(line, w[again], side="right")
    return row


LineCounts = Callable[[SampleSortStage, int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""``(op, i, line, samples, candidates) -> row``: one line of block ``i`` of the counts
stage (``line``: that line of the sorted ``L_i``). A compiled one is in
``kernels/numba_samplesort.py``."""


def line_counts(
    op: SampleSortStage, i: int, line: np.ndarray, s: np.ndarray, c: np.ndarray
) -> np.ndarray:
    """Per candidate (key order), the elements of the sorted ``line`` of ``L_i`` with
    smaller keys: its own samples by their positions, the others by searches."""
    block, pos = sample_positions(op.rows, op.k)
    w, ci, cp = s[c], block[c], pos[c]
    # a candidate of a later block: this block's values equal to it are smaller keys too
    row = search_rows(line, w, ci > i)
    own = ci == i
    row[own] = cp[own]
    return row


def counts_block(
    op: SampleSortStage,
    out: Region,
    lv: np.ndarray,
    s: np.ndarray,
    c: np.ndarray,
    counts: LineCounts = line_counts,
) -> np.ndarray:
    """Block ``out`` of the counts stage (inputs: its block of L, the samples, the candidates)."""
    ax = op.axis
    lv_lines, s_lines, c_lines = _lines(lv, ax, 1), _lines(s, ax, 1), _lines(c, ax, 1)
    got = np.empty(c_lines.shape, dtype=count_dtype(op.rows))
    for t in range(c_lines.shape[0]):
        got[t] = counts(op, out[ax].start, lv_lines[t], s_lines[t], c_lines[t])
    return _unlines(got[:, None, :], lv, ax, 1)


def _brackets(
    op: SampleSortStage,
    i: int,
    js: slice,
    lv: np.ndarray,
    nrow: np.ndarray,
    ranks: np.ndarray,
    dtype: np.dtype,
) -> np.ndarray:
    """Per line, the elements of ``L_i`` between the candidates around each boundary of
    ``js``, padded."""
    out = np.zeros((lv.shape[0], 1, js.stop - js.start, op.cap()), dtype=dtype)
    for g, j in enumerate(range(js.start, js.stop)):
        r = _boundary(op, j)
        for t in range(lv.shape[0]):
            lo, hi = _bracket(nrow[t], ranks[t], r, op.rows[i : i + 1])
            got = lv[t, lo[0] : hi[0]]
            out[t, 0, g, : got.size] = got
    return out


def _offsets(
    op: SampleSortStage, js: slice, e: np.ndarray, ncount: np.ndarray, ranks: np.ndarray
) -> np.ndarray:
    """Per line, ``O[:, j]`` for each boundary ``j`` of ``js``: how many elements of each
    sorted block rank below boundary ``j``."""
    out = np.empty((e.shape[0], op.nb, js.stop - js.start), dtype=np.intp)
    for g, j in enumerate(range(js.start, js.stop)):
        r = _boundary(op, j)
        for t in range(e.shape[0]):
            lo, hi = _bracket(ncount[t], ranks[t], r, op.rows)
            sizes = hi - lo
            vals = np.concatenate([e[t, i, g, : sizes[i]] for i in range(op.nb)])
            owner = np.repeat(np.arange(op.nb), sizes)
            first = np.argsort(vals, kind="stable")[: r - int(lo.sum())]  # (block, position)
            out[t, :, g] = lo + np.bincount(owner[first], minlength=op.nb)
    return out


def _block(op: SampleSortStage, expr: Expr, out: Region, *a: np.ndarray) -> np.ndarray:
    part, ax = op.part, op.axis
    if part == "local":
        return _local(op, out, *a)
    if part == "samples":
        (lv,) = a
        b = lv.shape[ax]
        if b == 0:
            return lv
        return np.take(lv, np.arange(0, b, -(-b // op.k)), axis=ax)
    if part == "candidates":  # sample ids by (value, block, position): a stable sort
        return np.argsort(a[0], axis=ax, kind="stable").astype(np.intp)
    if part == "ranks":
        return a[0].sum(axis=ax).astype(np.intp)
    if part == "counts":
        return counts_block(op, out, *a)
    if part == "brackets":
        lv, nrow, ranks = (_lines(v, ax, q) for v, q in zip(a, (1, 2, 1)))
        got = _brackets(op, out[ax].start, out[ax + 1], lv, nrow, ranks, expr.dtype)
        return _unlines(got, a[0], ax, 1)
    e, ncount, ranks = a
    lines = (_lines(e, ax, 3), _lines(ncount, ax, 2), _lines(ranks, ax, 1))
    return _unlines(_offsets(op, out[ax + 1], *lines), ranks, ax, 1)


@register(SampleSortStage)
def samplesort_stage(op: SampleSortStage, expr: Expr, out: Region, *a: np.ndarray) -> np.ndarray:
    return _block(op, expr, out, *a)


State = tuple[tuple[int, ...], int, dict[int, list[tuple[np.ndarray, ...]]]]
"""The other axes' block shape, the output block's length along the axis, and per sorted
block ``i`` its slice of every line."""


def _partial(op: Exchange, expr: Expr, arrays: tuple, region: Region, in_shape: Any) -> State:
    ax = op.axis
    first = arrays[0]
    batch = first.shape[:ax] + first.shape[ax + 1 :]
    rows = region[ax + 1]
    width = op.rows[region[ax].start]
    if rows.stop <= rows.start:
        return batch, width, {}
    i = bisect.bisect_right(list(accumulate(op.rows)), rows.start)  # the body block: L_i's rows
    if first.ndim == 1:  # one line: its slice, a view (1,024 of these tasks at 32 blocks)
        lo, hi = arrays[-1][i]
        return batch, width, {i: [tuple(v[lo:hi] for v in arrays[:-1])]}
    o = _lines(arrays[-1], ax, 2)  # lines x (nb, 2)
    lines = [_lines(v, ax, 1) for v in arrays[:-1]]
    pieces = [
        tuple(np.ascontiguousarray(v[t, o[t, i, 0] : o[t, i, 1]]) for v in lines)
        for t in range(o.shape[0])
    ]
    return batch, width, {i: pieces}


def _combine(op: Exchange, a: State, b: State) -> State:
    return a[0], a[1], {**a[2], **b[2]}


def _finalize(op: Exchange, expr: Expr, state: State) -> np.ndarray:
    return _merge(op, expr, state, None)


def _finalize_into(op: Exchange, expr: Expr, state: State, out: np.ndarray) -> np.ndarray:
    return _merge(op, expr, state, out)


def _merge(op: Exchange, expr: Expr, state: State, into: np.ndarray | None) -> np.ndarray:
    """The output block: each line's slices merged (into ``into`` where its lines are views)."""
    batch, width, parts = state
    blocks = [parts[i] for i in sorted(parts)]
    nlines = int(np.prod(batch, dtype=np.int64))
    flat = None
    if into is not None and into.dtype == expr.dtype:
        lines_of = np.moveaxis(into, op.axis, -1).reshape(nlines, width)
        if np.shares_memory(lines_of, into):  # a view: the lines land in place
            flat = lines_of
    if flat is None:
        flat = np.empty((nlines, width), dtype=expr.dtype)
    for t in range(nlines):
        pieces = [b[t] for b in blocks]
        if not pieces:  # an empty output block
            continue
        if not op.arg:
            # runs in block order, sorted where they land: ties by (block, position)
            merge_sorted([p[0] for p in pieces], flat[t])
            continue
        order = np.argsort(np.concatenate([p[0] for p in pieces]), kind="stable")
        np.take(np.concatenate([p[1] for p in pieces]), order, out=flat[t])
    if into is not None and np.shares_memory(flat, into):
        return into
    out = flat.reshape(*batch, width)
    return np.ascontiguousarray(np.moveaxis(out, -1, op.axis))


exchange_kernel = register(Exchange)(
    ReduceKernel(
        partial=_partial, combine=_combine, finalize=_finalize, finalize_into=_finalize_into
    )
)
