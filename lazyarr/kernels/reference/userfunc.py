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
from lazyarr.graph.ops.overlap import Overlap
from lazyarr.graph.ops.userfunc import BlockFunc, UserElementwise, block_index, template_args
from lazyarr.kernels.reference.registry import register

__all__: list[str] = []


def _shape(out: Region) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in out)


def _as_block(result: Any, expr: Expr, out: Region, label: str) -> np.ndarray:
    """The user's ``result`` as the block ``out`` of ``expr`` (dtype cast, shape checked)."""
    arr = np.asarray(result)
    want = _shape(out)
    if arr.shape != want:
        if arr.size == int(np.prod(want)) and arr.ndim == 0:
            arr = arr.reshape(want)
        else:
            raise ValueError(
                f"{label}: the function returned a block of shape {arr.shape} where {want} was "
                "expected (pass chunks=, drop_axis= or new_axis= when it changes the shape)"
            )
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
        if not op.concatenate:
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
    result = op.fn.fn(*args, **kwargs)
    if op.output >= 0:
        result = result[op.output]
    return _as_block(result, expr, out, label)


_NUMPY_MODES = {"reflect": "symmetric", "nearest": "edge"}


def _padded(op: Overlap, x: Expr, index: Sequence[int], arrays: Sequence[np.ndarray]) -> Any:
    """The block ``index`` of ``x`` with its halo: pieces of periodic axes joined, the
    other boundary modes filled by ``numpy.pad``; and the windows."""
    wins = op.windows(x, index)
    periodic = op.periodic_axes()
    if not periodic:
        core = arrays[0]
    else:
        shape = [w.main[1] - w.main[0] for w in wins]
        for ax in periodic:
            shape[ax] = wins[ax].size
        core = np.empty(shape, dtype=x.dtype)
        for combo, arr in zip(op.pieces(), arrays):
            dest: list[slice] = [slice(None)] * x.ndim
            for ax, piece in zip(periodic, combo):
                w = wins[ax]
                nb = w.before[1] - w.before[0] if w.before else 0
                nm = w.main[1] - w.main[0]
                dest[ax] = (slice(0, nb), slice(nb, nb + nm), slice(nb + nm, w.size))[piece]
            want = tuple(s.indices(n)[1] - s.indices(n)[0] for s, n in zip(dest, shape))
            if 0 in want:
                continue
            core[tuple(dest)] = arr
    for ax, w in enumerate(wins):
        if ax in periodic:
            continue
        mode = op.boundary[ax]
        n = x.shape[ax]
        before, after = max(0, -w.lo), max(0, w.hi - n)
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
    x = expr.inputs[0]
    index = block_index(expr.chunks, out, label)
    block, wins = _padded(op, x, index, arrays)
    kwargs = dict(op.params.kwargs)
    if op.block_id:
        kwargs["block_id"] = index
    if op.block_info:
        info = _info(x.shape, x.chunks, index)
        info["array-location"] = [(w.lo, w.hi) for w in wins]
        kwargs["block_info"] = {0: info, None: _out_info(expr, index)}
    result = np.asarray(op.fn.fn(block, **kwargs))
    if op.trim:
        if result.ndim != x.ndim:
            raise ValueError(
                f"{label}: the function returned {result.ndim} dimensions for a block of "
                f"{x.ndim}; trim=True needs the block's dimensions"
            )
        cut = []
        for ax, (w, b) in enumerate(zip(wins, index)):
            o = offsets(x.chunks[ax])
            lo = o[b] - w.lo
            cut.append(slice(lo, lo + o[b + 1] - o[b]))
        result = result[tuple(cut)]
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
