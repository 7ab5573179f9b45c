"""Indexing ops (being written: see the helper brief)."""

from __future__ import annotations

from typing import Any

from lazyarr.graph.expr import Expr

__all__ = ["getitem", "setitem"]


def getitem(x: Expr, index: Any) -> Expr:
    raise NotImplementedError("getitem is not implemented yet")


def setitem(x: Expr, index: Any, value: Any) -> Expr:
    raise NotImplementedError("setitem is not implemented yet")
