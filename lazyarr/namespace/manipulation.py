"""Shape manipulation functions: Array API names plus NumPy's (stack helpers, tile, tri...).

Each function turns its inputs into expressions and calls one builder of
``lazyarr.graph.ops.manipulation``; all checks (NumPy's exception types)
happen there, when the expression is written. Functions that return
several arrays return tuples, as NumPy 2 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunk_limit
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import blockreshape as _blockreshape
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import manipulation as m
from lazyarr.graph.ops._common import broadcast_shape, normalize_axis
from lazyarr.namespace._register import implements

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "column_stack",
    "concat",
    "concatenate",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hstack",
    "meshgrid",
    "moveaxis",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "reshape_blockwise",
    "roll",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "tril",
    "triu",
    "unstack",
    "vstack",
]

broadcast_shapes = np.broadcast_shapes


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported by lazy arrays")


def _c_order(order: str, name: str) -> bool:
    """True for C order, False for Fortran order; NumPy's ``ValueError`` otherwise."""
    if order in ("C", "A", None):
        return True
    if order == "F":
        return False
    raise ValueError(f"{name}: order must be one of 'C', 'F', 'A' (got {order!r})")


def _reshape(x: Expr, shape: Any, c_order: bool) -> Expr:
    if c_order:
        return m.reshape(x, shape)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    flipped = m.reshape(m.permute_dims(x, None), tuple(shape)[::-1])
    return m.permute_dims(flipped, None)


@implements("reshape")
def reshape(
    x: Any, /, shape: Any = None, order: str = "C", *, copy: bool | None = None
) -> LazyArray:
    """``x`` with a new shape (one ``-1`` is inferred); C or Fortran order."""
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    return wrap(_reshape(as_expr(x), shape, _c_order(order, "reshape")))


def reshape_blockwise(x: Any, shape: Any, chunks: Any = None) -> LazyArray:
    """Every block reshaped on its own (dask's ``reshape_blockwise``: not NumPy's order).

    Going down in dimensions consecutive axes collapse; going up needs the output ``chunks``.
    """
    return wrap(_blockreshape.reshape_blockwise(as_expr(x), shape, chunks))


@implements("ravel")
def ravel(x: Any, /, order: str = "C") -> LazyArray:
    """``x`` flattened to one dimension."""
    return wrap(_reshape(as_expr(x), (-1,), _c_order(order, "ravel")))


@implements("transpose")
def transpose(x: Any, /, axes: Sequence[int] | None = None) -> LazyArray:
    """``x`` with axes permuted (reversed when ``axes`` is None), as ``numpy.transpose``."""
    return wrap(m.permute_dims(as_expr(x), axes))


def permute_dims(x: Any, /, axes: Sequence[int]) -> LazyArray:
    """``x`` with axes permuted (Array API: ``axes`` is required)."""
    return wrap(m.permute_dims(as_expr(x), axes))


@implements("moveaxis")
def moveaxis(x: Any, source: Any, destination: Any, /) -> LazyArray:
    """``x`` with axes ``source`` moved to ``destination``, other axes kept in order."""
    return wrap(m.moveaxis(as_expr(x), source, destination))


@implements("swapaxes")
def swapaxes(x: Any, axis1: int, axis2: int) -> LazyArray:
    """``x`` with two axes interchanged."""
    return wrap(m.swapaxes(as_expr(x), axis1, axis2))


@implements("expand_dims")
def expand_dims(x: Any, /, axis: Any = 0) -> LazyArray:
    """``x`` with new length-one axes at ``axis`` (an int or a tuple)."""
    return wrap(m.expand_dims(as_expr(x), axis))


@implements("squeeze")
def squeeze(x: Any, /, axis: Any = None) -> LazyArray:
    """``x`` without its length-one axes (those in ``axis``, or all)."""
    return wrap(m.squeeze(as_expr(x), axis))


@implements("flip")
def flip(x: Any, /, axis: Any = None) -> LazyArray:
    """``x`` reversed along ``axis`` (all axes by default)."""
    return wrap(m.flip(as_expr(x), axis))


