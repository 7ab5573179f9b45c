"""Array creation: from data, constants, ranges, identity (Array API + NumPy names)."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunks_for
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Arange, Eye, Linspace
from lazyarr.graph.ops import full as full_op
from lazyarr.namespace._register import implements

__all__ = [
    "arange",
    "asarray",
    "array",
    "empty",
    "empty_like",
    "eye",
    "from_array",
    "from_dlpack",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, not {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed: {out}")
    return out


def _default_float() -> np.dtype:
    return np.dtype(np.float64)


def asarray(
    obj: Any,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    chunks: Any = "auto",
) -> LazyArray:
    """A lazy array of ``obj`` (standard ``copy`` semantics: False never copies NumPy input)."""
    if device not in (None, "cpu"):
        raise ValueError(f"lazyarr arrays live on 'cpu', not {device!r}")
    if isinstance(obj, LazyArray):
        out = obj if dtype is None else obj.astype(dtype, copy=bool(copy))
        if chunks != "auto":
            out = out.rechunk(chunks)
        return out
    if copy is False:
        if not isinstance(obj, np.ndarray) or (dtype is not None and np.dtype(dtype) != obj.dtype):
            raise ValueError("asarray(copy=False) would need a copy of this input")
        arr = obj
    else:
        arr = np.array(obj, dtype=dtype, copy=True) if copy else np.asarray(obj, dtype=dtype)
    if isinstance(obj, np.ndarray) and copy is None and arr is obj:
        # a view, not the user's object, so later resizes of theirs cannot reach us
        arr = obj.view()
    return wrap(as_expr(arr, chunks))


@implements("array")
def array(obj: Any, dtype: Any = None, *, copy: bool = True, chunks: Any = "auto") -> LazyArray:
    """NumPy's ``array``: like :func:`asarray` but copies by default."""
    return asarray(obj, dtype=dtype, copy=copy, chunks=chunks)


def from_array(x: Any, chunks: Any = "auto") -> LazyArray:
    """A lazy array over an existing array (Dask's name for :func:`asarray`)."""
    return asarray(x, chunks=chunks)


def _full_expr(shape: Any, value: Any, dtype: Any, chunks: Any) -> Expr:
    shape = _shape(shape)
    if dtype is None:
        dtype = np.asarray(value).dtype if not isinstance(value, float) else _default_float()
        if isinstance(value, bool):
            dtype = np.dtype(bool)
        elif isinstance(value, int):
            dtype = np.dtype(np.int64)
        elif isinstance(value, complex):
            dtype = np.dtype(np.complex128)
    dtype = np.dtype(dtype)
    if isinstance(value, LazyArray):
        raise TypeError("full() takes a scalar fill value, not a lazy array")
    return full_op(shape, value, dtype, chunks_for(chunks, shape, dtype))


@implements("full")
def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, chunks: Any = "auto") -> LazyArray:
    """An array of ``shape`` filled with ``fill_value``."""
    return wrap(_full_expr(shape, fill_value, dtype, chunks))


@implements("zeros")
def zeros(shape: Any, *, dtype: Any = None, device: Any = None, chunks: Any = "auto") -> LazyArray:
    """An array of zeros (float64 by default)."""
    return wrap(_full_expr(shape, 0, dtype or _default_float(), chunks))


@implements("ones")
def ones(shape: Any, *, dtype: Any = None, device: Any = None, chunks: Any = "auto") -> LazyArray:
    """An array of ones (float64 by default)."""
    return wrap(_full_expr(shape, 1, dtype or _default_float(), chunks))


@implements("empty")
def empty(shape: Any, *, dtype: Any = None, device: Any = None, chunks: Any = "auto") -> LazyArray:
    """An array whose values are unspecified (lazyarr gives zeros)."""
    return zeros(shape, dtype=dtype, chunks=chunks)


def _like(x: Any, value: Any, dtype: Any, chunks: Any) -> LazyArray:
    e = as_expr(x)
    dtype = e.dtype if dtype is None else np.dtype(dtype)
    use = e.chunks if chunks is None else chunks
    return wrap(full_op(e.shape, value, dtype, chunks_for(use, e.shape, dtype)))


@implements("zeros_like")
def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None) -> LazyArray:
    """Zeros with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, 0, dtype, chunks)


@implements("ones_like")
def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None) -> LazyArray:
    """Ones with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, 1, dtype, chunks)


@implements("empty_like")
def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None) -> LazyArray:
    """Unspecified values (zeros) with the shape of ``x``."""
    return _like(x, 0, dtype, chunks)


@implements("full_like")
def full_like(
    x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None, chunks: Any = None
) -> LazyArray:
    """``fill_value`` with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, fill_value, dtype, chunks)


@implements("arange")
def arange(
    start: Any,
    /,
    stop: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's length and dtype rules)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    probe = np.arange(start, start + step, step, dtype=dtype) if dtype is not None else None
    out_dtype = (
        probe.dtype if probe is not None else np.result_type(*(np.asarray(v) for v in (start, stop, step)))
    )
    if isinstance(start, int) and isinstance(stop, int) and isinstance(step, int) and dtype is None:
        out_dtype = np.dtype(np.int64)
    n = max(0, math.ceil((stop - start) / step)) if not isinstance(start + stop + step, complex) else 0
    shape = (int(n),)
    return wrap(
        Expr(Arange(start=start, step=step), (), shape, out_dtype, chunks_for(chunks, shape, out_dtype))
    )


@implements("linspace")
def linspace(
    start: Any,
    stop: Any,
    /,
    num: int = 50,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: bool = True,
    chunks: Any = "auto",
) -> LazyArray:
    """``num`` evenly spaced samples from ``start`` to ``stop``."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is None:
        dtype = np.result_type(start, stop, float(num))
    dtype = np.dtype(dtype)
    shape = (num,)
    op = Linspace(start=start, stop=stop, num=num, endpoint=bool(endpoint))
    return wrap(Expr(op, (), shape, dtype, chunks_for(chunks, shape, dtype)))


@implements("eye")
def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
) -> LazyArray:
    """A 2-D array with ones on the ``k``-th diagonal."""
    n_cols = n_rows if n_cols is None else n_cols
    shape = _shape((n_rows, n_cols))
    dtype = np.dtype(dtype or np.float64)
    return wrap(Expr(Eye(k=int(k)), (), shape, dtype, chunks_for(chunks, shape, dtype)))


@implements("identity")
def identity(n: int, dtype: Any = None, *, chunks: Any = "auto") -> LazyArray:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=dtype, chunks=chunks)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> LazyArray:
    """A lazy array over any object with ``__dlpack__``."""
    return asarray(np.from_dlpack(x, copy=copy), copy=False if copy is None else copy)
