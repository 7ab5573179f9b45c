"""How a reduction folds values into accumulators, as Numba source statements.

``reduce_spec`` gives the accumulators of a ``Reduce``: the array fields of
its state description (:mod:`lazyarr.graph.ops.reduction_state`, shared with
the NumPy reference ``ReduceKernel``, so its ``combine`` and ``finalize``
apply unchanged) and ``update_lines`` the statements folding one value
``v`` into registers ``a0, a1, ...``, in NumPy's dtypes and NaN rules.
:mod:`lazyarr.kernels.emit` builds the loops around them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.reduction_state import MONOIDS, layout
from lazyarr.kernels.emit_ops import (
    Scope,
    Unsupported,
    cast,
    check_dtype,
    dtype_text,
    isnan_text,
    ufunc_emitter,
)

__all__ = [
    "LANES",
    "ReduceSpec",
    "laned",
    "lane_lines",
    "reduce_spec",
    "update_function",
    "update_lines",
]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


@dataclasses.dataclass(frozen=True)
class ReduceSpec:
    """The accumulators of a trailing reduction.

    ``states`` are (dtype, initial value) of the partial-state arrays (all
    shaped like the block with reduced axes of length one). ``rank``: the
    loop needs ``k``, the 1-based position of an element among those
    reduced into the same output; ``index``: it needs ``g``, the element's
    index as argmin/argmax report it.
    """

    func: str
    value: np.dtype
    acc: np.dtype
    states: tuple[tuple[np.dtype, Any], ...]
    rank: bool = False
    index: bool = False


_FOLDS = frozenset(
    {"sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "argmin", "argmax"}
    | {"count_nonzero", "nansum", "nanprod", "nanmin", "nanmax", "nanmean"}
)
"""Reductions with a fold of their own below; other monoids fold with their ufunc."""


def reduce_spec(root: Expr, value: np.dtype) -> ReduceSpec:
    """The accumulators of ``root`` (a ``Reduce``) over values of dtype ``value``: the
    array fields of its state description, in its order, from their identities."""
    op = root.op
    if not isinstance(op, Reduce):
        raise Unsupported(f"{op.name} is not a reduction")
    f = op.func
    if f not in _FOLDS and f not in MONOIDS:
        raise Unsupported(f"no Numba emitter for reduction {f!r}")
    value = check_dtype(value, f)
    state = op.state(value, root.dtype)
    if f not in _FOLDS and (state.pairwise is None or ufunc_emitter(state.pairwise) is None):
        raise Unsupported(f"no Numba emitter for reduction {f!r}")
    registers = tuple(
        (check_dtype(fd.dtype, f), fd.identity) for fd in state.fields if not fd.per_block
    )
    if f in ("nanmin", "nanmax") and value.kind == "c":
        raise Unsupported(f"no Numba emitter for {f} of complex values")
    if f in ("var", "std") and registers[0][0].kind not in "fc":
        raise Unsupported(f"{f} accumulating in {registers[0][0]}")
    rank = f in ("var", "std", "argmin", "argmax")
    index = f in ("argmin", "argmax")
    return ReduceSpec(f, value, registers[0][0], registers, rank=rank, index=index)


def _monoid_lines(spec: ReduceSpec, v: str, a0: str) -> list[str]:
    """``a0 = join(a0, v)`` with the emitter of the monoid's ufunc (a reduction without a
    fold of its own: :data:`~lazyarr.graph.ops.reduction_state.MONOIDS`)."""
    join = layout(spec.func).pairwise
    emitter = ufunc_emitter(join) if join is not None else None
    if emitter is None:
        raise Unsupported(f"no Numba emitter for reduction {spec.func!r}")
    scope = Scope()
    acc = spec.acc
    text = emitter(scope, [a0, cast(v, spec.value, acc)], [acc, acc], acc)
    if scope.lines or scope.helpers or scope.status:
        raise Unsupported(f"{join} needs statements of its own in a fold")
    return [f"{a0} = {cast(text, acc, acc)}"]


def _less(x: str, y: str, dt: np.dtype) -> str:
    """``x < y`` in NumPy's order (complex: lexicographic); NaNs compare false."""
    if dt.kind == "c":
        return f"({x}.real < {y}.real or ({x}.real == {y}.real and {x}.imag < {y}.imag))"
    if dt.kind == "b":
        return f"((not {x}) and {y})"
    return f"({x} < {y})"


def _cmp_extreme(x: str, y: str, dt: np.dtype, le: bool) -> str:
    """NumPy's complex CLE/CGE (``x <= y`` / ``x >= y`` as minimum/maximum use them)."""
    s = "<" if le else ">"
    return (
        f"(({x}.real {s} {y}.real and {x}.imag == {x}.imag and {y}.imag == {y}.imag)"
        f" or ({x}.real == {y}.real and {x}.imag {s}= {y}.imag))"
    )


