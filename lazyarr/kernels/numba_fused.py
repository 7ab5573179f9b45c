"""Callables for fused groups backed by generated Numba kernels.

``map_function(members, input_exprs, options)`` and
``partial_function(members, input_exprs, root, options)`` return functions
with the shapes every executor uses (``(out_region, get_region) ->
block`` and ``(body_region, get_region) -> partial state``). They emit
and compile the group's kernel (:mod:`emit`, :mod:`compile`) once, and per
block turn the input regions into flat read-only buffers plus the ``meta``
table of offsets and element strides (broadcast axes get stride 0, axes
that are contiguous for every operand are merged, so C-contiguous inputs
run as one flat loop).

Partial states are exactly those of the NumPy reference ``ReduceKernel``
(``lazyarr.kernels.reference.reduction``), both laid out by the reduction's
state description (``lazyarr.graph.ops.reduction_state``), so its
``combine`` and ``finalize`` apply unchanged.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lazyarr._lru import LRU
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.elementwise import Elementwise
from lazyarr.graph.ops.reduction_state import layout
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import Kernel, ReduceSpec, Slot, emit_map_joint, emit_reduce_joint
from lazyarr.kernels.fused import GetRegion
from lazyarr.kernels.reference import kernel_for

__all__ = ["joint_map_function", "joint_partial_function", "map_function", "partial_function"]

MapFn = Callable[[Region, GetRegion], np.ndarray]
PartialFn = Callable[[Region, GetRegion], Any]


_EMITTED: LRU[Kernel] = LRU(512)


Parts = Sequence[tuple[Sequence[Expr], Expr]]  # (body members, Reduce root) per reduction


def _emitted(
    maps: Sequence[Sequence[Expr]], input_exprs: Sequence[Expr], parts: Parts | None
) -> Kernel:
    """The group's kernel source, emitted once per structure (keys only: no data is held).

    ``parts``: None for elementwise groups (``maps``: each one's members, root
    last), else the reductions folded.
    """
    key = (
        tuple(tuple(m.key for m in members) for members in maps),
        tuple(e.key for e in input_exprs),
        None if parts is None else tuple((tuple(m.key for m in b), r.key) for b, r in parts),
    )
    if parts is None:
        return _EMITTED.get_or_make(key, lambda: emit_map_joint(maps, input_exprs))
    return _EMITTED.get_or_make(key, lambda: emit_reduce_joint(parts, input_exprs))


def _flat(a: np.ndarray, writeable: bool = False) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """A flat buffer over ``a``'s memory, the offset of ``a[0, ...]``, element strides.

    Input buffers are read-only views (one compiled signature for every input).
    """
    item = a.itemsize
    if a.flags.c_contiguous:
        buf = a.reshape(-1)
        buf.flags.writeable = writeable
        return buf, 0, _c_strides(a.shape)
    if any(s % item for s in a.strides):
        if writeable:
            raise ValueError("an output view with strides that are not whole elements")
        return _flat(np.ascontiguousarray(a))
    flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)
    base = a[flip]  # lowest address first
    offset = sum((n - 1) * (-s // item) for n, s in zip(a.shape, a.strides) if s < 0)
    extent = 1 + sum((n - 1) * abs(s) // item for n, s in zip(a.shape, a.strides))
    buf = as_strided(base, shape=(extent,), strides=(item,), writeable=writeable)
    return buf, offset, tuple([s // item for s in a.strides])


def _collapse(
    shape: Sequence[int], strides: Sequence[Sequence[int]]
) -> tuple[list[int], list[list[int]]]:
    """Drop length-1 axes and merge neighbours that are contiguous for every operand."""
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        if out_shape and all(o[-1] == s[d] * n for o, s in zip(out_strides, strides)):
            out_shape[-1] *= n
            for o, s in zip(out_strides, strides):
                o[-1] = s[d]
            continue
        out_shape.append(n)
        for o, s in zip(out_strides, strides):
            o.append(s[d])
    if not out_shape:
        return [1], [[0] for _ in strides]
    return out_shape, out_strides


_LAYOUTS: dict[tuple, np.ndarray | None] = {}  # (shape, strides) -> one-slab meta template


def _metas(
    shape: tuple[int, ...], offsets: list[int], strides: Sequence[tuple[int, ...]]
) -> list[np.ndarray]:
    """One ``meta`` per 2-D slab of the (collapsed) block: rows, n, (offset, row, inner) per op.

    Blocks that collapse to more than two axes (rare: broadcasting in a
    middle axis) are run slab by slab over the leading axes. The blocks of
    one grid share their shape and strides: the collapsed layout is kept
    (a template whose offsets are filled in per block). ``strides``: one
    tuple per operand (the key is built from them as they are).
    """
    key = (shape, *strides)
    template = _LAYOUTS.get(key)
    if template is None and key not in _LAYOUTS:
        shp, sts = _collapse(shape, strides)
        if len(shp) <= 2:
            rows = 1 if len(shp) == 1 else shp[-2]
            flat = [v for s in sts for v in (0, 0 if len(shp) == 1 else s[-2], s[-1])]
            template = np.array([rows, shp[-1], *flat], dtype=np.int64)
        if len(_LAYOUTS) >= 256:
            _LAYOUTS.clear()
        _LAYOUTS[key] = template
    if template is not None:
        meta = template.copy()
        meta[2::3] = offsets
        return [meta]
    shp, sts = _collapse(shape, strides)
    if len(shp) == 1:
        flat = [v for o, s in zip(offsets, sts) for v in (o, 0, s[0])]
        return [np.array([1, shp[0], *flat], dtype=np.int64)]
    metas = []
    for idx in np.ndindex(*shp[:-2]):
        flat = []
        for o, s in zip(offsets, sts):
            flat += [o + sum(i * st for i, st in zip(idx, s)), s[-2], s[-1]]
        metas.append(np.array([shp[-2], shp[-1], *flat], dtype=np.int64))
    return metas


@functools.lru_cache(maxsize=1024)
def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of ``shape`` (the blocks of a grid share them)."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(out[::-1])


def _report(status: int, messages: Sequence[str]) -> None:
    """Apply NumPy's ``divide`` error handling to the flags a kernel returned."""
    mode = np.geterr()["divide"]
    for bit, message in enumerate(messages):
        if not status >> bit & 1 or mode == "ignore":
            continue
        if mode == "raise":
            raise FloatingPointError(message)
        if mode == "call":
            np.geterrcall()("divide by zero", 1)
        elif mode == "log":
            np.geterrcall().write(f"Warning: {message}\n")
        elif mode == "print":
            print(f"Warning: {message}")
        else:
            warnings.warn(message, RuntimeWarning, stacklevel=4)


