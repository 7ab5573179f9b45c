"""Chunk normalisation and block-grid arithmetic.

Chunks are Dask-style: one tuple of block lengths per axis (the last block
may be shorter, and after slicing or concatenation blocks may be uneven).
Everything here is pure index arithmetic on tuples; no data is touched.
"""

from __future__ import annotations

import bisect
import math
import sys
from collections.abc import Iterator, Sequence
from itertools import accumulate, product
from typing import Any

import numpy as np

__all__ = [
    "Chunks",
    "Grid",
    "aligned_chunks",
    "auto_chunks",
    "block_index_iter",
    "block_slices",
    "blocks_in_range",
    "broadcast_chunks",
    "normalize_chunks",
    "offsets",
    "regular_chunks",
]

Chunks = tuple[tuple[int, ...], ...]


def regular_chunks(length: int, size: int) -> tuple[int, ...]:
    """Split ``length`` into blocks of ``size`` (the last may be shorter)."""
    if length == 0:
        return (0,)
    size = max(1, int(size))
    full, rest = divmod(length, size)
    return (size,) * full + ((rest,) if rest else ())


def _balanced(length: int, nblocks: int) -> tuple[int, ...]:
    nblocks = max(1, min(nblocks, max(length, 1)))
    size = math.ceil(length / nblocks) if length else 0
    return regular_chunks(length, size) if length else (0,)


def broadcast_chunks(
    shape: Sequence[int], parts: Sequence[tuple[Sequence[int], Sequence[tuple[int, ...]]]]
) -> Chunks:
    """Chunks of an output broadcast from inputs ``(shape, chunks)``, axes right-aligned.

    Per axis, the finest grid among the inputs that have the axis's full
    length (size-1 broadcast axes do not count); one block where none does.
    """
    nd = len(shape)
    out: list[tuple[int, ...]] = []
    for ax in range(nd):
        choice: tuple[int, ...] | None = None
        for in_shape, in_chunks in parts:
            j = ax - (nd - len(in_shape))
            if (j >= 0 and in_shape[j] == shape[ax]) and (
                choice is None or len(in_chunks[j]) > len(choice)
            ):
                choice = tuple(in_chunks[j])
        out.append(choice if choice is not None else ((shape[ax],) if shape[ax] else (0,)))
    return tuple(out)


