"""NumPy tree-reduction kernels: partial state per block, combine, finalize.

Each reduction's state is laid out as its description says
(:mod:`lazyarr.graph.ops.reduction_state`): a monoid's partial is its ufunc's
``reduce``, states are joined field by field with the fields' ufuncs, and
``finalize`` follows the description's kind. States keep reduced axes with
length one (``keepdims``) so they combine by plain broadcasting; ``finalize``
drops them when the op does not keep dims.
Variance uses Chan et al.'s pairwise update of (count, mean, M2), which is
stable and matches NumPy's two-pass result to rounding.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.reduction_state import ReductionState, layout
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__ = ["reduce_kernel"]


def _count(block: np.ndarray, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= block.shape[a]
    return n


def _state(op: Reduce, expr: Expr) -> ReductionState:
    return op.state(expr.inputs[0].dtype, expr.dtype)


def _ufunc_dtype(dt: np.dtype) -> Any:
    """A ufunc's ``dtype=`` for a state of ``dt``: None for timedeltas (a ufunc's ``dtype=``
    may not name a time unit; NumPy keeps the input's)."""
    return None if dt.kind in "mM" else dt


def _partial(op: Reduce, expr: Expr, block: np.ndarray, region: Region, in_shape: tuple) -> Any:
    f, axes = op.func, op.axes
    state = _state(op, expr)
    empty = _count(block, axes) == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        if state.folds_values:
            ufunc = getattr(np, state.fields[0].join)
            if empty and ufunc.identity is None:
                return None  # NumPy's min/max of nothing: combine skips it
            field = state.fields[0]
            if state.skips_nan and block.dtype.kind in "fc":
                block = np.where(np.isnan(block), field.identity, block)
            dt = _ufunc_dtype(field.dtype)
            return ufunc.reduce(block, axis=axes, keepdims=True, dtype=dt)
        if f in ("argmin", "argmax"):
            return None if empty else _arg_partial(f, block, axes, region, in_shape, op.flat)
        if f == "count_nonzero":
            return np.count_nonzero(block, axis=axes, keepdims=True).astype(np.intp)
        if f in ("mean", "nanmean"):
            acc = state.fields[0].dtype
            if f == "nanmean":
                mask = ~np.isnan(block)
                return (
                    np.sum(np.where(mask, block, 0), axis=axes, keepdims=True, dtype=acc),
                    np.sum(mask, axis=axes, keepdims=True),
                )
            return (np.sum(block, axis=axes, keepdims=True, dtype=acc), _count(block, axes))
        if f in ("var", "std"):
            return _moments(block, axes, state.fields[1].dtype)
    raise NotImplementedError(f"no NumPy reduction kernel for {f!r}")


