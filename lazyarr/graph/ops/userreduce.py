"""A tree reduction with the user's functions (dask's ``reduction``): chunk, combine, aggregate.

:class:`UserReduce` is a reduction op like :class:`~lazyarr.graph.ops.reduction.Reduce`:
the partial of a body block is ``chunk(block, axis=axes, keepdims=True)``, two partial
states combine as ``combine(joined, axis=axes, keepdims=True)`` and the output block is
``aggregate(joined, axis=axes, keepdims=keepdims)``, where ``joined`` is what dask hands
those functions: the states concatenated along the first reduced axis
(``concatenate=True``), or nested lists with one level per reduced axis. The tree's
shape is lazyarr's own (see :func:`user_reduction`), so the functions must be associative,
as dask's results for different ``split_every`` already require.

When ``chunk`` and ``aggregate`` are one of NumPy's monoid reductions (``np.sum``,
``np.max``, ...), the result is that built-in :class:`Reduce` instead, which fuses with the
elementwise ops before it and compiles (:data:`BUILTIN_MONOIDS`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, ReduceOp, Region
from lazyarr.graph.ops._common import normalize_axes
from lazyarr.graph.ops.elementwise import elementwise
from lazyarr.graph.ops.manipulation import broadcast_to
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.ops.reduction import reduce
from lazyarr.graph.ops.userfunc import UserFunc, accepts, user_func

__all__ = ["BUILTIN_MONOIDS", "UserReduce", "check_split_every", "fan_in_of", "user_reduction"]

BUILTIN_MONOIDS: dict[Callable[..., Any], str] = {
    np.sum: "sum",
    np.prod: "prod",
    np.min: "min",
    np.max: "max",
    np.any: "any",
    np.all: "all",
    np.nansum: "nansum",
    np.nanprod: "nanprod",
    np.nanmin: "nanmin",
    np.nanmax: "nanmax",
}
"""NumPy functions whose ``reduction(x, f, f)`` is the built-in reduction of that name: its
partial, combine and final step are ``f`` again, so the result is the same op."""


@dataclasses.dataclass(frozen=True)
class UserReduce(ReduceOp):
    """``chunk`` per body block, ``combine`` over pairs of states, ``aggregate`` at the end.

    ``dtype_to``: which of ``chunk`` and ``aggregate`` take the output dtype as
    ``dtype=`` (dask passes it to the functions whose signature has it).
    ``weighted``: a second input (the weights, in the first's shape and chunks)
    is handed to ``chunk`` after each block, as dask does; then the partials read
    both inputs' blocks and no elementwise body fuses into them.
    """

    name = "user_reduction"
    chunk: UserFunc | None = None
    combine: UserFunc | None = None
    aggregate: UserFunc | None = None
    concatenate: bool = True
    output_size: int = 1
    dtype_to: tuple[str, ...] = ()
    weighted: bool = False

    @property
    def fuses_body(self) -> bool:  # type: ignore[override]
        return not self.weighted

    @property
    def own_partials(self) -> bool:  # type: ignore[override]
        return self.weighted

    def partial_regions(self, expr: Expr, body: Region) -> tuple[Region, ...]:
        """A weighted partial reads the same region of the values and of the weights."""
        return (body, body) if self.weighted else (body,)

    def partial_nbytes(self, expr: Expr, body_sizes: np.ndarray) -> np.ndarray:
        """Each body block's state: its kept elements times ``output_size`` values."""
        chunks = expr.inputs[0].chunks
        reduced = np.ones(body_sizes.shape, dtype=np.int64)
        for a in self.axes:
            shape = [1] * len(chunks)
            shape[a] = len(chunks[a])
            reduced = reduced * np.asarray(chunks[a], dtype=np.int64).reshape(shape)
        kept = body_sizes // np.maximum(reduced, 1)
        return kept * self.output_size * expr.dtype.itemsize

    def label(self) -> str:
        return f"reduction({self.chunk.label if self.chunk else '?'})"

    def state_itemsize(self, body: Expr, out: Expr) -> int:
        """Bytes per kept element of one partial state: ``output_size`` values of the output
        dtype (an estimate: the user's states may be anything)."""
        return self.output_size * out.dtype.itemsize


def check_split_every(split_every: Any) -> None:
    """dask's check of ``split_every``: an int, a dict of axis -> int, or None."""
    if split_every is None or isinstance(split_every, dict):
        return
    if not isinstance(split_every, Integral):
        raise ValueError("split_every must be a int or a dict")


def fan_in_of(split_every: Any, axes: Sequence[int]) -> int:
    """The partial states one combine step joins for dask's ``split_every`` over ``axes``:
    an int is the whole step's fan-in, a dict gives each reduced axis its own (2 where it
    names none), multiplied; 0 for None (the placement decides)."""
    check_split_every(split_every)
    if split_every is None:
        return 0
    if isinstance(split_every, dict):
        n = math.prod(max(2, int(split_every.get(a, 2))) for a in axes)
    else:
        n = int(split_every)
    return max(2, n)


def _builtin(chunk: Any, combine: Any, aggregate: Any, concatenate: bool) -> str | None:
    """The built-in reduction these functions are, or None."""
    try:
        func = BUILTIN_MONOIDS.get(chunk)
    except TypeError:  # unhashable callables
        return None
    if func is None or aggregate is not chunk or combine not in (None, chunk):
        return None
    return func if concatenate else None


def user_reduction(
    x: Expr,
    chunk: Callable[..., Any],
    aggregate: Callable[..., Any],
    axis: int | Sequence[int] | None,
    keepdims: bool,
    dtype: Any,
    combine: Callable[..., Any] | None = None,
    concatenate: bool = True,
    output_size: int = 1,
    weights: Expr | None = None,
    split_every: Any = None,
) -> Expr:
    """Build dask's ``reduction(x, chunk, aggregate, ...)`` over ``axis`` (all axes if None);
    ``weights`` broadcast to ``x`` and handed to ``chunk`` after each block; ``split_every``
    (dask's) sets the fan-in of the combine tree on a cluster."""
    if dtype is None:
        raise ValueError("Must specify dtype")
    dtype = np.dtype(dtype)
    if isinstance(axis, Integral):
        axis = (int(axis),)
    axes = normalize_axes(axis, x.ndim, "reduction")
    fan_in = fan_in_of(split_every, axes)
    if not isinstance(output_size, Integral) or output_size < 1:
        raise ValueError(f"reduction: output_size must be an integer >= 1, not {output_size!r}")
    chunk_fn, aggregate_fn = user_func(chunk), user_func(aggregate)
    combine_fn = None if combine is None else user_func(combine)
    inputs = (x,)
    if weights is not None:
        try:
            w = broadcast_to(weights, x.shape)
        except ValueError:
            raise ValueError(
                f"Weights with shape {weights.shape} are not broadcastable to x with shape "
                f"{x.shape}"
            ) from None
        inputs = (x, w if w.chunks == x.chunks else rechunk(w, x.chunks))
    builtin = _builtin(chunk, combine, aggregate, concatenate)
    if builtin is not None and output_size == 1 and weights is None:
        acc = dtype if builtin in ("sum", "prod", "nansum", "nanprod") else None
        out = reduce(builtin, x, axes, keepdims, acc)
        if fan_in:
            op = dataclasses.replace(out.op, split_every=fan_in)
            out = Expr(op, out.inputs, out.shape, out.dtype, out.chunks)
        return out if out.dtype == dtype else elementwise("astype", out, dtype=dtype)
    takes = tuple(n for n, f in (("chunk", chunk), ("aggregate", aggregate)) if accepts(f, "dtype"))
    op = UserReduce(
        axes=axes,
        keepdims=bool(keepdims),
        chunk=chunk_fn,
        combine=combine_fn,
        aggregate=aggregate_fn,
        concatenate=bool(concatenate),
        output_size=int(output_size),
        dtype_to=takes,
        weighted=weights is not None,
        split_every=fan_in,
    )
    if keepdims:
        shape = tuple(output_size if a in axes else n for a, n in enumerate(x.shape))
        chunks = tuple((output_size,) if a in axes else c for a, c in enumerate(x.chunks))
    else:
        shape = tuple(n for a, n in enumerate(x.shape) if a not in axes)
        chunks = tuple(c for a, c in enumerate(x.chunks) if a not in axes)
    return Expr(op, inputs, shape, dtype, chunks)
