"""Scalar Numba expressions for ufuncs, with NumPy's exact dtype rules.

One emitter per ufunc, by NumPy's canonical name. The caller
(:mod:`lazyarr.kernels.emit`) finds the loop dtypes with NumPy itself
(``ufunc.resolve_dtypes``, NEP 50 weak Python scalars included) and casts
every operand to them; the emitters here produce the result in the loop's
output dtype with explicit constructors (``np.int8(...)``), so ``int8 +
int8`` wraps in int8 and float32 stays float32. Python scalar constants
become typed literals of the loop dtype (:func:`literal`).

Integer division and remainder by zero give 0 like NumPy and set a status
flag that the caller turns into NumPy's ``divide`` error handling
(``np.errstate``). Floating-point warnings (float division by zero, invalid,
overflow) are not reported by compiled code.

Anything without an emitter raises :class:`Unsupported`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "HELPERS",
    "NUMPY_KERNEL_KINDS",
    "Operand",
    "Scope",
    "Unsupported",
    "cast",
    "check_dtype",
    "constant",
    "dtype_text",
    "isnan_text",
    "literal",
    "numpy_kernels_only",
    "to_dtype",
    "ufunc_emitter",
    "wrap_as",
]

WEAK = (int, float, complex)


class Unsupported(Exception):
    """The group has an op or dtype without a Numba emitter."""


Operand = tuple[str, Any, Any]
"""``(text, dtype, constant)``: a variable (constant None) or a literal value.

``dtype`` is an ``np.dtype``, or ``int``/``float``/``complex`` for a weak
Python scalar constant.
"""


class Scope:
    """The per-element statements of one kernel, with helper and status bookkeeping."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.helpers: dict[str, str] = {}
        self.status: list[str] = []
        self.globals: dict[str, Any] = {}
        self._n = 0

    def temp(self, text: str) -> str:
        """``text`` bound to a fresh local (identifiers and literals stay as they are)."""
        if text.isidentifier():
            return text
        self._n += 1
        name = f"c{self._n}"
        self.lines.append(f"{name} = {text}")
        return name

    def assign(self, name: str, text: str) -> None:
        self.lines.append(f"{name} = {text}")

    def flag(self, message: str, condition: str) -> None:
        """Record ``condition`` in status bit ``len(status)`` (reported after the call)."""
        bit = len(self.status)
        self.status.append(message)
        self.lines.append(f"st{bit} |= {condition}")

    def helper(self, name: str) -> str:
        self.helpers[name] = HELPERS[name]
        return name

    def user(self, token: str, fn: Any) -> str:
        """The global name under which the kernel calls the user's compiled ``fn``.

        The name is made from ``fn``'s token, so the kernel's source (and its
        cache key) differs for every user function.
        """
        name = "_user_" + "".join(c if c.isalnum() else "_" for c in token)
        self.globals[name] = fn
        return name


# ----------------------------------------------------------------- dtypes, casts, literals


NUMPY_KERNEL_KINDS = "mM"
"""Dtype kinds whose stages run NumPy's kernels on every kernel set, by declaration, not by
a failed compile: datetimes and timedeltas (units, NaT and their casting rules are NumPy's)."""


def numpy_kernels_only(exprs: Sequence[Any]) -> bool:
    """Whether any of ``exprs`` (a stage's members and inputs) holds a NumPy-kernel dtype."""
    return any(np.dtype(e.dtype).kind in NUMPY_KERNEL_KINDS for e in exprs)


def check_dtype(dt: np.dtype, what: str) -> np.dtype:
    """The native-order dtype, or :class:`Unsupported` for dtypes Numba kernels skip."""
    dt = np.dtype(dt)
    if dt.kind not in "biufc" or dt.char in "egG" or dt.itemsize > 16:
        raise Unsupported(f"{what}: dtype {dt} is not supported by compiled kernels")
    return dt.newbyteorder("=") if dt.byteorder not in "=|" else dt


