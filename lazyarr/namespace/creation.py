"""Array creation: from data, constants, ranges, identity (Array API + NumPy names)."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunks_for, is_auto, source_expr
from lazyarr.graph.expr import Expr, reached
from lazyarr.graph.ops import Arange, Eye, Linspace
from lazyarr.graph.ops import full as full_op
from lazyarr.graph.ops._common import normalize_shape
from lazyarr.graph.ops.creation import Generated
from lazyarr.namespace._register import implements
from lazyarr.namespace.daskarray import from_dask, is_dask_array
from lazyarr.namespace.io import array_like, is_array_like

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


def _default_float() -> np.dtype:
    return np.dtype(np.float64)


def _named(expr: Expr, name: str | None) -> LazyArray:
    """``expr`` as a lazy array the user called ``name`` (None: unnamed)."""
    return wrap(expr if name is None else expr.renamed(name))


def _source(arr: np.ndarray, chunks: Any, owned: bool) -> LazyArray:
    return wrap(source_expr(arr, chunks, owned))


def asarray(
    obj: Any,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    chunks: Any = "auto",
    name: str | None = None,
) -> LazyArray:
    """A lazy array of ``obj`` (standard ``copy`` semantics: False never copies NumPy input).

    Without a copy the lazy array reads the caller's buffer when it computes,
    so later writes to that buffer are seen (as with a NumPy view). ``name``:
    what plan pictures call it (as ``x.rename(name)``).
    """
    out = _asarray(obj, dtype, device, copy, chunks)
    return out if name is None else out.rename(name)


def _asarray(obj: Any, dtype: Any, device: Any, copy: bool | None, chunks: Any) -> LazyArray:
    if device not in (None, "cpu"):
        raise ValueError(f"lazyarr arrays live on 'cpu', not {device!r}")
    if isinstance(obj, LazyArray):
        out = obj if dtype is None else obj.astype(dtype, copy=bool(copy))
        if copy and out is obj:
            out = wrap(obj._expr)  # a new handle: setitem on it leaves ``obj`` alone
        if chunks != "auto":
            out = out.rechunk(chunks)
        return out
    if isinstance(obj, np.ma.MaskedArray):
        raise TypeError(
            "lazyarr arrays have no mask, and dropping it would change results: pass "
            "x.filled(fill_value) (e.g. np.nan for floats), or x.data with a separate mask array"
        )
    if is_dask_array(obj):  # read block by block when planned, never gathered here
        out = from_dask(obj, chunks)
        return out if dtype is None else out.astype(dtype, copy=False)
    if copy is False:
        if not isinstance(obj, np.ndarray) or (dtype is not None and np.dtype(dtype) != obj.dtype):
            raise ValueError("asarray(copy=False) would need a copy of this input")
        arr = obj.view()
    elif copy:
        arr = np.array(obj, dtype=dtype, copy=True)
    else:
        arr = np.asarray(obj, dtype=dtype)
        if arr is obj:
            # a view, not the user's object, so later resizes of theirs cannot reach us
            arr = obj.view()
    owned = bool(copy) or isinstance(obj, (list, tuple, bool, int, float, complex))
    return _source(arr, chunks, owned)


@implements("array")
def array(obj: Any, dtype: Any = None, *, copy: bool = True, chunks: Any = "auto") -> LazyArray:
    """NumPy's ``array``: like :func:`asarray` but copies by default."""
    return asarray(obj, dtype=dtype, copy=copy, chunks=chunks)


def from_array(x: Any, chunks: Any = "auto", *, name: str | None = None) -> LazyArray:
    """A lazy array over an existing array (Dask's name for :func:`asarray`).

    Stored arrays (zarr arrays, h5py datasets, netCDF4 variables: anything with
    ``shape``, ``dtype`` and ``__getitem__`` that is not a NumPy array) are
    never read here: each block is read when it runs, in blocks that are
    multiples of the storage's chunks unless ``chunks`` says otherwise. A
    sparse array (pydata's ``sparse``, SciPy's) is read the same way, each
    block densified as it is read (lazyarr's blocks are dense NumPy arrays).
    ``name``: what plan pictures call it (as ``x.rename(name)``).
    """
    if is_dask_array(x):
        out = from_dask(x, chunks)
    elif is_array_like(x):
        out = array_like(x, None if is_auto(chunks) else chunks)
    else:
        out = asarray(x, chunks=chunks)
    return out if name is None else out.rename(name)


def _full_expr(op: str, shape: Any, value: Any, dtype: Any, chunks: Any) -> Expr:
    shape = normalize_shape(shape, op)
    if isinstance(value, LazyArray) or np.ndim(value) != 0:
        raise NotImplementedError(
            "lazyarr's full() takes a scalar fill value; for an array fill value use "
            "broadcast_to(asarray(value), shape)"
        )
    if isinstance(value, np.ndarray):
        value = value[()]
    # NumPy's choice: the dtype of ``np.array(fill_value)``
    dtype = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
    if dtype.kind in "OUSV":
        raise TypeError(f"lazyarr arrays cannot hold dtype {dtype} (fill value {value!r})")
    return full_op(shape, value, dtype, chunks_for(chunks, shape, dtype), is_auto(chunks))


@implements("full")
def full(
    shape: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    name: str | None = None,
) -> LazyArray:
    """An array of ``shape`` filled with ``fill_value``."""
    return _named(_full_expr("full", shape, fill_value, dtype, chunks), name)


