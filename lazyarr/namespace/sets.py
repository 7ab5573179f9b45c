"""Set functions: ``unique_*`` (Array API), ``unique`` (NumPy) and ``isin``.

The ``unique`` family has data-dependent result shapes: each function
computes its input *when called* and returns lazy arrays over NumPy's
results (the same named tuples as NumPy's, holding lazy arrays).
``isin`` stays lazy: blocks follow ``element`` and each reads all of
``test_elements``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops import sorting as _sorting
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import asarray
from lazyarr.namespace.searching import computed

__all__ = ["isin", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


def _lazy_tuple(result: Any) -> Any:
    """NumPy's (named) tuple of results with each array made lazy."""
    items = [asarray(r) for r in result]
    return type(result)(*items) if hasattr(result, "_fields") else tuple(items)


@implements("unique_values")
def unique_values(x: Any, /) -> LazyArray:
    """The sorted unique values of ``x`` (flattened).

    Computes ``x`` when called (the result length depends on the data).
    """
    as_expr(x)
    return asarray(np.unique_values(computed(x)))


@implements("unique_counts")
def unique_counts(x: Any, /) -> Any:
    """``(values, counts)`` of the unique values of ``x``.

    Computes ``x`` when called (the result length depends on the data).
    """
    as_expr(x)
    return _lazy_tuple(np.unique_counts(computed(x)))


@implements("unique_inverse")
def unique_inverse(x: Any, /) -> Any:
    """``(values, inverse_indices)``; ``values[inverse_indices]`` rebuilds ``x``.

    Computes ``x`` when called (the result length depends on the data).
    """
    as_expr(x)
    return _lazy_tuple(np.unique_inverse(computed(x)))


@implements("unique_all")
def unique_all(x: Any, /) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique values of ``x``.

    Computes ``x`` when called (the result length depends on the data).
    """
    as_expr(x)
    return _lazy_tuple(np.unique_all(computed(x)))


@implements("unique")
def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    **kwargs: Any,
) -> Any:
    """NumPy's ``unique`` with its ``return_*`` flags, ``axis`` and ``equal_nan``.

    Computes ``ar`` when called (the result shape depends on the data) and
    returns lazy arrays over NumPy's results.
    """
    e = as_expr(ar)
    unknown = set(kwargs) - {"equal_nan", "sorted"}
    if unknown:
        raise TypeError(f"unique() got unexpected keyword arguments {sorted(unknown)}")
    if axis is not None:
        normalize_axis(axis, e.ndim, "unique")
    result = np.unique(
        computed(ar),
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
        **kwargs,
    )
    return _lazy_tuple(result) if isinstance(result, tuple) else asarray(result)


@implements("isin")
def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: str | None = None,
) -> LazyArray:
    """Whether each element of ``element`` is in ``test_elements`` (lazy, shape of ``element``)."""
    return wrap(
        _sorting.isin(as_expr(element), as_expr(test_elements), assume_unique, invert, kind)
    )
