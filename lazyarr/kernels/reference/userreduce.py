"""NumPy kernels of :class:`~lazyarr.graph.ops.userreduce.UserReduce`: the user's chunk,
combine and aggregate, called per block with dask's arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.userreduce import UserReduce
from lazyarr.kernels.reference.checks import block_name, called, checked
from lazyarr.kernels.reference.registry import ReduceKernel, register

__all__ = ["joined"]


def joined(op: UserReduce, states: list[Any]) -> Any:
    """What dask hands ``combine``/``aggregate``: the states concatenated along the first
    reduced axis, or (``concatenate=False``) nested lists, one level per reduced axis."""
    if not op.axes:
        return states[0]
    if op.concatenate:
        if len(states) == 1:
            return states[0]
        return np.concatenate([np.asarray(s) for s in states], axis=op.axes[0])
    nested: list[Any] = []
    for s in states:
        for _ in op.axes[1:]:
            s = [s]
        nested.append(s)
    return nested


def _dtype_kw(op: UserReduce, which: str, expr: Expr) -> dict[str, Any]:
    return {"dtype": expr.dtype} if which in op.dtype_to else {}


def _partial(op: UserReduce, expr: Expr, block: np.ndarray, region: Region, in_shape: tuple) -> Any:
    assert op.chunk is not None
    where = f"calling {op.chunk.label} on {block_name(expr.inputs[0].chunks, region)}"
    kw = _dtype_kw(op, "chunk", expr)
    blocks = block if op.weighted else (block,)  # (values, weights) of a weighted partial
    return called(op.chunk.fn, where, *blocks, axis=op.axes, keepdims=True, **kw)


def _combine(op: UserReduce, a: Any, b: Any) -> Any:
    fn = op.combine or op.aggregate
    assert fn is not None
    return called(
        fn.fn, f"combining states with {fn.label}", joined(op, [a, b]), axis=op.axes, keepdims=True
    )


def _finalize(op: UserReduce, expr: Expr, state: Any) -> np.ndarray:
    assert op.aggregate is not None
    kw = _dtype_kw(op, "aggregate", expr)
    who = f"reduction's aggregate {op.aggregate.label}"
    out = called(
        op.aggregate.fn,
        f"calling {who}",
        joined(op, [state]),
        axis=op.axes,
        keepdims=op.keepdims,
        **kw,
    )
    out = np.asarray(out)
    ndim = len(expr.shape)
    if out.ndim != ndim:
        raise ValueError(
            f"{who}: returned {out.ndim} dimensions for an output block of {ndim} "
            f"(shape {out.shape}; keepdims={op.keepdims})"
        )
    want = list(out.shape)
    if isinstance(state, np.ndarray) and state.ndim == len(expr.inputs[0].shape):
        kept = [n for a, n in enumerate(state.shape) if a not in op.axes or op.keepdims]
        want = kept  # the kept axes' extents are the state's
    if op.keepdims:
        want = [op.output_size if a in op.axes else n for a, n in enumerate(want)]
    return checked(out, want, expr.dtype, who, "an output block").astype(expr.dtype, copy=False)


user_reduce_kernel = register(UserReduce)(
    ReduceKernel(partial=_partial, combine=_combine, finalize=_finalize)
)
