"""Registering namespace functions as ``__array_function__`` implementations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from lazyarr._array import HANDLED_FUNCTIONS

__all__ = ["implements"]

F = TypeVar("F", bound=Callable[..., Any])


def implements(*numpy_names: str) -> Callable[[F], F]:
    """Make ``np.<name>(lazy)`` call the decorated function."""

    def deco(fn: F) -> F:
        for name in numpy_names or (fn.__name__,):
            target = np
            for part in name.split("."):
                target = getattr(target, part, None)
                if target is None:
                    break
            if target is not None:
                HANDLED_FUNCTIONS[target] = fn
        return fn

    return deco
