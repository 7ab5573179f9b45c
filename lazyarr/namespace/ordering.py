"""``lexsort``, ``partition`` and ``argpartition``, composed from sorts.

``lexsort`` is repeated stable argsorts; ``partition``/``argpartition``
fully sort (which satisfies their contract).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import take
from lazyarr.namespace.creation import asarray
from lazyarr.namespace.sorting import argsort, sort

__all__ = ["argpartition", "lexsort", "partition"]


@implements("lexsort")
def lexsort(keys: Any, axis: int = -1) -> LazyArray:
    """Indices sorting by several keys, the last key primary (repeated stable argsorts)."""
    if isinstance(keys, (LazyArray, np.ndarray)):
        k = lazy(keys)
        if k.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        key_list = [take(k, i, 0) for i in range(k.shape[0])]
    else:
        key_list = [lazy(k) for k in keys]
    if not key_list:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if any(k.shape != key_list[0].shape for k in key_list):
        raise ValueError("all keys need to be the same shape")
    first = key_list[0]
    if first.ndim == 0:
        return asarray(np.intp(0))
    ax = normalize_axis(axis, first.ndim, "lexsort")
    order = argsort(first, axis=ax, stable=True)
    for key in key_list[1:]:
        keyed = wrap(ix.take_along_axis(key._expr, order._expr, ax))
        step = argsort(keyed, axis=ax, stable=True)
        order = wrap(ix.take_along_axis(order._expr, step._expr, ax))
    return order


def _kth(kth: Any, n: int) -> None:
    k = np.asarray(kth)
    if k.dtype == np.bool_:
        raise ValueError("Booleans unacceptable as partition index")
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if k.ndim > 1:
        raise ValueError("kth array must have dimension <= 1")
    for v in k.reshape(-1):
        v = int(v) + n if v < 0 else int(v)
        if not 0 <= v < n:
            raise ValueError(f"kth(={v}) out of bounds ({n})")


def _partition(a: Any, kth: Any, axis: Any, kind: str, order: Any, arg: bool) -> LazyArray:
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if kind != "introselect":
        raise ValueError(f"Unknown selection algorithm {kind!r}")
    x = lazy(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    ax = normalize_axis(axis, x.ndim, "argpartition" if arg else "partition")
    _kth(kth, x.shape[ax])
    return argsort(x, axis=ax, stable=True) if arg else sort(x, axis=ax)


@implements("partition")
def partition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> LazyArray:
    """``a`` partitioned around ``kth``: lazyarr fully sorts, which satisfies the contract.

    Elements away from the ``kth`` positions may be ordered differently
    from NumPy's (NumPy leaves their order unspecified).
    """
    return _partition(a, kth, axis, kind, order, False)


@implements("argpartition")
def argpartition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> LazyArray:
    """Indices that partition ``a`` around ``kth`` (a full stable argsort, see ``partition``)."""
    return _partition(a, kth, axis, kind, order, True)
