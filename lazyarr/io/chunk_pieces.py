"""Chunks in pieces: written padded (an edge chunk) or gathered (a chunk cut across a
block's inner axes), and read for a part of them, one piece at a time.

zarr stores an edge chunk whole, the part outside the array filled. Padding it
in a buffer of one whole chunk costs that chunk per writing thread, kept for
its next edge chunk: 38.5 MiB a thread for the (4380, 48, 48) float32 chunks
of a pencil rechunk, whose grid of 721 rows leaves an edge chunk in every
column. A compressor that streams (zstd) or a raw file takes the padded bytes
in C order instead, a piece of at most 1 MiB of the chunk's inner axes at a
time: a piece holding part of the data, or fill alone. A chunk cut across a
block's inner axes (not one slab of the block) is gathered the same way, piece
by piece, instead of into a buffer of one whole chunk. Reading the part of a
chunk that a block needs is the mirror image (:func:`read_part`): the chunk's
bytes stream through one piece, the part of each copied out, the pieces outside
the part skipped.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["PIECE_BYTES", "padded_pieces", "padding_bytes", "piece_bytes", "read_part", "read_into"]

PIECE_BYTES = 1 << 20
"""The most bytes of one piece: the slabs are the chunk's inner axes that fit it."""

MAX_PIECES = 1 << 16
"""More pieces than this (a chunk of small inner axes, or of many rows): the chunk is
padded, gathered or decoded whole instead."""

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


def piece_bytes(chunk_shape: tuple[int, ...], itemsize: int) -> int | None:
    """Bytes of one piece of a chunk of ``chunk_shape`` (None: too many pieces, the chunk
    is handled whole)."""
    layout = _layout(chunk_shape, itemsize)
    if layout is None:
        return None
    axis, rows = layout
    return rows * math.prod(chunk_shape[axis + 1 :]) * itemsize


def padding_bytes(chunk_shape: tuple[int, ...], itemsize: int) -> int:
    """Bytes a thread keeps to write chunks of ``chunk_shape`` piece by piece: a piece with
    data and a piece of fill (a whole chunk where they are gathered or padded whole)."""
    piece = piece_bytes(chunk_shape, itemsize)
    return math.prod(chunk_shape) * itemsize if piece is None else 2 * piece


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


def read_part(
    stream: Any, chunk_shape: tuple[int, ...], part: tuple[slice, ...], dst: np.ndarray
) -> bool | None:
    """Copy ``part`` (slices of steps 1 from the chunk's origin) of the chunk whose bytes
    ``stream`` gives in C order from its start (``readinto``; ``seek`` forward skips) into
    ``dst``, one piece at a time: True, or None where the chunk has too many pieces
    (:data:`MAX_PIECES`: decode it whole instead). A stream that ends before the part
    does is a ``ValueError``."""
    layout = _layout(chunk_shape, dst.dtype.itemsize)
    if layout is None:
        return None
    axis, rows = layout
    shape = (rows, *chunk_shape[axis + 1 :])
    row_bytes = math.prod(shape[1:]) * dst.dtype.itemsize
    buf = _slab("part", shape, dst.dtype)
    inner = part[axis + 1 :]
    lo, hi = part[axis].start, part[axis].stop
    at = 0  # bytes of the chunk read or skipped so far
    for outer in np.ndindex(*(p.stop - p.start for p in part[:axis])):
        index = tuple(p.start + i for p, i in zip(part[:axis], outer))
        base = int(np.ravel_multi_index(index, chunk_shape[:axis])) if axis else 0
        base *= chunk_shape[axis] * row_bytes
        for start in range(lo - lo % rows, hi, rows):
            stop = min(start + rows, chunk_shape[axis])
            begin = base + start * row_bytes
            if begin > at:
                stream.seek(begin)
                at = begin
            view = memoryview(buf[: stop - start]).cast("B")
            got = read_into(stream, view)
            if got < len(view):
                raise ValueError(f"ends after {at + got} bytes, inside the part read")
            at += got
            take = slice(max(lo, start), min(hi, stop))
            dst[(*outer, slice(take.start - lo, take.stop - lo))] = buf[
                (slice(take.start - start, take.stop - start), *inner)
            ]
    return True


def read_into(stream: Any, view: memoryview) -> int:
    """Fill ``view`` from ``stream`` (``readinto`` may give less than asked); the bytes it
    got, fewer where the stream ended."""
    got = 0
    while got < len(view):
        n = stream.readinto(view[got:])
        if not n:
            break
        got += n
    return got
