"""The cost model: bytes, flops and the recompute-or-store decision.

Numbers are rough per-element costs in nanoseconds on one core (cheap
arithmetic ~0.3 ns, transcendental functions a few ns, ~0.2 ns per byte of
memory traffic). The recompute-or-store decision only ranks choices with
them; seconds are predicted in :mod:`lazyarr.optimize.timing`, which divides
these flops and bytes by the speeds measured on the machine (the constants
here are its fallback). Data in, numbers out: nothing here looks at executors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.expr import Expr
from lazyarr.graph.group import member_regions, root_input_regions
from lazyarr.graph.ops import Elementwise
from lazyarr.graph.ops.creation import Random
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.ops.linalg import Einsum, Matmul, Tensordot
from lazyarr.graph.ops.manipulation import BroadcastTo, Transpose

__all__ = [
    "BYTE_NS",
    "CHEAP_NS",
    "RANDOM_FLOPS",
    "UNIFORM_FLOPS",
    "contraction_flops",
    "elementwise_ns",
    "expr_flops",
    "read_amplification",
    "recompute_or_store",
    "work_flops",
]

BYTE_NS = 0.2
"""Nanoseconds to move one byte to or from memory (about 5 GB/s per core)."""

_CHEAP = {
    "add",
    "subtract",
    "multiply",
    "negative",
    "positive",
    "absolute",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "invert",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "where",
    "clip",
    "astype",
    "square",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "sign",
    "conjugate",
    "real",
    "imag",
    "copysign",
}
_MEDIUM = {
    "true_divide",
    "divide",
    "floor_divide",
    "remainder",
    "sqrt",
    "reciprocal",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "hypot",
    "fmod",
    "left_shift",
    "right_shift",
}
_NS = {"cheap": 0.3, "medium": 1.5, "expensive": 6.0}
CHEAP_NS = _NS["cheap"]
"""Nanoseconds of one cheap floating-point operation (the unit :func:`expr_flops` counts)."""
RANDOM_FLOPS = 60.0
"""Cheap operations one random value of a shaped distribution costs to generate (a
standard normal takes about 20 ns per value from its Philox counter, sixty multiply-adds)."""
UNIFORM_FLOPS = 8.0
"""The same for uniform values (``random``, ``uniform``, ``integers``: about 2.5 ns)."""
_UNIFORM = frozenset({"random", "uniform", "integers"})


def elementwise_ns(func: str) -> float:
    """Estimated nanoseconds per element of one elementwise function."""
    if func in _CHEAP:
        return _NS["cheap"]
    if func in _MEDIUM:
        return _NS["medium"]
    return _NS["expensive"]  # exp, log, trig, power, ...


def expr_flops(e: Expr) -> float:
    """Rough floating-point operations of one op over its whole output."""
    if isinstance(e.op, Elementwise):
        return e.size * elementwise_ns(e.op.func) / _NS["cheap"]
    return float(sum(i.size for i in e.inputs))


def contraction_flops(e: Expr) -> float:
    """Flops of a matrix product (2 per multiply-add) of ``e``; 0 for any other op."""
    op = e.op
    if isinstance(op, Matmul):
        a = e.inputs[0]
        return 2.0 * e.size * (a.shape[-1] if a.ndim else 1)
    if isinstance(op, Tensordot):
        a = e.inputs[0]
        return 2.0 * e.size * math.prod(a.shape[ax] for ax in op.axes_a)
    if isinstance(op, Einsum):
        sizes: dict[int, int] = {}
        for x, labels in zip(e.inputs, op.subscripts):
            for lab, n in zip(labels, x.shape):
                sizes[lab] = max(sizes.get(lab, 1), n)
        summed = math.prod(n for lab, n in sizes.items() if lab not in op.output)
        return 2.0 * e.size * summed
    return 0.0


def work_flops(e: Expr) -> tuple[float, float]:
    """(vector, matrix) flops of one op: elementwise-equivalent work, and matrix products
    (which run at the BLAS rate). Sources cost nothing but random values."""
    matrix = contraction_flops(e)
    if matrix:
        return 0.0, matrix
    if e.op.kind == "source":
        if not isinstance(e.op, Random):
            return 0.0, 0.0
        per = UNIFORM_FLOPS if e.op.dist in _UNIFORM else RANDOM_FLOPS
        return e.size * per, 0.0
    return expr_flops(e), 0.0


def _op_ns(e: Expr) -> float | None:
    """Nanoseconds per element to recompute ``e`` (None: never recompute it)."""
    if isinstance(e.op, Elementwise):
        return elementwise_ns(e.op.func)
    if isinstance(e.op, (Transpose, BroadcastTo, GetItem)):
        return 0.0  # a view of its input: nothing to compute
    return None


def recompute_or_store(e: Expr, copies: float) -> tuple[bool, float]:
    """Whether computing ``e`` ``copies`` times (in its readers) beats storing it once.

    Returns (recompute, ratio) where ratio = recompute cost / store cost.
    Storing writes the array once and reads it once per copy; recomputing
    repeats the op ``copies - 1`` extra times. Only elementwise ops and
    views are ever recomputed (others: ratio ``inf``).
    """
    ns = _op_ns(e)
    if copies <= 1:
        return True, 0.0
    if ns is None or math.isinf(copies):  # never recomputed / too many blocks to count
        return False, math.inf
    extra = (copies - 1) * ns
    store = e.dtype.itemsize * (1 + copies) * BYTE_NS
    ratio = extra / store if store else math.inf
    return ratio < 1.0, ratio


MAX_COSTED_BLOCKS = 4096
"""Above this many root blocks, :func:`read_amplification` does not count (returns inf)."""


def read_amplification(members: Sequence[Expr], key: str) -> float:
    """How many times a group computes each element of member ``key`` over all root blocks.

    ``members``: the group in dependency order, root last. A contraction
    reads a row panel of its left operand once per column block of its
    output, so an operand folded into it is computed that many times.
    """
    root = members[-1]
    target = next(m for m in members if m.key == key)
    nblocks = math.prod(len(c) for c in root.chunks)
    if target.size == 0 or nblocks == 0:
        return 1.0
    if nblocks > MAX_COSTED_BLOCKS:
        return math.inf
    total = 0
    for index in block_index_iter(tuple(len(c) for c in root.chunks)):
        need = member_regions(
            members, root_input_regions(members, block_slices(root.chunks, index))
        )
        region = need.get(key)
        if region is not None:
            total += math.prod(max(0, r.stop - r.start) for r in region)
    return total / target.size
