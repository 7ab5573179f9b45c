"""NumPy kernels of user functions: per-block calls, halos, user ufuncs.

Every kernel computes one whole output block (the ops' block rules map
block positions, see :mod:`lazyarr.graph.ops.userfunc`), casts the user's
result to the dtype declared at expression time and checks its shape, so a
function that returns something else fails with a message naming it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.overlap import AxisWindow, Overlap, periodic_axes, pieces, windows
from lazyarr.graph.ops.userfunc import BlockFunc, UserElementwise, block_index, template_args
from lazyarr.kernels.reference.checks import block_name, called, checked
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


SHAPE_HINT = " (pass chunks=, drop_axis= or new_axis= when it changes the shape)"


def _as_block(result: Any, expr: Expr, out: Region, label: str) -> np.ndarray:
    """The user's ``result`` as the block ``out`` of ``expr`` (shape and dtype kind checked,
    then cast to the declared dtype)."""
    arr = checked(result, _shape(out), expr.dtype, label, block_name(expr.chunks, out), SHAPE_HINT)
    if arr.dtype != expr.dtype:
        arr = arr.astype(expr.dtype)
    return arr


def _location(chunks: tuple[tuple[int, ...], ...], index: Sequence[int]) -> list[tuple[int, int]]:
    out = []
    for c, b in zip(chunks, index):
        o = offsets(c)
        out.append((o[b], o[b + 1]))
    return out


def _info(shape: tuple, chunks: tuple, index: Sequence[int]) -> dict[str, Any]:
    return {
        "shape": shape,
        "num-chunks": tuple(len(c) for c in chunks),
        "chunk-location": tuple(index),
        "array-location": _location(chunks, index),
    }


def _out_info(expr: Expr, index: Sequence[int]) -> dict[str, Any]:
    info = _info(expr.shape, expr.chunks, index)
    info["chunk-shape"] = tuple(b - a for a, b in info["array-location"])
    info["dtype"] = expr.dtype
    return info


def _block_lists(a: np.ndarray, inp: Expr, axes: Sequence[int], region: Region) -> Any:
    """``a`` (a region of ``inp``) split along ``axes`` by ``inp``'s chunks: nested lists."""
    if not axes:
        return a
    ax, rest = axes[0], axes[1:]
    cuts = offsets(inp.chunks[ax])
    start = region[ax].start
    parts = []
    for lo, hi in itertools.pairwise(cuts):
        if hi <= region[ax].start or lo >= region[ax].stop:
            continue
        sl = [slice(None)] * a.ndim
        sl[ax] = slice(lo - start, hi - start)
        parts.append(_block_lists(a[tuple(sl)], inp, rest, region))
    return parts


