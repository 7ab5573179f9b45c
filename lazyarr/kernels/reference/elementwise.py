"""NumPy kernels of elementwise ops and rechunk."""

from __future__ import annotations

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Elementwise, Rechunk, fill_template
from lazyarr.graph.ops.elementwise import ELEMENTWISE_FUNCS
from lazyarr.kernels.reference.registry import register


@register(Elementwise)
def elementwise(op: Elementwise, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    fn = ELEMENTWISE_FUNCS[op.func]
    result = fn(*fill_template(op.template, arrays), **dict(op.kwargs))
    result = np.asarray(result)
    if result.dtype != expr.dtype:
        result = result.astype(expr.dtype)
    shape = tuple(s.stop - s.start for s in out)
    if result.shape != shape:
        result = np.broadcast_to(result, shape)
    return result


@register(Rechunk)
def rechunk(op: Rechunk, expr: Expr, out: Region, x: np.ndarray) -> np.ndarray:
    return x
