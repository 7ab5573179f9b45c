"""User functions per block, with dask's signatures: ``map_blocks``, ``blockwise`` and
``map_overlap`` (``apply_gufunc`` and ``apply_along_axis`` are in
:mod:`lazyarr.namespace.gufuncs`).

Everything stays lazy: each call records one op (see
:mod:`lazyarr.graph.ops.userfunc` and :mod:`lazyarr.graph.ops.overlap`),
and errors that dask raises when the expression is written (bad axes,
chunks, signatures, a core dimension split into blocks) are raised here.
When no ``dtype`` is given it is found as dask finds it: by calling the
function on tiny arrays of the inputs' dtypes.

A ``numba.vectorize`` ufunc, or an ``@numba.njit`` function that compiles
for scalars, passed to :func:`map_blocks` (or called on a lazy array) is
recorded as an elementwise op: the Numba executor compiles it into the
same generated loop as the elementwise ops around it. Any other function
runs as its own stage, once per block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, serve, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops.elementwise import ELEMENTWISE_FUNCS
from lazyarr.graph.ops.overlap import normalize_depth
from lazyarr.graph.ops.overlap import overlap as overlap_op
from lazyarr.graph.ops.userfunc import accepts, user_elementwise, user_func
from lazyarr.graph.ops.userfunc import blockwise as blockwise_op
from lazyarr.io.readers import is_dask_array

__all__ = ["blockwise", "map_blocks", "map_overlap"]


def check_callable(func: Any, name: str) -> None:
    if not callable(func):
        raise TypeError(
            f"First argument must be callable function, not {type(func).__name__}\n"
            f"Usage:   la.{name}(function, x)\n"
            f"   or:   la.{name}(function, x, y, z)"
        )


def _no_lazy_kwargs(kwargs: dict[str, Any], name: str) -> None:
    """Lazy arrays in keyword arguments would be computed inside every block's call."""
    for k, v in kwargs.items():
        if isinstance(v, LazyArray):
            raise TypeError(
                f"{name}: keyword argument {k}= is a lazy array; pass it as an argument "
                "(la.blockwise with index None passes it whole to every call)"
            )


def _operand(a: Any) -> Any:
    """Lazy and Dask arrays as expressions; everything else is a constant argument."""
    return as_expr(a) if isinstance(a, LazyArray) or is_dask_array(a) else a