def update_lines(spec: ReduceSpec, v: str, base: int = 0, tag: str = "") -> list[str]:
    """Statements folding ``v`` into registers ``a<base>, a<base+1>, ...`` (``k``, ``g`` given).

    ``tag`` suffixes the statements' temporaries, so that several folds (the
    siblings of a joint kernel) can share one loop body.
    """
    f, vdt, acc = spec.func, spec.value, spec.acc
    a0, a1, a2 = (f"a{base + i}" for i in range(3))
    if f not in _FOLDS:
        return _monoid_lines(spec, v, a0)
    A = dtype_text(spec.states[0][0])
    if f in ("sum", "prod", "nansum", "nanprod", "mean", "nanmean"):
        w = cast(v, vdt, acc)
        sym = "*" if "prod" in f else "+"
        logical = "&" if sym == "*" else "|"
        new = f"{a0} {logical} {w}" if acc.kind == "b" else f"{A}({a0} {sym} {w})"
        lines = [f"{a0} = {new}"]
        if f == "nanmean":
            lines.append(f"{a1} = {a1} + 1")
        if f.startswith("nan") and vdt.kind in "fc":
            return [f"if not {isnan_text(v, vdt)}:", *_indent(lines)]
        return lines
    if f in ("min", "max", "nanmin", "nanmax"):
        smaller = f.endswith("min")
        if vdt.kind == "b":
            return [f"{a0} = {a0} {'&' if smaller else '|'} {v}"]
        if vdt.kind in "iu":
            return [f"{a0} = {v} if {v} {'<' if smaller else '>'} {a0} else {a0}"]
        if vdt.kind == "c":  # numpy minimum/maximum: keep a0 if it is NaN or compares
            keep = f"{isnan_text(a0, vdt)} or {_cmp_extreme(a0, v, vdt, le=smaller)}"
            return [f"if not ({keep}):", f"    {a0} = {v}"]
        cmp = f"{v} {'<' if smaller else '>'} {a0}"
        extra = f"{v} != {v}" if not f.startswith("nan") else f"{a0} != {a0}"
        return [f"{a0} = {v} if ({cmp} or {extra}) else {a0}"]
    if f in ("any", "all"):
        t = v if vdt.kind == "b" else f"({v} != 0)"
        return [f"{a0} = {a0} {'|' if f == 'any' else '&'} {t}"]
    if f == "count_nonzero":
        t = v if vdt.kind == "b" else f"({v} != 0)"
        return [f"{a0} = {a0} + np.int64({t})"]
    if f in ("var", "std"):
        R = dtype_text(spec.states[2][0])
        w = cast(v, vdt, acc)
        wv, dv, ev, fv = (f"{n}{tag}" for n in ("wv", "dv", "ev", "fv"))
        # Welford on values shifted by the first one (so deviations stay small)
        lines = [
            f"{wv} = {w}",
            "if k == 1:",
            f"    {a0} = {wv}",
            f"{dv} = {wv} - {a0}",
            f"{ev} = {dv} - {a1}",
            f"{a1} = {A}({a1} + {ev} / {R}(k))",
            f"{fv} = {dv} - {a1}",
        ]
        if acc.kind == "c":
            lines.append(f"{a2} = {R}({a2} + ({ev}.real * {fv}.real + {ev}.imag * {fv}.imag))")
        else:
            lines.append(f"{a2} = {R}({a2} + {ev} * {fv})")
        return lines
    # argmin / argmax: the first occurrence wins; a NaN wins and stays
    better = _less(v, a0, vdt) if f == "argmin" else _less(a0, v, vdt)
    if vdt.kind in "fc":
        better = f"(not {isnan_text(a0, vdt)} and ({isnan_text(v, vdt)} or {better}))"
    return [f"if k == 1 or {better}:", f"    {a0} = {v}", f"    {a1} = g"]


def update_function(
    spec: ReduceSpec, base: int = 0, tag: str = "", v: str = "v"
) -> tuple[list[str], str]:
    """``update<tag>(a.., v[, k][, g])`` folding one value into the registers; its call on ``v``."""
    regs = ", ".join(f"a{base + i}" for i in range(len(spec.states)))
    extra = [*(["k"] if spec.rank else []), *(["g"] if spec.index else [])]
    params = ", ".join([regs, "v", *extra])
    lines = ["@njit(nogil=True)", f"def update{tag}({params}):"]
    lines += _indent(update_lines(spec, "v", base))
    lines.append(f"    return {regs}")
    return lines, f"{regs} = update{tag}({', '.join([regs, v, *extra])})"


# Independent partial sums a tile of values is folded into (vectorizable: no chain).
LANES = 8


def laned(spec: ReduceSpec) -> bool:
    """Whether a tile of this reduction's values folds into ``LANES`` partial sums.

    Floating sums and means only: a chain of dependent additions runs at one
    per add latency, lanes at several per cycle; the lanes are combined
    pairwise, like NumPy's own pairwise summation (and about as accurate),
    so results match NumPy within rounding, not bit for bit the in-order sum.
    """
    return spec.func in ("sum", "mean") and spec.acc.kind in "fc"


def lane_lines(
    spec: ReduceSpec, base: int, tag: str, tile: str
) -> tuple[list[str], list[str], list[str]]:
    """(lanes set to zero, the fold of ``tile[0:m]`` into them, their sum added to the register)."""
    A = dtype_text(spec.acc)
    lanes = [f"l{q}{tag}" for q in range(LANES)]
    init = [f"{lane} = {A}(0)" for lane in lanes]

    def add(lane: str, at: str) -> str:
        return f"{lane} = {A}({lane} + {cast(f'{tile}[{at}]', spec.value, spec.acc)})"

    fold = [
        f"e{tag} = m - m % {LANES}",
        f"for i in range(0, e{tag}, {LANES}):",
        *_indent([add(lane, f"i + {q}" if q else "i") for q, lane in enumerate(lanes)]),
        f"for i in range(e{tag}, m):",
        *_indent([add(lanes[0], "i")]),
    ]
    level = lanes
    while len(level) > 1:  # pairwise: ((l0 + l1) + (l2 + l3)) + ...
        level = [f"({x} + {y})" for x, y in zip(level[::2], level[1::2])]
    finish = [f"a{base} = {A}(a{base} + {A}{level[0]})"]
    return init, fold, finish
