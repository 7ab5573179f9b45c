"""Shape manipulation ops (being written: see the helper brief)."""

from __future__ import annotations

from typing import Any

from lazyarr.graph.expr import Expr

__all__ = ["permute_dims", "reshape", "broadcast_to", "expand_dims", "squeeze", "flip", "roll",
           "concat", "stack", "tile", "repeat", "moveaxis", "swapaxes", "tril", "triu"]


def _todo(name: str) -> Any:
    raise NotImplementedError(f"{name} is not implemented yet")


def permute_dims(x: Expr, axes: tuple[int, ...] | None) -> Expr: return _todo("permute_dims")
def reshape(x: Expr, shape: tuple[int, ...]) -> Expr: return _todo("reshape")
def broadcast_to(x: Expr, shape: tuple[int, ...]) -> Expr: return _todo("broadcast_to")
def expand_dims(x: Expr, axis: Any) -> Expr: return _todo("expand_dims")
def squeeze(x: Expr, axis: Any = None) -> Expr: return _todo("squeeze")
def flip(x: Expr, axis: Any = None) -> Expr: return _todo("flip")
def roll(x: Expr, shift: Any, axis: Any = None) -> Expr: return _todo("roll")
def concat(xs: list[Expr], axis: int | None = 0) -> Expr: return _todo("concat")
def stack(xs: list[Expr], axis: int = 0) -> Expr: return _todo("stack")
def tile(x: Expr, reps: Any) -> Expr: return _todo("tile")
def repeat(x: Expr, repeats: Any, axis: int | None = None) -> Expr: return _todo("repeat")
def moveaxis(x: Expr, source: Any, destination: Any) -> Expr: return _todo("moveaxis")
def swapaxes(x: Expr, axis1: int, axis2: int) -> Expr: return _todo("swapaxes")
def tril(x: Expr, k: int = 0) -> Expr: return _todo("tril")
def triu(x: Expr, k: int = 0) -> Expr: return _todo("triu")
