"""Sorting: ``sort`` and ``argsort`` (Array API keywords plus NumPy's ``kind``).

An axis of several blocks is sorted by a distributed sample sort whose
result keeps the input's blocks (``lazyarr.graph.ops.samplesort``; argsort
only when stable; not complex values). Otherwise a sort needs whole lines, so the result is one
block along the sorted axis (see ``lazyarr.graph.ops.sorting``).
``lazyarr.sort``/``argsort`` default to
a stable sort, as the Array API asks; ``numpy.sort(lazy)`` and
``numpy.argsort(lazy)`` keep NumPy's defaults (``kind=None``), so ties come
out exactly as NumPy orders them.
"""

from __future__ import annotations

from typing import Any

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops import sorting as _sorting
from lazyarr.graph.ops.manipulation import reshape as _reshape
from lazyarr.namespace._register import implements

__all__ = ["argsort", "sort"]


def _kind(name: str, kind: str | None, stable: bool | None, default_stable: bool) -> str | None:
    if kind is not None and stable is not None:
        raise ValueError(
            f"{name}: `kind` and `stable` parameters can't be provided at the same time"
        )
    if stable is None and kind is None:
        stable = default_stable
    if stable is not None:
        return "stable" if stable else None
    return kind


def _build(
    name: str, x: Any, axis: Any, kind: str | None, order: Any, descending: bool
) -> LazyArray:
    if order is not None:
        raise ValueError(f"{name}: Cannot specify order when the array has no fields.")
    e = as_expr(x)
    arg = name == "argsort"
    if axis is None or (arg and e.ndim == 0):
        # NumPy: axis=None sorts the flattened array; argsort treats 0-d as 1-d
        if e.ndim != 1:
            e = _reshape(e, (e.size,))
        axis = -1 if axis is None else axis
    return wrap(_sorting.sort(e, axis, descending, kind, arg))


@implements("sort")
def _numpy_sort(
    a: Any,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    stable: bool | None = None,
) -> LazyArray:
    """``numpy.sort`` of a lazy array, with NumPy's defaults."""
    return _build("sort", a, axis, _kind("sort", kind, stable, False), order, False)


@implements("argsort")
def _numpy_argsort(
    a: Any,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    stable: bool | None = None,
) -> LazyArray:
    """``numpy.argsort`` of a lazy array, with NumPy's defaults."""
    return _build("argsort", a, axis, _kind("argsort", kind, stable, False), order, False)


def sort(
    x: Any,
    /,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    descending: bool = False,
    stable: bool | None = None,
) -> LazyArray:
    """``x`` sorted along ``axis`` (flattened when None); NaNs last (first if descending).

    Stable unless ``stable=False`` or a NumPy ``kind`` says otherwise.
    """
    return _build("sort", x, axis, _kind("sort", kind, stable, True), order, descending)


def argsort(
    x: Any,
    /,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    descending: bool = False,
    stable: bool | None = None,
) -> LazyArray:
    """Indices that sort ``x`` along ``axis`` (of the flattened array when None).

    Stable by default: equal elements keep their input order, also when
    ``descending``.
    """
    return _build("argsort", x, axis, _kind("argsort", kind, stable, True), order, descending)