@implements("fliplr")
def fliplr(x: Any, /) -> LazyArray:
    """``x`` reversed along axis 1."""
    e = as_expr(x)
    if e.ndim < 2:
        raise ValueError(f"fliplr: Input must be >= 2-d (got shape {e.shape}).")
    return wrap(m.flip(e, 1))


@implements("flipud")
def flipud(x: Any, /) -> LazyArray:
    """``x`` reversed along axis 0."""
    e = as_expr(x)
    if e.ndim < 1:
        raise ValueError("flipud: Input must be >= 1-d.")
    return wrap(m.flip(e, 0))


@implements("roll")
def roll(x: Any, /, shift: Any, axis: Any = None) -> LazyArray:
    """``x`` rolled by ``shift`` along ``axis`` (the flattened array when None)."""
    return wrap(m.roll(as_expr(x), shift, axis))


@implements("broadcast_to")
def broadcast_to(x: Any, /, shape: Any, subok: bool = False) -> LazyArray:
    """``x`` broadcast to ``shape`` (read-only in NumPy; lazy arrays are values anyway)."""
    return wrap(m.broadcast_to(as_expr(x), shape, chunk_limit()))


@implements("broadcast_arrays")
def broadcast_arrays(*arrays: Any, subok: bool = False) -> list[LazyArray]:
    """The arrays broadcast against each other (a list, as the Array API returns)."""
    exprs = [as_expr(a) for a in arrays]
    shape = broadcast_shape("broadcast_arrays", [e.shape for e in exprs])
    limit = chunk_limit()
    return [wrap(m.broadcast_to(e, shape, limit)) for e in exprs]


def _cast_all(exprs: list[Expr], dtype: Any, casting: str, name: str) -> list[Expr]:
    if dtype is None:
        return exprs
    dtype = np.dtype(dtype)
    for e in exprs:
        if not np.can_cast(e.dtype, dtype, casting=casting):
            raise TypeError(
                f"{name}: Cannot cast array data from {e.dtype!r} to {dtype!r} according to "
                f"the rule {casting!r}"
            )
    return [e if e.dtype == dtype else elementwise("astype", e, dtype=dtype) for e in exprs]


def _exprs(arrays: Any, name: str) -> list[Expr]:
    if isinstance(arrays, (LazyArray, np.ndarray)):
        # NumPy iterates over an array's first axis here
        e = as_expr(arrays)
        if e.ndim == 0:
            raise TypeError(f"{name}: expected a sequence of arrays, not a 0-d array")
        return [as_expr(a) for a in (arrays[i] for i in range(e.shape[0]))]
    return [as_expr(a) for a in arrays]


@implements("concatenate")
def concat(
    arrays: Any,
    /,
    axis: int | None = 0,
    out: Any = None,
    *,
    dtype: Any = None,
    casting: str = "same_kind",
) -> LazyArray:
    """The arrays joined along an existing ``axis`` (flattened first when None)."""
    _no_out(out, "concatenate")
    exprs = _cast_all(_exprs(arrays, "concatenate"), dtype, casting, "concatenate")
    return wrap(m.concat(exprs, axis))


concatenate = concat


@implements("stack")
def stack(
    arrays: Any,
    /,
    axis: int = 0,
    out: Any = None,
    *,
    dtype: Any = None,
    casting: str = "same_kind",
) -> LazyArray:
    """The arrays (all of one shape) joined along a new ``axis``."""
    _no_out(out, "stack")
    exprs = _cast_all(_exprs(arrays, "stack"), dtype, casting, "stack")
    return wrap(m.stack(exprs, axis))


def _atleast(e: Expr, ndim: int) -> Expr:
    if e.ndim >= ndim:
        return e
    if ndim == 3 and e.ndim == 2:
        return m.reshape(e, (*e.shape, 1))
    if ndim == 3 and e.ndim == 1:
        return m.reshape(e, (1, e.shape[0], 1))
    return m.reshape(e, (1,) * (ndim - e.ndim) + e.shape)


def _atleast_nd(arrays: tuple[Any, ...], ndim: int) -> Any:
    out = tuple(wrap(_atleast(as_expr(a), ndim)) for a in arrays)
    return out[0] if len(out) == 1 else out


