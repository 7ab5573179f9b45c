"""``map_overlap``: a user function per block, each block widened by its neighbours' edges.

The halo is a block rule, not a copy: block ``i`` of :class:`Overlap` reads
the region of its input block widened by ``depth`` on each side (clipped
to the array), so placement and lowering see it as any other read and no
overlapped copy of the array is ever stored. Beyond the array's edges the
boundary mode fills the halo (dask's modes):

* ``"reflect"``: mirrored with the edge repeated (NumPy's ``symmetric``);
* ``"nearest"``: the edge value repeated (NumPy's ``edge``);
* ``"periodic"``: the other end of the array (NumPy's ``wrap``);
* a number: that constant; ``"none"``: no halo at the array's edges.

A periodic axis reads its wrapped pieces through extra input positions:
the input appears ``3**k`` times (``k`` periodic axes), once per
combination of (before the start, inside, after the end) along those
axes, each with its own region (empty where the block needs nothing), so
every read stays one bounding box of the input.

As in dask, several arrays may be given (each with its own depth and
boundary; their chunks are unified, axes right-aligned), the output
follows the array of highest rank, ``trim=True`` cuts that array's halo
off the function's result, and with ``trim=False`` the function returns
blocks of the output's chunks itself (the input's, or ``chunks=``). A
depth larger than a block is read from further neighbours (dask rechunks
instead); a depth larger than the array is a ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.ops.userfunc import Params, UserFunc, accepts, block_index, common_chunks

__all__ = [
    "MODES",
    "AxisWindow",
    "Overlap",
    "axis_window",
    "normalize_boundary",
    "normalize_depth",
    "overlap",
    "periodic_axes",
    "piece_regions",
    "pieces",
    "windows",
]

MODES = ("reflect", "periodic", "nearest", "none")


@dataclasses.dataclass(frozen=True)
class AxisWindow:
    """What one block needs along one axis (global coordinates of the input).

    ``lo``/``hi``: the window, possibly past the array's ends (``[lo, hi)``);
    ``main``: the part read from inside the array (for ``reflect`` it also
    covers the elements mirrored into the halo); ``before``/``after``: the
    wrapped pieces of a periodic axis (None when not needed).
    """

    lo: int
    hi: int
    main: tuple[int, int]
    before: tuple[int, int] | None = None
    after: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return self.hi - self.lo


def axis_window(start: int, stop: int, n: int, depth: tuple[int, int], mode: Any) -> AxisWindow:
    """The window of block ``[start, stop)`` of an axis of length ``n``."""
    lo, hi = start - depth[0], stop + depth[1]
    if isinstance(mode, str) and mode == "none":
        lo, hi = max(lo, 0), min(hi, n)
    a, b = max(lo, 0), min(hi, n)
    before = after = None
    if isinstance(mode, str) and mode == "periodic":
        if lo < 0:
            before = (n + lo, n)
        if hi > n:
            after = (0, hi - n)
    elif isinstance(mode, str) and mode == "reflect":
        if lo < 0:
            b = max(b, min(n, -lo))
        if hi > n:
            a = min(a, max(0, n - (hi - n)))
    return AxisWindow(lo, hi, (a, b), before, after)


def normalize_boundary(boundary: Any, ndim: int) -> tuple[Any, ...]:
    """Per axis, a mode name or a constant (dask's ``coerce_boundary``; default ``"none"``)."""
    if boundary is None:
        boundary = "none"
    if isinstance(boundary, Mapping):
        modes = [boundary.get(ax, "none") for ax in range(ndim)]
    elif isinstance(boundary, (tuple, list)):
        if len(boundary) != ndim:
            raise ValueError(f"map_overlap: boundary {boundary} for an array of {ndim} dimensions")
        modes = list(boundary)
    else:
        modes = [boundary] * ndim
    out = []
    for m in modes:
        if m is None:
            m = "none"
        if isinstance(m, str):
            if m not in MODES:
                raise ValueError(
                    f"map_overlap: unknown boundary {m!r} (one of {', '.join(MODES)} or a number)"
                )
        elif isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, float, complex, np.number)):
            raise ValueError(f"map_overlap: boundary {m!r} is neither a mode nor a number")
        out.append(m.item() if isinstance(m, np.generic) else m)
    return tuple(out)


