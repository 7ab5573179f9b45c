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
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops.userfunc import Params, UserFunc, accepts, block_index

__all__ = ["MODES", "AxisWindow", "Overlap", "axis_window", "normalize_boundary", "overlap"]

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


@dataclasses.dataclass(frozen=True)
class Overlap(MapOp):
    """``fn`` per block of the input widened by ``depth``, halos filled by ``boundary``.

    ``trim``: the halo is cut off ``fn``'s result (else the output's blocks
    are the windows' sizes). The input appears once per combination of
    pieces along the periodic axes (see the module docstring).
    """

    name = "map_overlap"
    fn: UserFunc | None = None
    depth: tuple[tuple[int, int], ...] = ()
    boundary: tuple[Any, ...] = ()
    trim: bool = True
    params: Params | None = None
    block_info: bool = False
    block_id: bool = False

    def label(self) -> str:
        return self.fn.label if self.fn is not None else self.name

    def periodic_axes(self) -> tuple[int, ...]:
        return tuple(
            ax
            for ax, (m, d) in enumerate(zip(self.boundary, self.depth))
            if isinstance(m, str) and m == "periodic" and any(d)
        )

    def windows(self, x: Expr, index: Sequence[int]) -> list[AxisWindow]:
        """Per axis, the window of input block ``index``."""
        out = []
        for ax, b in enumerate(index):
            o = offsets(x.chunks[ax])
            out.append(axis_window(o[b], o[b + 1], x.shape[ax], self.depth[ax], self.boundary[ax]))
        return out

    def pieces(self) -> list[tuple[int, ...]]:
        """Per input position, the piece along each periodic axis (0 before, 1 in, 2 after)."""
        return list(itertools.product((0, 1, 2), repeat=len(self.periodic_axes())))

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        x = expr.inputs[0]
        index = block_index(expr.chunks, out, self.label())
        wins = self.windows(x, index)
        periodic = self.periodic_axes()
        result = []
        for combo in self.pieces():
            region = [slice(*w.main) for w in wins]
            for ax, piece in zip(periodic, combo):
                w = wins[ax]
                span = (w.before, w.main, w.after)[piece]
                region[ax] = slice(*span) if span is not None else slice(0, 0)
            if any(s.stop <= s.start for s in region):
                region = [slice(0, 0)] * x.ndim
            result.append(tuple(region))
        return tuple(result)


def overlap(
    fn: UserFunc,
    x: Expr,
    depth: Any,
    boundary: Any,
    trim: bool,
    dtype: Any,
    kwargs: Mapping[str, Any] | None = None,
    allow_rechunk: bool = True,
) -> Expr:
    """``fn`` applied to every block of ``x`` widened by ``depth`` (see :class:`Overlap`)."""
    depths = normalize_depth(depth, x.ndim)
    modes = normalize_boundary(boundary, x.ndim)
    for ax, ((a, b), m) in enumerate(zip(depths, modes)):
        if a != b and not (isinstance(m, str) and m == "none"):
            raise NotImplementedError(
                "Asymmetric overlap is currently only implemented for boundary='none', however "
                f"boundary for dimension {ax} in array argument 0 is {m}"
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
    op = Overlap(
        fn=fn,
        depth=depths,
        boundary=modes,
        trim=bool(trim),
        params=Params((), kwargs),
        block_info=accepts(fn.fn, "block_info"),
        block_id=accepts(fn.fn, "block_id"),
    )
    if trim:
        chunks = x.chunks
    else:
        chunks = tuple(
            tuple(
                axis_window(o[i], o[i + 1], x.shape[ax], depths[ax], modes[ax]).size
                for i in range(len(x.chunks[ax]))
            )
            for ax, o in ((ax, offsets(c)) for ax, c in enumerate(x.chunks))
        )
    n_inputs = 3 ** len(op.periodic_axes())
    shape = tuple(sum(c) for c in chunks)
    return Expr(op, (x,) * n_inputs, shape, np.dtype(dtype), chunks)
