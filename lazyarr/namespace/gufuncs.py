"""Generalized ufuncs over lazy arrays, with dask's signatures: ``apply_gufunc`` and
``apply_along_axis``.

Both are :func:`~lazyarr.namespace.userfuncs.blockwise` calls: the core
dimensions of a signature (or the axis of ``apply_along_axis``) are one
block each, so every call sees them whole, and the loop dimensions keep
their blocks and broadcast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import manipulation as manip
from lazyarr.graph.ops import rechunk
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.userfunc import blockwise as blockwise_op
from lazyarr.graph.ops.userfunc import user_func
from lazyarr.io.readers import is_dask_array
from lazyarr.namespace._register import implements
from lazyarr.namespace.userfuncs import blockwise, check_callable, infer_dtype

__all__ = ["apply_along_axis", "apply_gufunc"]


_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def parse_signature(signature: str) -> tuple[list[tuple[str, ...]], Any]:
    """Core dimensions of a gufunc signature: per input, and per output (a list when the
    outputs are several or written in parentheses, else one tuple)."""
    text = re.sub(r"\s+", "", signature)
    if not re.match(_SIGNATURE, text):
        raise ValueError(f"Not a valid gufunc signature: {signature}")
    ins, outs = text.split("->")
    parse = [tuple(re.findall(_DIMS, a)) for a in re.findall(_ARG, ins)]
    out = [tuple(re.findall(_DIMS, a)) for a in re.findall(_ARG, outs)]
    return parse, out[0] if len(out) == 1 else out


def apply_gufunc(
    func: Callable[..., Any],
    signature: str,
    *args: Any,
    axes: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    output_dtypes: Any = None,
    output_sizes: dict | None = None,
    vectorize: bool | None = None,
    allow_rechunk: bool = False,
    meta: Any = None,
    **kwargs: Any,
) -> Any:
    """``func`` with a gufunc ``signature`` applied over the loop dimensions of ``args``
    (``dask.array.apply_gufunc``).

    Core dimensions must each be one block (``ValueError`` otherwise, unless
    ``allow_rechunk``); loop dimensions broadcast and keep their blocks.
    ``output_sizes`` gives core dimensions only outputs have. With
    ``vectorize=True`` ``func`` is wrapped in ``numpy.vectorize``. Several
    outputs come back as a tuple.
    """
    check_callable(func, "apply_gufunc")
    core_in, core_out = parse_signature(signature)
    single = not isinstance(core_out, list)
    outs = [core_out] if single else core_out
    if len(core_in) != len(args):
        raise ValueError(
            f"According to `signature`, `func` requires {len(core_in)} arguments, but "
            f"{len(args)} given"
        )
    in_axes, out_axes = _gufunc_axes(axes, axis, keepdims, core_in, outs)
    args = tuple(
        wrap(manip.moveaxis(e, _axes_of(e, ax), tuple(range(-len(ax), 0))))
        for e, ax in ((as_expr(a), ax) for a, ax in zip(args, in_axes))
    )
    if vectorize:
        otypes = None
        if output_dtypes is not None:
            dts = (
                [output_dtypes]
                if single and not isinstance(output_dtypes, (list, tuple))
                else (output_dtypes)
            )
            otypes = [np.dtype(d) for d in dts]
        func = np.vectorize(func, signature=signature, otypes=otypes)
    exprs = [as_expr(a) for a in args]
    sizes: dict[str, int] = dict(output_sizes or {})
    loop_nd = 0
    for e, core in zip(exprs, core_in):
        if e.ndim < len(core):
            raise ValueError(
                f"Too few dimensions of array for core dimensions {core}: shape {e.shape}"
            )
        loop_nd = max(loop_nd, e.ndim - len(core))
        for dim, n in zip(core, e.shape[e.ndim - len(core) :]):
            if sizes.get(dim, n) != n:
                raise ValueError(f"Dimension `'{dim}'` with different lengths in arrays")
            sizes[dim] = n
    # core dims one block each
    for i, (e, core) in enumerate(zip(exprs, core_in)):
        first = e.ndim - len(core)
        for ax in range(first, e.ndim):
            if len(e.chunks[ax]) > 1:
                if not allow_rechunk:
                    raise ValueError(
                        f"Core dimension `'{core[ax - first]}'` consists of multiple chunks. "
                        "To fix, rechunk into a single chunk along this dimension or set "
                        "`allow_rechunk=True`, but beware that this may increase memory usage "
                        "significantly."
                    )
                e = rechunk(e, (*e.chunks[:ax], (e.shape[ax],), *e.chunks[ax + 1 :]))
        exprs[i] = e
    loop_labels = [f"__loop{j}" for j in range(loop_nd)]
    pairs = []
    for e, core in zip(exprs, core_in):
        nloop = e.ndim - len(core)
        pairs.append((e, (*loop_labels[loop_nd - nloop :], *core)))
    for out in outs:
        for dim in out:
            if dim not in sizes:
                raise ValueError(f"Dimension `'{dim}'` is not specified in `output_sizes`")
    if output_dtypes is None:
        if meta is not None:
            output_dtypes = [m.dtype for m in meta] if not single else meta.dtype
        else:
            got = infer_dtype(
                func, exprs, kwargs, "apply_gufunc", "output_dtypes", None if single else len(outs)
            )
            output_dtypes = got
    dts = (
        [output_dtypes]
        if single and not isinstance(output_dtypes, (list, tuple))
        else list(output_dtypes)
    )
    if len(dts) != len(outs):
        raise ValueError(f"Must specify {len(outs)} output_dtypes, got {len(dts)}: {output_dtypes}")
    results = []
    for k, (out, dt, oax) in enumerate(zip(outs, dts, out_axes)):
        out_ind = (*loop_labels, *out)
        new = {d: sizes[d] for d in out if not any(d in core for core in core_in)}
        e = _blockwise_labels(func, out_ind, pairs, dt, kwargs, new, -1 if single else k)._expr
        if keepdims:
            for _ in oax:
                e = manip.expand_dims(e, e.ndim)
        dest = _axes_of(e, oax)
        results.append(wrap(manip.moveaxis(e, tuple(range(-len(oax), 0)), dest)))
    return results[0] if single else tuple(results)


def _axes_of(e: Expr, axes: Sequence[int]) -> tuple[int, ...]:
    """``axes`` of ``e`` as non-negative ints (NumPy's ``AxisError`` when out of range)."""
    return tuple(normalize_axis(a, e.ndim, "apply_gufunc") for a in axes)


def _gufunc_axes(
    axes: Any, axis: Any, keepdims: bool, core_in: list, outs: list
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Per input and per output, the axes holding its core dimensions (NumPy's and dask's
    rules for ``axes``, ``axis`` and ``keepdims``)."""
    nin = len(core_in)
    if axes is not None and axis is not None:
        raise ValueError("Only one of `axis` or `axes` keyword arguments should be given")
    if axes is not None and not isinstance(axes, list):
        raise ValueError("`axes` has to be of type list")
    with_core = [c for c in core_in if c]
    n_out_core = sum(1 for o in outs if o)
    if keepdims:
        if n_out_core:
            raise ValueError("`keepdims` can only be used for scalar outputs")
        outs = [with_core[0] if with_core else ()] * len(outs)
    core = [*core_in, *outs]
    if axis is not None:
        if not isinstance(axis, int):
            raise ValueError("`axis` argument has to be an integer value")
        if with_core and (len(with_core[0]) != 1 or any(c != with_core[0] for c in with_core)):
            raise ValueError("`axis` can be used only, if one core dimension is present")
        axes = [(axis,) if c else () for c in core]
    if axes is None:
        axes = [tuple(range(-len(c), 0)) for c in core]
    axes = [(a,) if isinstance(a, int) else tuple(a) for a in axes]
    if (n_out_core == 0 and len(axes) not in (nin, nin + len(outs))) or (
        n_out_core > 0 and len(axes) != nin + len(outs)
    ):
        raise ValueError(
            "The number of `axes` entries is not equal the number of input and output arguments"
        )
    in_axes = axes[:nin]
    out_axes = axes[nin:] or [tuple(range(-len(o), 0)) for o in outs]
    for i, (ax, c) in enumerate(zip(in_axes, core_in)):
        if len(ax) != len(c):
            raise ValueError(
                f"The number of `axes` entries for argument #{i} is not equal the number of "
                "respective input core dimensions in signature"
            )
    if keepdims and core_in:
        if any(c != core_in[0] for c in core_in):
            raise ValueError("To use `keepdims`, all core dimensions have to be equal")
        out_axes = [in_axes[0] for _ in outs]
    else:
        for i, (ax, c) in enumerate(zip(out_axes, outs)):
            if len(ax) != len(c):
                raise ValueError(
                    f"The number of `axes` entries for argument #{i} is not equal the number "
                    "of respective output core dimensions in signature"
                )
    return in_axes, out_axes


def _blockwise_labels(
    func: Any, out_ind: tuple, pairs: list, dtype: Any, kwargs: dict, new: dict, output: int
) -> LazyArray:
    """``blockwise`` with string labels (turned into the op's integer labels)."""
    labels: dict[str, int] = {}

    def ids(ind: Sequence[str]) -> tuple[int, ...]:
        return tuple(labels.setdefault(s, len(labels)) for s in ind)

    args = [(e, ids(ind)) for e, ind in pairs]
    expr = blockwise_op(
        user_func(func),
        ids(out_ind),
        args,
        dtype,
        kwargs=kwargs,
        new_axes={labels.setdefault(d, len(labels)): n for d, n in new.items()},
        concatenate=True,
        output=output,
        op="apply_gufunc",
    )
    return wrap(expr)


# ----------------------------------------------------------------- apply_along_axis


def _is_array(a: Any) -> bool:
    return isinstance(a, LazyArray) or is_dask_array(a)


def _along_axis(
    block: np.ndarray, *args: Any, func1d: Any, func1d_axis: int, func1d_kwargs: dict
) -> np.ndarray:
    return np.apply_along_axis(func1d, func1d_axis, block, *args, **func1d_kwargs)


@implements("apply_along_axis")
def apply_along_axis(
    func1d: Callable[..., Any],
    axis: int,
    arr: Any,
    *args: Any,
    dtype: Any = None,
    shape: Any = None,
    **kwargs: Any,
) -> LazyArray:
    """``numpy.apply_along_axis`` per block (``dask.array.apply_along_axis``).

    ``axis`` is made one block; the result's shape and dtype along it come
    from calling ``func1d`` on ones of the axis' length (or from
    ``shape``/``dtype``).
    """
    x = as_expr(arr)
    ax = normalize_axis(axis, x.ndim, "apply_along_axis")
    if shape is None or dtype is None:
        test = np.ones((max(x.shape[ax], 1),), dtype=x.dtype)
        with np.errstate(all="ignore"):
            stand_ins = [np.ones(a.shape, a.dtype) if _is_array(a) else a for a in args]
            got = np.asarray(func1d(test, *stand_ins, **kwargs))
        shape = got.shape if shape is None else shape
        dtype = got.dtype if dtype is None else dtype
    shape = tuple(shape)
    x = rechunk(x, (*x.chunks[:ax], (x.shape[ax],), *x.chunks[ax + 1 :]))
    labels = tuple(range(x.ndim))
    new = {x.ndim + i: n for i, n in enumerate(shape)}
    out = (*labels[:ax], *new, *labels[ax + 1 :])
    # lazy (and Dask) arrays among ``args`` reach every call whole, as in dask
    consts = [v for a in args for v in (a, None)]
    return blockwise(
        _along_axis,
        out,
        wrap(x),
        labels,
        *consts,
        dtype=dtype,
        new_axes=new,
        concatenate=True,
        func1d=func1d,
        func1d_axis=ax,
        func1d_kwargs=kwargs,
    )