def dtype_text(dt: np.dtype) -> str:
    """The NumPy scalar constructor of ``dt`` as Numba source (``np.float32``)."""
    dt = np.dtype(dt)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


def cast(text: str, src: np.dtype, dst: np.dtype) -> str:
    """``text`` (of dtype ``src``) converted like ``ndarray.astype(dst)``."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return text
    if dst.kind == "b":
        return f"({text} != 0)"
    if src.kind == "c" and dst.kind != "c":
        raise Unsupported(f"casting {src} to {dst} discards the imaginary part (NumPy warns)")
    if dst.kind == "c" and src.kind == "b":
        return f"{dtype_text(dst)}(np.float64({text}))"
    return f"{dtype_text(dst)}({text})"


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "np.nan"
    if math.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(float(x))


def literal(value: Any, dt: np.dtype) -> str:
    """``value`` as a typed literal of ``dt``; :class:`Unsupported` if it does not fit."""
    dt = np.dtype(dt)
    if isinstance(value, np.generic):
        value = value.item()
    if dt.kind == "b":
        return "True" if value else "False"
    if dt.kind in "iu":
        if isinstance(value, (float, complex)) or int(value) != value:
            raise Unsupported(f"constant {value!r} in an integer loop")
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise Unsupported(f"constant {value!r} does not fit {dt}")
        return f"{dtype_text(dt)}({int(value)})"
    if dt.kind == "f":
        if isinstance(value, complex):
            raise Unsupported(f"complex constant {value!r} in a real loop")
        return f"{dtype_text(dt)}({_float_text(float(value))})"
    c = complex(value)
    return f"{dtype_text(dt)}(complex({_float_text(c.real)}, {_float_text(c.imag)}))"


def constant(value: Any) -> Operand:
    """The operand of a constant in an op's template (``None`` stays ``"None"``)."""
    if value is None:
        return ("None", None, None)
    if isinstance(value, (bool, np.generic)):
        return (repr(value), np.asarray(value).dtype, value)
    if isinstance(value, WEAK):
        return (repr(value), type(value), value)
    raise Unsupported(f"constant {value!r} of type {type(value).__name__}")


def to_dtype(op: Operand, dst: np.dtype, scope: Scope) -> str:
    """An operand in dtype ``dst``: a literal for constants, a cast local for variables."""
    text, dt, const = op
    if const is not None:
        return literal(const, dst)
    if text == "None":
        raise Unsupported("None where a value is needed")
    return scope.temp(cast(text, dt, dst))


# ----------------------------------------------------------------- helpers (njit functions)

HELPERS: dict[str, str] = {
    "_fdivmod": '''
@njit(nogil=True)
def _fdivmod(a, b):
    """NumPy's npy_divmod: (floor quotient, remainder with the divisor's sign)."""
    mod = np.fmod(a, b)
    if not b:
        return a / b, mod
    div = (a - mod) / b
    if mod:
        if (b < 0) != (mod < 0):
            mod += b
            div -= 1.0
    else:
        mod = math.copysign(0.0, b)
    if div:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        floordiv = math.copysign(0.0, a / b)
    return floordiv, mod
''',
    "_ipow": '''
@njit(nogil=True)
def _ipow(a, b):
    """Integer power by squaring (wraps like NumPy); negative exponents raise."""
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    r = a - a + 1
    while b:
        if b & 1:
            r = r * a
        a = a * a
        b = b >> 1
    return r
''',
}


# ----------------------------------------------------------------- ufunc emitters

Emitter = Callable[[Scope, list[str], list[np.dtype], np.dtype], str]
_UFUNCS: dict[str, Emitter] = {}


def _ufunc(*names: str) -> Callable[[Emitter], Emitter]:
    def deco(fn: Emitter) -> Emitter:
        for n in names:
            _UFUNCS[n] = fn
        return fn

    return deco


def wrap_as(dt: np.dtype, text: str) -> str:
    """``text`` converted to ``dt`` by its constructor (bools are left as they are)."""
    return text if np.dtype(dt).kind == "b" else f"{dtype_text(dt)}({text})"


