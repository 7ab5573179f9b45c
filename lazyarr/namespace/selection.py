"""``select`` and ``piecewise``: values chosen by conditions, from ``where``."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import manipulation as m
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import is_py_scalar
from lazyarr.namespace.creation import full
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.reductions import any as any_

__all__ = ["piecewise", "select"]


@implements("select")
def select(condlist: Any, choicelist: Any, default: Any = 0) -> LazyArray:
    """Elements of the first choice whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if is_py_scalar(c) else lazy(c) for c in [*choicelist, default]]
    try:
        dtype = np.result_type(*(c if is_py_scalar(c) else c.dtype for c in choices))
    except TypeError as e:
        msg = f"Choicelist and default value do not have a common dtype: {e}"
        raise TypeError(msg) from None
    conds = [lazy(c) for c in condlist]
    cond_shape = np.broadcast_shapes(*(c.shape for c in conds))
    choice_shape = np.broadcast_shapes(
        *(np.shape(c) if is_py_scalar(c) else c.shape for c in choices)
    )
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = cond_shape if not choice_shape else np.broadcast_shapes(cond_shape, choice_shape)
    last = choices[-1]
    if is_py_scalar(last):
        result = full(shape, np.asarray(last).astype(dtype)[()], dtype=dtype)
    else:
        result = wrap(m.broadcast_to(last.astype(dtype)._expr, shape))
    for choice, cond in zip(choices[-2::-1], conds[::-1]):
        result = where(cond, choice, result)
    return result.astype(dtype) if result.dtype != dtype else result


@implements("piecewise")
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> LazyArray:
    """``funclist[i]`` applied where ``condlist[i]`` holds (later conditions win), else 0.

    Unlike NumPy, a callable gets the *whole* lazy ``x`` (not ``x[cond]``)
    and must work elementwise on lazy arrays; results are picked with
    ``where``. Values are cast to ``x``'s dtype.
    """
    xe = lazy(x)
    n2 = len(funclist)
    if np.isscalar(condlist) or (
        not isinstance(condlist[0], (list, np.ndarray, LazyArray)) and xe.ndim != 0
    ):
        condlist = [condlist]
    conds = [lazy(c).astype(bool) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        stacked = wrap(m.stack([c._expr for c in conds], 0))
        conds.append(~any_(stacked, axis=0))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = full(xe.shape, 0, dtype=xe.dtype)
    for cond, func in zip(conds, funclist):
        value = func(xe, *args, **kw) if callable(func) else func
        value = lazy(value).astype(xe.dtype)
        y = where(cond, value, y)
    return y
