"""Per-block top-k by a compiled, GIL-free filter: one read of the block, no copy.

The reference partial (``reference/topk.py``) selects a block's top ``|k|``
with ``np.partition``, which copies the block and runs an introselect over
it: about 5 ns per float64 on the 2-core Xeon this was written on, more
than drawing the value (4 ns, ``numba_random.py``). Here one pass compares
each entry with a threshold, the ``|k|``-th best entry kept so far, and
appends the few that beat it to a buffer; when the buffer fills, a
quickselect keeps its best ``|k|`` and sets the new threshold. Random data
keeps about ``|k| ln(n / |k|)`` entries, so the pass costs a load and a
compare per entry; sorted data, the worst case, still costs a constant per
entry (each buffer of ``CAPACITY`` entries is selected once, in linear time).

Entries rank as the reference's (:mod:`lazyarr.graph.ops.topk`): by value in
``k``'s direction, NaN beyond every number, equal values by increasing
index, so each line's kept set is exactly the reference's and ``argtopk``
ties resolve as a stable sort's. The kept entries are then ordered by the
reference's :func:`~lazyarr.kernels.reference.topk.select`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.ops.topk import TopK
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import Arg, Kernel
from lazyarr.kernels.reference.topk import State, select
from lazyarr.kernels.sets import PartialFn

__all__ = ["CAPACITY", "partial_function", "supports"]

CAPACITY = 1024
"""Buffer entries per line (at least ``4 |k|``): a quickselect over a full buffer keeps
``|k|`` of them, so sorted input pays one linear selection per ``CAPACITY - |k|`` entries."""

_SOURCE = '''
@njit(inline="always")
def _before(a, i, b, j, largest):
    """``a`` (at ``i``) ranks before ``b`` (at ``j``): further in k's direction, NaN beyond
    every number, equal values by index."""
    an = a != a
    bn = b != b
    if an or bn:
        if an and bn:
            return i < j
        return an == largest
    if a == b:
        return i < j
    return (a > b) == largest


@njit(inline="always")
def _keep(bv, bi, n, m, largest):
    """Reorder ``bv[:n], bi[:n]`` so that the first ``m`` are the best, the ``m``-th best
    at ``m - 1`` (a quickselect; keys are distinct, indices being distinct)."""
    lo = 0
    hi = n - 1
    target = m - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        pv = bv[mid]
        pi = bi[mid]
        i = lo
        j = hi
        while i <= j:
            while _before(bv[i], bi[i], pv, pi, largest):
                i += 1
            while _before(pv, pi, bv[j], bi[j], largest):
                j -= 1
            if i <= j:
                tv = bv[i]
                bv[i] = bv[j]
                bv[j] = tv
                ti = bi[i]
                bi[i] = bi[j]
                bi[j] = ti
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break


@njit(nogil=True)
def {name}(lines, spec, out_v, out_i):
    m, largest, cap = spec[0], spec[1] != 0, spec[2]
    n = lines.shape[1]
    bv = np.empty(cap, lines.dtype)
    bi = np.empty(cap, np.int64)
    for t in range(lines.shape[0]):
        line = lines[t]
        count = 0
        full = False
        tv = line[0]
        ti = 0
        for j in range(n):
            x = line[j]
            if full and not _before(x, j, tv, ti, largest):
                continue
            bv[count] = x
            bi[count] = j
            count += 1
            if count == cap:
                _keep(bv, bi, count, m, largest)
                count = m
                full = True
                tv = bv[m - 1]
                ti = bi[m - 1]
        if count > m:
            _keep(bv, bi, count, m, largest)
        for s in range(m):
            out_v[t, s] = bv[s]
            out_i[t, s] = bi[s]
'''

_DTYPES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float32", "float64"}
)


def supports(stage: Any) -> bool:
    """Whether ``stage`` is a top-k reduction (not fused) of a dtype this kernel reads."""
    expr = stage.expr
    return isinstance(expr.op, TopK) and not stage.fused and expr.inputs[0].dtype.name in _DTYPES


def _kernel(dtype: np.dtype) -> Kernel:
    name = f"topk_filter_{dtype.name}"
    args = (
        Arg("lines", dtype.name, ndim=2, readonly=True),
        Arg("spec", "int64", readonly=True),
        Arg("out_v", dtype.name, ndim=2),
        Arg("out_i", "int64", ndim=2),
    )
    return Kernel(source=_SOURCE.replace("{name}", name), args=args, n_inputs=2, name=name)


def partial_function(stage: Any, options: Options) -> PartialFn:
    """The partial of a top-k stage (``supports(stage)`` must hold): the reference's state,
    with each line's top ``|k|`` found by the compiled filter."""
    expr = stage.expr
    op: TopK = expr.op
    dtype = expr.inputs[0].dtype
    fn = compile_kernel(_kernel(dtype), options)
    m = abs(op.k)
    spec = np.array([m, op.k > 0, max(CAPACITY, 4 * m)], np.int64)  # |k|, largest, buffer

    def partial(region: Any, get: Any) -> State:
        v = np.moveaxis(get(0, region), op.axis, -1)
        n = v.shape[-1]
        idx = None  # positions along the line, for argtopk
        if n > m:
            lines = np.ascontiguousarray(v).reshape(-1, n)
            vals = np.empty((lines.shape[0], m), dtype)
            pos = np.empty((lines.shape[0], m), np.int64)
            if lines.shape[0]:
                fn(lines, spec, vals, pos)
            o = np.argsort(pos, axis=-1)  # back to index order, as select expects
            v = np.take_along_axis(vals, o, axis=-1).reshape(*v.shape[:-1], m)
            idx = np.take_along_axis(pos, o, axis=-1).reshape(v.shape)
        if not op.arg:
            return select(v, None, op.k)
        start = region[op.axis].start
        if idx is None:
            idx = np.broadcast_to(np.arange(start, start + n, dtype=np.intp), v.shape)
        else:
            idx = (idx + start).astype(np.intp)
        return select(v, idx, op.k)

    return partial