def auto_chunks(shape: Sequence[int], itemsize: int, limit_bytes: int) -> Chunks:
    """Pick blocks of about ``limit_bytes`` that keep trailing axes whole.

    C-ordered rows stay contiguous: the trailing axes are kept whole while a
    block still fits, the first axis that does not fit is split into balanced
    blocks, and the axes before it get blocks of length one.
    """
    budget = max(1, limit_bytes // max(1, itemsize))
    out: list[tuple[int, ...]] = [()] * len(shape)
    inner = 1
    split_at = -1
    for ax in range(len(shape) - 1, -1, -1):
        n = max(shape[ax], 1)
        if inner * n <= budget:
            out[ax] = (shape[ax],) if shape[ax] else (0,)
            inner *= n
            continue
        per_block = max(1, budget // inner)
        out[ax] = _balanced(shape[ax], math.ceil(shape[ax] / per_block))
        split_at = ax
        break
    for ax in range(split_at - 1, -1, -1):
        out[ax] = regular_chunks(shape[ax], 1)
    return tuple(out)


def aligned_chunks(
    shape: Sequence[int], itemsize: int, stored: Sequence[int], limit_bytes: int
) -> Chunks:
    """Blocks that are whole multiples of the storage's chunks ``stored``, near ``limit_bytes``.

    Every block then reads whole stored chunks (no stored chunk is read by two
    blocks). Leading axes grow first: a block that is one stored chunk wide
    along every later axis holds each of its stored chunks as one contiguous
    slab (C order), so a reader decodes a chunk straight into its place in the
    block instead of into a temporary that is then copied in strides (half the
    memory traffic of a read). A block is never smaller than one stored chunk,
    even above the limit.
    """
    budget = max(1, limit_bytes // max(1, itemsize))
    block = [max(1, min(int(c), n)) if n else 1 for c, n in zip(stored, shape)]
    for ax in range(len(shape)):
        others = math.prod(block) // block[ax]
        fit = max(1, budget // max(1, others * block[ax]))
        most = max(1, math.ceil(shape[ax] / block[ax]))
        block[ax] = min(shape[ax], block[ax] * min(fit, most)) or 1
        if fit < most:
            break
    return tuple(regular_chunks(n, b) for n, b in zip(shape, block))


def _is_intlike(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def normalize_chunks(chunks: Any, shape: Sequence[int], itemsize: int, limit_bytes: int) -> Chunks:
    """Turn a user chunk spec into explicit per-axis block lengths.

    Accepts ``"auto"``/``None``, one int for every axis, a per-axis tuple of
    ints (``-1``/``None`` = whole axis, ``"auto"``), or explicit tuples of
    block lengths. Raises ``ValueError`` naming the shape when they disagree.
    """
    shape = tuple(int(s) for s in shape)
    if math.prod(shape) * itemsize > sys.maxsize:  # NumPy's check, at expression time
        raise ValueError(
            "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
            "possible size."
        )
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return auto_chunks(shape, itemsize, limit_bytes)
    if isinstance(chunks, str):
        raise ValueError(f"chunks must be 'auto', an int or a tuple, not {chunks!r}")
    if _is_intlike(chunks):
        chunks = (int(chunks),) * len(shape)
    if isinstance(chunks, dict):
        chunks = tuple(chunks.get(ax, chunks.get(ax - len(shape), -1)) for ax in range(len(shape)))
    chunks = tuple(chunks)
    if len(shape) == 1 and len(chunks) > 1 and all(_is_intlike(c) for c in chunks):
        chunks = (chunks,)  # a 1-d array's block lengths, flat (Dask reads them so too)
    if len(chunks) != len(shape):
        raise ValueError(
            f"chunks {chunks!r} have {len(chunks)} axes but shape {shape} has {len(shape)}"
        )
    _check_block_count(chunks, shape)
    auto_axes = [ax for ax, c in enumerate(chunks) if isinstance(c, str)]
    out: list[tuple[int, ...]] = []
    for ax, (c, n) in enumerate(zip(chunks, shape)):
        if isinstance(c, str):
            if c != "auto":
                raise ValueError(
                    f"chunks for axis {ax} must be 'auto', an int or a tuple, not {c!r}"
                )
            out.append((n,) if n else (0,))
        elif c is None or (_is_intlike(c) and int(c) == -1):
            out.append((n,) if n else (0,))
        elif _is_intlike(c):
            if int(c) <= 0 and n > 0:
                raise ValueError(f"chunk size {c} on axis {ax} must be positive (shape {shape})")
            out.append(regular_chunks(n, int(c)))
        else:
            blocks = tuple(int(b) for b in c)
            if sum(blocks) != n or any(b < 0 for b in blocks) or not blocks:
                raise ValueError(
                    f"chunks {blocks} on axis {ax} do not add up to the axis length {n} "
                    f"(shape {shape})"
                )
            out.append(blocks)
    if auto_axes:
        fixed = 1
        for ax, blocks in enumerate(out):
            if ax not in auto_axes:
                fixed *= max(blocks)
        budget = max(1, limit_bytes // max(1, itemsize * max(fixed, 1)))
        per_axis = max(1, int(budget ** (1 / len(auto_axes))))
        for ax in auto_axes:
            out[ax] = _balanced(shape[ax], math.ceil(shape[ax] / per_axis)) if shape[ax] else (0,)
    return tuple(out)


MAX_BLOCKS = 10_000_000
"""The most blocks one array may have. Block grids are tuples of block lengths and plans
cost about 15 us per block, so 10 million blocks already take minutes to plan; beyond that,
writing the expression alone ran out of memory (``la.ones(10**9, chunks=1)``)."""


def _check_block_count(chunks: tuple, shape: tuple[int, ...]) -> None:
    """Refuse, before any grid is built, a chunk spec giving more than :data:`MAX_BLOCKS`."""
    count = 1
    for c, n in zip(chunks, shape):
        if _is_intlike(c) and int(c) > 0:
            count *= -(-n // int(c)) if n else 1
        elif isinstance(c, (tuple, list)):
            count *= max(1, len(c))
    if count > MAX_BLOCKS:
        raise ValueError(
            f"chunks {chunks!r} cut shape {shape} into {count:,} blocks, more than lazyarr "
            f"plans ({MAX_BLOCKS:,}; about 15 us of planning each): give larger chunks "
            "(blocks of generated arrays under array.min-chunk-size are merged when the plan "
            "is made, but the grid is written first)"
        )


_OFFSETS: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
_OFFSETS_SIZE = 8192


def offsets(blocks: tuple[int, ...]) -> tuple[int, ...]:
    """Start of each block along one axis, plus the axis length at the end.

    Remembered by the identity of ``blocks`` (each ``Expr`` owns its chunk
    tuples): hashing a tuple costs its length, so a cache keyed by value
    would make every per-block lookup cost the number of blocks.
    """
    hit = _OFFSETS.get(id(blocks))
    if hit is not None and hit[0] is blocks:
        return hit[1]
    out = tuple(accumulate(blocks, initial=0))
    if len(_OFFSETS) >= _OFFSETS_SIZE:
        _OFFSETS.clear()
    _OFFSETS[id(blocks)] = (blocks, out)  # the tuple is kept alive, so its id stays its own
    return out


def block_slices(chunks: Chunks, index: Sequence[int]) -> tuple[slice, ...]:
    """The global slices covered by block ``index``."""
    out = []
    for blocks, i in zip(chunks, index):
        o = offsets(blocks)
        out.append(slice(o[i], o[i + 1]))
    return tuple(out)


def blocks_in_range(blocks: tuple[int, ...], start: int, stop: int) -> range:
    """Indices of the blocks along one axis that overlap ``[start, stop)``."""
    o = offsets(blocks)
    if stop <= start:
        # an empty range still needs one block to take its (empty) piece from
        i = min(max(bisect.bisect_right(o, start) - 1, 0), len(blocks) - 1)
        return range(i, i + 1)
    first = bisect.bisect_right(o, start) - 1
    last = bisect.bisect_left(o, stop) - 1
    # skip empty blocks at the start
    first = max(first, 0)
    while first < last and o[first + 1] <= start:
        first += 1
    return range(first, last + 1)


def block_index_iter(numblocks: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """All block indices of a grid in C order."""
    return product(*(range(n) for n in numblocks))


class Grid:
    """One chunking's per-axis block slices and sizes, made once (work: blocks per axis).

    ``region(index)`` is then a tuple lookup per axis, whatever the number
    of blocks; :meth:`block_sizes` gives every block's element count at once.
    """

    __slots__ = ("_slices", "chunks", "numblocks")

    def __init__(self, chunks: Chunks) -> None:
        self.chunks = chunks
        self.numblocks = tuple(len(c) for c in chunks)
        self._slices: list[tuple[slice, ...]] | None = None

    @property
    def slices(self) -> list[tuple[slice, ...]]:
        """Per axis, every block's slice (made on first use: a caller that only wants
        :meth:`block_sizes` makes no slice per block)."""
        if self._slices is None:
            self._slices = []
            for blocks in self.chunks:
                o = offsets(blocks)
                self._slices.append(tuple(slice(o[i], o[i + 1]) for i in range(len(blocks))))
        return self._slices

    def region(self, index: Sequence[int]) -> tuple[slice, ...]:
        """The global slices of block ``index``."""
        return tuple([s[i] for s, i in zip(self.slices, index)])

    def block_sizes(self, axes: Sequence[int] | None = None) -> np.ndarray:
        """Element count of every block (int64, shaped like the grid); only ``axes`` count."""
        out = np.ones(self.numblocks, dtype=np.int64)
        for ax, blocks in enumerate(self.chunks):
            if axes is not None and ax not in axes:
                continue
            shape = [1] * len(self.chunks)
            shape[ax] = len(blocks)
            out = out * np.asarray(blocks, dtype=np.int64).reshape(shape)
        return out
