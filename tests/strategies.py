"""Reusable hypothesis strategies for lazyarr tests.

Shapes, explicit (uneven) chunkings, dtypes and arrays with special values,
plus :func:`elementwise_trees`, which builds the same random expression on
lazyarr and on NumPy side by side so a test can compare the two results.
Import from tests as ``from strategies import ...`` (pytest puts ``tests/``
on the path).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la

__all__ = [
    "ALL_DTYPES",
    "arrays",
    "axes_for",
    "broadcastable_shapes",
    "chunks_for_shape",
    "dtypes",
    "elementwise_trees",
    "lazy_arrays",
    "shapes",
]

ALL_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(d)
    for d in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
)


def shapes(
    min_dims: int = 0, max_dims: int = 3, max_side: int = 6, min_side: int = 0
) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, including 0-d and (with ``min_side=0``) empty ones."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def _axis_chunks(n: int) -> st.SearchStrategy[tuple[int, ...]]:
    if n == 0:
        return st.just((0,))
    cuts = st.sets(st.integers(1, n - 1), max_size=n - 1) if n > 1 else st.just(set())

    def split(points: set[int]) -> tuple[int, ...]:
        bounds = [0, *sorted(points), n]
        return tuple(b - a for a, b in itertools.pairwise(bounds))

    return st.one_of(
        st.just((n,)),  # a single block
        st.just((1,) * n),  # blocks of length one
        cuts.map(split),  # uneven blocks
    )


@st.composite
def sizes_with_empty_blocks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    """Chunks for an axis of length ``n``: blocks of any size, empty ones included
    (between blocks and at either end), for ops whose results keep their blocks."""
    out, left = [], n
    while left > 0:
        k = draw(st.integers(0, left))
        out.append(k)
        left -= k
    if draw(st.booleans()):
        out.insert(draw(st.integers(0, len(out))), 0)
    return tuple(out) or (0,)


@st.composite
def chunks_for_shape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Explicit chunks for ``shape``: per axis one block, size-1 blocks, or uneven blocks."""
    return tuple(draw(_axis_chunks(n)) for n in shape)


def dtypes(kinds: str = "biufc") -> st.SearchStrategy[np.dtype]:
    """The Array API dtypes whose ``kind`` is in ``kinds`` (b, i, u, f, c)."""
    return st.sampled_from([d for d in ALL_DTYPES if d.kind in kinds])


def _elements(dtype: np.dtype, special: bool) -> st.SearchStrategy[Any] | None:
    if dtype.kind == "f":
        return st.floats(
            width=dtype.itemsize * 8,
            allow_nan=special,
            allow_infinity=special,
            allow_subnormal=False,
        )
    if dtype.kind == "c":
        return st.complex_numbers(
            width=dtype.itemsize * 8,
            allow_nan=special,
            allow_infinity=special,
            allow_subnormal=False,
        )
    return None  # hypothesis' default: the whole range of the dtype


def arrays(
    dtype: Any,
    shape: Any,
    *,
    special: bool = True,
    elements: st.SearchStrategy[Any] | None = None,
) -> st.SearchStrategy[np.ndarray]:
    """NumPy arrays of ``dtype`` and ``shape`` (a shape or a strategy of shapes).

    Floating arrays include NaN and +-inf unless ``special=False``.
    """
    dtype = np.dtype(dtype)
    if elements is None:
        elements = _elements(dtype, special)
    return hnp.arrays(dtype, shape, elements=elements)


