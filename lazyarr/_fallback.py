"""NumPy's own functions on lazy arrays, for the functions lazyarr does not implement.

``np.save(path, x)``, ``np.may_share_memory(x, y)``, ``np.linalg.lstsq(a, b)`` and the
NumPy calls inside scikit-learn reach ``LazyArray.__array_function__`` with a
function lazyarr has no lazy version of. As dask does, lazyarr then computes
every lazy argument (also those inside lists, tuples and dicts, all in one
plan), calls NumPy's function on the results and returns what NumPy returns,
with a :class:`NumPyFallbackWarning` the first time each function does so:
the call works, but it is no longer lazy, and ``la.map_blocks`` would keep it
so. Functions that write into an argument (``np.copyto(x, ...)``, ``out=x``)
are refused when that argument is lazy: NumPy would write into a computed
copy and the lazy array would never see it.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarr import api
from lazyarr._convert import as_expr

__all__ = ["NumPyFallback", "NumPyFallbackWarning", "numpy_fallback"]


class NumPyFallbackWarning(UserWarning):
    """A NumPy function lazyarr does not implement computed its lazy arguments and ran NumPy's."""


# NumPy functions that write into their first argument, with that argument's name
_WRITERS = {
    "copyto": "dst",
    "put": "a",
    "place": "arr",
    "putmask": "a",
    "fill_diagonal": "a",
    "put_along_axis": "arr",
}


def _writes_first_argument() -> dict[Callable[..., Any], str]:
    return {getattr(np, n): arg for n, arg in _WRITERS.items() if hasattr(np, n)}


def _function_name(func: Callable[..., Any]) -> str:
    """``numpy.linalg.lstsq``: the name a user calls ``func`` by."""
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}"


class NumPyFallback:
    """Runs NumPy functions on computed lazy arguments; warns once per function.

    The instance owns the set of functions already warned about (``reset``
    forgets them, for tests); the lock keeps the warning single when threads
    call the same function at once.
    """

    def __init__(self) -> None:
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        self._writers = _writes_first_argument()

    def reset(self) -> None:
        """Forget which functions were warned about (the next call of each warns again)."""
        with self._lock:
            self._warned.clear()

    def __call__(
        self,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        lazy: type,
    ) -> Any:
        """``func(*args, **kwargs)`` with every instance of ``lazy`` replaced by its values."""
        name = _function_name(func)
        self._refuse_writes(func, name, args, kwargs, lazy)
        found: dict[int, Any] = {}
        _collect((args, kwargs), lazy, found)
        arrays = list(found.values())
        values = api.compute_exprs([as_expr(a) for a in arrays]) if arrays else []
        computed = {id(a): v for a, v in zip(arrays, values)}
        self._warn_once(name)
        return func(*_replace(args, lazy, computed), **_replace(kwargs, lazy, computed))

    def _refuse_writes(
        self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], lazy: type
    ) -> None:
        targets = [kwargs.get("out")]
        if func in self._writers:
            targets.append(args[0] if args else kwargs.get(self._writers[func]))
        if any(_contains(t, lazy) for t in targets):
            raise TypeError(
                f"{name} writes into a lazy array, which NumPy cannot do: it would write "
                "into a computed copy. Assign lazily (x[...] = value, la.where) or "
                "compute the array first (np.asarray(x))."
            )

    def _warn_once(self, name: str) -> None:
        with self._lock:
            if name in self._warned:
                return
            self._warned.add(name)
        warnings.warn(
            f"lazyarr does not implement {name}: its lazy arguments were computed and "
            "NumPy's version was called (the result is NumPy's, not lazy). To keep the "
            "work lazy, apply it per block with la.map_blocks; to silence this warning, "
            "compute the arguments first (np.asarray(x)).",
            NumPyFallbackWarning,
            stacklevel=4,  # the caller of np.<func>: past __call__ and __array_function__
        )


def _collect(obj: Any, lazy: type, found: dict[int, Any]) -> None:
    if isinstance(obj, lazy):
        found.setdefault(id(obj), obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _collect(item, lazy, found)
    elif isinstance(obj, dict):
        for item in obj.values():
            _collect(item, lazy, found)


def _contains(obj: Any, lazy: type) -> bool:
    found: dict[int, Any] = {}
    _collect(obj, lazy, found)
    return bool(found)


def _replace(obj: Any, lazy: type, computed: dict[int, np.ndarray]) -> Any:
    """``obj`` with lazy arrays swapped for their values; containers keep their type."""
    if isinstance(obj, lazy):
        return computed[id(obj)]
    if isinstance(obj, list):
        return [_replace(item, lazy, computed) for item in obj]
    if isinstance(obj, tuple):
        items = [_replace(item, lazy, computed) for item in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, dict):
        return {k: _replace(v, lazy, computed) for k, v in obj.items()}
    return obj


numpy_fallback = NumPyFallback()
"""The one fallback ``LazyArray.__array_function__`` uses (``numpy_fallback.reset()`` in tests)."""
