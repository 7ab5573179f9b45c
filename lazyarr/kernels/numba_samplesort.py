"""The sample sort's counts stage with a compiled search (``graph/ops/samplesort.py``).

Block ``i`` of the counts stage is, per candidate (in key order), how many
elements of the sorted block ``L_i`` have smaller keys: a search of every
candidate's value in ``L_i`` (``nb * k`` of them, 32,768 at 32 blocks).
``np.searchsorted`` does one binary search per value, each a chain of cache
misses in a block of megabytes; the candidates are sorted, so one compiled,
GIL-free walk along the block finds them all (the block read once, in
order). Rows equal the reference kernel's (:func:`search_rows`), NaN last
and ties as ``np.searchsorted``; everything else in the stage is the
reference kernel's (:func:`counts_block`). Bool, integer, float32 and
float64 blocks; other dtypes keep the reference kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.ops.samplesort import SampleSortStage
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import Arg, Kernel
from lazyarr.kernels.emit_ops import Unsupported
from lazyarr.kernels.reference.samplesort import Search, counts_block
from lazyarr.kernels.sets import MapFn, op_map

__all__ = ["counts_map", "search_function", "supports"]

_SOURCE = '''
@njit(inline="always")
def _lt(a, b):
    """``a`` before ``b`` in NumPy's sort order (NaN last)."""
    return a < b or (b != b and a == a)


@njit(nogil=True)
def {name}(line, w, later, out):
    n = line.shape[0]
    p = 0  # elements below w[t]
    q = 0  # elements at or below w[right_of]
    right_of = -1
    for t in range(w.shape[0]):
        v = w[t]
        while p < n and _lt(line[p], v):
            p += 1
        if not later[t]:
            out[t] = p
            continue
        if right_of < 0 or _lt(w[right_of], v):  # a new value: walk its run of equals once
            q = p
            while q < n and not _lt(v, line[q]):
                q += 1
            right_of = t
        out[t] = q
'''

_DTYPES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float32", "float64"}
)


def supports(stage: Any) -> bool:
    """Whether ``stage`` is a counts stage (not fused) of a dtype this kernel searches."""
    op = stage.expr.op
    return (
        isinstance(op, SampleSortStage)
        and op.part == "counts"
        and not stage.fused
        and stage.expr.inputs[0].dtype.name in _DTYPES
    )


def _kernel(dtype: np.dtype) -> Kernel:
    name = f"samplesort_search_{dtype.name}"
    args = (
        Arg("line", dtype.name, readonly=True),
        Arg("w", dtype.name, readonly=True),
        Arg("later", "bool", readonly=True),
        Arg("out", np.dtype(np.intp).name),
    )
    return Kernel(source=_SOURCE.replace("{name}", name), args=args, n_inputs=3, name=name)


def search_function(dtype: np.dtype, options: Options) -> Search:
    """The compiled :data:`~lazyarr.kernels.reference.samplesort.Search` for ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype.name not in _DTYPES:
        raise Unsupported(f"samplesort search: no compiled search for {dtype}")
    fn = compile_kernel(_kernel(dtype), options)

    def search(line: np.ndarray, w: np.ndarray, later: np.ndarray) -> np.ndarray:
        out = np.empty(w.shape[0], np.intp)
        if w.shape[0]:
            fn(np.ascontiguousarray(line), np.ascontiguousarray(w), later, out)
        return out

    return search


def counts_map(stage: Any, options: Options) -> MapFn:
    """The counts stage's block function (``supports(stage)`` must hold) with the search
    compiled."""
    expr = stage.expr
    search = search_function(expr.inputs[0].dtype, options)
    return op_map(expr, lambda op, _, out, *arrays: counts_block(op, out, *arrays, search=search))