def _reads_own_region(member: Expr, arg: int) -> bool:
    """Whether elementwise ``member`` reads input ``arg`` over the block's own region
    (same shape, nothing broadcast): the region needs no per-block arithmetic."""
    return isinstance(member.op, Elementwise) and member.inputs[arg].shape == member.shape


class _Inputs:
    """Per block: the external input regions as (buffer, offset, strides aligned to the group).

    What does not change from block to block is worked out once: which
    slots read the block's own region, and (per slot and input layout) the
    strides aligned to the group, so a block costs a read and a lookup per
    input.
    """

    def __init__(self, group_slots: list[Slot], members: Sequence[Expr], shape: tuple) -> None:
        self.slots = group_slots
        self.members = members
        self.shape = shape
        self.dtypes = [np.dtype(s.expr.dtype).newbyteorder("=") for s in group_slots]
        self.own = [
            s.member < 0 or _reads_own_region(members[s.member], s.arg) for s in group_slots
        ]
        self._flats: dict[int, tuple[np.ndarray, np.ndarray, tuple[int, ...]]] = {}
        self._rows: dict[tuple, tuple[int, ...]] = {}  # (slot, input strides) -> aligned strides

    def _whole(self, a: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
        """A read-only flat view of a C-contiguous user array and its element strides."""
        hit = self._flats.get(id(a))
        if hit is None or hit[0] is not a:
            buf = a.reshape(-1)
            buf.flags.writeable = False
            if len(self._flats) >= 4:
                self._flats.clear()
            hit = self._flats[id(a)] = (a, buf, _c_strides(a.shape))
        return hit[1], hit[2]

    def _aligned(self, k: int, st: tuple[int, ...]) -> tuple[int, ...]:
        """Slot ``k``'s input strides ``st`` on the group's axes (broadcast axes: 0)."""
        row = self._rows.get((k, st))
        if row is None:
            shape = self.shape
            lead = len(shape) - len(st)
            row = (0,) * lead + tuple(
                [
                    0 if (n == 1 and shape[lead + j] != 1) else st[j]
                    for j, n in enumerate(self.slots[k].expr.shape)
                ]
            )
            if len(self._rows) >= 256:
                self._rows.clear()
            self._rows[(k, st)] = row
        return row

    def fetch(
        self, out: Region, get: GetRegion
    ) -> tuple[list[np.ndarray], list[int], list[tuple[int, ...]]]:
        bufs, offsets, strides = [], [], []
        regions: dict[int, tuple] = {}
        whole = getattr(get, "whole", None)
        own = self.own
        for k, s in enumerate(self.slots):
            if own[k]:
                region = out
            else:
                m = self.members[s.member]
                if s.member not in regions:
                    regions[s.member] = m.op.regions(m, out)
                region = tuple(regions[s.member][s.arg])
            want = self.dtypes[k]
            user = whole[s.position] if whole is not None else None
            if (
                user is not None
                and user.dtype == want
                and user.ndim == len(region)
                and user.flags.c_contiguous
            ):
                # a region of the user's array: addressed inside it, no view is made
                buf, st = self._whole(user)
                off = sum([r.start * n for r, n in zip(region, st)])
            else:
                a = get(s.position, region)
                if type(a) is not np.ndarray:
                    a = np.asarray(a)
                if a.dtype != want:
                    a = a.astype(want)
                buf, off, st = _flat(a)
            bufs.append(buf)
            offsets.append(off)
            strides.append(self._aligned(k, st))
        return bufs, offsets, strides


def map_function(members: Sequence[Expr], input_exprs: Sequence[Expr], options: Options) -> MapFn:
    """The compiled block function of a fused elementwise group.

    Raises ``Unsupported`` (no emitter) or ``CompileError`` (Numba failed).
    """
    joint = joint_map_function([members], input_exprs, options)

    def run(region: Region, get: GetRegion, out: np.ndarray | None = None) -> np.ndarray:
        """The block over ``region``; written into ``out`` (a view of the result) if given."""
        return joint(region, get, [out])[0]

    run.writes_into = True  # type: ignore[attr-defined]
    return run


def joint_map_function(
    parts: Sequence[Sequence[Expr]], input_exprs: Sequence[Expr], options: Options
) -> Callable[..., list[np.ndarray]]:
    """The compiled blocks of several elementwise groups of one block shape, in one pass.

    ``parts``: each group's members, root last; ``input_exprs``: every input
    any of them reads. The result maps ``(region, get, outs)`` to the list of
    blocks, written into ``outs[t]`` (views of results) where not None.
    """
    kernel = _emitted(parts, input_exprs, None)
    fn = compile_kernel(kernel, options)
    n_out = len(parts)
    dtypes = [np.dtype(a.dtype) for a in kernel.args[:n_out]]
    inputs = _Inputs(list(kernel.slots), kernel.members, parts[0][-1].shape)
    messages = kernel.status
    mask = (1 << len(messages)) - 1  # the status bits that are not the ``ilp`` flag

    def run(
        region: Region, get: GetRegion, outs: Sequence[np.ndarray | None] = ()
    ) -> list[np.ndarray]:
        shape = tuple([s.stop - s.start for s in region])
        given = list(outs) or [None] * n_out
        results = [np.empty(shape, dtype=d) if o is None else o for o, d in zip(given, dtypes)]
        if math.prod(shape) == 0:
            return results
        bufs, offsets, strides = inputs.fetch(region, get)
        flats = [_flat(r, writeable=True) for r in results]
        metas = _metas(
            shape, [*(f[1] for f in flats), *offsets], [*(f[2] for f in flats), *strides]
        )
        inner = [metas[0][4 + 3 * t] for t in range(n_out)]
        if metas[0][1] > 1 and any(i != 1 for i in inner):
            # the loop stores rows contiguously: go through new blocks
            for r, fresh in zip(results, run(region, get)):
                r[...] = fresh
            return results
        obufs = [f[0] for f in flats]
        status = 0
        for meta in metas:
            status |= fn(*obufs, meta, *bufs)
        status &= mask
        if status:
            _report(status, messages)
        return results

    return run


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _state(spec: ReduceSpec, arrays: list[np.ndarray], count: int) -> Any:
    """The reference partial state from the kernel's registers: the fields of the state
    description in order, its per-block fields (counts) filled in from ``count``."""
    state = layout(spec.func)
    registers = iter(arrays)
    values: list[Any] = [count if f.per_block else next(registers) for f in state.fields]
    if state.finalize == "moments":  # the mean is held as shift + offset: renormalized
        n, shift, mean, m2 = values
        with np.errstate(over="ignore", invalid="ignore"):
            hi, lo = _two_sum(shift, mean)
        values = [n, hi, lo, m2]
    return tuple(values) if len(values) > 1 else values[0]


def partial_function(
    members: Sequence[Expr], input_exprs: Sequence[Expr], root: Expr, options: Options
) -> PartialFn:
    """The compiled partial of ``root`` (a Reduce) over its body ``members`` (may be empty)."""
    joint = joint_partial_function([(members, root)], input_exprs, options)

    def run(region: Region, get: GetRegion) -> Any:
        return joint(region, get)[0]

    return run


def joint_partial_function(parts: Parts, input_exprs: Sequence[Expr], options: Options) -> Callable:
    """The compiled partials of several reductions of one block grid, in one pass.

    ``parts``: ``(body members, root)`` per reduction (same body shape and
    reduced axes); ``input_exprs``: every input any body reads. The result
    maps ``(body_region, get_region)`` to the list of partial states.
    """
    kernel = _emitted([], input_exprs, parts)
    fn = compile_kernel(kernel, options)
    specs = kernel.reduces
    roots = [root for _, root in parts]
    op = roots[0].op
    axes = op.axes
    in_shape = roots[0].inputs[0].shape
    references = [kernel_for(r.op) for r in roots]
    inputs = _Inputs(list(kernel.slots), kernel.members, in_shape)
    messages = kernel.status
    mask = (1 << len(messages)) - 1  # the status bits that are not the ``ilp`` flag
    flat = [r.op.flat for r, sp in zip(roots, specs) if sp.index]
    if len(set(flat)) > 1:
        raise ValueError("joint reductions number their elements differently (flat and not)")
    global_strides = _c_strides(in_shape)
    rank = any(sp.rank for sp in specs)
    flat_axis = None if not flat or flat[0] else axes[0]
    prepared: dict[tuple, tuple] = {}  # block shape -> what every block of that shape shares

    def prepare(shape: tuple) -> tuple:
        """Initial states (copied per block: np.full is slow), the state and index strides,
        and the count of reduced elements of blocks of ``shape``."""
        state_shape = tuple(1 if a in axes else n for a, n in enumerate(shape))
        strides = [tuple(0 if a in axes else s for a, s in enumerate(_c_strides(state_shape)))]
        if rank:
            ranks = dict(zip(axes, _c_strides(tuple([shape[a] for a in axes]))))
            strides.append(tuple(ranks.get(a, 0) for a in range(len(shape))))
        if flat_axis is not None:
            strides.append(tuple(1 if a == flat_axis else 0 for a in range(len(shape))))
        elif flat:
            strides.append(global_strides)
        starts = [[np.full(state_shape, v, dtype=dt) for dt, v in sp.states] for sp in specs]
        count = math.prod(shape[a] for a in axes)
        if len(prepared) >= 64:
            prepared.clear()
        prepared[shape] = (starts, strides, count)
        return prepared[shape]

    def run(region: Region, get: GetRegion) -> list[Any]:
        shape = tuple([s.stop - s.start for s in region])
        if 0 in shape:
            return [
                ref.partial(r.op, r, np.empty(shape, dtype=sp.value), region, in_shape)
                for ref, r, sp in zip(references, roots, specs)
            ]
        starts, strides, count = prepared.get(shape) or prepare(shape)
        arrays = [[a.copy() for a in per] for per in starts]
        offsets = [0, 1] if rank else [0]
        if flat_axis is not None:
            offsets.append(region[flat_axis].start)
        elif flat:
            offsets.append(sum([r.start * g for r, g in zip(region, global_strides)]))
        bufs, in_offsets, in_strides = inputs.fetch(region, get)
        states = [a.reshape(-1) for per in arrays for a in per]
        if kernel.tile:  # the kernel's scratch tiles of values
            states += [np.empty(kernel.tile, dtype=sp.value) for sp in specs]
        status = 0
        for meta in _metas(shape, offsets + in_offsets, strides + in_strides):
            status |= fn(*states, meta, *bufs)
        status &= mask
        if status:
            _report(status, messages)
        return [_state(sp, per, count) for sp, per in zip(specs, arrays)]

    return run
