"""What the NumPy functions composed from lazy ops share (no new graph ops).

Slicing and joining along an axis (``take``, ``take_positions``,
``concat``, ``with_len``, ``moveaxis``), NumPy's keyword checks
(``no_out``), errors that depend on the values and are raised when a block
is computed (``raise_where``), and static values computed now
(``computed``). Every composing module imports these; this module imports
none of them, so they form no circle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import manipulation as m
from lazyarr.graph.ops.elementwise import register_elementwise


def take(x: LazyArray, index: Any, axis: int) -> LazyArray:
    """``x`` indexed by ``index`` (an int, slice or int array) along ``axis``."""
    axis = axis % max(x.ndim, 1)
    return wrap(ix.getitem(x._expr, (slice(None),) * axis + (index,)))


def take_positions(x: LazyArray, positions: np.ndarray, axis: int) -> LazyArray:
    """``x`` at the static ``positions`` along ``axis`` (a slice when they are a range)."""
    positions = np.asarray(positions, dtype=np.intp)
    n = positions.size
    if n == 0:
        return take(x, slice(0, 0), axis)
    start = int(positions[0])
    if start >= 0 and (n == 1 or np.all(np.diff(positions) == 1)):
        return take(x, slice(start, start + n), axis)
    return take(x, positions, axis)


def concat(parts: list[LazyArray | None], axis: int) -> LazyArray:
    """The non-None ``parts`` joined along ``axis``."""
    kept = [p for p in parts if p is not None]
    if len(kept) == 1:
        return kept[0]
    return wrap(m.concat([p._expr for p in kept], axis))


def with_len(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    """``shape`` with its ``axis`` entry replaced by ``n``."""
    return (*shape[:axis], n, *shape[axis + 1 :])


def moveaxis(x: LazyArray, source: Any, destination: Any) -> LazyArray:
    return wrap(m.moveaxis(x._expr, source, destination))


def no_out(kwargs: dict[str, Any], name: str, allowed: tuple[str, ...] = ()) -> None:
    """NumPy keywords lazy arrays cannot honour raise ``TypeError``; ``where=True`` is fine."""
    if kwargs.pop("out", None) is not None:
        raise TypeError(f"{name}: out= is not supported by lazy arrays")
    if kwargs.get("where", True) is True:
        kwargs.pop("where", None)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise TypeError(f"{name}() got unsupported keyword arguments {unknown}")


_ERRORS: dict[str, type[Exception]] = {
    "ValueError": ValueError,
    "IndexError": IndexError,
    "ZeroDivisionError": ZeroDivisionError,
}


def _raise_where(value: Any, bad: Any, error: str = "ValueError", message: str = "") -> Any:
    if np.any(bad):
        raise _ERRORS[error](message)
    return value


register_elementwise("raise_where", _raise_where)


def raise_where(
    value: LazyArray, bad: LazyArray, error: type[Exception], message: str
) -> LazyArray:
    """``value``, raising ``error(message)`` when a computed block has ``bad`` anywhere.

    ``bad`` must broadcast to ``value``'s shape. This is how NumPy's errors
    that depend on the data surface: when computing, not when writing.
    """
    if error.__name__ not in _ERRORS:
        raise ValueError(f"raise_where: unsupported error type {error.__name__}")
    expr = elementwise("raise_where", value._expr, bad._expr, error=error.__name__, message=message)
    return wrap(expr)


def computed(x: Any) -> np.ndarray:
    """The values of ``x`` as a NumPy array (a lazy array is computed now)."""
    if isinstance(x, LazyArray):
        return x.compute()
    return np.asarray(x)


def is_py_scalar(v: Any) -> bool:
    """A Python number (weakly typed in NumPy's promotion), not a NumPy scalar."""
    return isinstance(v, (int, float, complex)) and not isinstance(v, np.generic)
