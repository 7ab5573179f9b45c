"""Edge chunks written piece by piece: a chunk the array's edge cuts, padded with the fill value.

zarr stores an edge chunk whole, the part outside the array filled. Padding it
in a buffer of one whole chunk costs that chunk per writing thread, kept for
its next edge chunk: 38.5 MiB a thread for the (4380, 48, 48) float32 chunks
of a pencil rechunk, whose grid of 721 rows leaves an edge chunk in every
column. A compressor that streams (zstd) or a raw file takes the padded bytes
in C order instead, one slab of the chunk's inner axes at a time: a slab
holding part of the data, or fill alone.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["PIECE_BYTES", "padded_pieces", "padding_bytes"]

PIECE_BYTES = 1 << 20
"""The most bytes of one piece: the slabs are the chunk's inner axes that fit it."""

MAX_PIECES = 1 << 16
"""More pieces than this (a chunk of small inner axes, or of many rows): padded whole."""

_BUFFERS = threading.local()


def _split(chunk_shape: tuple[int, ...], itemsize: int) -> int | None:
    """How many leading axes the pieces step over: the fewest that leave slabs of at most
    :data:`PIECE_BYTES` (None: more than :data:`MAX_PIECES` pieces)."""
    for depth in range(1, len(chunk_shape) + 1):
        if math.prod(chunk_shape[depth:]) * itemsize <= PIECE_BYTES:
            return depth if math.prod(chunk_shape[:depth]) <= MAX_PIECES else None
    return None


def padding_bytes(chunk_shape: tuple[int, ...], itemsize: int) -> int:
    """Bytes a thread keeps to write edge chunks of ``chunk_shape`` piece by piece: a
    slab with data and a slab of fill (a whole chunk where they are padded whole)."""
    depth = _split(chunk_shape, itemsize) if chunk_shape else None
    if depth is None:
        return math.prod(chunk_shape) * itemsize
    return 2 * math.prod(chunk_shape[depth:]) * itemsize


def _slab(slot: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """This thread's slab buffer ``slot``, reused while it is large enough."""
    size = math.prod(shape) * dtype.itemsize
    buf = getattr(_BUFFERS, slot, None)
    if buf is None or len(buf) < size:
        buf = bytearray(max(size, 1))
        setattr(_BUFFERS, slot, buf)
    return np.frombuffer(memoryview(buf)[:size], dtype).reshape(shape)


def padded_pieces(
    src: np.ndarray, chunk_shape: tuple[int, ...], fill: Any
) -> Iterator[memoryview] | None:
    """The bytes of the chunk holding ``src`` at its origin and ``fill`` elsewhere, in C
    order, one slab at a time (each valid until the next is asked for); None where the
    chunk has too many slabs (:data:`MAX_PIECES`: pad it whole instead)."""
    depth = _split(chunk_shape, src.dtype.itemsize)
    if depth is None:
        return None
    return _pieces(src, chunk_shape, depth, 0 if fill is None else fill)


def _pieces(
    src: np.ndarray, chunk_shape: tuple[int, ...], depth: int, fill: Any
) -> Iterator[memoryview]:
    inner = chunk_shape[depth:]
    empty = _slab("fill", inner, src.dtype)
    empty[...] = fill
    part = _slab("part", inner, src.dtype)
    corner = tuple(slice(0, n) for n in src.shape[depth:])
    blank = memoryview(empty).cast("B")
    for index in np.ndindex(*chunk_shape[:depth]):
        if all(i < n for i, n in zip(index, src.shape)):
            part[...] = fill
            part[corner] = src[index]
            yield memoryview(part).cast("B")
        else:
            yield blank
