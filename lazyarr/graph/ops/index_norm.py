"""Canonical form of a NumPy index, and where each of its axes lands.

:func:`normalize_index` validates an index against a shape with NumPy's
errors and returns a :class:`NormIndex`: one entry per position, each
``None`` (new axis), an ``int`` (non-negative), a ``slice`` with *range*
semantics (``range(start, stop, step)``: non-negative start; a stop of
``-1`` means "down to 0") or an :class:`ArrayData` of non-negative ``intp``
indices (an advanced index, not yet broadcast). Boolean arrays become their
``nonzero()`` coordinates; a boolean scalar becomes a *virtual* size-1 axis
indexed by ``[0]`` (``True``) or ``[]`` (``False``), which reproduces NumPy's
shapes in every combination. :func:`layout` says where each entry's axes go
in the result (NumPy's rule: separated advanced indices put their broadcast
dims first). ``ndindex`` is not used here because it refuses exactly those
mixed cases (separated advanced indices, boolean scalars with arrays).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, NamedTuple

import numpy as np

from lazyarr.graph.token import ArrayData

__all__ = [
    "Layout",
    "NormIndex",
    "check_index_bounds",
    "layout",
    "local_slice",
    "normalize_index",
    "range_positions",
]

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)
_INTP_MAX = int(np.iinfo(np.intp).max)


# -- normalisation ---------------------------------------------------------------------


class NormIndex(NamedTuple):
    """A validated index in canonical form (see the module docstring)."""

    entries: tuple
    virtual: tuple[int, ...]  # axes of the "expanded input" that are boolean scalars
    adv_front: bool  # advanced indices are separated: their dims go first (NumPy's rule)


def _classify(raw: Any) -> tuple[str, Any]:
    """One index item as (kind, value); NumPy's ``IndexError`` for invalid types."""
    if raw is None:
        return "new", None
    if raw is Ellipsis:
        return "ellipsis", None
    if isinstance(raw, (bool, np.bool_)):
        return "boolscalar", bool(raw)
    if isinstance(raw, slice):
        return "slice", raw
    if isinstance(raw, list):
        raw = np.asarray(raw) if len(raw) else np.zeros(0, np.intp)
    if isinstance(raw, np.ndarray):
        if raw.dtype == np.bool_:
            return ("boolscalar", bool(raw)) if raw.ndim == 0 else ("bool", raw)
        if raw.dtype.kind in "iu":
            return ("int", int(raw)) if raw.ndim == 0 else ("array", raw)
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    try:
        value = operator.index(raw)
    except TypeError:
        raise IndexError(_VALID) from None
    if not -_INTP_MAX - 1 <= value <= _INTP_MAX:
        raise IndexError(_VALID)
    return "int", value


def check_index_bounds(arr: np.ndarray, axis: int, n: int) -> None:
    """NumPy's ``IndexError`` if an index of ``arr`` is outside ``[-n, n)``."""
    if arr.size == 0:
        return
    lo, hi = int(arr.min()), int(arr.max())
    if lo >= -n and hi < n:
        return
    bad = (arr >= n) if arr.dtype.kind == "u" else (arr >= n) | (arr < -n)
    first = int(arr.ravel()[int(np.argmax(bad.ravel()))])
    raise IndexError(f"index {first} is out of bounds for axis {axis} with size {n}")


def normalize_index(index: Any, shape: tuple[int, ...]) -> NormIndex:
    """Validate ``index`` for an array of ``shape`` and return its canonical form."""
    items = [_classify(i) for i in (index if isinstance(index, tuple) else (index,))]
    kinds = [k for k, _ in items]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim = len(shape)
    used = sum(v.ndim if k == "bool" else k in ("int", "slice", "array") for k, v in items)
    if used > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed"
        )
    if "ellipsis" not in kinds:
        items.append(("ellipsis", None))
    # walk the items: seq holds (kind, value, x axis); "sep" marks where the ellipsis was
    seq: list[tuple[str, Any, int | None]] = []
    ax = 0
    for kind, v in items:
        if kind == "ellipsis":
            seq.append(("sep", None, None))
            for _ in range(ndim - used):
                seq.append(("slice", slice(None), ax))
                ax += 1
        elif kind == "bool":
            for d in range(v.ndim):  # NumPy: a mask axis of length 0 matches any length
                if v.shape[d] not in (shape[ax + d], 0):
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {ax + d}; size "
                        f"of axis is {shape[ax + d]} but size of corresponding boolean axis is "
                        f"{v.shape[d]}"
                    )
            for d, coords in enumerate(np.nonzero(v)):
                seq.append(("array", coords, ax + d))
            ax += v.ndim
        elif kind == "boolscalar":
            seq.append(("array", np.zeros(1 if v else 0, np.intp), None))
        elif kind == "new":
            seq.append(("new", None, None))
        else:
            seq.append((kind, v, ax))
            ax += 1
    arrays = [(v, a) for k, v, a in seq if k == "array"]
    bshape: tuple[int, ...] = ()
    if arrays:
        try:
            bshape = tuple(np.broadcast_shapes(*(v.shape for v, _ in arrays)))
        except ValueError:
            text = " ".join(str(v.shape) for v, _ in arrays)
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together with shapes "
                + text
            ) from None
    empty = 0 in bshape
    entries: list[Any] = []
    virtual: list[int] = []
    adv_pos: list[int] = []
    xp = 0
    for pos, (kind, v, a) in enumerate(seq):
        if kind == "sep":
            continue
        if kind == "new":
            entries.append(None)
            continue
        n = shape[a] if a is not None else 1
        if kind == "slice":
            r = range(n)[v]
            entries.append(slice(r.start, r.stop, r.step))
        elif kind == "int":
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for axis {a} with size {n}")
            entries.append(v % n)
            if arrays:
                adv_pos.append(pos)
        else:
            if a is None:
                virtual.append(xp)
            elif not empty:
                check_index_bounds(v, a, n)
            if v.dtype.kind == "i" and v.size and v.min() < 0:
                v = np.where(v < 0, v + n, v)
            entries.append(ArrayData(np.ascontiguousarray(v, dtype=np.intp)))
            adv_pos.append(pos)
        xp += 1
    adv_front = bool(adv_pos) and adv_pos != list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    return NormIndex(tuple(entries), tuple(virtual), adv_front)