def _abs2(x: np.ndarray) -> np.ndarray:
    return (x * np.conj(x)).real if np.iscomplexobj(x) else x * x


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` as an unevaluated sum ``hi + lo`` with no rounding error (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _moments(block: np.ndarray, axes: tuple[int, ...], acc: Any) -> tuple:
    """(count, mean as hi + lo, sum of squared deviations) of one block.

    The mean is kept in two floats: with data like ``1e6 + noise`` a single
    float64 mean is off by up to 1e-10, and Chan's combine multiplies that
    error into M2 through the difference of block means.
    """
    n = _count(block, axes)
    shape = tuple(1 if a in axes else s for a, s in enumerate(block.shape))
    if n == 0:
        z = np.zeros(shape, dtype=acc)
        return (0, z, z, _abs2(z))
    m0 = np.mean(block, axis=axes, keepdims=True, dtype=acc)
    d = np.asarray(block - m0).astype(m0.dtype, copy=False)
    r = np.mean(d, axis=axes, keepdims=True)
    d = d - r
    hi, lo = _two_sum(m0, r)
    return (n, hi, lo, np.sum(_abs2(d), axis=axes, keepdims=True))


def _combine_moments(a: tuple, b: tuple) -> tuple:
    na, ha, la, m2a = a
    nb, hb, lb, m2b = b
    if na == 0:
        return b
    if nb == 0:
        return a
    n = na + nb
    delta = (hb - ha) + (lb - la)
    hi, lo = _two_sum(ha, la + delta * (nb / n))
    m2 = m2a + m2b + _abs2(delta) * (na * nb / n)
    return (n, hi, lo, m2)


def _arg_partial(
    f: str, block: np.ndarray, axes: tuple[int, ...], region: Region, in_shape: tuple, flat: bool
) -> tuple:
    if flat:
        local = block.reshape(-1)
        i = int(np.argmin(local) if f == "argmin" else np.argmax(local))
        multi = np.unravel_index(i, block.shape)
        glob = tuple(int(m) + r.start for m, r in zip(multi, region, strict=True))
        gi = np.ravel_multi_index(glob, in_shape) if in_shape else 0
        shape = (1,) * block.ndim
        return (local[i : i + 1].reshape(shape), np.full(shape, gi, dtype=np.intp))
    (ax,) = axes
    if f == "argmin":
        idx = np.argmin(block, axis=ax, keepdims=True)
    else:
        idx = np.argmax(block, axis=ax, keepdims=True)
    vals = np.take_along_axis(block, idx, axis=ax)
    return (vals, idx.astype(np.intp) + region[ax].start)


def _combine_arg(f: str, a: tuple, b: tuple) -> tuple:
    va, ia = a
    vb, ib = b
    with np.errstate(invalid="ignore"):
        better = vb < va if f == "argmin" else vb > va
    if va.dtype.kind in "fcmM":  # NaN and NaT win, as in NumPy's argmin/argmax
        nan_a, nan_b = np.isnan(va), np.isnan(vb)
        better = (better & ~nan_a) | (nan_b & ~nan_a)
    # ties keep the first occurrence: the smaller index
    tie = (vb == va) & (ib < ia)
    take_b = better | tie
    if va.dtype.kind in "fcmM":
        take_b = take_b | (np.isnan(va) & np.isnan(vb) & (ib < ia))
    return (np.where(take_b, vb, va), np.where(take_b, ib, ia))


def _join(state: ReductionState, a: Any, b: Any) -> Any:
    """Two states joined as ``state`` says: field by field with the fields' ufuncs, else by
    the reduction's own rule (Chan's moments, the first of the best values)."""
    if all(f.join for f in state.fields):
        joined = tuple(getattr(np, f.join)(x, y) for f, x, y in zip(state.fields, a, b))
        return joined if len(joined) > 1 else joined[0]
    if state.finalize == "moments":
        with np.errstate(invalid="ignore", over="ignore"):
            return _combine_moments(a, b)
    if state.finalize == "index":
        return _combine_arg(state.func, a, b)
    raise NotImplementedError(f"no NumPy combine for reduction {state.func!r}")


def _combine(op: Reduce, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return b if a is None else a
    state = layout(op.func)
    if len(state.fields) == 1:
        a, b = (a,), (b,)
    return _join(state, a, b)


def _finalize(op: Reduce, expr: Expr, state: Any) -> np.ndarray:
    f = op.func
    if state is None:
        # only reachable when every block was empty, which reduce() refuses
        raise ValueError(f"zero-size array to reduction operation {f} which has no identity")
    how = _state(op, expr).finalize
    if how == "divide":
        total, count = state
        out = np.true_divide(total, count)
    elif how == "moments":
        n, _, _, m2 = state
        denom = max(n - op.ddof, 0)
        if denom == 0:
            warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.true_divide(m2, denom)
        if f == "std":
            out = np.sqrt(out)
    elif how == "index":
        out = state[1]
    else:
        out = np.asarray(state)
    if f in ("nanmin", "nanmax") and np.isnan(out).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    if not op.keepdims:
        out = out.squeeze(axis=op.axes)
    if out.dtype != expr.dtype:
        out = out.astype(expr.dtype)
    return np.asarray(out)


def _pairwise(op: Reduce) -> Any:
    """The ufunc joining two array states of ``op`` (None: its states are tuples)."""
    name = layout(op.func).pairwise
    return None if name is None else getattr(np, name)


reduce_kernel = register(Reduce)(
    ReduceKernel(
        partial=_partial,
        combine=_combine,
        finalize=_finalize,
        pairwise=_pairwise,
    )
)
