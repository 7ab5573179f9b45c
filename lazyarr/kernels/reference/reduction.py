"""NumPy tree-reduction kernels: partial state per block, combine, finalize.

States keep reduced axes with length one (``keepdims``) so they combine by
plain broadcasting; ``finalize`` drops them when the op does not keep dims.
Variance uses Chan et al.'s pairwise update of (count, mean, M2), which is
stable and matches NumPy's two-pass result to rounding.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Reduce
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__ = ["reduce_kernel"]


def _count(block: np.ndarray, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= block.shape[a]
    return n


def _acc_dtype(op: Reduce, expr: Expr) -> Any:
    return op.dtype if op.dtype is not None else expr.dtype


def _partial(op: Reduce, expr: Expr, block: np.ndarray, region: Region, in_shape: tuple) -> Any:
    f, axes = op.func, op.axes
    with np.errstate(invalid="ignore", divide="ignore"):
        if f in ("sum", "prod", "nansum", "nanprod"):
            return getattr(np, f)(block, axis=axes, keepdims=True, dtype=_acc_dtype(op, expr))
        if f in ("min", "max"):
            return getattr(np, f)(block, axis=axes, keepdims=True)
        if f in ("nanmin", "nanmax"):
            if block.size == 0:
                return None
            ufunc = np.fmin if f == "nanmin" else np.fmax
            return ufunc.reduce(block, axis=axes, keepdims=True)
        if f in ("any", "all"):
            return getattr(np, f)(block, axis=axes, keepdims=True)
        if f == "count_nonzero":
            return np.count_nonzero(block, axis=axes, keepdims=True).astype(np.intp)
        if f in ("mean", "nanmean"):
            acc = op.dtype if op.dtype is not None else (
                expr.dtype if expr.dtype.kind in "fc" else np.float64
            )
            if f == "nanmean":
                mask = ~np.isnan(block)
                return (
                    np.sum(np.where(mask, block, 0), axis=axes, keepdims=True, dtype=acc),
                    np.sum(mask, axis=axes, keepdims=True),
                )
            return (np.sum(block, axis=axes, keepdims=True, dtype=acc), _count(block, axes))
        if f in ("var", "std"):
            return _moments(block, axes, op, expr)
        if f in ("argmin", "argmax"):
            return _arg_partial(f, block, axes, region, in_shape, op.flat)
    raise NotImplementedError(f"no NumPy reduction kernel for {f!r}")


def _moments(block: np.ndarray, axes: tuple[int, ...], op: Reduce, expr: Expr) -> tuple:
    n = _count(block, axes)
    acc = op.dtype if op.dtype is not None else (
        block.dtype if block.dtype.kind in "fc" else np.float64
    )
    if n == 0:
        shape = tuple(1 if a in axes else s for a, s in enumerate(block.shape))
        z = np.zeros(shape, dtype=acc)
        return (0, z, np.zeros(shape, dtype=expr.dtype))
    mean = np.mean(block, axis=axes, keepdims=True, dtype=acc)
    d = block - mean
    m2 = np.sum((d * np.conj(d)).real if np.iscomplexobj(d) else d * d, axis=axes, keepdims=True)
    return (n, mean, m2)


def _combine_moments(a: tuple, b: tuple) -> tuple:
    na, ma, m2a = a
    nb, mb, m2b = b
    if na == 0:
        return b
    if nb == 0:
        return a
    n = na + nb
    delta = mb - ma
    mean = ma + delta * (nb / n)
    sq = (delta * np.conj(delta)).real if np.iscomplexobj(delta) else delta * delta
    m2 = m2a + m2b + sq * (na * nb / n)
    return (n, mean, m2)


def _arg_partial(
    f: str, block: np.ndarray, axes: tuple[int, ...], region: Region, in_shape: tuple, flat: bool
) -> tuple:
    if flat:
        local = block.reshape(-1)
        i = int(np.argmin(local) if f == "argmin" else np.argmax(local))
        multi = np.unravel_index(i, block.shape)
        glob = tuple(int(m) + r.start for m, r in zip(multi, region))
        gi = np.ravel_multi_index(glob, in_shape) if in_shape else 0
        shape = (1,) * block.ndim
        return (local[i : i + 1].reshape(shape), np.full(shape, gi, dtype=np.intp))
    (ax,) = axes
    idx = np.argmin(block, axis=ax, keepdims=True) if f == "argmin" else np.argmax(
        block, axis=ax, keepdims=True
    )
    vals = np.take_along_axis(block, idx, axis=ax)
    return (vals, idx.astype(np.intp) + region[ax].start)


def _combine_arg(f: str, a: tuple, b: tuple) -> tuple:
    va, ia = a
    vb, ib = b
    with np.errstate(invalid="ignore"):
        better = vb < va if f == "argmin" else vb > va
    if va.dtype.kind in "fc":
        nan_a, nan_b = np.isnan(va), np.isnan(vb)
        better = (better & ~nan_a) | (nan_b & ~nan_a)
    # ties keep the first occurrence: the smaller index
    tie = (vb == va) & (ib < ia)
    take_b = better | tie
    if va.dtype.kind in "fc":
        take_b = take_b | (np.isnan(va) & np.isnan(vb) & (ib < ia))
    return (np.where(take_b, vb, va), np.where(take_b, ib, ia))


def _combine(op: Reduce, a: Any, b: Any) -> Any:
    f = op.func
    if f in ("sum", "nansum", "count_nonzero"):
        return a + b
    if f in ("prod", "nanprod"):
        return a * b
    if f == "min":
        return np.minimum(a, b)
    if f == "max":
        return np.maximum(a, b)
    if f in ("nanmin", "nanmax"):
        if a is None or b is None:
            return b if a is None else a
        return np.fmin(a, b) if f == "nanmin" else np.fmax(a, b)
    if f == "any":
        return a | b
    if f == "all":
        return a & b
    if f in ("mean", "nanmean"):
        return (a[0] + b[0], a[1] + b[1])
    if f in ("var", "std"):
        return _combine_moments(a, b)
    if f in ("argmin", "argmax"):
        return _combine_arg(f, a, b)
    raise NotImplementedError(f"no NumPy reduction kernel for {f!r}")


def _finalize(op: Reduce, expr: Expr, state: Any) -> np.ndarray:
    f = op.func
    if f in ("mean", "nanmean"):
        total, count = state
        out = np.true_divide(total, count)
        if out.dtype != expr.dtype:
            out = out.astype(expr.dtype)
    elif f in ("var", "std"):
        n, _, m2 = state
        denom = max(n - op.ddof, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.true_divide(m2, denom) if denom else m2 * np.nan
        if denom == 0:
            warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        if f == "std":
            out = np.sqrt(out)
        out = np.asarray(out).astype(expr.dtype, copy=False)
    elif f in ("argmin", "argmax"):
        out = state[1]
    elif f in ("nanmin", "nanmax") and state is None:
        raise ValueError(f"zero-size array to reduction operation {f}")
    else:
        out = np.asarray(state)
    if f in ("nanmin", "nanmax") and np.isnan(out).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    if not op.keepdims:
        out = out.squeeze(axis=op.axes)
    if out.dtype != expr.dtype:
        out = out.astype(expr.dtype)
    return out


reduce_kernel = register(Reduce)(
    ReduceKernel(
        partial=_partial,
        combine=lambda op, a, b: _combine(op, a, b),
        finalize=_finalize,
    )
)
