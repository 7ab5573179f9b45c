"""``topk`` and ``argtopk`` (dask.array's API): the ``k`` largest or smallest along an axis.

A tree reduction of per-block top-k (``lazyarr.graph.ops.topk``): each
block sends only its own ``|k|`` best entries on, so the axis may be long
and chunked. ``k > 0`` gives the ``k`` largest, descending; ``k < 0`` the
``|k|`` smallest, ascending; the result's axis has length ``|k|`` in one
block. NaN ranks above every number (as in ``np.sort``); equal values come
in increasing index order, so ``argtopk`` is deterministic and
``take_along_axis(x, argtopk(x, k), axis)`` equals ``topk(x, k)``.
"""

from __future__ import annotations

from typing import Any

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.ops.topk import topk as _topk

__all__ = ["argtopk", "topk"]


def topk(a: Any, k: int, axis: int = -1, split_every: int | None = None) -> LazyArray:
    """The ``k`` largest entries along ``axis``, descending (``k < 0``: smallest, ascending).

    ``split_every`` is accepted for dask's signature; the fan-in of the
    combine tree is the ``place`` pass's choice.
    """
    return wrap(_topk(as_expr(a), k, axis, arg=False))


def argtopk(a: Any, k: int, axis: int = -1, split_every: int | None = None) -> LazyArray:
    """Indices along ``axis`` of :func:`topk`'s entries (ties: increasing index)."""
    return wrap(_topk(as_expr(a), k, axis, arg=True))