@implements("atleast_1d")
def atleast_1d(*arrays: Any) -> Any:
    """Each input with at least one dimension (one array, or a tuple of them)."""
    return _atleast_nd(arrays, 1)


@implements("atleast_2d")
def atleast_2d(*arrays: Any) -> Any:
    """Each input with at least two dimensions (new axes go first)."""
    return _atleast_nd(arrays, 2)


@implements("atleast_3d")
def atleast_3d(*arrays: Any) -> Any:
    """Each input with at least three dimensions (NumPy's placement of new axes)."""
    return _atleast_nd(arrays, 3)


@implements("vstack")
def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> LazyArray:
    """The arrays stacked row-wise (1-d arrays become rows)."""
    exprs = [_atleast(e, 2) for e in _exprs(tup, "vstack")]
    return wrap(m.concat(_cast_all(exprs, dtype, casting, "vstack"), 0))


@implements("hstack")
def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> LazyArray:
    """The arrays stacked column-wise (along axis 0 for 1-d arrays)."""
    exprs = [_atleast(e, 1) for e in _exprs(tup, "hstack")]
    axis = 0 if exprs and exprs[0].ndim == 1 else 1
    return wrap(m.concat(_cast_all(exprs, dtype, casting, "hstack"), axis))


@implements("dstack")
def dstack(tup: Any) -> LazyArray:
    """The arrays stacked along the third axis."""
    exprs = [_atleast(e, 3) for e in _exprs(tup, "dstack")]
    return wrap(m.concat(exprs, 2))


@implements("column_stack")
def column_stack(tup: Any) -> LazyArray:
    """1-d arrays as columns of a 2-d array (2-d arrays are kept as they are)."""
    exprs = []
    for e in _exprs(tup, "column_stack"):
        if e.ndim < 2:
            e = m.reshape(e, (-1, 1)) if e.ndim == 1 else m.reshape(e, (1, 1))
        exprs.append(e)
    return wrap(m.concat(exprs, 1))


@implements("tile")
def tile(x: Any, reps: Any, /) -> LazyArray:
    """``x`` repeated ``reps`` times along each axis."""
    return wrap(m.tile(as_expr(x), reps, chunk_limit()))


@implements("repeat")
def repeat(x: Any, repeats: Any, /, axis: int | None = None) -> LazyArray:
    """Each element repeated ``repeats`` times (an int or one count per element)."""
    if isinstance(repeats, LazyArray):
        # the result's shape depends on the counts: they are computed now
        repeats = repeats.compute()
    return wrap(m.repeat(as_expr(x), repeats, axis, chunk_limit()))


@implements("unstack")
def unstack(x: Any, /, *, axis: int = 0) -> tuple[LazyArray, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    e = as_expr(x)
    if e.ndim == 0:
        raise ValueError("unstack: Input array must be at least 1-d.")
    ax = normalize_axis(axis, e.ndim, "unstack")
    head = (slice(None),) * ax
    return tuple(wrap(ix.getitem(e, (*head, i))) for i in range(e.shape[ax]))


@implements("tril")
def tril(x: Any, /, k: int = 0) -> LazyArray:
    """``x`` with elements above the ``k``-th diagonal set to zero."""
    return wrap(m.tril(as_expr(x), k))


@implements("triu")
def triu(x: Any, /, k: int = 0) -> LazyArray:
    """``x`` with elements below the ``k``-th diagonal set to zero."""
    return wrap(m.triu(as_expr(x), k))


@implements("meshgrid")
def meshgrid(
    *arrays: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[LazyArray]:
    """Coordinate arrays from 1-d coordinate vectors (a list, as the Array API returns)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(arrays)
    ones = (1,) * ndim
    out = [m.reshape(as_expr(a), (*ones[:i], -1, *ones[i + 1 :])) for i, a in enumerate(arrays)]
    if indexing == "xy" and ndim > 1:
        out[0] = m.reshape(out[0], (1, -1, *ones[2:]))
        out[1] = m.reshape(out[1], (-1, 1, *ones[2:]))
    if sparse:
        return [wrap(e) for e in out]
    shape = broadcast_shape("meshgrid", [e.shape for e in out])
    limit = chunk_limit()
    return [wrap(m.broadcast_to(e, shape, limit)) for e in out]
