"""NumPy's functions that read only an array's shape and dtype, answered without computing.

Libraries ask ``np.shape(x)``, ``np.ndim(x)`` or ``np.result_type(x, y)``
of every array they are handed (scikit-learn's input checks, xarray). Left
to the NumPy fallback (``lazyarr/_fallback.py``) each would compute the
whole array to read a fact the expression already knows; registered here
they answer from the expression, and NumPy's results for other inputs are
unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray
from lazyarr.namespace._register import implements

__all__ = ["iscomplexobj", "isrealobj", "ndim", "shape", "size"]


@implements("shape")
def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (a lazy array's without computing it)."""
    return a.shape if isinstance(a, LazyArray) else np.shape(a)


@implements("ndim")
def ndim(a: Any) -> int:
    """The number of dimensions of ``a``."""
    return a.ndim if isinstance(a, LazyArray) else np.ndim(a)


@implements("size")
def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis``, if given)."""
    if not isinstance(a, LazyArray):
        return np.size(a, axis)
    return a.size if axis is None else a.shape[axis]


@implements("iscomplexobj")
def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (whatever its values)."""
    if isinstance(x, LazyArray):
        return issubclass(x.dtype.type, np.complexfloating)
    return np.iscomplexobj(x)


@implements("isrealobj")
def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a dtype that is not complex (whatever its values)."""
    return not iscomplexobj(x)