def normalize_depth(depth: Any, ndim: int) -> tuple[tuple[int, int], ...]:
    """Per axis, ``(before, after)`` (dask's ``coerce_depth``: an int, a tuple per axis, a dict)."""
    if depth is None:
        depth = 0
    if isinstance(depth, Mapping):
        per = [depth.get(ax, 0) for ax in range(ndim)]
    elif isinstance(depth, (tuple, list)):
        if len(depth) != ndim:
            raise ValueError(f"map_overlap: depth {depth} for an array of {ndim} dimensions")
        per = list(depth)
    else:
        per = [depth] * ndim
    out = []
    for d in per:
        pair = tuple(d) if isinstance(d, (tuple, list)) else (d, d)
        if len(pair) != 2:
            raise ValueError(f"map_overlap: depth {d!r} is neither an int nor (before, after)")
        for v in pair:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"map_overlap: depth must be integers, not {type(v).__name__}")
            if v < 0:
                raise ValueError(f"map_overlap: depth must be non-negative, got {d!r}")
        out.append((int(pair[0]), int(pair[1])))
    return tuple(out)


def periodic_axes(depth: Sequence[tuple[int, int]], boundary: Sequence[Any]) -> tuple[int, ...]:
    """The axes of one array whose halo wraps around (periodic with a non-zero depth)."""
    return tuple(
        ax
        for ax, (m, d) in enumerate(zip(boundary, depth))
        if isinstance(m, str) and m == "periodic" and any(d)
    )


def pieces(depth: Sequence[tuple[int, int]], boundary: Sequence[Any]) -> list[tuple[int, ...]]:
    """Per input position of one array, its piece along each periodic axis (0 before the
    start, 1 inside, 2 after the end)."""
    return list(itertools.product((0, 1, 2), repeat=len(periodic_axes(depth, boundary))))


def windows(
    x: Expr, index: Sequence[int], depth: Sequence[tuple[int, int]], boundary: Sequence[Any]
) -> list[AxisWindow]:
    """Per axis, the window of block ``index`` of ``x``."""
    out = []
    for ax, b in enumerate(index):
        o = offsets(x.chunks[ax])
        out.append(axis_window(o[b], o[b + 1], x.shape[ax], depth[ax], boundary[ax]))
    return out


def piece_regions(
    x: Expr, index: Sequence[int], depth: Sequence[tuple[int, int]], boundary: Sequence[Any]
) -> list[Region]:
    """The region of ``x`` each of its input positions reads for block ``index``."""
    wins = windows(x, index, depth, boundary)
    periodic = periodic_axes(depth, boundary)
    result = []
    for combo in pieces(depth, boundary):
        region = [slice(*w.main) for w in wins]
        for ax, piece in zip(periodic, combo):
            w = wins[ax]
            span = (w.before, w.main, w.after)[piece]
            region[ax] = slice(*span) if span is not None else slice(0, 0)
        if any(s.stop <= s.start for s in region):
            region = [slice(0, 0)] * x.ndim
        result.append(tuple(region))
    return result


@dataclasses.dataclass(frozen=True)
class Overlap(MapOp):
    """``fn`` per output block, called with each array's block widened by its ``depth``,
    halos filled by its ``boundary``.

    ``depths``/``boundaries``: per array argument, per axis. Array ``j``
    appears as ``len(pieces(...))`` consecutive inputs (one per periodic
    piece, see the module docstring). The output follows the block grid of
    array ``lead`` (the one of highest rank, dask's rule); the arrays'
    axes are right-aligned. ``trim``: cut ``lead``'s halo off ``fn``'s result
    (else ``fn`` returns blocks of the output's chunks itself).
    """

    name = "map_overlap"
    fn: UserFunc | None = None
    depths: tuple[tuple[tuple[int, int], ...], ...] = ()
    boundaries: tuple[tuple[Any, ...], ...] = ()
    trim: bool = True
    lead: int = 0
    params: Params | None = None
    block_info: bool = False
    block_id: bool = False

    def label(self) -> str:
        return self.fn.label if self.fn is not None else self.name

    def arrays(self, expr: Expr) -> list[tuple[Expr, int, int]]:
        """Per array argument: its expression and the range of its input positions."""
        out, start = [], 0
        for d, b in zip(self.depths, self.boundaries):
            n = len(pieces(d, b))
            out.append((expr.inputs[start], start, start + n))
            start += n
        return out

    def index_of(self, x: Expr, ndim: int, index: Sequence[int]) -> tuple[int, ...]:
        """The block of ``x`` (axes right-aligned with an output of ``ndim``) at ``index``."""
        lead = ndim - x.ndim
        return tuple(0 if len(c) == 1 else index[lead + ax] for ax, c in enumerate(x.chunks))

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        index = block_index(expr.chunks, out, self.label())
        result: list[Region] = []
        for (x, _, _), d, b in zip(self.arrays(expr), self.depths, self.boundaries):
            result += piece_regions(x, self.index_of(x, expr.ndim, index), d, b)
        return tuple(result)


