"""Reductions over axes: sum, prod, min, max, mean, var, std, any, all,
argmin, argmax, count_nonzero.

Each is one :class:`Reduce` node; executors run it as a tree over blocks
(partial per block, pairwise combine, finalize), see ``kernels``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from itertools import product
from typing import Any, ClassVar

import numpy as np

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Expr, ReduceOp
from lazyarr.graph.ops._common import normalize_axes, normalize_axis
from lazyarr.graph.ops.reduction_state import ReductionState, reduction_state

__all__ = ["REDUCTIONS", "Reduce", "reduce", "reduce_block_inputs"]

# name -> NumPy function used to probe the result dtype and for reference.
REDUCTIONS: dict[str, Any] = {
    "sum": np.sum,
    "prod": np.prod,
    "min": np.min,
    "max": np.max,
    "mean": np.mean,
    "var": np.var,
    "std": np.std,
    "any": np.any,
    "all": np.all,
    "argmin": np.argmin,
    "argmax": np.argmax,
    "count_nonzero": np.count_nonzero,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
    "nanmin": np.nanmin,
    "nanmax": np.nanmax,
    "nanmean": np.nanmean,
}

_NO_IDENTITY = {"min", "max", "argmin", "argmax", "nanmin", "nanmax"}
_NUMPY_UFUNC_NAME = {"min": "minimum", "max": "maximum", "nanmin": "fmin", "nanmax": "fmax"}


@dataclasses.dataclass(frozen=True)
class Reduce(ReduceOp):
    """``func`` over ``axes`` of the single input."""

    name = "reduce"
    fuses_body: ClassVar[bool] = True
    func: str = "sum"
    axes: tuple[int, ...] = ()
    keepdims: bool = False
    dtype: Any = None  # the accumulation dtype asked for, or None
    ddof: float = 0
    flat: bool = False  # argmin/argmax with axis=None: index into the flattened array

    def label(self) -> str:
        return self.func

    def state(self, value: np.dtype, out: np.dtype) -> ReductionState:
        """The partial state over values of dtype ``value`` (see ``reduction_state``)."""
        return reduction_state(self.func, value, out, self.dtype)

    def state_itemsize(self, body: Expr, out: Expr) -> int:
        return self.state(body.dtype, out.dtype).itemsize()


def _probe_dtype(func: str, x: Expr, dtype: Any, ddof: float) -> np.dtype:
    dummy = np.ones((1,) * max(x.ndim, 1), dtype=x.dtype)
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if func in ("var", "std"):
        kwargs["ddof"] = 0
    with np.errstate(all="ignore"):
        if func == "count_nonzero":
            return np.dtype(np.intp)
        out = REDUCTIONS[func](dummy, axis=0, **kwargs)
    return np.asarray(out).dtype


def _is_axis_0(axis: Any) -> bool:
    return (
        isinstance(axis, (int, np.integer))
        and not isinstance(axis, (bool, np.bool_))
        and int(axis) in (0, -1)
    )


def reduce(
    func: str,
    x: Expr,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    dtype: Any = None,
    ddof: float = 0,
) -> Expr:
    """Build the reduction ``func`` of ``x`` over ``axis`` (NumPy semantics)."""
    if func not in REDUCTIONS:
        raise ValueError(f"unknown reduction {func!r}")
    if x.dtype.kind in "mM" and func in ("nansum", "nanprod", "nanmean"):
        func = func[3:]  # NumPy: NaT is no NaN to these, so it propagates as in sum/prod/mean
    flat = False
    if x.ndim == 0 and func not in ("mean", "var", "std") and _is_axis_0(axis):
        # NumPy's quirk: ufunc-based reductions of a 0-d array accept axis 0 / -1
        axis = None
    if func in ("argmin", "argmax"):
        if dtype is not None:
            raise TypeError(f"{func}() got an unexpected keyword argument 'dtype'")
        if axis is None:
            axes = tuple(range(x.ndim))
            flat = True
        else:
            axes = (normalize_axis(axis, x.ndim, func),)
    else:
        axes = normalize_axes(axis, x.ndim, func)
    if dtype is not None:
        dtype = np.dtype(dtype)
    if (func in _NO_IDENTITY and any(x.shape[a] == 0 for a in axes)) or (flat and x.size == 0):
        if func in ("argmin", "argmax"):
            raise ValueError(f"attempt to get {func} of an empty sequence")
        ufunc = _NUMPY_UFUNC_NAME.get(func, func)
        raise ValueError(
            f"zero-size array to reduction operation {ufunc} which has no identity "
            f"(shape {x.shape}, axis {axis})"
        )
    out_dtype = _probe_dtype(func, x, dtype, ddof)
    if keepdims:
        shape = tuple(1 if ax in axes else n for ax, n in enumerate(x.shape))
    else:
        shape = tuple(n for ax, n in enumerate(x.shape) if ax not in axes)
    op = Reduce(func=func, axes=axes, keepdims=bool(keepdims), dtype=dtype, ddof=ddof, flat=flat)
    return Expr(op, (x,), shape, out_dtype, reduce_chunks(x.chunks, op))


def reduce_chunks(chunks: Chunks, op: Reduce) -> Chunks:
    """Chunks of a reduction: the kept axes' grids (one block of 1 on kept-dims reduced axes).

    Executors combine input blocks along the kept axes block for block, so
    this rule is exact, not a choice.
    """
    if op.keepdims:
        return tuple((1,) if ax in op.axes else c for ax, c in enumerate(chunks))
    return tuple(c for ax, c in enumerate(chunks) if ax not in op.axes)


def reduce_block_inputs(expr: Expr, out_index: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """The input block indices that output block ``out_index`` of a reduction combines.

    C order over the reduced axes: executors combine partials in this order
    and placement plans the combine trees in it, so there is one rule.
    """
    numblocks = [len(c) for c in expr.op.body_chunks(expr)]
    axes = expr.op.axes
    keep = expr.op.keepdims
    ranges = []
    k = 0
    for ax in range(len(numblocks)):
        if ax in axes:
            ranges.append(range(numblocks[ax]))
            if keep:
                k += 1
        else:
            ranges.append(range(out_index[k], out_index[k] + 1))
            k += 1
    return product(*ranges)
