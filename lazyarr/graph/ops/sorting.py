"""Sorting, searching and membership ops on chunked arrays.

* :class:`Sort` - ``sort``/``argsort`` along one axis. A sort needs the whole
  axis at once, so the output is one block along that axis and each output
  block reads the whole axis of its input (the other axes keep their
  blocks). NumPy sorts every line the same way, so results are identical.
  An axis of several blocks (booleans, integers, real floats) is sorted
  by a sample sort instead (``graph/ops/samplesort.py``), which keeps the
  input's blocks; argsort only when stable (``kind`` stable or mergesort:
  NumPy's other kinds order ties their own way, which one block reproduces).
* :class:`SearchSorted` - ``searchsorted(a, v)``: blocks follow ``v``, each
  reads all of the (1-d) ``a`` and the optional ``sorter``.
* :class:`IsIn` - ``isin(element, test_elements)``: blocks follow
  ``element``, each reads all of ``test_elements``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.elementwise import elementwise
from lazyarr.graph.ops.manipulation import flip
from lazyarr.graph.ops.samplesort import samplesort, sorted_values_of

__all__ = [
    "SORT_KINDS",
    "IsIn",
    "SearchSorted",
    "Sort",
    "isin",
    "searchsorted",
    "sort",
    "sort_and_argsort",
]

SORT_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _whole(e: Expr) -> Region:
    return tuple(slice(0, n) for n in e.shape)


@dataclasses.dataclass(frozen=True)
class Sort(MapOp):
    """Sorted values (or the sorting indices when ``arg``) along ``axis``.

    ``algorithm`` is NumPy's ``kind`` ("" for NumPy's default; the field
    cannot be called ``kind``, which names the op's execution kind). Descending
    order is the reverse of the ascending sort of the reversed line, as in
    the Array API's reference: ties stay in input order when stable, NaNs
    come first.
    """

    name = "sort"
    axis: int = -1
    descending: bool = False
    algorithm: str = ""  # NumPy's sort ``kind`` ("" = NumPy's default)
    arg: bool = False

    def label(self) -> str:
        return "argsort" if self.arg else "sort"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        ax = self.axis
        return ((*out[:ax], slice(0, x.shape[ax]), *out[ax + 1 :]),)


def sort(
    x: Expr,
    axis: int = -1,
    descending: bool = False,
    kind: str | None = None,
    arg: bool = False,
) -> Expr:
    """Build ``sort``/``argsort`` of ``x`` along ``axis`` (0-d input is an error).

    ``axis=None`` (flatten first) and NumPy's 0-d quirks are handled by the
    namespace functions, which call this with a real axis.
    """
    opname = "argsort" if arg else "sort"
    if kind is not None and kind not in SORT_KINDS:
        raise ValueError(f"{opname}: sort kind must be one of {SORT_KINDS} (got {kind!r})")
    ax = normalize_axis(axis, x.ndim, opname)
    if _by_samples(x, ax, kind, arg):
        return _sample_sorted(x, ax, bool(descending), bool(arg))
    n = x.shape[ax]
    chunks = (*x.chunks[:ax], (n,) if n else (0,), *x.chunks[ax + 1 :])
    dtype = np.dtype(np.intp) if arg else x.dtype
    op = Sort(axis=ax, descending=bool(descending), algorithm=kind or "", arg=bool(arg))
    return Expr(op, (x,), x.shape, dtype, chunks)


def sort_and_argsort(x: Expr, axis: int = -1) -> tuple[Expr, Expr]:
    """Ascending ``sort`` and stable ``argsort`` of ``x`` along ``axis``.

    Where the sample sort serves them, both share its stages (they differ in the
    last exchange only): one sort's work for the two. Otherwise two sorts.
    """
    ax = normalize_axis(axis, x.ndim, "sort")
    if _by_samples(x, ax, "stable", True):
        indices = samplesort(x, arg=True, axis=ax)
        return sorted_values_of(indices), indices
    return sort(x, ax, kind="stable"), sort(x, ax, kind="stable", arg=True)


def _by_samples(x: Expr, ax: int, kind: str | None, arg: bool) -> bool:
    """Whether the sample sort serves this sort (several blocks along ``ax``; module doc)."""
    if x.numblocks[ax] < 2 or x.size == 0 or x.dtype.kind not in "biuf":
        return False
    return not arg or kind in ("stable", "mergesort")


def _sample_sorted(x: Expr, ax: int, descending: bool, arg: bool) -> Expr:
    """The sample sort; descending is the reverse of the ascending sort of the reversed line."""
    if not descending:
        return samplesort(x, arg=arg, axis=ax)
    out = flip(samplesort(flip(x, ax), arg=arg, axis=ax), ax)
    return elementwise("subtract", x.shape[ax] - 1, out) if arg else out


@dataclasses.dataclass(frozen=True)
class SearchSorted(MapOp):
    """Insertion points of ``v`` into the sorted 1-d ``a`` (inputs: a, v[, sorter])."""

    name = "searchsorted"
    side: str = "left"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        a, _, *rest = expr.inputs
        return (_whole(a), out, *(_whole(s) for s in rest))


def searchsorted(a: Expr, v: Expr, side: str = "left", sorter: Expr | None = None) -> Expr:
    """Build ``numpy.searchsorted(a, v, side, sorter)`` (``a`` must be 1-d)."""
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if a.ndim != 1:
        depth = "too small" if a.ndim == 0 else "too"
        raise ValueError(
            f"searchsorted: object of {depth} depth for desired array (a has shape {a.shape})"
        )
    inputs = [a, v]
    if sorter is not None:
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted: sorter must only contain integers, not {sorter.dtype}")
        if sorter.shape != a.shape:
            raise ValueError(
                f"searchsorted: sorter.size must equal a.size (shapes {sorter.shape} and {a.shape})"
            )
        inputs.append(sorter)
    # NumPy's own promotion and its TypeError for incomparable dtypes
    np.searchsorted(np.empty((0,), a.dtype), np.empty((0,), v.dtype), side=side)
    return Expr(SearchSorted(side=side), inputs, v.shape, np.intp, v.chunks)


@dataclasses.dataclass(frozen=True)
class IsIn(MapOp):
    """Whether each element is in the test elements (inputs: element, test)."""

    name = "isin"
    invert: bool = False
    assume_unique: bool = False
    method: str = ""  # NumPy's ``kind`` ("" = NumPy's choice)

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (out, _whole(expr.inputs[1]))


def isin(
    element: Expr,
    test: Expr,
    assume_unique: bool = False,
    invert: bool = False,
    kind: str | None = None,
) -> Expr:
    """Build ``numpy.isin(element, test_elements, ...)``; blocks follow ``element``."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    if kind == "table" and (element.dtype.kind not in "iub" or test.dtype.kind not in "iub"):
        raise ValueError(
            "isin: the 'table' method is only supported for boolean or integer arrays "
            f"(got {element.dtype} and {test.dtype})"
        )
    op = IsIn(invert=bool(invert), assume_unique=bool(assume_unique), method=kind or "")
    return Expr(op, (element, test), element.shape, np.bool_, element.chunks)