def _checked(x: Expr, depth: Any, boundary: Any, allow_rechunk: bool, j: int) -> tuple:
    depths = normalize_depth(depth, x.ndim)
    modes = normalize_boundary(boundary, x.ndim)
    for ax, ((a, b), m) in enumerate(zip(depths, modes)):
        if a != b and not (isinstance(m, str) and m == "none"):
            raise NotImplementedError(
                "Asymmetric overlap is currently only implemented for boundary='none', however "
                f"boundary for dimension {ax} in array argument {j} is {m}"
            )
        if max(a, b) > x.shape[ax]:
            raise ValueError(
                f"The overlapping depth {max(a, b)} is larger than your array {x.shape[ax]}."
            )
        if not allow_rechunk and max(a, b) > min(x.chunks[ax]):
            raise ValueError(
                "Overlap depth is larger than smallest chunksize.\n"
                "Please set allow_rechunk=True to rechunk automatically.\n"
                f"Overlap depths required: {[max(d) for d in depths]}\n"
                f"Input chunks: {x.chunks}\n"
            )
    return depths, modes


def _aligned(xs: Sequence[Expr]) -> list[Expr]:
    """``xs`` with common chunks along every right-aligned axis (length-1 axes broadcast)."""
    ndim = max(x.ndim for x in xs)
    out = list(xs)
    for a in range(ndim):
        uses = [(j, x.ndim - ndim + a) for j, x in enumerate(xs) if x.ndim - ndim + a >= 0]
        uses = [(j, ax) for j, ax in uses if xs[j].shape[ax] != 1]
        chunkings = {xs[j].chunks[ax] for j, ax in uses}
        if len(chunkings) <= 1:
            continue
        common = common_chunks(list(chunkings))
        for j, ax in uses:
            e = out[j]
            out[j] = rechunk(e, (*e.chunks[:ax], common, *e.chunks[ax + 1 :]))
    return out


def overlap(
    fn: UserFunc,
    xs: Sequence[Expr],
    depth: Sequence[Any],
    boundary: Sequence[Any],
    trim: bool,
    dtype: Any,
    kwargs: Mapping[str, Any] | None = None,
    allow_rechunk: bool = True,
    chunks: Any = None,
) -> Expr:
    """``fn`` applied to every block of the arrays ``xs`` widened by their ``depth``
    (one depth and boundary spec per array; see :class:`Overlap`)."""
    xs = _aligned(xs)
    specs = [
        _checked(x, d, b, allow_rechunk, j) for j, (x, d, b) in enumerate(zip(xs, depth, boundary))
    ]
    ndim = max(x.ndim for x in xs)
    lead = sorted(enumerate(xs), key=lambda v: (v[1].ndim, -v[0]))[-1][0]
    grid = xs[lead]
    for x in xs:
        for ax in range(x.ndim):
            a = ndim - x.ndim + ax
            if x.shape[ax] not in (1, grid.shape[a]):
                raise ValueError(
                    f"map_overlap: shapes {[e.shape for e in xs]} do not broadcast to "
                    f"{grid.shape} (the array of highest rank)"
                )
    op = Overlap(
        fn=fn,
        depths=tuple(d for d, _ in specs),
        boundaries=tuple(b for _, b in specs),
        trim=bool(trim),
        lead=lead,
        params=Params((), kwargs),
        block_info=accepts(fn.fn, "block_info"),
        block_id=accepts(fn.fn, "block_id"),
    )
    out_chunks = grid.chunks
    if not trim and chunks is not None:
        if len(chunks) != grid.ndim:
            raise ValueError(f"Provided chunks have {len(chunks)} dims; expected {grid.ndim} dims")
        out_chunks = tuple(
            (int(c),) * len(g) if isinstance(c, (int, np.integer)) else tuple(int(v) for v in c)
            for c, g in zip(chunks, grid.chunks)
        )
        for c, g in zip(out_chunks, grid.chunks):
            if len(c) != len(g):
                raise ValueError(
                    f"map_overlap: chunks {chunks} do not match the blocks {grid.chunks}"
                )
    inputs: list[Expr] = []
    for x, (d, b) in zip(xs, specs):
        inputs += [x] * len(pieces(d, b))
    shape = tuple(sum(c) for c in out_chunks)
    return Expr(op, tuple(inputs), shape, np.dtype(dtype), out_chunks)
