"""Linear algebra ops (being written: see the helper brief)."""

from __future__ import annotations

from typing import Any

from lazyarr.graph.expr import Expr

__all__ = ["matmul", "tensordot"]


def matmul(a: Expr, b: Expr) -> Expr:
    raise NotImplementedError("matmul is not implemented yet")


def tensordot(a: Expr, b: Expr, axes: Any = 2) -> Expr:
    raise NotImplementedError("tensordot is not implemented yet")
