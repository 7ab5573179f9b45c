"""Python's operators on lazy arrays, as elementwise expressions (``ArrayOperators``).

``LazyArray`` takes them from this mixin: ``x + 1``, ``1 + x``, ``x += 1``
(which rebinds the handle's expression, with NumPy's casting rule), ``x ** 2``,
``x @ y``, comparisons and ``divmod``. An operand lazyarr does not know is
answered with ``NotImplemented``, so Python asks the other side.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarr._convert import as_expr, as_operand
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops import linalg as lin
from lazyarr.graph.ops.power import power_expr, scalar_power_shortcut
from lazyarr.io.readers import is_dask_array

__all__ = ["ArrayOperators", "is_operand"]


def _like(self: ArrayOperators, expr: Expr) -> Any:
    """A new array of ``self``'s type for ``expr``."""
    arr = type(self).__new__(type(self))
    arr._expr = expr
    return arr


def _binary(func: str, reflected: bool = False) -> Callable[[ArrayOperators, Any], Any]:
    def method(self: ArrayOperators, other: Any) -> Any:
        if not is_operand(other):
            return NotImplemented
        a, b = (as_operand(other), self._expr) if reflected else (self._expr, as_operand(other))
        return _like(self, elementwise(func, a, b))

    method.__name__ = f"__{'r' if reflected else ''}{func}__"
    method.__doc__ = f"Elementwise ``numpy.{func}``, lazily."
    return method


def _inplace(func: str) -> Callable[[ArrayOperators, Any], Any]:
    def method(self: ArrayOperators, other: Any) -> ArrayOperators:
        if not is_operand(other):
            return NotImplemented
        operand = as_operand(other)
        if func == "power":
            result = power_expr(self._expr, operand)
        else:
            result = elementwise(func, self._expr, operand)
        if result.shape != self.shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {self.shape} doesn't match "
                f"the broadcast shape {result.shape}"
            )
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise np._core._exceptions._UFuncOutputCastingError(
                    getattr(np, func), "same_kind", result.dtype, self.dtype, 0
                )
            result = elementwise("astype", result, dtype=self.dtype)
        self._expr = result
        return self

    method.__name__ = f"__i{func}__"
    return method


def _unary(func: str) -> Callable[[ArrayOperators], ArrayOperators]:
    def method(self: ArrayOperators) -> ArrayOperators:
        return _like(self, elementwise(func, self._expr))

    method.__name__ = f"__{func}__"
    return method


def is_operand(value: Any) -> bool:
    """What lazy operators take: arrays, scalars, sequences, and Dask arrays (read lazily)."""
    return is_dask_array(value) or isinstance(
        value, (ArrayOperators, np.ndarray, np.generic, bool, int, float, complex, list, tuple)
    )


class ArrayOperators:
    """The arithmetic, comparison, bitwise and matrix operators of a lazy array."""

    _expr: Expr
    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", True)
    __truediv__ = _binary("true_divide")
    __rtruediv__ = _binary("true_divide", True)
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _binary("floor_divide", True)
    __mod__ = _binary("remainder")
    __rmod__ = _binary("remainder", True)
    __and__ = _binary("bitwise_and")
    __rand__ = _binary("bitwise_and", True)
    __or__ = _binary("bitwise_or")
    __ror__ = _binary("bitwise_or", True)
    __xor__ = _binary("bitwise_xor")
    __rxor__ = _binary("bitwise_xor", True)
    __lshift__ = _binary("left_shift")
    __rlshift__ = _binary("left_shift", True)
    __rshift__ = _binary("right_shift")
    __rrshift__ = _binary("right_shift", True)
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    __eq__ = _binary("equal")  # type: ignore[assignment]
    __ne__ = _binary("not_equal")  # type: ignore[assignment]
    __iadd__ = _inplace("add")
    __isub__ = _inplace("subtract")
    __imul__ = _inplace("multiply")
    __itruediv__ = _inplace("true_divide")
    __ifloordiv__ = _inplace("floor_divide")
    __imod__ = _inplace("remainder")
    __ipow__ = _inplace("power")
    __iand__ = _inplace("bitwise_and")
    __ior__ = _inplace("bitwise_or")
    __ixor__ = _inplace("bitwise_xor")
    __ilshift__ = _inplace("left_shift")
    __irshift__ = _inplace("right_shift")
    __neg__ = _unary("negative")
    __pos__ = _unary("positive")
    __abs__ = _unary("absolute")
    __invert__ = _unary("invert")
    __hash__ = None  # type: ignore[assignment]

    def __pow__(self, other: Any) -> Any:
        if not is_operand(other):
            return NotImplemented
        fast = scalar_power_shortcut(self._expr, other)
        return _like(self, fast if fast is not None else power_expr(self._expr, as_operand(other)))

    def __rpow__(self, other: Any) -> Any:
        if not is_operand(other):
            return NotImplemented
        return _like(self, power_expr(as_operand(other), self._expr))

    def __divmod__(self, other: Any) -> Any:
        return self // other, self % other

    def __rdivmod__(self, other: Any) -> Any:
        return other // self, other % self

    def __matmul__(self, other: Any) -> Any:
        if not is_operand(other):
            return NotImplemented
        return _like(self, lin.matmul(self._expr, as_expr(other)))

    def __rmatmul__(self, other: Any) -> Any:
        if not is_operand(other):
            return NotImplemented
        return _like(self, lin.matmul(as_expr(other), self._expr))

    def __imatmul__(self, other: Any) -> Any:
        result = lin.matmul(self._expr, as_expr(other))
        if result.shape != self.shape:
            raise ValueError(f"matmul: in-place result shape {result.shape} != {self.shape}")
        self._expr = result
        return self
