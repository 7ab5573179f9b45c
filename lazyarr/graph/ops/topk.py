"""Top-k along one axis as a tree reduction: ``topk`` and ``argtopk`` (dask's API).

:class:`TopK` is a reduction whose reduced axis keeps ``|k|`` entries
instead of one: each body block's partial state is its own top ``|k|``
(values, and global indices for ``argtopk``), two states combine into the
top ``|k|`` of both, and finalize orders them. So only ``|k|`` entries per
block and per line travel, however long the axis; the executors run it as
any other reduction (partial, combine, finalize; see ``optimize/lower.py``).

Semantics (those of a NumPy sort, which the reference kernels reproduce):

* ``k > 0``: the ``k`` largest, in descending order; ``k < 0``: the ``|k|``
  smallest, ascending. The result's axis has length ``|k|`` in one block;
  ``|k|`` may not exceed the axis length and ``k`` may not be 0.
* NaN counts as larger than every number (as ``np.sort`` places it last):
  NaNs come first in ``topk`` with ``k > 0`` and last (if reached) with
  ``k < 0``.
* Ties: equal values are ordered by increasing index, for both signs of
  ``k`` (the order of a stable sort of the line by ``k``'s direction), so
  ``argtopk`` is deterministic for every chunking and ``x[argtopk]``
  equals ``topk``.
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np

from lazyarr.graph.expr import Expr, ReduceOp
from lazyarr.graph.ops._common import normalize_axis

__all__ = ["TopK", "topk"]


@dataclasses.dataclass(frozen=True)
class TopK(ReduceOp):
    """The ``|k|`` largest (``k > 0``) or smallest (``k < 0``) along ``axes[0]``.

    ``arg``: the indices along the axis instead of the values. The reduced
    axis is kept (``keepdims``) with length ``|k|``, one block.
    """

    name = "topk"
    k: int = 1
    arg: bool = False
    axes: tuple[int, ...] = (0,)
    keepdims: bool = True

    def label(self) -> str:
        return f"{'argtopk' if self.arg else 'topk'}({self.k})"

    @property
    def axis(self) -> int:
        return self.axes[0]

    def state_itemsize(self, body: Expr, out: Expr) -> int:
        """Bytes per kept line of one partial state (an estimate for the planners)."""
        return abs(self.k) * (body.dtype.itemsize + (8 if self.arg else 0))


def topk(x: Expr, k: int, axis: int = -1, arg: bool = False) -> Expr:
    """Build ``topk`` (``arg=False``) or ``argtopk`` of ``x`` along ``axis``."""
    name = "argtopk" if arg else "topk"
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{name}: k must be an integer, not {type(k).__name__}") from None
    if x.ndim == 0:
        raise ValueError(f"{name}: a 0-d array has no axis to select along")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{name}: only boolean, integer and real float arrays (got {x.dtype})")
    ax = normalize_axis(axis, x.ndim, name)
    n = x.shape[ax]
    if k == 0 or abs(k) > n:
        raise ValueError(
            f"{name}: k must be non-zero with |k| <= the axis length (k={k}, axis {ax} "
            f"has length {n})"
        )
    shape = (*x.shape[:ax], abs(k), *x.shape[ax + 1 :])
    chunks = (*x.chunks[:ax], (abs(k),), *x.chunks[ax + 1 :])
    dtype = np.dtype(np.intp) if arg else x.dtype
    return Expr(TopK(k=k, arg=bool(arg), axes=(ax,)), (x,), shape, dtype, chunks)
