"""``array_equal`` and ``array_equiv``: lazy 0-d booleans (``bool()`` computes them).

NumPy returns Python bools; a lazy result lets the comparison join the plan.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import asarray
from lazyarr.namespace.reductions import all as all_

__all__ = ["array_equal", "array_equiv"]


@implements("array_equal")
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> LazyArray:
    """Whether both arrays have the same shape and elements (a lazy 0-d bool).

    NumPy returns a Python ``bool``; ``bool(result)`` computes this one.
    Different shapes give a constant ``False`` without computing anything.
    """
    x1, x2 = lazy(a1), lazy(a2)
    if x1.shape != x2.shape:
        return asarray(False)
    if not equal_nan or (x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc"):
        return all_(x1 == x2)
    n1, n2 = np.isnan(x1), np.isnan(x2)
    return all_((n1 == n2) & (n1 | (x1 == x2)))


@implements("array_equiv")
def array_equiv(a1: Any, a2: Any) -> LazyArray:
    """Whether the arrays are equal after broadcasting (a lazy 0-d bool, see ``array_equal``)."""
    x1, x2 = lazy(a1), lazy(a2)
    try:
        np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        return asarray(False)
    return all_(x1 == x2)
