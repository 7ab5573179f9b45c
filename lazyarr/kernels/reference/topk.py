"""NumPy kernels of :class:`~lazyarr.graph.ops.topk.TopK`: per-block top-k, merged in a tree.

A partial state is ``(values, indices)`` with the selected axis moved last
and at most ``|k|`` entries along it, already in the result's order
(``indices`` is None for ``topk``, which needs no positions). Selecting the
top ``|k|`` of a line costs one ``np.partition`` (linear, not a sort): the
values are the partition's side of the cut. ``argtopk`` takes
``np.argpartition``'s side when no entry equal to the threshold is left out
(one comparison pass checks); otherwise entries beyond the threshold are in
and entries equal to it are taken by increasing index until ``|k|`` are in,
so ties resolve as a stable sort would. Only the selected entries are sorted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.topk import TopK
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__ = ["select"]

State = tuple[np.ndarray, np.ndarray | None]


def _order(v: np.ndarray, largest: bool) -> np.ndarray:
    """Sorting positions of each line (last axis) in index order: by value, ties stable.

    Largest first is the reverse of the ascending stable sort of the reversed
    line, so ties keep increasing index and NaN (sorted last) comes first.
    """
    if not largest:
        return np.argsort(v, axis=-1, kind="stable")
    n = v.shape[-1]
    return n - 1 - np.flip(np.argsort(np.flip(v, -1), axis=-1, kind="stable"), -1)


def _beyond_and_equal(v: np.ndarray, t: np.ndarray, largest: bool) -> tuple[np.ndarray, ...]:
    """Entries strictly beyond the threshold ``t`` (in ``k``'s direction) and equal to it.

    NaN sorts above every number, and NaNs are equal to each other.
    """
    if v.dtype.kind == "f":
        nan_v, nan_t = np.isnan(v), np.isnan(t)
        with np.errstate(invalid="ignore"):
            beyond = ((v > t) | (nan_v & ~nan_t)) if largest else ((v < t) | (~nan_v & nan_t))
            return beyond, (v == t) | (nan_v & nan_t)
    return (v > t) if largest else (v < t), v == t


def select(v: np.ndarray, idx: np.ndarray | None, k: int) -> State:
    """The top ``|k|`` of each line of ``v`` (last axis, entries in index order), ordered.

    ``idx``: the entries' global indices (same shape) or None.
    """
    m, n = abs(k), v.shape[-1]
    largest = k > 0
    if n > m:
        kth = n - m if largest else m - 1
        side = slice(kth, None) if largest else slice(0, m)
        if idx is None:  # values only: the multiset on the cut's side is the answer
            v = np.partition(v, kth, axis=-1)[..., side]
        else:
            v, idx = _arg_select(v, idx, kth, side, largest)
    o = _order(v, largest)
    v = np.take_along_axis(v, o, axis=-1)
    if idx is not None:
        idx = np.take_along_axis(idx, o, axis=-1)
    return v, idx


def _equal(v: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``v == t`` with NaN equal to NaN."""
    if v.dtype.kind == "f":
        return (v == t) | (np.isnan(v) & np.isnan(t))
    return v == t


def _arg_select(
    v: np.ndarray, idx: np.ndarray, kth: int, side: slice, largest: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The top entries of each line and their indices, ties at the threshold by index."""
    p = np.argpartition(v, kth, axis=-1)
    t = np.take_along_axis(v, p[..., kth : kth + 1], axis=-1)
    sel = np.sort(p[..., side], axis=-1)  # back in index order, for stable ties
    vs = np.take_along_axis(v, sel, axis=-1)
    if (_equal(v, t).sum(axis=-1) == _equal(vs, t).sum(axis=-1)).all():
        return vs, np.take_along_axis(idx, sel, axis=-1)  # no tie crosses the cut
    beyond, equal = _beyond_and_equal(v, t, largest)
    need = sel.shape[-1] - beyond.sum(axis=-1, keepdims=True)
    keep = beyond | (equal & (np.cumsum(equal, axis=-1) <= need))
    shape = sel.shape
    return v[keep].reshape(shape), idx[keep].reshape(shape)


def _partial(op: TopK, expr: Expr, block: np.ndarray, region: Region, in_shape: tuple) -> State:
    v = np.moveaxis(block, op.axis, -1)
    idx = None
    if op.arg:
        start = region[op.axis].start
        line = np.arange(start, start + v.shape[-1], dtype=np.intp)
        idx = np.broadcast_to(line, v.shape)
    return select(v, idx, op.k)


def _combine(op: TopK, a: State, b: State) -> State:
    v = np.concatenate([a[0], b[0]], axis=-1)
    if not op.arg:
        return select(v, None, op.k)
    idx = np.concatenate([a[1], b[1]], axis=-1)
    o = np.argsort(idx, axis=-1, kind="stable")  # back to index order (indices are distinct)
    return select(np.take_along_axis(v, o, -1), np.take_along_axis(idx, o, -1), op.k)


def _finalize(op: TopK, expr: Expr, state: State) -> np.ndarray:
    out: Any = state[1] if op.arg else state[0]
    out = np.moveaxis(out, -1, op.axis)
    if out.dtype != expr.dtype:
        out = out.astype(expr.dtype)
    return np.ascontiguousarray(out)


topk_kernel = register(TopK)(ReduceKernel(partial=_partial, combine=_combine, finalize=_finalize))
