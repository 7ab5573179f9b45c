"""Small helpers shared by the op builders: axes, broadcasting, dtype probes."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from lazyarr.graph.expr import Expr

__all__ = [
    "broadcast_shape",
    "is_scalar",
    "normalize_axis",
    "normalize_axes",
    "normalize_shape",
    "probe",
]

SCALAR_TYPES = (bool, int, float, complex)


def is_scalar(value: Any) -> bool:
    """A Python scalar: kept weakly typed (NEP 50) inside op templates."""
    return isinstance(value, SCALAR_TYPES)


def normalize_axes(axis: int | Sequence[int] | None, ndim: int, op: str) -> tuple[int, ...]:
    """Axes as sorted non-negative ints; NumPy's ``AxisError`` when out of range."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes = normalize_axis_tuple(axis, ndim, argname="axis")
    except np.exceptions.AxisError as e:
        raise np.exceptions.AxisError(f"{op}: {e}") from None
    return tuple(sorted(axes))


def normalize_axis(axis: int, ndim: int, op: str) -> int:
    """One axis as a non-negative int; NumPy's ``AxisError`` when out of range."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an integer, not {type(axis).__name__}")
    try:
        return normalize_axis_index(int(axis), ndim)
    except np.exceptions.AxisError as e:
        raise np.exceptions.AxisError(f"{op}: {e}") from None


def normalize_shape(shape: Any, op: str) -> tuple[int, ...]:
    """A shape argument (one int or a sequence of ints) as a tuple of ints.

    The one place user shapes are checked, so that every creation function and
    ``la.random`` refuse what NumPy refuses (``la.zeros(2.0)``, ``(10.5, 3)``)
    with NumPy's exception types and messages, prefixed by the op, instead of
    truncating floats.
    """
    if isinstance(shape, (bool, np.bool_)):
        raise TypeError(
            f"{op}: expected a sequence of integers or a single integer, got '{shape!r}'"
        )
    try:
        dims: tuple[int, ...] = (operator.index(shape),)
    except TypeError:
        try:
            items = tuple(shape)
        except TypeError:
            raise TypeError(
                f"{op}: expected a sequence of integers or a single integer, got '{shape!r}'"
            ) from None
        if any(isinstance(s, (bool, np.bool_)) for s in items):
            raise TypeError(f"{op}: an integer is required") from None
        try:
            dims = tuple(operator.index(s) for s in items)
        except TypeError as e:
            raise TypeError(f"{op}: {e}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{op}: negative dimensions are not allowed: {dims}")
    return dims


def broadcast_shape(op: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy broadcasting of ``shapes``; ``ValueError`` naming the op and shapes."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"{op}: operands could not be broadcast together with shapes {text}"
        ) from None


def probe(func: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> np.dtype:
    """Result dtype of ``func`` by running it on empty arrays of the input dtypes.

    This reuses NumPy's own promotion (NEP 50: Python scalars stay weak) and
    raises NumPy's own exception types for invalid combinations.
    """
    dummies = [np.empty((0,), dtype=a.dtype) if isinstance(a, Expr) else a for a in args]
    with np.errstate(all="ignore"):
        out = func(*dummies, **(kwargs or {}))
    if isinstance(out, tuple):
        raise TypeError("multi-output functions are not elementwise ops")
    return np.asarray(out).dtype
