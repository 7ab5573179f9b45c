"""``**`` as NumPy does it: its shortcuts for exact Python scalar exponents, and its error
for integers to negative integer powers raised when the expression is written."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.elementwise import elementwise

__all__ = ["power_expr", "scalar_power_shortcut"]


def scalar_power_shortcut(base: Expr, exponent: Any) -> Expr | None:
    """``ndarray.__pow__``'s shortcuts for exact Python scalars (NumPy 2): same dtypes, values."""
    kind = base.dtype.kind
    if type(exponent) is int and exponent == 2 and kind in "bfc":
        return elementwise("square", base)
    if kind in "fc" and type(exponent) is int and exponent == -1:
        return elementwise("reciprocal", base)
    if kind in "fc" and type(exponent) is float and exponent == 0.5:
        return elementwise("sqrt", base)
    return None


def _negative_constant(value: Any) -> bool:
    """An integer exponent known now to be negative (a scalar or a 0-d user array)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return value < 0
    if isinstance(value, Expr) and value.ndim == 0 and value.dtype.kind == "i":
        data = getattr(value.op, "data", None)
        return data is not None and bool(data.array < 0)
    return False


def power_expr(base: Any, exponent: Any) -> Expr:
    """``base ** exponent`` with NumPy's error for negative integer powers raised early."""
    result = elementwise("power", base, exponent)
    if result.dtype.kind in "iu" and _negative_constant(exponent):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return result
