"""Executor names -> implementations, loaded lazily.

Built-ins are ``"module:Class"`` strings so importing lazyarr imports no
executor; third parties register through the ``lazyarr.executors`` entry
point group or :func:`register`.
"""

from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points
from typing import Any

from lazyarr import config

from .dask_hosts import check_host_groups

__all__ = ["available", "check_name", "get", "names", "register"]

_BUILTIN: dict[str, str] = {
    "dask": "lazyarr.executors.dask:DaskExecutor",
    "numba": "lazyarr.executors.numba:NumbaExecutor",
    "numpy": "lazyarr.executors.numpy:NumpyExecutor",
    "raise": "lazyarr.executors.testing:RaiseExecutor",
}
_EXTRA: dict[str, Any] = {}
_INSTANCES: dict[str, Any] = {}


def register(name: str, target: Any) -> None:
    """Register an executor class, instance or ``"module:Class"`` under ``name``."""
    _EXTRA[name] = target
    _INSTANCES.pop(name, None)


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group="lazyarr.executors")}


def names() -> list[str]:
    """Every registered executor name."""
    return sorted({*_BUILTIN, *_EXTRA, *_entry_points()})


def _load(target: Any) -> Any:
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        target = getattr(importlib.import_module(module), attr)
    elif hasattr(target, "load") and hasattr(target, "group"):
        target = target.load()
    return target() if isinstance(target, type) else target


def get(name: str) -> Any:
    """The executor called ``name`` (one instance per process)."""
    inst = _INSTANCES.get(name)
    if inst is not None:
        return inst
    target = _EXTRA.get(name) or _BUILTIN.get(name) or _entry_points().get(name)
    if target is None:
        check_name(name)
    inst = _load(target)
    _INSTANCES[name] = inst
    return inst


def check_name(name: Any) -> None:
    """``ValueError`` with the nearest registered name unless ``name`` is registered
    (the ``executor`` setting is checked with it when it is set)."""
    if name in _EXTRA or name in _BUILTIN:
        return
    known = names()
    if name not in known:
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown executor {name!r}{hint} (known: {', '.join(known)})")


config.register_check("executor", check_name)
config.register_check("dask.host-groups", check_host_groups)


def available() -> dict[str, tuple[bool, str]]:
    """Each executor name -> (usable here, a short reason or description)."""
    out = {}
    for n in names():
        try:
            ex = get(n)
        except Exception as e:  # an executor whose deps are missing is listed, not fatal
            out[n] = (False, f"{type(e).__name__}: {e}")
            continue
        doc = (type(ex).__doc__ or "").strip().splitlines()
        out[n] = (True, doc[0] if doc else "")
    return out