def broadcastable_shapes(
    shape: tuple[int, ...], min_dims: int = 0, max_dims: int | None = None
) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes that broadcast against ``shape`` to exactly ``shape``."""
    max_dims = len(shape) if max_dims is None else max_dims
    min_dims = min(min_dims, max_dims)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[int, ...]:
        nd = draw(st.integers(min_dims, max_dims))
        tail = shape[len(shape) - nd :] if nd else ()
        return tuple(n if draw(st.booleans()) else 1 for n in tail)

    return build()


def axes_for(ndim: int) -> st.SearchStrategy[Any]:
    """``axis`` arguments for a reduction: None, an int (maybe negative) or a tuple."""
    if ndim == 0:
        return st.just(None)
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)
    return st.one_of(st.none(), single, several)


@st.composite
def lazy_arrays(
    draw: st.DrawFn,
    dtype: Any = None,
    shape: Any = None,
    *,
    special: bool = True,
    elements: st.SearchStrategy[Any] | None = None,
) -> tuple[la.LazyArray, np.ndarray]:
    """(lazy array with random explicit chunks, the NumPy array it wraps)."""
    dtype = draw(dtypes()) if dtype is None else np.dtype(dtype)
    shape = draw(shapes()) if shape is None else shape
    a = draw(arrays(dtype, shape, special=special, elements=elements))
    chunks = draw(chunks_for_shape(a.shape))
    return la.asarray(a, chunks=chunks), a


# -- random expression trees ----------------------------------------------------

Pair = tuple[Any, Any]  # (lazy value, NumPy value), built in parallel

# name -> (lazyarr function, NumPy function)
_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "negative": (operator.neg, operator.neg),
    "absolute": (abs, abs),
    "sin": (la.sin, np.sin),
    "sqrt_abs": (lambda x: la.sqrt(la.abs(x)), lambda x: np.sqrt(np.abs(x))),
    "tanh": (la.tanh, np.tanh),
}
_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (operator.add, operator.add),
    "subtract": (operator.sub, operator.sub),
    "multiply": (operator.mul, operator.mul),
    "true_divide": (operator.truediv, operator.truediv),
    "maximum": (la.maximum, np.maximum),
    "minimum": (la.minimum, np.minimum),
    "hypot": (la.hypot, np.hypot),
    "where_greater": (
        lambda x, y: la.where(x > y, x, y),
        lambda x, y: np.where(x > y, x, y),
    ),
}
_NEEDS_ARRAYS = ("maximum", "minimum", "hypot", "where_greater")
_REDUCTIONS = ("sum", "mean", "max", "min", "std", "prod", "any")
_CONSTANTS = (0.5, 2, -3, 1.25)


@st.composite
def elementwise_trees(
    draw: st.DrawFn,
    max_depth: int = 3,
    max_inputs: int = 3,
    reduction: bool | None = None,
    dtype: Any = None,
) -> Pair:
    """A random small expression and its NumPy twin: ``(lazy_result, numpy_result)``.

    1 to ``max_inputs`` lazy inputs of shapes that broadcast together (with
    random uneven chunks), combined by unary and binary elementwise ops and
    weak Python scalars, then optionally (``reduction=None``: at random)
    reduced over a random axis. Inputs are finite float64 (or, without a
    reduction, float32) values in [-10, 10]; NaN and inf may still appear
    (0/0, x/0), and both sides produce them alike.
    """
    do_reduce = draw(st.booleans()) if reduction is None else reduction
    if dtype is not None:
        dt = np.dtype(dtype)
    else:
        dt = np.dtype("float64" if do_reduce else draw(st.sampled_from(["float64", "float32"])))
    out_shape = draw(shapes(0, 3, 5))
    n_inputs = draw(st.integers(1, max_inputs))
    elems = st.floats(-10, 10, width=dt.itemsize * 8, allow_subnormal=False)
    leaves: list[Pair] = []
    for i in range(n_inputs):
        shape = out_shape if i == 0 else draw(broadcastable_shapes(out_shape))
        a = draw(arrays(dt, shape, elements=elems))
        leaves.append((la.asarray(a, chunks=draw(chunks_for_shape(a.shape))), a))

    def node(depth: int) -> Pair:
        kind = draw(st.sampled_from(["leaf", "unary", "binary"])) if depth < max_depth else "leaf"
        if kind == "leaf":
            if draw(st.integers(0, 4)) == 0:
                c = draw(st.sampled_from(_CONSTANTS))
                return (c, c)
            return draw(st.sampled_from(leaves))
        if kind == "unary":
            lf, nf = _UNARY[draw(st.sampled_from(sorted(_UNARY)))]
            x = node(depth + 1)
            if not _is_array(x):
                x = draw(st.sampled_from(leaves))
            return (lf(x[0]), nf(x[1]))
        name = draw(st.sampled_from(sorted(_BINARY)))
        lf, nf = _BINARY[name]
        x, y = node(depth + 1), node(depth + 1)
        if name in _NEEDS_ARRAYS or not (_is_array(x) or _is_array(y)):
            x = x if _is_array(x) else leaves[0]
            y = y if _is_array(y) or name not in _NEEDS_ARRAYS else leaves[-1]
        return (lf(x[0], y[0]), nf(x[1], y[1]))

    with np.errstate(all="ignore"):
        lazy, expected = node(0)
        if not _is_array((lazy, expected)):
            lazy, expected = leaves[0][0] + lazy, leaves[0][1] + expected
        if do_reduce:
            func = draw(st.sampled_from(_REDUCTIONS))
            ndim = np.ndim(expected)
            axis = draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None
            empty = np.size(expected) == 0 if axis is None else np.shape(expected)[axis] == 0
            if func in ("max", "min") and empty:
                func = "sum"
            lazy = getattr(la, func)(lazy, axis=axis)
            expected = getattr(np, func)(expected, axis=axis)
    return lazy, np.asarray(expected)


def _is_array(pair: Pair) -> bool:
    return isinstance(pair[0], la.LazyArray)