def infer_dtype(
    func: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    name: str,
    suggest: str = "dtype",
    nout: int | None = None,
) -> Any:
    """The dtype(s) ``func`` returns for arrays of one element of the inputs' dtypes
    (dask's ``apply_infer_dtype``; ``ValueError`` naming ``suggest`` when it fails)."""
    dummies = [np.zeros((1,) * a.ndim, dtype=a.dtype) if isinstance(a, Expr) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            out = func(*dummies, **kwargs)
    except OverflowError:
        raise
    except Exception as e:
        raise ValueError(
            f"`dtype` inference failed in `{name}`.\n\n"
            f"Please specify the dtype explicitly using the `{suggest}` kwarg.\n\n"
            f"Original error is below:\n------------------------\n{e!r}"
        ) from e
    if nout is None:
        return np.dtype(getattr(out, "dtype", None) or np.asarray(out).dtype)
    return tuple(np.asarray(o).dtype for o in out)


def _as_list(v: Any) -> list[int]:
    if v is None:
        return []
    if isinstance(v, Number):
        return [int(v)]  # type: ignore[call-overload]
    return [int(i) for i in v]


@serve("map_blocks")
def map_blocks(
    func: Callable[..., Any],
    *args: Any,
    name: str | None = None,
    token: str | None = None,
    dtype: Any = None,
    chunks: Any = None,
    drop_axis: Any = None,
    new_axis: Any = None,
    enforce_ndim: bool = False,
    meta: Any = None,
    **kwargs: Any,
) -> LazyArray:
    """``func`` applied to every block of the lazy arrays in ``args`` (``dask.array.map_blocks``).

    Arrays are aligned block by block with their axes right-aligned
    (length-1 axes broadcast); other arguments and ``kwargs`` go to every
    call unchanged. ``chunks`` gives the output's chunks when ``func``
    changes block shapes (a tuple of ints: every block's shape; a tuple of
    tuples: the chunks); ``drop_axis`` removes axes (each block then sees
    them whole), ``new_axis`` inserts them. ``func`` receives ``block_id``
    and ``block_info`` (dask's dictionaries) when it takes those keywords.
    ``name``/``token`` are accepted for dask compatibility and unused; every
    block's shape is checked (``enforce_ndim`` is always on).
    """
    check_callable(func, "map_blocks")
    _no_lazy_kwargs(kwargs, "map_blocks")
    ops = [_operand(a) for a in args]
    arrays = [a for a in ops if isinstance(a, Expr)]
    if not arrays:
        raise ValueError("map_blocks: needs at least one lazy array argument")
    if meta is not None and dtype is None:
        dtype = getattr(meta, "dtype", None)
    plain = chunks is None and drop_axis is None and new_axis is None and not kwargs
    if plain and not enforce_ndim:
        fused = _elementwise(func, ops, dtype)
        if fused is not None:
            return wrap(fused)
    if dtype is None:
        dtype = infer_dtype(func, ops, kwargs, "map_blocks")
    drop = _as_list(drop_axis)
    new = _as_list(new_axis)
    out_ind: list[int] = list(range(max(a.ndim for a in arrays)))[::-1]
    if drop:
        n_out = len(out_ind)
        if any(i < -n_out or i >= n_out for i in drop):
            raise ValueError(f"drop_axis out of range (drop_axis={drop}, but output is {n_out}d).")
        drop = [i % n_out for i in drop]
        out_ind = [x for i, x in enumerate(out_ind) if i not in drop]
    if not new and chunks is not None and len(out_ind) < len(chunks):
        new = list(range(len(chunks) - len(out_ind)))
    new_axes: dict[int, Any] = {}
    if new:
        n_out = len(out_ind) + len(new)
        if any(i < -n_out or i >= n_out for i in new):
            raise ValueError(f"new_axis out of range (new_axis={new}, but output is {n_out}d).")
        new = [i % n_out for i in new]
        for ax in sorted(new):
            label = len(out_ind) + len(drop)
            label = max([*out_ind, *new_axes, -1]) + 1 if label in out_ind else label
            out_ind.insert(ax, label)
            new_axes[label] = chunks[ax] if chunks is not None else 1
    adjust = None
    if chunks is not None:
        if len(chunks) != len(out_ind):
            raise ValueError(
                f"Provided chunks have {len(chunks)} dims; expected {len(out_ind)} dims"
            )
        adjust = {lab: c for lab, c in zip(out_ind, chunks) if lab not in new_axes}
    pairs = [(a, tuple(range(a.ndim))[::-1]) if isinstance(a, Expr) else (a, None) for a in ops]
    expr = blockwise_op(
        user_func(func),
        out_ind,
        pairs,
        dtype,
        kwargs=kwargs,
        new_axes=new_axes,
        adjust_chunks=adjust,
        concatenate=True,
        op="map_blocks",
    )
    return wrap(expr)


def _elementwise(func: Any, ops: list[Any], dtype: Any) -> Expr | None:
    """``func(*ops)`` as an elementwise op when it is one (a NumPy ufunc lazyarr knows,
    a Numba ufunc, an ``@njit`` scalar function); else None."""
    if any(not isinstance(a, Expr) and not _scalar(a) for a in ops):
        return None
    name = getattr(func, "__name__", None)
    if isinstance(func, np.ufunc) and name is not None and ELEMENTWISE_FUNCS.get(name) is func:
        if func.nin != len(ops):
            return None
        e = elementwise(name, *ops)
        return e if dtype is None or np.dtype(dtype) == e.dtype else None
    uf = user_func(func)
    if uf.kind is None or accepts(func, "block_id") or accepts(func, "block_info"):
        return None
    return user_elementwise(uf, *ops, dtype=dtype)


def _scalar(a: Any) -> bool:
    return isinstance(a, (bool, int, float, complex, np.generic))


# ----------------------------------------------------------------- blockwise


def blockwise(
    func: Callable[..., Any],
    out_ind: Any,
    *args: Any,
    name: str | None = None,
    token: str | None = None,
    dtype: Any = None,
    adjust_chunks: dict | None = None,
    new_axes: dict | None = None,
    align_arrays: bool = True,
    concatenate: bool | None = None,
    meta: Any = None,
    **kwargs: Any,
) -> LazyArray:
    """``func`` over blocks aligned by index labels (``dask.array.blockwise``).

    ``args`` alternate arrays and their index (a string like ``"ij"`` or a
    tuple of labels; None for a constant argument). Labels in ``out_ind``
    pick blocks; labels only in the inputs are contracted: with
    ``concatenate=True`` the function sees them whole, else as lists of
    blocks. ``new_axes`` gives labels only the output has ({label: length});
    ``adjust_chunks`` changes an output label's chunks.
    """
    check_callable(func, "blockwise")
    _no_lazy_kwargs(kwargs, "blockwise")
    if len(args) % 2:
        raise ValueError("blockwise: arguments must come in (array, index) pairs")
    labels: dict[Any, int] = {}

    def ids(ind: Any) -> tuple[int, ...] | None:
        if ind is None:
            return None
        return tuple(labels.setdefault(s, len(labels)) for s in ind)

    out_ids = ids(out_ind) or ()
    pairs = []
    whole = []
    for a, ind in zip(args[::2], args[1::2]):
        if ind is None and (isinstance(a, LazyArray) or is_dask_array(a)):  # whole, as in dask
            e = as_expr(a)
            whole.append(len(pairs))
            pairs.append((e, ids([object() for _ in range(e.ndim)])))
        elif ind is None:
            pairs.append((_operand(a), None))
        else:
            pairs.append((as_expr(a), ids(ind)))
    new = {labels.setdefault(k, len(labels)): v for k, v in (new_axes or {}).items()}
    adjust = {labels[k]: v for k, v in (adjust_chunks or {}).items() if k in labels}
    if meta is not None and dtype is None:
        dtype = getattr(meta, "dtype", None)
    if dtype is None:
        dtype = infer_dtype(func, [a for a, _ in pairs], kwargs, "blockwise")
    expr = blockwise_op(
        user_func(func),
        out_ids,
        pairs,
        dtype,
        kwargs=kwargs,
        new_axes=new,
        adjust_chunks=adjust,
        concatenate=bool(concatenate),
        whole=whole,
    )
    return wrap(expr)


# ----------------------------------------------------------------- map_overlap


@serve("map_overlap")
def map_overlap(
    func: Callable[..., Any],
    *args: Any,
    depth: Any = None,
    boundary: Any = None,
    trim: bool = True,
    align_arrays: bool = True,
    allow_rechunk: bool = True,
    **kwargs: Any,
) -> LazyArray:
    """``func`` per block, each block widened by ``depth`` elements of its neighbours
    (``dask.array.map_overlap``).

    ``boundary`` fills the halo beyond the array's edges: ``"reflect"``,
    ``"periodic"``, ``"nearest"``, ``"none"`` (the default: no halo there)
    or a constant; ``depth`` and ``boundary`` may be given per axis (tuple
    or dict) and, for several arrays, as a list with one spec per array.
    With ``trim=True`` the halo is cut off ``func``'s result; with
    ``trim=False`` ``func`` returns blocks of the output's chunks itself
    (the input's, or ``chunks=``). A block reads its neighbours' edges
    directly (a block rule): no overlapped copy of the array is made.
    """
    check_callable(func, "map_overlap")
    _no_lazy_kwargs(kwargs, "map_overlap")
    if not args or not all(isinstance(a, LazyArray) for a in args):
        raise TypeError(
            f"All variadic arguments must be arrays, not {[type(a).__name__ for a in args]}\n"
            "Usage:   la.map_overlap(function, x)\n"
            "   or:   la.map_overlap(function, x, y, z)"
        )
    xs = [as_expr(a) for a in args]
    dtype = kwargs.pop("dtype", None)
    meta = kwargs.pop("meta", None)
    chunks = kwargs.pop("chunks", None)
    for unsupported in ("drop_axis", "new_axis"):
        if kwargs.pop(unsupported, None) is not None:
            raise NotImplementedError(f"map_overlap: {unsupported}= is not supported")
    depths = depth if isinstance(depth, list) else [depth] * len(xs)
    bounds = boundary if isinstance(boundary, list) else [boundary] * len(xs)
    if len(depths) != len(xs) or len(bounds) != len(xs):
        raise ValueError(
            f"map_overlap: {len(xs)} arrays, {len(depths)} depths and {len(bounds)} boundaries"
        )
    if all(d == (0, 0) for x, dp in zip(xs, depths) for d in normalize_depth(dp, x.ndim)):
        return map_blocks(func, *args, dtype=dtype, meta=meta, chunks=chunks, **kwargs)
    if meta is not None and dtype is None:
        dtype = getattr(meta, "dtype", None)
    if dtype is None:
        dtype = infer_dtype(func, xs, kwargs, "map_overlap")
    expr = overlap_op(
        user_func(func),
        xs,
        depths,
        bounds,
        trim,
        dtype,
        kwargs,
        allow_rechunk=allow_rechunk,
        chunks=chunks,
    )
    return wrap(expr)
