"""Turning user values into expressions and back into lazy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.chunks import normalize_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import FromReader, from_array
from lazyarr.graph.ops._common import is_scalar
from lazyarr.graph.token import ArrayData
from lazyarr.io.readers import DaskReader, is_dask_array

__all__ = [
    "as_expr",
    "as_operand",
    "chunk_limit",
    "chunks_for",
    "dask_source",
    "is_auto",
    "source_expr",
]


def chunk_limit() -> int:
    """The target block size in bytes: ``array.chunk-size``, at most a sixteenth of
    ``memory-limit`` (two threads each holding a few blocks, and room for more)."""
    limit = config.parse_bytes(config.get("array.chunk-size"))
    memory = config.get("memory-limit")
    if memory is not None:
        limit = min(limit, max(1, config.parse_bytes(memory) // 16))
    return limit


def chunks_for(chunks: Any, shape: tuple[int, ...], dtype: np.dtype) -> tuple[tuple[int, ...], ...]:
    """Explicit chunks for ``shape`` from a user spec (``"auto"`` uses the config)."""
    return normalize_chunks(chunks, shape, np.dtype(dtype).itemsize, chunk_limit())


def is_auto(chunks: Any) -> bool:
    """True when a chunk spec leaves every block size to lazyarr (``"auto"`` or None).

    Generated sources record it (``auto_chunks``) so planning may re-block
    them for the cluster; partly explicit specs (``(1000, "auto")``) count
    as the user's choice.
    """
    return chunks is None or (isinstance(chunks, str) and chunks == "auto")


def as_expr(value: Any, chunks: Any = "auto") -> Expr:
    """An expression for any array-like (lazy arrays pass through unchanged)."""
    expr = getattr(value, "_expr", None)
    if isinstance(expr, Expr):
        return expr
    if isinstance(value, Expr):
        return value
    if is_dask_array(value):
        return dask_source(value)
    arr = np.asarray(value)
    # np.asarray made a fresh array (lists, scalars): nobody else can write to it
    owned = arr is not value and arr.base is None
    return source_expr(arr, chunks, owned)


def dask_source(darr: Any) -> Expr:
    """A source over a Dask array, in its chunks: each block computes the Dask blocks
    under it when it runs (so ``lazy + dask_array`` stays lazy)."""
    if any(np.isnan(c) for axis in darr.chunks for c in axis):
        raise ValueError(
            "the Dask array has unknown chunk sizes: call compute_chunk_sizes() on it first"
        )
    reader = DaskReader(darr)
    if reader.dtype.kind in "OUSV":
        raise TypeError(f"lazyarr arrays cannot hold dtype {reader.dtype}")
    return Expr(FromReader(reader=reader), (), reader.shape, reader.dtype, reader.blocks)


def source_expr(arr: np.ndarray, chunks: Any, owned: bool) -> Expr:
    """A source over ``arr``; a buffer someone else may write to is keyed by its address too.

    Equal keys mean equal values (CSE and the plan cache rely on it), so an
    array lazyarr does not own cannot be keyed by its content alone: after
    its owner writes to it, another array with the old content would share
    its key, and a cached plan would read the wrong buffer.
    """
    if arr.dtype.kind in "OUSV":
        raise TypeError(f"lazyarr arrays cannot hold dtype {arr.dtype}")
    token = ArrayData(arr).token
    if not owned:
        token = f"{token}@{arr.__array_interface__['data'][0]:x}/{arr.strides}"
    return from_array(arr, chunks_for(chunks, arr.shape, arr.dtype), token)


def as_operand(value: Any) -> Any:
    """An elementwise operand: an expression, or a Python scalar kept weakly typed."""
    if is_scalar(value):
        return value
    return as_expr(value)
