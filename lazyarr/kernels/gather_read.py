"""A gather reads the rows it takes, not every row between its smallest and largest index.

A block of ``x[idx]`` (an integer array along one axis) reads, by the op's rule, the
span from ``idx.min()`` to ``idx.max()``: for a day-of-year lookup the block of days
that crosses a new year reads the whole climatology to take twenty of its rows, and
assembling that span copies every row. Here, where the rows taken are fewer than
half the span and the span crosses input blocks (so reading it would copy it), the span
is an uninitialised buffer (untouched pages cost nothing)
into which only the runs of rows taken are read; the op's own kernel then indexes
it as before, so results are the same.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.token import ArrayData
from lazyarr.kernels.fused import GetRegion

__all__ = ["gather_map", "taken_runs"]


def taken_runs(expr: Expr, out: Region, region: Region) -> tuple[int, list[tuple[int, int]]] | None:
    """(input axis, runs of rows as global ``(start, stop)``) that block ``out`` of the
    gather ``expr`` takes, where one integer array indexes one input axis, those rows
    are fewer than half of ``region``'s span along it and the span crosses a block of
    the input (within one block the span is read as a view, copying nothing); else None."""
    op = expr.op
    if not isinstance(op, GetItem):
        return None
    lay = op.layout
    arrays = [i for i, e in enumerate(op.entries) if isinstance(e, ArrayData)]
    if len(arrays) != 1 or lay.xaxis[arrays[0]] is None:
        return None
    i = arrays[0]
    axis = lay.xaxis[i]
    if op.entries[i].array.dtype.kind not in "iu":
        return None
    span = region[axis].stop - region[axis].start
    bounds = offsets(expr.inputs[0].chunks[axis])  # remembered per grid, not summed per block
    if bisect.bisect_right(bounds, region[axis].start) == bisect.bisect_right(
        bounds, region[axis].stop - 1
    ):
        return None  # the span lies in one block: read as a view of it, no copy
    bsl = out[lay.bpos : lay.bpos + len(lay.bshape)]
    rows = np.unique(np.broadcast_to(op.entries[i].array, lay.bshape)[bsl])
    if not rows.size or 2 * rows.size >= span:
        return None
    breaks = np.flatnonzero(np.diff(rows) > 1) + 1
    starts = rows[np.r_[0, breaks]]
    stops = rows[np.r_[breaks - 1, rows.size - 1]] + 1
    return axis, list(zip(starts.tolist(), stops.tolist()))


def gather_map(
    expr: Expr, fn: Callable[..., np.ndarray]
) -> Callable[[Region, GetRegion], np.ndarray]:
    """The block function of a lone ``GetItem`` stage (``fn``: its NumPy kernel), reading
    only the rows a sparse gather takes (:func:`taken_runs`)."""
    op = expr.op
    x = expr.inputs[0]

    def run(out: Region, get: GetRegion) -> np.ndarray:
        (region,) = op.regions(expr, out)
        taken = taken_runs(expr, out, region)
        if taken is None:
            return fn(op, expr, out, get(0, tuple(region)))
        axis, runs = taken
        values = np.empty(tuple(s.stop - s.start for s in region), x.dtype)
        first = region[axis].start
        for start, stop in runs:
            part = list(region)
            part[axis] = slice(start, stop)
            into = [slice(None)] * len(region)
            into[axis] = slice(start - first, stop - first)
            values[tuple(into)] = get(0, tuple(part))
        return fn(op, expr, out, values)

    return run