# -- layout: where each entry's axes are -------------------------------------------


@dataclasses.dataclass(frozen=True)
class Layout:
    """Axis bookkeeping of a canonical index (derived from the entries alone)."""

    xaxis: tuple[int | None, ...]  # input axis of each entry (None: new or virtual)
    outaxis: tuple[int | None, ...]  # output axis of each slice/new entry
    adv: tuple[int, ...]  # entries that are advanced (arrays, and ints when arrays exist)
    bshape: tuple[int, ...]  # broadcast shape of the advanced arrays
    bpos: int  # first output axis of the broadcast dims
    shape: tuple[int, ...]  # result shape
    front: bool  # the broadcast dims go first (advanced entries are separated)
    first: int | None  # the first advanced array indexing a real (not virtual) axis

    def finish(self, local: list[Any]) -> tuple:
        """The local index as a tuple that NumPy lays out as the global one.

        Advanced entries that are adjacent but were separated by a zero-width
        ``...`` keep NumPy's "dims first" rule through an ``...`` put between them.
        """
        if self.front and self.adv[-1] - self.adv[0] == len(self.adv) - 1:
            cut = self.adv[0] + 1
            local = [*local[:cut], Ellipsis, *local[cut:]]
        return tuple(local)


def layout(entries: tuple, virtual: tuple[int, ...], adv_front: bool) -> Layout:
    """Where the axes of each entry of a canonical index land."""
    has_arrays = any(isinstance(e, ArrayData) for e in entries)
    adv = tuple(
        i
        for i, e in enumerate(entries)
        if isinstance(e, ArrayData) or (has_arrays and isinstance(e, int))
    )
    bshape: tuple[int, ...] = ()
    if has_arrays:
        bshape = tuple(
            np.broadcast_shapes(*(e.array.shape for e in entries if isinstance(e, ArrayData)))
        )
    shape: list[int] = []
    xaxis: list[int | None] = []
    outaxis: list[int | None] = []
    bpos = 0 if adv_front or not adv else -1
    xp = x = 0
    for i, e in enumerate(entries):
        if e is None:
            xaxis.append(None)
        else:
            xaxis.append(None if xp in virtual else x)
            x += xp not in virtual
            xp += 1
        if i in adv:
            outaxis.append(None)
            if bpos < 0:
                bpos = len(shape)
                shape.extend(bshape)
        elif e is None or isinstance(e, slice):
            outaxis.append(len(shape))
            shape.append(1 if e is None else len(range(e.start, e.stop, e.step)))
        else:
            outaxis.append(None)
    if adv_front and adv:
        shape[:0] = bshape
        outaxis = [None if o is None else o + len(bshape) for o in outaxis]
    front = adv_front and bool(adv)
    first = next(
        (i for i in adv if isinstance(entries[i], ArrayData) and xaxis[i] is not None), None
    )
    return Layout(tuple(xaxis), tuple(outaxis), adv, bshape, bpos, tuple(shape), front, first)


def range_positions(start: int, step: int, length: int, lo: int, hi: int) -> tuple[int, int]:
    """The run ``[p, q)`` of positions ``k`` with ``lo <= start + k*step < hi``."""
    if step > 0:
        p = -((start - lo) // step)
        q = -((start - hi) // step)
    else:
        p = (start - hi) // -step + 1
        q = (start - lo) // -step + 1
    p = min(max(p, 0), length)
    q = min(max(q, 0), length)
    return p, max(p, q)


def local_slice(first: int, count: int, step: int) -> slice:
    """A Python slice taking ``count`` elements from ``first`` by ``step`` (count >= 1)."""
    last = first + (count - 1) * step
    if step > 0:
        return slice(first, last + 1, step)
    return slice(first, last - 1 if last > 0 else None, step)