@implements("zeros")
def zeros(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    name: str | None = None,
) -> LazyArray:
    """An array of zeros (float64 by default)."""
    return _named(
        _full_expr("zeros", shape, 0, _default_float() if dtype is None else dtype, chunks), name
    )


@implements("ones")
def ones(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    name: str | None = None,
) -> LazyArray:
    """An array of ones (float64 by default)."""
    return _named(
        _full_expr("ones", shape, 1, _default_float() if dtype is None else dtype, chunks), name
    )


@implements("empty")
def empty(
    shape: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    chunks: Any = "auto",
    name: str | None = None,
) -> LazyArray:
    """An array whose values are unspecified (lazyarr gives zeros)."""
    return _named(
        _full_expr("empty", shape, 0, _default_float() if dtype is None else dtype, chunks), name
    )


def _all_auto(e: Expr) -> bool:
    """True when every source under ``e`` is generated with auto chunks."""
    return all(x.inputs or (isinstance(x.op, Generated) and x.op.auto_chunks) for x in reached([e]))


def _like(x: Any, value: Any, dtype: Any, chunks: Any) -> LazyArray:
    e = as_expr(x)
    dtype = e.dtype if dtype is None else np.dtype(dtype)
    use = e.chunks if chunks is None else chunks
    # x's chunks by default: auto only when x's own chunks may be re-planned
    # (so the two keep the same blocks), otherwise they are kept as given
    auto = _all_auto(e) if chunks is None else is_auto(chunks)
    return wrap(full_op(e.shape, value, dtype, chunks_for(use, e.shape, dtype), auto))


@implements("zeros_like")
def zeros_like(
    x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None
) -> LazyArray:
    """Zeros with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, 0, dtype, chunks)


@implements("ones_like")
def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None) -> LazyArray:
    """Ones with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, 1, dtype, chunks)


@implements("empty_like")
def empty_like(
    x: Any, /, *, dtype: Any = None, device: Any = None, chunks: Any = None
) -> LazyArray:
    """Unspecified values (zeros) with the shape of ``x``."""
    return _like(x, 0, dtype, chunks)


@implements("full_like")
def full_like(
    x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None, chunks: Any = None
) -> LazyArray:
    """``fill_value`` with the shape (and by default dtype and chunks) of ``x``."""
    return _like(x, fill_value, dtype, chunks)


def _range_arg(value: Any, name: str) -> Any:
    if isinstance(value, LazyArray):
        raise TypeError(f"arange: {name} must be a scalar, not a lazy array")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"arange: {name} must be a scalar, not an array of shape {value.shape}")
        return value[()]
    return value


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """NumPy's length rule: ``ceil((stop - start) / step)`` (per part for complex)."""
    try:
        val = (stop - start) / step
        if isinstance(val, (complex, np.complexfloating)):
            n = min(math.ceil(val.real), math.ceil(val.imag))
        else:
            n = math.ceil(val)
    except OverflowError:
        raise ValueError("Maximum allowed size exceeded") from None
    except ValueError:
        raise ValueError("arange: cannot compute length") from None
    return max(int(n), 0)


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
    name: str | None = None,
) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's length, dtype and values)."""
    bounds = (start, stop, step)
    if any(isinstance(v, (np.datetime64, np.timedelta64)) for v in bounds) or (
        dtype is not None and np.dtype(dtype).kind in "mM"
    ):
        raise NotImplementedError(
            "lazyarr's arange makes no datetimes or timedeltas yet: take an integer "
            "arange times a timedelta64 step, plus a datetime64 start"
        )
    if stop is None:
        start, stop = 0, start
    start, stop, step = (
        _range_arg(v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"))
    )
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    if dtype is None:
        # NumPy's rule: the kind of the bounds' promotion, at its default precision
        # (``arange(np.float32(5))`` is float64; Python ints past int64 give float64)
        kind = np.result_type(*(np.asarray(v) for v in (start, stop, step))).kind
        out_dtype = np.dtype({"c": np.complex128, "f": np.float64}.get(kind, np.int64))
    else:
        out_dtype = np.dtype(dtype)
    if out_dtype.kind in "OUSV":
        raise TypeError(f"arange: unsupported dtype {out_dtype}")
    n = _arange_length(start, stop, step)
    if n > np.iinfo(np.intp).max // max(out_dtype.itemsize, 1):
        raise ValueError("Maximum allowed size exceeded")
    if out_dtype.kind == "b" and n > 2:
        raise TypeError(
            "arange() is only supported for booleans when the result has at most length 2."
        )
    shape = (n,)
    op = Arange(start=start, step=step, auto_chunks=is_auto(chunks))
    return _named(Expr(op, (), shape, out_dtype, chunks_for(chunks, shape, out_dtype)), name)


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
    # NumPy's own dtype rules and errors, on zero samples
    dtype = np.linspace(start, stop, 0, dtype=dtype).dtype
    shape = (num,)
    op = Linspace(
        start=start, stop=stop, num=num, endpoint=bool(endpoint), auto_chunks=is_auto(chunks)
    )
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
    shape = normalize_shape((n_rows, n_cols), "eye")
    dtype = _default_float() if dtype is None else np.dtype(dtype)
    op = Eye(k=int(k), auto_chunks=is_auto(chunks))
    return wrap(Expr(op, (), shape, dtype, chunks_for(chunks, shape, dtype)))


@implements("identity")
def identity(n: int, dtype: Any = None, *, chunks: Any = "auto") -> LazyArray:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=dtype, chunks=chunks)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> LazyArray:
    """A lazy array over any object with ``__dlpack__``."""
    return asarray(np.from_dlpack(x, copy=copy), copy=False if copy is None else copy)
