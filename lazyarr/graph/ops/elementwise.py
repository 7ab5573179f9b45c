"""Elementwise ops: ufuncs and NumPy functions applied with broadcasting.

One op type, :class:`Elementwise`, holds the function name and an argument
template (``HOLE`` where an input array goes, constants elsewhere). The
result dtype and every error come from NumPy itself at expression time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarr.graph.chunks import broadcast_chunks
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import broadcast_shape, is_scalar, probe
from lazyarr.graph.token import HOLE, Hole

__all__ = ["ELEMENTWISE_FUNCS", "NUMPY_ONLY", "Elementwise", "elementwise", "register_elementwise"]


def _astype(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.asarray(x).astype(dtype, copy=False)


def _round(x: np.ndarray, decimals: int = 0) -> np.ndarray:
    return np.round(x, decimals)


def _real(x: np.ndarray) -> np.ndarray:
    return np.real(x)


def _imag(x: np.ndarray) -> np.ndarray:
    return np.imag(x)


def _nan_to_num(x: np.ndarray, nan: float = 0.0, posinf: Any = None, neginf: Any = None):
    return np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)


def _is_elementwise_ufunc(obj: Any) -> bool:
    # generalized ufuncs (matmul, vecdot, ...) have a core signature: not elementwise
    return isinstance(obj, np.ufunc) and obj.nout == 1 and obj.signature is None


_UFUNC_NAMES = [name for name in dir(np) if _is_elementwise_ufunc(getattr(np, name))]

ELEMENTWISE_FUNCS: dict[str, Callable[..., Any]] = {
    name: getattr(np, name) for name in _UFUNC_NAMES
}
ELEMENTWISE_FUNCS.update(
    {
        "where": np.where,
        "clip": np.clip,
        "astype": _astype,
        "round": _round,
        "real": _real,
        "imag": _imag,
        "isclose": np.isclose,
        "nan_to_num": _nan_to_num,
        "sinc": np.sinc,
        "angle": np.angle,
        "i0": np.i0,
    }
)


NUMPY_ONLY: set[str] = set()
"""Elementwise functions that run with NumPy by design: lazyarr's own helpers registered by
name (a check that raises from the values, a clamp of histogram edges). Compiled kernel sets
keep them out of their groups and run them with NumPy without warning."""


def register_elementwise(name: str, func: Callable[..., Any]) -> None:
    """Make a NumPy-compatible elementwise function available by name (NumPy-only: it has
    no compiled emitter, see :data:`NUMPY_ONLY`)."""
    ELEMENTWISE_FUNCS[name] = func
    NUMPY_ONLY.add(name)


@dataclasses.dataclass(frozen=True)
class Elementwise(MapOp):
    """``func(*template)`` with input arrays in the ``HOLE`` positions."""

    name = "elementwise"
    func: str = ""
    template: tuple = ()
    kwargs: tuple = ()

    def label(self) -> str:
        return self.func

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        nd = expr.ndim
        result = []
        for inp in expr.inputs:
            lead = nd - inp.ndim
            result.append(
                tuple(
                    slice(0, 1) if (n == 1 and expr.shape[lead + j] != 1) else out[lead + j]
                    for j, n in enumerate(inp.shape)
                )
            )
        return tuple(result)


_KWARG_SCALARS = (bool, int, float, complex, str, np.generic)


def _check_kwargs(func: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments as tokenizable constants (dtypes normalized).

    Array-valued keywords (``where=``, ``out=``) would need their own block
    regions, so they are refused rather than silently misapplied.
    """
    out: dict[str, Any] = {}
    for k, v in kwargs.items():
        if k == "where" and v is True:
            continue
        if k in ("out", "where", "axes", "axis", "signature"):
            raise TypeError(f"{func}: the {k}= argument is not supported by lazy arrays")
        if k == "dtype" and v is not None:
            v = np.dtype(v)
        elif not (v is None or isinstance(v, (*_KWARG_SCALARS, np.dtype))):
            raise TypeError(f"{func}: keyword {k}= must be a scalar, not {type(v).__name__!r}")
        out[k] = v
    return out


def elementwise(func: str, *args: Any, **kwargs: Any) -> Expr:
    """Build ``func(*args, **kwargs)`` lazily: args are Exprs or Python scalars."""
    if func not in ELEMENTWISE_FUNCS:
        raise TypeError(f"{func!r} is not a known elementwise function")
    fn = ELEMENTWISE_FUNCS[func]
    arrays = [a for a in args if isinstance(a, Expr)]
    for a in args:
        if not isinstance(a, Expr) and not is_scalar(a) and a is not None:
            raise TypeError(f"{func}: unsupported operand type {type(a).__name__!r}")
    kwargs = _check_kwargs(func, kwargs)
    dtype = probe(fn, args, kwargs)
    shape = broadcast_shape(func, [a.shape for a in arrays]) if arrays else ()
    template = tuple(HOLE if isinstance(a, Expr) else a for a in args)
    op = Elementwise(func=func, template=template, kwargs=tuple(sorted(kwargs.items())))
    return Expr(
        op, arrays, shape, dtype, broadcast_chunks(shape, [(a.shape, a.chunks) for a in arrays])
    )


def fill_template(template: tuple, arrays: tuple) -> list:
    """The argument list of an :class:`Elementwise` op with arrays in its holes."""
    it = iter(arrays)
    return [next(it) if isinstance(t, Hole) else t for t in template]
