"""The cost model: bytes, flops and the recompute-or-store decision.

Numbers are rough per-element costs in nanoseconds on one core (cheap
arithmetic ~0.3 ns, transcendental functions a few ns, ~0.2 ns per byte of
memory traffic); they only need to rank choices, not predict wall time.
Data in, numbers out: nothing here looks at executors.
"""

from __future__ import annotations

import math

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise

__all__ = [
    "BYTE_NS",
    "elementwise_ns",
    "expr_flops",
    "recompute_or_store",
    "stage_io_bytes",
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


def recompute_or_store(e: Expr, copies: int) -> tuple[bool, float]:
    """Whether computing ``e`` inside each of ``copies`` consumers beats storing it once.

    Returns (recompute, ratio) where ratio = recompute cost / store cost.
    Storing writes the array once and reads it once per consumer;
    recomputing repeats the op ``copies - 1`` extra times.
    """
    if not isinstance(e.op, Elementwise) or copies <= 1:
        return copies <= 1, 0.0
    extra = (copies - 1) * elementwise_ns(e.op.func)
    store = e.dtype.itemsize * (1 + copies) * BYTE_NS
    ratio = extra / store if store else math.inf
    return ratio < 1.0, ratio


def stage_io_bytes(members: tuple[Expr, ...], input_exprs: tuple[Expr, ...]) -> tuple[int, int]:
    """(bytes read from other stages, bytes written) by a stage over its whole grid."""
    return sum(e.nbytes for e in input_exprs), members[-1].nbytes
