"""Elementwise functions: every NumPy ufunc plus the Array API's names for them.

All build one ``elementwise`` node; dtype and errors come from NumPy at
expression time (NEP 50 promotion, Python scalars weak).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr._convert import as_expr, as_operand
from lazyarr.graph.ops import elementwise as _ew
from lazyarr.graph.ops.elementwise import ELEMENTWISE_FUNCS
from lazyarr.graph.ops.power import power_expr
from lazyarr.namespace._register import implements

# Array API name -> NumPy ufunc name, where they differ.
ARRAY_API_ALIASES = {
    "abs": "absolute",
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atan2": "arctan2",
    "atanh": "arctanh",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "bitwise_invert": "invert",
    "bitwise_not": "invert",
    "conj": "conjugate",
    "divide": "true_divide",
    "mod": "remainder",
}


def _make(name: str, ufunc_name: str) -> Callable[..., LazyArray]:
    def fn(*args: Any, **kwargs: Any) -> LazyArray:
        return wrap(_ew(ufunc_name, *(as_operand(a) for a in args), **kwargs))

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``numpy.{ufunc_name}``, lazily (NumPy broadcasting and dtypes)."
    return fn


_UFUNCS = sorted(n for n, f in ELEMENTWISE_FUNCS.items() if isinstance(f, np.ufunc))
_generated: dict[str, Callable[..., LazyArray]] = {}
for _name in _UFUNCS:
    if _name not in ("power", "pow"):  # defined below, with the negative-exponent check
        _generated[_name] = _make(_name, _name)
for _alias, _target in ARRAY_API_ALIASES.items():
    _generated[_alias] = _make(_alias, _target)
globals().update(_generated)


def pow(x1: Any, x2: Any, /) -> LazyArray:
    """``x1 ** x2`` (integers to negative integer powers raise, as in NumPy)."""
    return wrap(power_expr(as_operand(x1), as_operand(x2)))


power = pow


@implements("where")
def where(condition: Any, x1: Any = None, x2: Any = None, /) -> LazyArray:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2``."""
    if x1 is None and x2 is None:  # NumPy: condition.nonzero() (namespace/searching.py)
        return lazy(condition).nonzero()
    if x1 is None or x2 is None:
        raise ValueError("either both or neither of x and y should be given")
    return wrap(_ew("where", as_expr(condition), as_operand(x1), as_operand(x2)))


@implements("clip")
def clip(x: Any, /, min: Any = None, max: Any = None, **kwargs: Any) -> LazyArray:
    """``x`` limited to ``[min, max]`` (either bound may be None)."""
    if "a_min" in kwargs or "a_max" in kwargs:
        min = kwargs.pop("a_min", min)
        max = kwargs.pop("a_max", max)
    if kwargs:
        raise TypeError(f"clip() got unexpected keyword arguments {sorted(kwargs)}")
    x = as_expr(x)
    if min is None and max is None:
        return wrap(x)
    return wrap(
        _ew(
            "clip",
            x,
            None if min is None else as_operand(min),
            None if max is None else as_operand(max),
        )
    )


@implements("round", "around")
def round(x: Any, /, decimals: int = 0) -> LazyArray:
    """Round to ``decimals`` places (half to even, like NumPy)."""
    return wrap(_ew("round", as_expr(x), decimals=int(decimals)))


around = round


@implements("real")
def real(x: Any, /) -> LazyArray:
    """The real part."""
    return wrap(_ew("real", as_expr(x)))


@implements("imag")
def imag(x: Any, /) -> LazyArray:
    """The imaginary part."""
    return wrap(_ew("imag", as_expr(x)))


@implements("isclose")
def isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> LazyArray:
    """Elementwise ``|a - b| <= atol + rtol * |b|``."""
    return wrap(
        _ew("isclose", as_operand(a), as_operand(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


@implements("allclose")
def allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> LazyArray:
    """Whether every element is close (a lazy 0-d bool; ``bool()`` computes it)."""
    return isclose(a, b, rtol, atol, equal_nan).all()


@implements("nan_to_num")
def nan_to_num(
    x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> LazyArray:
    """NaN and infinities replaced by finite numbers."""
    return wrap(_ew("nan_to_num", as_expr(x), nan=nan, posinf=posinf, neginf=neginf))


@implements("angle")
def angle(z: Any, deg: bool = False) -> LazyArray:
    """The argument of complex numbers."""
    out = wrap(_ew("angle", as_expr(z)))
    return out * (180 / np.pi) if deg else out


@implements("sinc")
def sinc(x: Any) -> LazyArray:
    """The normalised sinc function."""
    return wrap(_ew("sinc", as_expr(x)))


@implements("astype")
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> LazyArray:
    """``x`` converted to ``dtype``."""
    return LazyArray.astype(wrap(as_expr(x)), dtype, copy=copy)


__all__ = sorted(
    {
        *_generated,
        "allclose",
        "angle",
        "around",
        "astype",
        "clip",
        "imag",
        "isclose",
        "nan_to_num",
        "pow",
        "power",
        "real",
        "round",
        "sinc",
        "where",
    }
)
