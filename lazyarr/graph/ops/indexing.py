"""Indexing ops: ``x[index]``, the functional ``x[index] = value`` and ``take_along_axis``.

The index is validated and put in canonical form by ``index_norm`` (NumPy's
errors are raised there, at expression time). Both indexing ops are
:class:`MapOp`\\ s: :meth:`GetItem.regions` maps an output block to the
bounding box of the input elements it selects (first to last element of a
stepped slice, min to max of an index array's block) and :class:`SetItem`
blocks follow ``x``'s grid, each reading its own block and the part of the
value that lands in it. The kernels apply the *local* index computed by
:func:`getitem_block` / :func:`setitem_block` to those boxes.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from typing import Any, NamedTuple

import numpy as np

from lazyarr.graph.chunks import auto_chunks, offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.graph.ops.creation import from_array
from lazyarr.graph.ops.elementwise import elementwise
from lazyarr.graph.ops.index_norm import (
    Layout,
    NormIndex,
    check_index_bounds,
    layout,
    local_slice,
    normalize_index,
    range_positions,
)
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.token import ArrayData

__all__ = [
    "GetItem",
    "NormIndex",
    "SetItem",
    "TakeAlongAxis",
    "check_index_bounds",
    "getitem",
    "getitem_block",
    "normalize_index",
    "setitem",
    "setitem_block",
    "take_along_axis",
    "vindex",
]


def _slice_chunks(e: slice, blocks: tuple[int, ...]) -> tuple[int, ...]:
    """Output blocks of a stepped slice: the selected elements of each input block."""
    o = offsets(blocks)
    n = len(range(e.start, e.stop, e.step))
    counts = []
    for b in range(len(blocks)):
        p, q = range_positions(e.start, e.step, n, o[b], o[b + 1])
        counts.append(q - p)
    if e.step < 0:
        counts.reverse()
    return tuple(c for c in counts if c) or (0,)


def _adv_chunks(entries: tuple, lay: Layout, x: Expr) -> tuple[tuple[int, ...], ...]:
    """Blocks of the broadcast dims of advanced indices.

    A 1-d index that walks the input's blocks in runs (sorted indices, boolean
    masks) is split where it crosses an input block (of its first indexed axis),
    so each output block reads one input block; otherwise blocks of about as
    many elements as an input block has along the indexed axes.
    """
    first = lay.first
    if first is None:
        return tuple((n,) if n else (0,) for n in lay.bshape)
    blocks = x.chunks[lay.xaxis[first]]
    cap = 1
    for i in lay.adv:
        if isinstance(entries[i], ArrayData) and lay.xaxis[i] is not None:
            cap *= max(max(x.chunks[lay.xaxis[i]]), 1)
    if len(lay.bshape) == 1 and lay.bshape[0] > 0:
        values = np.broadcast_to(entries[first].array, lay.bshape)
        ids = np.searchsorted(np.asarray(offsets(blocks)[1:]), values, side="right")
        cuts = np.flatnonzero(np.diff(ids)) + 1
        if len(cuts) < len(blocks):
            bounds = [0, *cuts.tolist(), lay.bshape[0]]
            out: list[int] = []
            for a, b in itertools.pairwise(bounds):
                full, rest = divmod(b - a, cap)
                out.extend([cap] * full + ([rest] if rest else []))
            return (tuple(out),)
    return auto_chunks(lay.bshape, 1, cap)


# -- getitem -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Indexed(MapOp):
    """Fields shared by the indexing ops: a canonical index (see :class:`NormIndex`)."""

    entries: tuple = ()
    virtual: tuple = ()
    adv_front: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "_layout", layout(self.entries, self.virtual, self.adv_front))

    @property
    def layout(self) -> Layout:
        return self._layout  # type: ignore[attr-defined]

    def sorted_entry(self) -> int | None:
        """The first advanced array if it is 1-d, not broadcast and non-decreasing
        (sorted indices, boolean masks): blocks then select a window of it."""
        cached = self.__dict__.get("_sorted", False)
        if cached is not False:
            return cached
        lay = self.layout
        found = None
        first = lay.first
        if first is not None and len(lay.bshape) == 1:
            a = self.entries[first].array
            if a.shape == lay.bshape and bool(np.all(a[1:] >= a[:-1])):
                found = first
        object.__setattr__(self, "_sorted", found)
        return found


@dataclasses.dataclass(frozen=True)
class GetItem(_Indexed):
    """``x[index]`` for a canonical index."""

    name = "getitem"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        return (getitem_block(self, expr, out)[0],)


def getitem_block(op: _Indexed, expr: Expr, out: Region) -> tuple[Region, tuple | None]:
    """For output block ``out``: the input region and the local index into it.

    The local index addresses the region with the virtual axes inserted
    (``np.expand_dims(region, op.virtual)``); it is ``None`` when the block is
    empty (the region is then empty too).
    """
    x = expr.inputs[0]
    if any(s.stop <= s.start for s in out):
        return tuple(slice(0, 0) for _ in x.shape), None
    lay = op.layout
    bsl = out[lay.bpos : lay.bpos + len(lay.bshape)]
    region: list[slice] = []
    local: list[Any] = []
    for i, e in enumerate(op.entries):
        if e is None:
            local.append(None)
            continue
        if isinstance(e, slice):
            o = out[lay.outaxis[i]]
            first = e.start + o.start * e.step
            last = e.start + (o.stop - 1) * e.step
            lo = min(first, last)
            region.append(slice(lo, max(first, last) + 1))
            local.append(local_slice(first - lo, o.stop - o.start, e.step))
        elif isinstance(e, int):
            region.append(slice(e, e + 1))
            local.append(0)
        else:
            sub = np.broadcast_to(e.array, lay.bshape)[bsl]
            if lay.xaxis[i] is None:
                local.append(sub)
                continue
            lo = int(sub.min())
            region.append(slice(lo, int(sub.max()) + 1))
            local.append(sub - lo)
    return tuple(region), lay.finish(local)


def _identity(norm: NormIndex, shape: tuple[int, ...]) -> bool:
    return len(norm.entries) == len(shape) and all(
        isinstance(e, slice) and e.step == 1 and e.start == 0 and e.stop == n
        for e, n in zip(norm.entries, shape, strict=True)
    )


def getitem(x: Expr, index: Any, *, arrays_first: bool = False) -> Expr:
    """``x[index]`` with NumPy's semantics (basic, integer-array and boolean indexing).

    ``arrays_first``: the broadcast dimensions of the integer arrays come first
    wherever the arrays stand (dask's ``vindex``, NumPy's rule for separated arrays).
    """
    norm = normalize_index(index, x.shape)
    if _identity(norm, x.shape):
        return x
    front = norm.adv_front or (arrays_first and any(isinstance(e, ArrayData) for e in norm.entries))
    op = GetItem(entries=norm.entries, virtual=norm.virtual, adv_front=front)
    lay = op.layout
    chunks: list[tuple[int, ...]] = [()] * len(lay.shape)
    for i, e in enumerate(norm.entries):
        o = lay.outaxis[i]
        if o is not None:
            chunks[o] = (1,) if e is None else _slice_chunks(e, x.chunks[lay.xaxis[i]])
    if lay.bshape:
        chunks[lay.bpos : lay.bpos + len(lay.bshape)] = _adv_chunks(norm.entries, lay, x)
    return Expr(op, (x,), lay.shape, x.dtype, chunks)


def vindex(x: Expr, index: Any) -> Expr:
    """dask's pointwise ``x.vindex[index]``: integer arrays broadcast together and their
    dimensions come first; integers and slices index their axes as in ``x[index]``."""
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if item is None:
            raise IndexError("vindex does not support indexing with None (np.newaxis)")
        arr = np.asarray(item) if isinstance(item, (list, np.ndarray)) else None
        if arr is not None and arr.dtype == np.bool_:
            raise IndexError("vindex does not support indexing with boolean arrays")
    return getitem(x, items, arrays_first=True)


# -- setitem -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SetItem(_Indexed):
    """``x`` with ``x[index]`` replaced by ``value`` (a scalar field, or the second input)."""

    name = "setitem"
    value: Any = None

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        if len(expr.inputs) == 1:
            return (out,)
        v = expr.inputs[1]
        plan = setitem_block(self, expr, out)
        if plan is None:
            return out, tuple(slice(0, 0) for _ in v.shape)
        sbox = plan.sbox
        lead = v.ndim - len(sbox)
        vreg = tuple(
            slice(0, 1) if j < lead or n == 1 else sbox[j - lead] for j, n in enumerate(v.shape)
        )
        return out, vreg


class SetPlan(NamedTuple):
    """What one block of a setitem changes (see :func:`setitem_block`)."""

    local: tuple  # index into the block (virtual axes inserted) of the changed elements
    sbox: Region  # box of the selection (in the indexed shape's coordinates) they come from
    mask: np.ndarray | None  # which broadcast positions of the box land in this block
    bpos: int  # first axis of the broadcast dims in the indexed shape


def setitem_block(op: _Indexed, expr: Expr, out: Region) -> SetPlan | None:
    """The part of the selection inside block ``out`` of ``x``; None if untouched."""
    lay = op.layout
    sbox: list[slice] = [slice(0, 0)] * len(lay.shape)
    local: list[Any] = []
    for i, e in enumerate(op.entries):
        ax = lay.xaxis[i]
        if e is None:
            sbox[lay.outaxis[i]] = slice(0, 1)
            local.append(None)
        elif isinstance(e, slice):
            o = out[ax]
            n = len(range(e.start, e.stop, e.step))
            p, q = range_positions(e.start, e.step, n, o.start, o.stop)
            if p == q:
                return None
            sbox[lay.outaxis[i]] = slice(p, q)
            local.append(local_slice(e.start + p * e.step - o.start, q - p, e.step))
        elif isinstance(e, int):
            if not out[ax].start <= e < out[ax].stop:
                return None
            local.append(e - out[ax].start)
        else:
            local.append(None)
    if not lay.bshape:
        return SetPlan(lay.finish(local), tuple(sbox), None, lay.bpos)
    arrays = [i for i in lay.adv if isinstance(op.entries[i], ArrayData)]
    window = (slice(None),) * len(lay.bshape)
    base = 0
    first = op.sorted_entry()
    if first is not None:  # sorted 1-d indices: only a window can land in this block
        o = out[lay.xaxis[first]]
        base, hi = (int(v) for v in np.searchsorted(op.entries[first].array, [o.start, o.stop]))
        if base == hi:
            return None
        window = (slice(base, hi),)
    bs = {i: np.broadcast_to(op.entries[i].array, lay.bshape)[window] for i in arrays}
    inside = None
    for i in arrays:
        ax = lay.xaxis[i]
        if ax is not None:
            hit = (bs[i] >= out[ax].start) & (bs[i] < out[ax].stop)
            inside = hit if inside is None else inside & hit
    if inside is None:
        inside = np.ones(bs[arrays[0]].shape, bool)
    where = np.nonzero(inside)
    if not where[0].size:
        return None
    box = tuple(slice(int(w.min()), int(w.max()) + 1) for w in where)
    mask = inside[box]
    shift = [base] + [0] * (len(box) - 1)
    sbox[lay.bpos : lay.bpos + len(box)] = [
        slice(b.start + d, b.stop + d) for b, d in zip(box, shift, strict=True)
    ]
    for i in arrays:
        ax = lay.xaxis[i]
        local[i] = bs[i][box][mask] - (out[ax].start if ax is not None else 0)
    return SetPlan(lay.finish(local), tuple(sbox), mask, lay.bpos)


def _cast_scalar(value: Any, dtype: np.dtype) -> Any:
    """``value`` as NumPy's ``a[i] = value`` stores it (NumPy's errors), as a Python scalar."""
    probe = np.empty((1,), dtype)
    probe[0] = value
    return probe[0].item()


def _value_core(vshape: tuple[int, ...], sel: tuple[int, ...]) -> int:
    """How many leading (size-1) dims of the value NumPy drops; ValueError if it cannot fit."""
    lead = 0
    while len(vshape) - lead > len(sel) and vshape[lead] == 1:
        lead += 1
    core = vshape[lead:]
    if len(core) > len(sel) or any(
        a not in (1, b) for a, b in zip(core[::-1], sel[::-1], strict=False)
    ):
        raise ValueError(f"could not broadcast input array from shape {vshape} into shape {sel}")
    return lead


def _mask_where(x: Expr, mask: np.ndarray, value: Any, lead: int) -> Expr | None:
    """``x[mask] = value`` as ``where(mask, value, x)`` when the value does not vary
    along the selected elements (a scalar, or an array over the trailing axes)."""
    k = mask.ndim
    rest = x.ndim - k
    if isinstance(value, Expr):
        core = value.shape[lead:]
        if len(core) == rest + 1 and core[0] == 1:
            lead += 1
        elif len(core) > rest:
            return None
        if lead:
            value = getitem(value, (0,) * lead)
        if value.dtype != x.dtype:
            if value.dtype.kind == "c" and x.dtype.kind != "c":
                value = elementwise("real", value)
            value = elementwise("astype", value, dtype=x.dtype)
    m = from_array(mask.reshape(mask.shape + (1,) * rest), x.chunks[:k] + ((1,),) * rest)
    out = elementwise("where", m, value, x)
    if out.dtype != x.dtype:
        out = elementwise("astype", out, dtype=x.dtype)
    return out if out.chunks == x.chunks else rechunk(out, x.chunks)


def _single_mask(index: Any) -> np.ndarray | None:
    items = index if isinstance(index, tuple) else (index,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype == np.bool_:
        return items[0] if items[0].ndim else None
    return None


def setitem(x: Expr, index: Any, value: Any) -> Expr:
    """A new expression equal to ``x`` with ``x[index]`` replaced by ``value``.

    ``value`` is an :class:`Expr` or a Python scalar, broadcast to the shape of
    ``x[index]`` and cast to ``x.dtype`` as NumPy's ``a[index] = value`` does.
    With repeated integer indices the last assignment wins, as in NumPy.
    """
    norm = normalize_index(index, x.shape)
    op = SetItem(entries=norm.entries, virtual=norm.virtual, adv_front=norm.adv_front)
    sel = op.layout.shape
    lead = 0
    if isinstance(value, Expr):
        lead = _value_core(value.shape, sel)
        if value.dtype.kind == "c" and x.dtype.kind != "c":
            warnings.warn(
                "Casting complex values to real discards the imaginary part",
                np.exceptions.ComplexWarning,
                stacklevel=3,
            )
        inputs: tuple[Expr, ...] = (x, value)
        scalar = None
    elif value is None or isinstance(value, (bool, int, float, complex, np.generic)):
        scalar = _cast_scalar(value, x.dtype)
        inputs = (x,)
    else:
        raise TypeError(f"setitem: unsupported value type {type(value).__name__!r}")
    if 0 in sel:
        return x
    mask = _single_mask(index)
    if mask is not None:
        out = _mask_where(x, mask, value if isinstance(value, Expr) else scalar, lead)
        if out is not None:
            return out
    op = dataclasses.replace(op, value=scalar)
    return Expr(op, inputs, x.shape, x.dtype, x.chunks)


# -- take_along_axis ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TakeAlongAxis(MapOp):
    """``numpy.take_along_axis(arr, indices, axis)`` with lazy indices.

    A block reads the whole ``axis`` of ``arr`` (the indices are not known
    before computing) and the matching block of ``indices``; indices out of
    bounds raise ``IndexError`` when the block is computed.
    """

    name = "take_along_axis"
    axis: int = 0

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        arr, idx = expr.inputs
        ra = tuple(
            slice(0, n) if d == self.axis else slice(0, 1) if n == 1 else out[d]
            for d, n in enumerate(arr.shape)
        )
        ri = tuple(
            slice(0, 1) if n == 1 and d != self.axis else out[d] for d, n in enumerate(idx.shape)
        )
        return ra, ri


def take_along_axis(arr: Expr, indices: Expr, axis: int) -> Expr:
    """Values of ``arr`` at ``indices`` along ``axis`` (same ndim; other axes broadcast)."""
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if arr.ndim != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis(axis, arr.ndim, "take_along_axis")
    shape: list[int] = []
    chunks: list[tuple[int, ...]] = []
    for d, (a, b) in enumerate(zip(arr.shape, indices.shape, strict=True)):
        if d == axis:
            shape.append(b)
            chunks.append(indices.chunks[d])
            continue
        if a != b and 1 not in (a, b):
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together with shapes "
                f"{arr.shape} {indices.shape}"
            )
        n = b if a == 1 else a
        shape.append(n)
        pick = [e.chunks[d] for e in (arr, indices) if e.shape[d] == n]
        chunks.append(max(pick, key=len))
    return Expr(TakeAlongAxis(axis=axis), (arr, indices), shape, arr.dtype, chunks)