@register(BlockFunc)
def block_func(op: BlockFunc, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    label = op.label()
    index = block_index(expr.chunks, out, label)
    regions = op.regions_of(expr, index)
    consts = iter(op.params.args)
    inds = op.input_inds()
    items = iter(range(len(arrays)))
    args: list[Any] = []
    info: dict[Any, Any] = {}
    for pos, ind in enumerate(op.in_inds):
        if ind is None:
            args.append(next(consts))
            continue
        k = next(items)
        a, inp = arrays[k], expr.inputs[k]
        if not op.concatenate and pos not in op.whole:
            contracted = [ax for ax, lab in enumerate(inds[k]) if lab not in op.out_ind]
            a = _block_lists(a, inp, contracted, regions[k])
        args.append(a)
        if op.block_info:
            in_index = [
                0 if len(c) == 1 else offsets(c).index(r.start)
                for c, r in zip(inp.chunks, regions[k])
            ]
            info[pos] = _info(inp.shape, inp.chunks, in_index)
    kwargs = dict(op.params.kwargs)
    if op.block_id:
        kwargs["block_id"] = index
    if op.block_info:
        info[None] = _out_info(expr, index)
        kwargs["block_info"] = info
    result = called(op.fn.fn, f"computing block {index} of {label}", *args, **kwargs)
    if op.output >= 0:
        result = result[op.output]
    return _as_block(result, expr, out, label)


_NUMPY_MODES = {"reflect": "symmetric", "nearest": "edge"}


def _padded(
    depth: Sequence[tuple[int, int]],
    boundary: Sequence[Any],
    x: Expr,
    index: Sequence[int],
    arrays: Sequence[np.ndarray],
) -> tuple[np.ndarray, list[AxisWindow]]:
    """Block ``index`` of ``x`` with its halo, and its windows: the pieces of periodic axes
    joined, the other boundary modes filled by ``numpy.pad``."""
    wins = windows(x, index, depth, boundary)
    if any(w.size == 0 for w in wins):  # an empty block: nothing to read or pad
        return np.empty([w.size for w in wins], dtype=x.dtype), wins
    periodic = periodic_axes(depth, boundary)
    if not periodic:
        core = arrays[0]
    else:
        shape = [w.main[1] - w.main[0] for w in wins]
        for ax in periodic:
            shape[ax] = wins[ax].size
        core = np.empty(shape, dtype=x.dtype)
        for combo, arr in zip(pieces(depth, boundary), arrays):
            dest: list[slice] = [slice(None)] * x.ndim
            empty = False
            for ax, piece in zip(periodic, combo):
                w = wins[ax]
                nb = w.before[1] - w.before[0] if w.before else 0
                nm = w.main[1] - w.main[0]
                dest[ax] = (slice(0, nb), slice(nb, nb + nm), slice(nb + nm, w.size))[piece]
                empty = empty or dest[ax].stop <= dest[ax].start
            if not empty:
                core[tuple(dest)] = arr
    for ax, w in enumerate(wins):
        if ax in periodic:
            continue
        mode = boundary[ax]
        before, after = max(0, -w.lo), max(0, w.hi - x.shape[ax])
        if before or after:
            widths = [(0, 0)] * x.ndim
            widths[ax] = (before, after)
            if isinstance(mode, str):
                core = np.pad(core, widths, mode=_NUMPY_MODES[mode])
            else:
                core = np.pad(core, widths, mode="constant", constant_values=mode)
        first = w.main[0] - before  # the global position of core's first element
        lo, hi = w.lo - first, w.hi - first
        if lo != 0 or hi != core.shape[ax]:
            sl: list[slice] = [slice(None)] * x.ndim
            sl[ax] = slice(lo, hi)
            core = core[tuple(sl)]
    return core, wins


@register(Overlap)
def overlap(op: Overlap, expr: Expr, out: Region, *arrays: np.ndarray) -> np.ndarray:
    label = op.label()
    index = block_index(expr.chunks, out, label)
    blocks = []
    info: dict[Any, Any] = {}
    trim_wins: list[AxisWindow] = []
    for j, ((x, a, b), depth, boundary) in enumerate(
        zip(op.arrays(expr), op.depths, op.boundaries)
    ):
        at = op.index_of(x, expr.ndim, index)
        block, wins = _padded(depth, boundary, x, at, arrays[a:b])
        blocks.append(block)
        if j == op.lead:
            trim_wins = wins
        if op.block_info:
            info[j] = _info(x.shape, x.chunks, at)
            info[j]["array-location"] = [(w.lo, w.hi) for w in wins]
    kwargs = dict(op.params.kwargs)
    if op.block_id:
        kwargs["block_id"] = index
    if op.block_info:
        info[None] = _out_info(expr, index)
        kwargs["block_info"] = info
    result = called(op.fn.fn, f"computing block {index} of {label}", *blocks, **kwargs)
    if op.trim:  # the halo is cut by position: the result must be the padded block's shape
        padded = tuple(w.size for w in trim_wins)
        result = checked(result, padded, expr.dtype, label, f"block {index} (with its halo)")
        cut = []
        for w, s in zip(trim_wins, out):
            lo = s.start - w.lo
            cut.append(slice(lo, lo + s.stop - s.start))
        # a copy of the block alone: the cut view would keep the padded result alive for
        # as long as the block is stored (its readers counted 6.4 MiB, it held 8.3)
        result = np.array(result[tuple(cut)])
    return _as_block(result, expr, out, label)


@register(UserElementwise)
def user_elementwise(
    op: UserElementwise, expr: Expr, out: Region, *arrays: np.ndarray
) -> np.ndarray:
    fn = op.fn.fn
    args = template_args(op.template, arrays)
    with np.errstate(all="ignore"):
        if op.fn.kind == "njit":
            try:
                result = np.asarray(fn(*args))
            except Exception:  # compiled for scalars only: one call per element
                result = None
            if result is None or result.shape != np.broadcast_shapes(*map(np.shape, args)):
                result = np.vectorize(fn, otypes=[expr.dtype])(*args)
        else:
            result = fn(*args)
    result = np.asarray(result)
    if result.dtype != expr.dtype:
        result = result.astype(expr.dtype)
    shape = _shape(out)
    if result.shape != shape:
        result = np.broadcast_to(result, shape)
    return result
