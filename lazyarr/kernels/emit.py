"""A fused group of elementwise ops (plus an optional trailing reduction) as Numba source.

Each member becomes one scalar statement: ufuncs through
:mod:`lazyarr.kernels.emit_ops` (exact NumPy loop dtypes), and ``where``,
``clip``, ``astype``, ``round``, ``real``, ``imag`` here.

The generated ``kernel`` is one ``@njit(nogil=True)`` loop over a block: it
reads each input element once, evaluates every member as a scalar
expression (see :mod:`lazyarr.kernels.emit_ops`), and writes only the
output, or updates reduction accumulators (registers along a reduced inner
axis, the small partial-state arrays otherwise; the folds are in
:mod:`lazyarr.kernels.emit_fold`). No temporaries are allocated: a fold
into registers computes a tile of values at a time into a small scratch
array the caller passes, so that the value loop vectorizes although the
fold itself stays in order.

Contiguous loops also OR a one-instruction test of each value into an
``ilp`` flag (returned in a status bit callers ignore): that reduction makes
LLVM interleave the vectorized loop, so a long chain of members runs as
several independent vector chains instead of one latency-bound chain.

The loop is independent of ndim and layout, so one compiled kernel serves
every block shape: inputs arrive as flat read-only buffers, and an int64
``meta`` table gives the (collapsed) block shape in row 0 and, per operand,
the element offset (column 0) and element strides (columns 1..nd; 0 on
broadcast axes). The innermost axis runs in a contiguous fast path when all
input strides there are 1. The caller (:mod:`lazyarr.kernels.numba_fused`)
builds ``meta``; this module only writes text and never imports Numba.

The text is deterministic: the same group gives the same source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise, Reduce
from lazyarr.graph.ops.elementwise import ELEMENTWISE_FUNCS
from lazyarr.graph.ops.userfunc import UserElementwise
from lazyarr.graph.token import Hole
from lazyarr.kernels.emit_fold import (
    ReduceSpec,
    lane_lines,
    laned,
    reduce_spec,
    update_function,
    update_lines,
)
from lazyarr.kernels.emit_group import (
    Slot,
    joint_slots,
    slots,
    union,
)
from lazyarr.kernels.emit_ops import (
    Operand,
    Scope,
    Unsupported,
    cast,
    check_dtype,
    constant,
    literal,
    to_dtype,
    ufunc_emitter,
    wrap_as,
)

__all__ = [
    "Arg",
    "Kernel",
    "ReduceSpec",
    "Slot",
    "Unsupported",
    "emit_map",
    "emit_map_joint",
    "emit_reduce",
    "emit_reduce_joint",
    "reduce_spec",
    "unsupported",
]

INDENT = "    "


@dataclasses.dataclass(frozen=True)
class Arg:
    """One kernel argument: a 1-D (or the 2-D ``meta``) C-contiguous array."""

    name: str
    dtype: str
    ndim: int = 1
    readonly: bool = False


@dataclasses.dataclass(frozen=True)
class Kernel:
    """Generated source and how to call it.

    ``source`` is a module text that expects ``njit``, ``np`` and ``math``
    to be provided by the compiler's prelude. ``status`` holds, per status
    bit the kernel returns, NumPy's message for it.
    """

    source: str
    args: tuple[Arg, ...]
    n_inputs: int
    status: tuple[str, ...] = ()
    reduce: ReduceSpec | None = None
    name: str = "kernel"
    tile: int = 0  # length of the scratch arguments ``tl...`` (0: none) the caller passes
    reduces: tuple[ReduceSpec, ...] = ()  # every reduction of a joint kernel, in argument order
    slots: tuple[Slot, ...] = ()  # the inputs ``b0, b1, ...``: what each reads
    members: tuple[Expr, ...] = ()  # the members the slots' ``member`` indexes point into
    globals: tuple[tuple[str, Any], ...] = ()  # user functions the source calls, by name


# ----------------------------------------------------------------- members (scalar expressions)


def _resolve(fn: np.ufunc, types: list[Any], dtype: Any, func: str) -> list[np.dtype]:
    kw = {} if dtype is None else {"signature": (None,) * fn.nin + (np.dtype(dtype),)}
    try:
        loop = fn.resolve_dtypes((*types, None), **kw)
    except Exception as e:
        raise Unsupported(f"{func}: NumPy has no loop for {types} ({e})") from None
    return [check_dtype(d, func) for d in loop]


def emit_member(scope: Scope, m: Expr, args: list[Operand]) -> str:
    """The value of member ``m`` (an ``Elementwise`` Expr) as an expression of ``m.dtype``."""
    op = m.op
    func = op.func
    kwargs = dict(op.kwargs)
    out_dt = check_dtype(m.dtype, func)
    if isinstance(op, UserElementwise):
        return _user_call(scope, m, args, out_dt)
    special = _SPECIAL.get(func)
    if special is not None:
        return special(scope, m, args, kwargs, out_dt)
    fn = ELEMENTWISE_FUNCS.get(func)
    if not isinstance(fn, np.ufunc):
        raise Unsupported(f"no Numba emitter for elementwise {func!r}")
    emitter = ufunc_emitter(fn.__name__)
    if emitter is None:
        raise Unsupported(f"no Numba emitter for elementwise {func!r}")
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise Unsupported(f"{func}: keyword arguments {sorted(kwargs)} are not compiled")
    if len(args) != fn.nin or any(a[0] == "None" for a in args):
        raise Unsupported(f"{func}: unexpected arguments")
    loop = _resolve(fn, [a[1] for a in args], dtype, func)
    ins = [to_dtype(a, d, scope) for a, d in zip(args, loop)]
    result = emitter(scope, ins, loop[: fn.nin], loop[-1])
    return cast(result, loop[-1], out_dt)


def _user_call(s: Scope, m: Expr, args: list[Operand], out: np.dtype) -> str:
    """A call of the user's compiled function (a global of the kernel module).

    A Numba ufunc gets its operands in the loop dtypes NumPy picks from its
    loops (``resolve_dtypes``, weak Python scalars included), as it would on
    arrays; an ``@njit`` function gets them as they are (the dtypes its
    result dtype was probed with at expression time).
    """
    op = m.op
    uf = op.fn
    if uf is None or uf.kind not in ("vectorize", "njit") or op.kwargs:
        raise Unsupported(f"{op.label()} is not a compiled Numba function")
    if any(a[0] == "None" for a in args):
        raise Unsupported(f"{op.label()}: None where a value is needed")
    name = s.user(uf.token, uf.fn)
    if uf.kind == "vectorize":
        ufunc = uf.fn.ufunc
        if len(args) != ufunc.nin:
            raise Unsupported(f"{op.label()}: takes {ufunc.nin} arguments, got {len(args)}")
        loop = _resolve(ufunc, [a[1] for a in args], None, op.label())
        ins = [to_dtype(a, d, s) for a, d in zip(args, loop)]
        return cast(s.temp(f"{name}({', '.join(ins)})"), loop[-1], out)
    ins = []
    for text, _dt, const in args:
        if const is None:
            ins.append(text)
        elif isinstance(const, np.generic):
            ins.append(literal(const, np.asarray(const).dtype))
        else:
            ins.append(repr(const))
    return wrap_as(out, s.temp(f"{name}({', '.join(ins)})"))


def _where(s: Scope, m: Expr, args: list[Operand], kw: dict, out: np.dtype) -> str:
    if kw or len(args) != 3:
        raise Unsupported("where: only where(cond, x, y) is compiled")
    cond = to_dtype(args[0], np.dtype(bool), s)
    x, y = to_dtype(args[1], out, s), to_dtype(args[2], out, s)
    return f"({x} if {cond} else {y})"


def _clip(s: Scope, m: Expr, args: list[Operand], kw: dict, out: np.dtype) -> str:
    if kw or len(args) != 3 or out.kind == "c":
        raise Unsupported("clip: only clip(x, min, max) on real dtypes is compiled")
    x = to_dtype(args[0], out, s)
    maximum, minimum = ufunc_emitter("maximum"), ufunc_emitter("minimum")
    if args[1][0] != "None":
        x = s.temp(maximum(s, [x, to_dtype(args[1], out, s)], [out, out], out))
    if args[2][0] != "None":
        x = minimum(s, [x, to_dtype(args[2], out, s)], [out, out], out)
    return x


def _astype(s: Scope, m: Expr, args: list[Operand], kw: dict, out: np.dtype) -> str:
    (x,) = args
    return cast(x[0], check_dtype(x[1], "astype"), out)


def _round(s: Scope, m: Expr, args: list[Operand], kw: dict, out: np.dtype) -> str:
    (x,) = args
    decimals = int(kw.get("decimals", 0))
    src = check_dtype(x[1], "round")
    if src.kind in "biu" and decimals >= 0:
        return cast(x[0], src, out)
    if src.kind != "f" or out != src:
        raise Unsupported(f"round: {src} with decimals={decimals} is not compiled")
    if decimals == 0:
        return wrap_as(out, f"np.rint({x[0]})")
    # NumPy: rint(x * 10**d) / 10**d, or rint(x / 10**-d) * 10**-d
    f = literal(10.0 ** abs(decimals), out)
    first, then = ("*", "/") if decimals > 0 else ("/", "*")
    scaled = s.temp(wrap_as(out, f"{x[0]} {first} {f}"))
    rounded = s.temp(wrap_as(out, f"np.rint({scaled})"))
    return wrap_as(out, f"{rounded} {then} {f}")


def _part(which: str) -> Callable[..., str]:
    def emit(s: Scope, m: Expr, args: list[Operand], kw: dict, out: np.dtype) -> str:
        (x,) = args
        src = check_dtype(x[1], which)
        if src.kind == "c":
            return f"{x[0]}.{which}"
        return cast(x[0], src, out) if which == "real" else literal(0, out)

    return emit


_SPECIAL: dict[str, Callable[..., str]] = {
    "where": _where,
    "clip": _clip,
    "astype": _astype,
    "round": _round,
    "real": _part("real"),
    "imag": _part("imag"),
}


def unsupported(expr: Expr) -> str | None:
    """Why ``expr`` would not compile alone (None: it would): the emitters' own refusal.

    Elementwise ops are emitted over stand-in operands of their inputs'
    dtypes, reductions ask for their accumulators; nothing is compiled.
    """
    op = expr.op
    try:
        if isinstance(op, Reduce):
            reduce_spec(expr, expr.inputs[0].dtype)
            return None
        if not isinstance(op, Elementwise):
            return f"{op.name} is not elementwise"
        inputs = iter(expr.inputs)
        args: list[Operand] = []
        for k, t in enumerate(op.template):
            if isinstance(t, Hole):
                dt = check_dtype(next(inputs).dtype, op.func)
                args.append((f"x{k}", dt, None))
            else:
                args.append(constant(t))
        emit_member(Scope(), expr, args)
    except Unsupported as e:
        return str(e)
    return None


def _check_members(members: Sequence[Expr]) -> None:
    for m in members:
        if not isinstance(m.op, Elementwise):
            raise Unsupported(f"{m.op.name} is not an elementwise op")
        if m.shape != members[-1].shape:
            raise Unsupported("members of different shapes")


def _values(
    members: Sequence[Expr], group_slots: list[Slot]
) -> tuple[Scope, dict[str, tuple[str, np.dtype]]]:
    """Per-element statements of the members; the name and dtype of every value by key."""
    scope = Scope()
    names: dict[str, tuple[str, np.dtype]] = {}
    for k, s in enumerate(group_slots):
        names[s.expr.key] = (f"x{k}", check_dtype(s.expr.dtype, s.expr.op.name))
    for j, m in enumerate(members):
        inputs = iter(m.inputs)
        args: list[Operand] = []
        for t in m.op.template:
            if isinstance(t, Hole):
                text, dt = names[next(inputs).key]
                args.append((text, dt, None))
            else:
                args.append(constant(t))
        value = emit_member(scope, m, args)
        dt = check_dtype(m.dtype, m.op.func)
        scope.assign(f"v{j}", value)
        names[m.key] = (f"v{j}", dt)
    return scope, names


def _indent(lines: Sequence[str], depth: int) -> list[str]:
    return [INDENT * depth + line for line in lines]


# Bodies of more statements than this go into their own function (typed once, not
# once per loop variant); smaller ones are inlined (cheaper to compile).
_INLINE_LIMIT = 6


def _header(args: Sequence[Arg], ops: list[str], n_status: int) -> tuple[list[str], list[str]]:
    """The ``def`` line and the reads of ``meta``: rows, n, then (offset, row, inner) per op."""
    head = ["@njit(nogil=True)", f"def kernel({', '.join(a.name for a in args)}):"]
    lines = ["rows = meta[0]", "n = meta[1]"]
    for j, o in enumerate(ops):
        lines += [
            f"f{o} = meta[{2 + 3 * j}]",
            f"r{o} = meta[{3 + 3 * j}]",
            f"t{o} = meta[{4 + 3 * j}]",
        ]
    lines += [f"st{b} = False" for b in range(n_status)]
    return head, lines


def _row_offsets(ops: list[str]) -> list[str]:
    return [f"p{o} = f{o} + r * r{o}" for o in ops]


def _reads(n_in: int, fast: bool) -> list[str]:
    if fast:  # through views of the row: LLVM vectorizes these loops reliably
        return [f"x{k} = w{k}[i]" for k in range(n_in)]
    return [f"x{k} = b{k}[p{k} + i * t{k}]" for k in range(n_in)]


def _views(n_in: int) -> list[str]:
    """Views of this row of every input (contiguous fast path)."""
    return [f"w{k} = b{k}[p{k}:p{k} + n]" for k in range(n_in)]


# The bit of a map kernel's status that carries its ``ilp`` flag (callers ignore it).
ILP_BIT = 62


def _status_return(n_status: int, ilp: bool = False) -> str:
    terms = [f"(np.int64(st{b}) << {b})" for b in range(n_status)]
    if ilp:
        terms.append(f"(np.int64(ilp) << {ILP_BIT})")
    return "return " + (" | ".join(terms) or "0")


def _ilp_probe(dt: np.dtype) -> str:
    """A one-instruction test of the output value ``v``, OR-ed into ``ilp`` in the fast loop.

    The OR is a reduction across iterations, and for a vectorized loop with a
    reduction LLVM picks its interleave count from register pressure (a
    reduction-free loop bigger than a few instructions gets one): the
    vector loop then runs several independent lanes groups at once, so a
    long dependent chain of members stops being latency bound (about 2x on
    a 200-op chain). Results are unchanged: the flag is returned in bit
    ``ILP_BIT`` of the status, which callers mask off.
    """
    if dt.kind == "f":
        return "v != v"
    if dt.kind == "c":
        return "v.real != v.real"
    if dt.kind == "b":
        return "v"
    return "v == 0"


def _fast_flag(n_in: int) -> str:
    conds = " and ".join(f"t{k} == 1" for k in range(n_in))
    return f"fast = {conds or 'True'}"


def _step(
    scope: Scope, n_in: int, values: Sequence[tuple[str, str]]
) -> tuple[list[list[str]], list[str], list[str]]:
    """Statements computing each ``(name, value)`` per element: inline for the fast loops
    (LLVM vectorizes them only inline), a call of one ``body`` function in the strided
    loops when the body is big (it is typed once there instead of once per loop)."""
    inline = [*scope.lines, *(f"{name} = {value}" for name, value in values)]
    if len(scope.lines) <= _INLINE_LIMIT:
        return [], inline, inline
    flags = [f"st{b}" for b in range(len(scope.status))]
    params = ", ".join(f"x{k}" for k in range(n_in))
    results = ", ".join([*(value for _, value in values), *flags])
    inner = [f"{f} = False" for f in flags] + scope.lines + [f"return {results}"]
    fn = ["@njit(nogil=True)", f"def body({params}):", *_indent(inner, 1)]
    got = [f"z{b}" for b in range(len(flags))]
    call = [f"{', '.join([*(name for name, _ in values), *got])} = body({params})"]
    call += [f"st{b} |= z{b}" for b in range(len(flags))]
    return [fn], inline, call


def _module(scope: Scope, functions: list[list[str]]) -> str:
    head = [
        "# Generated by lazyarr.kernels.emit: one fused loop over a block.",
        "# The compiler's prelude provides njit, np and math.",
    ]
    helpers = [scope.helpers[h].strip("\n") for h in sorted(scope.helpers)]
    parts = ["\n".join(head), *helpers, *("\n".join(f) for f in functions if f)]
    return "\n\n\n".join(parts) + "\n"


def _input_args(group_slots: list[Slot]) -> list[Arg]:
    return [
        Arg(f"b{k}", check_dtype(s.expr.dtype, "input").name, 1, True)
        for k, s in enumerate(group_slots)
    ]


def emit_map(members: Sequence[Expr], input_exprs: Sequence[Expr]) -> Kernel:
    """The kernel computing the last member over a block from the external inputs.

    ``meta`` describes a 2-D slab (rows x n) of the block; the output is
    operand ``o``, the inputs ``0, 1, ...`` (see ``numba_fused``).
    """
    return emit_map_joint([members], input_exprs)


def emit_map_joint(parts: Sequence[Sequence[Expr]], input_exprs: Sequence[Expr]) -> Kernel:
    """One kernel writing the roots of several elementwise groups of one block shape.

    ``parts``: each group's members, root last. Every input element is read
    once for all of them (horizontal fusion: ``la.compute(a + b, a * b)``).
    Output ``t`` is argument ``out<tag>`` and meta operand ``o<tag>`` (tags
    ``""``, ``"_1"``, ...); with one part this is exactly the single-group kernel.
    """
    if not parts or not all(parts):
        raise ValueError("a map group needs at least one member")
    members = union(parts, [p[-1] for p in parts])
    _check_members(members)
    group_slots = slots(members, input_exprs)
    scope, names = _values(members, group_slots)
    tags = ["" if t == 0 else f"_{t}" for t in range(len(parts))]
    out_dts = [check_dtype(p[-1].dtype, p[-1].op.func) for p in parts]
    n_in = len(group_slots)
    args = (
        *(Arg(f"out{t}", dt.name) for t, dt in zip(tags, out_dts)),
        Arg("meta", "int64"),
        *_input_args(group_slots),
    )
    ops = [*(f"o{t}" for t in tags), *map(str, range(n_in))]
    n_status = len(scope.status)
    assigns = [
        (f"v{t}", cast(names[p[-1].key][0], names[p[-1].key][1], dt))
        for t, p, dt in zip(tags, parts, out_dts)
    ]
    functions, fast, slow = _step(scope, n_in, assigns)
    writes = [f"wo{t}[i] = v{t}" for t in tags]
    fast, slow = [*fast, *writes, f"ilp |= {_ilp_probe(out_dts[0])}"], [*slow, *writes]
    loop_fast = [*_views(n_in), "for i in range(n):", *_indent([*_reads(n_in, True), *fast], 1)]
    loop_slow = ["for i in range(n):", *_indent([*_reads(n_in, False), *slow], 1)]
    row = [
        *_row_offsets(ops),
        *(f"wo{t} = out{t}[po{t}:po{t} + n]" for t in tags),
        "if fast:",
        *_indent(loop_fast, 1),
        "else:",
        *_indent(loop_slow, 1),
    ]
    head, setup = _header(args, ops, n_status)
    body = [*setup, _fast_flag(n_in), "ilp = False", "for r in range(rows):", *_indent(row, 1)]
    lines = head + _indent([*body, _status_return(n_status, ilp=True)], 1)
    source = _module(scope, [*functions, lines])
    return Kernel(
        source,
        args,
        n_in,
        tuple(scope.status),
        slots=tuple(group_slots),
        members=tuple(members),
        globals=tuple(sorted(scope.globals.items())),
    )


def emit_reduce(members: Sequence[Expr], input_exprs: Sequence[Expr], root: Expr) -> Kernel:
    """The kernel folding the body (``members``, may be empty) of ``root`` into partial states."""
    return emit_reduce_joint([(members, root)], input_exprs)


def emit_reduce_joint(
    parts: Sequence[tuple[Sequence[Expr], Expr]], input_exprs: Sequence[Expr]
) -> Kernel:
    """One kernel folding the bodies of several reductions of one block grid in one loop.

    ``parts`` holds ``(members, root)`` per reduction: the roots reduce the same
    axes of bodies of one shape, so every element is read once for all of
    them (horizontal fusion: ``x.mean(0)`` with ``x.std(0)``). Reduction ``r``
    keeps its states in the arguments after those of the reductions before
    it; with one part this is exactly the single-reduction kernel.
    """
    if not parts:
        raise ValueError("a joint reduction needs at least one part")
    for members, root in parts:
        _check_members(members)
        if members and members[-1].key != root.inputs[0].key:
            raise ValueError("the last member must be the reduction's input")
    if len({(root.inputs[0].shape, root.op.axes) for _, root in parts}) != 1:
        raise ValueError("joint reductions must reduce the same axes of bodies of one shape")
    members, group_slots = joint_slots(parts, input_exprs)
    _check_members(members)
    scope, names = _values(members, group_slots)
    tags = ["" if r == 0 else f"_{r}" for r in range(len(parts))]
    values = [names[root.inputs[0].key] for _, root in parts]  # (name, dtype) per part
    specs = [reduce_spec(root, vdt) for (_, root), (_, vdt) in zip(parts, values)]
    bases = [sum(len(sp.states) for sp in specs[:r]) for r in range(len(parts))]
    rank, index = any(sp.rank for sp in specs), any(sp.index for sp in specs)
    n_in = len(group_slots)
    n_states = bases[-1] + len(specs[-1].states)
    sources = [name for name, _ in values]
    # values in tiles (vectorized), then folded: into lanes (sums) or in order
    tiled = bool(members) or any(laned(sp) for sp in specs)
    args = (
        *(
            Arg(f"s{i}", dt.name)
            for i, (dt, _) in enumerate(st for sp in specs for st in sp.states)
        ),
        *(Arg(f"tl{t}", sp.value.name) for t, sp in zip(tags, specs) if tiled),
        Arg("meta", "int64"),
        *_input_args(group_slots),
    )
    ops = ["a", *(["k"] if rank else []), *(["g"] if index else []), *map(str, range(n_in))]
    n_status = len(scope.status)
    assigns = [(f"v{t}", name) for t, (name, _) in zip(tags, values)]
    functions, fast_step, slow_step = _step(scope, n_in, assigns)
    fast_update: list[str] = []
    slow_update: list[str] = []
    for t, sp, base in zip(tags, specs, bases):
        lines = update_lines(sp, f"v{t}", base, t)
        fast_update += lines
        if len(lines) > _INLINE_LIMIT:
            fn, call = update_function(sp, base, t, f"v{t}")
            functions.append(fn)
            slow_update.append(call)
        else:
            slow_update += lines
    virtual = ["k = pk + i * tk"] if rank else []
    virtual += ["g = pg + i * tg"] if index else []
    load = [f"a{s} = s{s}[ia]" for s in range(n_states)]
    save = [f"s{s}[ia] = a{s}" for s in range(n_states)]

    def loop(fast: bool, registers: bool) -> list[str]:
        step, update = (fast_step, fast_update) if fast else (slow_step, slow_update)
        if fast and registers and tiled:
            return _tiled_fold(n_in, step, specs, tags, bases, sources, rank, index)
        each = [*virtual, *_reads(n_in, fast), *step, *update]
        views = _views(n_in) if fast else []
        if not registers and fast:  # the states' row is contiguous too
            views += [f"u{s} = s{s}[pa:pa + n]" for s in range(n_states)]
            load_i = [f"a{s} = u{s}[i]" for s in range(n_states)]
            save_i = [f"u{s}[i] = a{s}" for s in range(n_states)]
            each = [*load_i, *each, *save_i]
        elif not registers:
            each = ["ia = pa + i * ta", *load, *each, *save]
        return [*views, "for i in range(n):", *_indent(each, 1)]

    row = [
        *_row_offsets(ops),
        "if ta == 0:",  # the inner axis is reduced: accumulate in registers
        *_indent(["ia = pa", *load], 1),
        "    if fast:",
        *_indent(loop(True, True), 2),
        "    else:",
        *_indent(loop(False, True), 2),
        *_indent(save, 1),
        "elif fast and ta == 1:",
        *_indent(loop(True, False), 1),
        "else:",
        *_indent(loop(False, False), 1),
    ]
    head, setup = _header(args, ops, n_status)
    if tiled:
        setup.append("ilp = False")
    body = [*setup, _fast_flag(n_in), "for r in range(rows):", *_indent(row, 1)]
    lines = head + _indent([*body, _status_return(n_status, ilp=tiled)], 1)
    source = _module(scope, [*functions, lines])
    tile = _TILE if tiled else 0
    return Kernel(
        source,
        args,
        n_in,
        tuple(scope.status),
        specs[0],
        tile=tile,
        reduces=tuple(specs),
        slots=tuple(group_slots),
        members=tuple(members),
        globals=tuple(sorted(scope.globals.items())),
    )


# Elements per tile of a reduction's values (in L1 cache: 4 KiB of float64).
_TILE = 512


def _tiled_fold(
    n_in: int,
    step: list[str],
    specs: Sequence[ReduceSpec],
    tags: Sequence[str],
    bases: Sequence[int],
    names: Sequence[str],
    rank: bool,
    index: bool,
) -> list[str]:
    """The contiguous loop folding into registers, a tile at a time.

    A fold is a chain through the accumulators that LLVM must not reorder,
    which keeps a one-loop kernel scalar. Here the values of a tile are
    computed first by a loop without that chain (vectorized; interleaved
    through the ``ilp`` probe) into the caller's scratch arrays ``tl<tag>``
    (``_TILE`` elements, in L1 cache; a value that is an input is read from
    the input's view instead), then folded: floating sums into ``LANES``
    independent partial sums (:func:`laned`), every other reduction one
    value at a time in order. A tile's lanes are summed pairwise into the
    register, so the chain of dependent additions has one link per tile.
    """
    virtual = ["q = j0 + i"] if rank or index else []
    virtual += ["k = pk + q * tk"] if rank else []
    virtual += ["g = pg + q * tg"] if index else []
    sources = [f"y{n[1:]}" if n.startswith("x") else f"tl{t}" for n, t in zip(names, tags)]
    stores = [f"tl{t}[i] = v{t}" for t, src in zip(tags, sources) if src.startswith("tl")]
    values: list[str] = []
    if stores:
        values = [*(f"x{k} = y{k}[i]" for k in range(n_in)), *step, *stores]
        values.append(f"ilp |= {_ilp_probe(specs[0].value)}")
        values = ["for i in range(m):", *_indent(values, 1)]
    init: list[str] = []
    folds: list[str] = []
    finish: list[str] = []
    in_order = [*virtual]
    for t, sp, base, src in zip(tags, specs, bases, sources):
        if laned(sp):
            start, fold, end = lane_lines(sp, base, t, src)
            init, folds, finish = init + start, folds + fold, finish + end
        else:
            in_order += [f"v{t} = {src}[i]", *update_lines(sp, f"v{t}", base, t)]
    if len(in_order) > len(virtual):
        folds += ["for i in range(m):", *_indent(in_order, 1)]
    return [
        *_views(n_in),
        f"for j0 in range(0, n, {_TILE}):",
        f"    m = min({_TILE}, n - j0)",
        *(f"    y{k} = w{k}[j0:j0 + m]" for k in range(n_in)),
        *_indent(values, 1),
        *_indent(init, 1),
        *_indent(folds, 1),
        *_indent(finish, 1),
    ]
