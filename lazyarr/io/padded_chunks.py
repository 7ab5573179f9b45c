"""Chunks written piece by piece: an edge chunk padded with the fill value, a chunk gathered.

zarr stores an edge chunk whole, the part outside the array filled. Padding it
in a buffer of one whole chunk costs that chunk per writing thread, kept for
its next edge chunk: 38.5 MiB a thread for the (4380, 48, 48) float32 chunks
of a pencil rechunk, whose grid of 721 rows leaves an edge chunk in every
column. A compressor that streams (zstd) or a raw file takes the padded bytes
in C order instead, a piece of at most 1 MiB of the chunk's inner axes at a
time: a piece holding part of the data, or fill alone. A chunk cut across a
block's inner axes (not one slab of the block) is gathered the same way, piece
by piece, instead of into a buffer of one whole chunk.
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


def _layout(chunk_shape: tuple[int, ...], itemsize: int) -> tuple[int, int] | None:
    """How a chunk is cut into pieces: ``(axis, rows)``, each piece ``rows`` indices along
    ``axis`` (the first axis whose inner slabs fit :data:`PIECE_BYTES`) and all the axes
    after it, one piece per index of the axes before it (None: more than
    :data:`MAX_PIECES` pieces)."""
    for axis in range(len(chunk_shape)):
        slab = math.prod(chunk_shape[axis + 1 :]) * itemsize
        if slab <= PIECE_BYTES:
            rows = max(1, min(chunk_shape[axis], PIECE_BYTES // max(1, slab)))
            pieces = math.prod(chunk_shape[:axis]) * -(-chunk_shape[axis] // rows)
            return (axis, rows) if pieces <= MAX_PIECES else None
    return None


def padding_bytes(chunk_shape: tuple[int, ...], itemsize: int) -> int:
    """Bytes a thread keeps to write chunks of ``chunk_shape`` piece by piece: a piece with
    data and a piece of fill (a whole chunk where they are gathered or padded whole)."""
    layout = _layout(chunk_shape, itemsize)
    if layout is None:
        return math.prod(chunk_shape) * itemsize
    axis, rows = layout
    return 2 * rows * math.prod(chunk_shape[axis + 1 :]) * itemsize


def _slab(slot: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """This thread's piece buffer ``slot``, reused while it is large enough."""
    size = math.prod(shape) * dtype.itemsize
    buf = getattr(_BUFFERS, slot, None)
    if buf is None or len(buf) < size:
        buf = bytearray(max(size, 1))
        setattr(_BUFFERS, slot, buf)
    return np.frombuffer(memoryview(buf)[:size], dtype).reshape(shape)


def padded_pieces(
    src: np.ndarray, chunk_shape: tuple[int, ...], fill: Any
) -> Iterator[memoryview] | None:
    """The bytes of the chunk holding ``src`` at its origin and ``fill`` elsewhere (none
    where ``src`` is the whole chunk, a strided part of a block), in C order, one piece at
    a time (each valid until the next is asked for); None where the chunk has too many
    pieces (:data:`MAX_PIECES`: gather or pad it whole instead)."""
    layout = _layout(chunk_shape, src.dtype.itemsize)
    if layout is None:
        return None
    return _pieces(src, chunk_shape, *layout, 0 if fill is None else fill)


def _pieces(
    src: np.ndarray, chunk_shape: tuple[int, ...], axis: int, rows: int, fill: Any
) -> Iterator[memoryview]:
    shape = (rows, *chunk_shape[axis + 1 :])
    empty = _slab("fill", shape, src.dtype)
    empty[...] = fill
    part = _slab("part", shape, src.dtype)
    inner = tuple(slice(0, n) for n in src.shape[axis + 1 :])
    cut_inside = src.shape[axis + 1 :] != chunk_shape[axis + 1 :]
    length = chunk_shape[axis]
    for outer in np.ndindex(*chunk_shape[:axis]):
        inside = all(i < n for i, n in zip(outer, src.shape))
        for start in range(0, length, rows):
            stop = min(start + rows, length)
            have = min(stop, src.shape[axis]) - start if inside else 0
            if have <= 0:
                yield memoryview(empty[: stop - start]).cast("B")
                continue
            piece = part[: stop - start]
            if cut_inside or have < stop - start:
                piece[...] = fill
            piece[(slice(0, have), *inner)] = src[(*outer, slice(start, start + have))]
            yield memoryview(piece).cast("B")
