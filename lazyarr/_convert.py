"""Turning user values into expressions and back into lazy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.chunks import normalize_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import from_array
from lazyarr.graph.ops._common import is_scalar

__all__ = ["as_expr", "as_operand", "chunk_limit", "chunks_for"]


def chunk_limit() -> int:
    """The configured target block size in bytes (``array.chunk-size``)."""
    return config.parse_bytes(config.get("array.chunk-size"))


def chunks_for(chunks: Any, shape: tuple[int, ...], dtype: np.dtype) -> tuple[tuple[int, ...], ...]:
    """Explicit chunks for ``shape`` from a user spec (``"auto"`` uses the config)."""
    return normalize_chunks(chunks, shape, np.dtype(dtype).itemsize, chunk_limit())


def as_expr(value: Any, chunks: Any = "auto") -> Expr:
    """An expression for any array-like (lazy arrays pass through unchanged)."""
    expr = getattr(value, "_expr", None)
    if isinstance(expr, Expr):
        return expr
    if isinstance(value, Expr):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind in "OUSVMm":
        raise TypeError(f"lazyarr arrays cannot hold dtype {arr.dtype} ({type(value).__name__})")
    return from_array(arr, chunks_for(chunks, arr.shape, arr.dtype))


def as_operand(value: Any) -> Any:
    """An elementwise operand: an expression, or a Python scalar kept weakly typed."""
    if is_scalar(value):
        return value
    return as_expr(value)