def _refuse(name: str, loop: list[np.dtype]) -> Unsupported:
    return Unsupported(f"no Numba emitter for {name} on {', '.join(str(d) for d in loop)}")


def isnan_text(x: str, dt: np.dtype) -> str:
    """Whether the value ``x`` of dtype ``dt`` is NaN, as source (``False`` for exact kinds)."""
    if dt.kind == "f":
        return f"({x} != {x})"
    if dt.kind == "c":
        return f"({x}.real != {x}.real or {x}.imag != {x}.imag)"
    return "False"


@_ufunc("add")
def _add(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "b":
        return f"({a[0]} | {a[1]})"
    return wrap_as(out, f"{a[0]} + {a[1]}")


@_ufunc("subtract")
def _sub(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return wrap_as(out, f"{a[0]} - {a[1]}")


@_ufunc("multiply")
def _mul(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "b":
        return f"({a[0]} & {a[1]})"
    return wrap_as(out, f"{a[0]} * {a[1]}")


@_ufunc("divide", "true_divide")
def _div(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind not in "fc":
        raise _refuse("divide", loop)
    return wrap_as(out, f"{a[0]} / {a[1]}")


def _int_guard(s: Scope, name: str, a: list[str], loop: list[np.dtype]) -> str:
    s.flag(f"divide by zero encountered in {name}", f"({a[1]} == 0)")
    if loop[1].kind == "i":
        return f"({a[1]} == 0 or {a[1]} == -1)"
    return f"({a[1]} == 0)"


@_ufunc("floor_divide")
def _floordiv(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind in "iu":
        guard = _int_guard(s, "floor_divide", a, loop)
        neg = f"{wrap_as(out, '-' + a[0])} if {a[1]} == -1 else " if out.kind == "i" else ""
        return f"({neg}{literal(0, out)} if {guard} else {wrap_as(out, f'{a[0]} // {a[1]}')})"
    if out.kind == "f":
        return wrap_as(out, f"{s.helper('_fdivmod')}({a[0]}, {a[1]})[0]")
    raise _refuse("floor_divide", loop)


@_ufunc("remainder")
def _remainder(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind in "iu":
        guard = _int_guard(s, "remainder", a, loop)
        return f"({literal(0, out)} if {guard} else {wrap_as(out, f'{a[0]} % {a[1]}')})"
    if out.kind == "f":
        return wrap_as(out, f"{s.helper('_fdivmod')}({a[0]}, {a[1]})[1]")
    raise _refuse("remainder", loop)


@_ufunc("fmod")
def _fmod(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind in "iu":
        guard = _int_guard(s, "fmod", a, loop)
        r = s.temp(f"{literal(0, out)} if {guard} else {wrap_as(out, f'{a[0]} % {a[1]}')}")
        if out.kind == "u":
            return r
        # Python's % takes the divisor's sign; C's fmod the dividend's
        fix = wrap_as(out, f"{r} - {a[1]}")
        return f"({fix} if ({r} != 0 and (({r} < 0) != ({a[0]} < 0))) else {r})"
    if out.kind == "f":
        return wrap_as(out, f"np.fmod({a[0]}, {a[1]})")
    raise _refuse("fmod", loop)


@_ufunc("power")
def _power(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind in "iu":
        return wrap_as(out, f"{s.helper('_ipow')}({a[0]}, {a[1]})")
    if out.kind in "fc":
        return wrap_as(out, f"{a[0]} ** {a[1]}")
    raise _refuse("power", loop)


@_ufunc("float_power")
def _float_power(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return wrap_as(out, f"{a[0]} ** {a[1]}")


_COMPARE = {
    "equal": "==",
    "not_equal": "!=",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
}


def _compare(name: str) -> Emitter:
    sym = _COMPARE[name]

    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        if loop[0].kind == "c" and sym not in ("==", "!="):
            raise _refuse(name, loop)
        return f"({a[0]} {sym} {a[1]})"

    return emit


for _name in _COMPARE:
    _UFUNCS[_name] = _compare(_name)


def _truth(x: str, dt: np.dtype) -> str:
    return x if dt.kind == "b" else f"({x} != 0)"


def _logical_binary(sym: str) -> Emitter:
    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        return f"({_truth(a[0], loop[0])} {sym} {_truth(a[1], loop[1])})"

    return emit


_UFUNCS["logical_and"] = _logical_binary("&")
_UFUNCS["logical_or"] = _logical_binary("|")
_UFUNCS["logical_xor"] = _logical_binary("^")


@_ufunc("logical_not")
def _logical_not(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return f"(not {_truth(a[0], loop[0])})"


def _bitwise(sym: str) -> Emitter:
    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        if out.kind not in "biu":
            raise _refuse("bitwise", loop)
        return wrap_as(out, f"{a[0]} {sym} {a[1]}")

    return emit


_UFUNCS["bitwise_and"] = _bitwise("&")
_UFUNCS["bitwise_or"] = _bitwise("|")
_UFUNCS["bitwise_xor"] = _bitwise("^")


@_ufunc("invert")
def _invert(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "b":
        return f"(not {a[0]})"
    if out.kind in "iu":
        return wrap_as(out, f"~{a[0]}")
    raise _refuse("invert", loop)


@_ufunc("left_shift")
def _lshift(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind not in "iu":
        raise _refuse("left_shift", loop)
    bits = out.itemsize * 8
    ok = f"{a[1]} >= 0 and {a[1]} < {bits}"
    return f"({wrap_as(out, f'{a[0]} << {a[1]}')} if {ok} else {literal(0, out)})"


@_ufunc("right_shift")
def _rshift(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind not in "iu":
        raise _refuse("right_shift", loop)
    bits = out.itemsize * 8
    ok = f"{a[1]} >= 0 and {a[1]} < {bits}"
    big = literal(0, out)
    if out.kind == "i":
        big = f"({literal(-1, out)} if {a[0]} < 0 else {literal(0, out)})"
    return f"({wrap_as(out, f'{a[0]} >> {a[1]}')} if {ok} else {big})"


@_ufunc("negative")
def _negative(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "b":
        raise _refuse("negative", loop)
    if out.kind == "u":
        return wrap_as(out, f"{literal(0, out)} - {a[0]}")
    return wrap_as(out, f"-{a[0]}")


@_ufunc("positive")
def _positive(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "b":
        raise _refuse("positive", loop)
    return a[0]


@_ufunc("absolute", "fabs")
def _absolute(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if loop[0].kind in "bu":
        return a[0]
    return wrap_as(out, f"abs({a[0]})")


@_ufunc("square")
def _square(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return wrap_as(out, f"{a[0]} * {a[0]}")


@_ufunc("reciprocal")
def _reciprocal(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind not in "fc":
        raise _refuse("reciprocal", loop)
    return wrap_as(out, f"{literal(1, out)} / {a[0]}")


_FLOAT_FUNCS = {
    # NumPy name -> Numba scalar function; real floats (and complex where listed)
    "sqrt": ("np.sqrt", True),
    "exp": ("np.exp", True),
    "log": ("np.log", True),
    "sin": ("np.sin", True),
    "cos": ("np.cos", True),
    "tan": ("np.tan", True),
    "arcsin": ("np.arcsin", False),
    "arccos": ("np.arccos", False),
    "arctan": ("np.arctan", False),
    "sinh": ("np.sinh", False),
    "cosh": ("np.cosh", False),
    "tanh": ("np.tanh", False),
    "arcsinh": ("np.arcsinh", False),
    "arccosh": ("np.arccosh", False),
    "arctanh": ("np.arctanh", False),
    "log1p": ("np.log1p", False),
    "expm1": ("np.expm1", False),
    "log2": ("np.log2", False),
    "log10": ("np.log10", False),
    "exp2": ("np.exp2", False),
    "cbrt": ("np.cbrt", False),
    "deg2rad": ("np.deg2rad", False),
    "radians": ("np.deg2rad", False),
    "rad2deg": ("np.rad2deg", False),
    "degrees": ("np.rad2deg", False),
}


def _float_func(name: str) -> Emitter:
    fn, complex_ok = _FLOAT_FUNCS[name]

    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        if out.kind != "f" and not (out.kind == "c" and complex_ok):
            raise _refuse(name, loop)
        return wrap_as(out, f"{fn}({a[0]})")

    return emit


for _name in _FLOAT_FUNCS:
    _UFUNCS[_name] = _float_func(_name)

_FLOAT_BINARY = {
    "arctan2": "np.arctan2",
    "hypot": "np.hypot",
    "copysign": "np.copysign",
    "logaddexp": "np.logaddexp",
    "logaddexp2": "np.logaddexp2",
}


def _float_binary(name: str) -> Emitter:
    fn = _FLOAT_BINARY[name]

    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        if out.kind != "f":
            raise _refuse(name, loop)
        return wrap_as(out, f"{fn}({a[0]}, {a[1]})")

    return emit


for _name in _FLOAT_BINARY:
    _UFUNCS[_name] = _float_binary(_name)


def _rounding(name: str) -> Emitter:
    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        if out.kind in "biu":
            return a[0]
        if out.kind == "f":
            return wrap_as(out, f"np.{name}({a[0]})")
        raise _refuse(name, loop)

    return emit


for _name in ("floor", "ceil", "trunc", "rint"):
    _UFUNCS[_name] = _rounding(_name)


@_ufunc("sign")
def _sign(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    x = a[0]
    one, zero = literal(1, out), literal(0, out)
    if out.kind == "u":
        return f"({one} if {x} > 0 else {zero})"
    if out.kind == "i":
        return f"({one} if {x} > 0 else ({literal(-1, out)} if {x} < 0 else {zero}))"
    if out.kind == "f":
        neg = literal(-1, out)
        return f"({one} if {x} > 0 else ({neg} if {x} < 0 else ({zero} if {x} == 0 else {x})))"
    raise _refuse("sign", loop)


@_ufunc("isnan")
def _isnan_ufunc(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return isnan_text(a[0], loop[0])


@_ufunc("isinf")
def _isinf(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return f"np.isinf({a[0]})" if loop[0].kind in "fc" else "False"


@_ufunc("isfinite")
def _isfinite(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    return f"np.isfinite({a[0]})" if loop[0].kind in "fc" else "True"


@_ufunc("signbit")
def _signbit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if loop[0].kind != "f":
        raise _refuse("signbit", loop)
    return f"(math.copysign(1.0, {a[0]}) < 0)"


def _extreme(name: str) -> Emitter:
    greater = name in ("maximum", "fmax")
    nan_wins = name in ("maximum", "minimum")

    def emit(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
        x, y = a
        if out.kind == "b":
            return f"({x} | {y})" if greater else f"({x} & {y})"
        if out.kind == "c":
            raise _refuse(name, loop)
        cmp = f"{x} >= {y}" if greater else f"{x} <= {y}"
        if out.kind in "iu":
            return f"({x} if {cmp} else {y})"
        # maximum/minimum: a NaN in x wins, else y (NaN or not) unless x compares;
        # fmax/fmin: a NaN in y loses
        extra = f"{x} != {x}" if nan_wins else f"{y} != {y}"
        return f"({x} if ({cmp} or {extra}) else {y})"

    return emit


for _name in ("maximum", "minimum", "fmax", "fmin"):
    _UFUNCS[_name] = _extreme(_name)


@_ufunc("conjugate")
def _conjugate(s: Scope, a: list[str], loop: list[np.dtype], out: np.dtype) -> str:
    if out.kind == "c":
        return f"{a[0]}.conjugate()"
    if out.kind == "b":
        raise _refuse("conjugate", loop)
    return a[0]


def ufunc_emitter(name: str) -> Emitter | None:
    """The emitter of the ufunc called ``name`` (NumPy's canonical name), if any."""
    return _UFUNCS.get(name)
