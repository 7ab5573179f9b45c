"""Cumulative and sorting ops (being written: see the helper brief)."""

from __future__ import annotations

from typing import Any

from lazyarr.graph.expr import Expr

__all__ = ["cumulative"]


def cumulative(func: str, x: Expr, axis: int | None = None, dtype: Any = None,
               include_initial: bool = False) -> Expr:
    raise NotImplementedError("cumulative is not implemented yet")
