"""Scratch arrays: intermediates on local disk, in one raw file of exactly their bytes.

A staged rechunk (:mod:`lazyarr.staged_rechunk`) writes its input in one grid
and reads it back in another. zarr would do, but it pads every edge chunk to
the full chunk shape (a 241-row axis in 48-row chunks stores 288 rows: 20%
more bytes written and read), runs each edge chunk through its own slower
path, and makes a file per chunk (creating a file cost about 1 ms on the
benchmark machine's ext4: 5.7 s for the 5,696 chunks of a 2 GiB rechunk).
Here the chunks lie one after another in one sparse file, each written whole
by the one task that writes it (``pwrite`` at its offset) and read straight
into the block that needs it, so the scratch holds exactly the array's bytes.
It lives under a directory that the caller removes; it pickles as that
directory, so dask workers on this machine read and write it too.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import offsets, regular_chunks
from lazyarr.graph.token import ByToken
from lazyarr.io.zarr_chunks import contiguous, gathered_bytes

__all__ = ["ScratchArray", "new_scratch_dir"]

DATA_FILE = "data"
"""The one file under a scratch array's directory."""


def new_scratch_dir(prefix: str, parent: str | None) -> str:
    """A fresh directory ``lazyarr-<prefix>-*`` under ``parent`` (None: the system's temporary
    directory), made if missing; the caller removes it."""
    if parent is not None:
        os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"lazyarr-{prefix}-", dir=parent)


class ScratchArray(ByToken):
    """An array of ``shape`` and ``dtype`` in chunks of ``chunks``, in one raw file of exactly
    its bytes, chunk after chunk in C order.

    ``chunks``: one length per axis (a regular grid, the last chunk of an axis cut by the
    array's edge), or per axis the lengths of its chunks (the parts of a concatenation,
    each in its own chunks). ``chunks`` keeps the largest chunk per axis; ``grid`` the
    lengths."""

    def __init__(
        self,
        root: str,
        shape: tuple[int, ...],
        dtype: Any,
        chunks: Sequence[int] | Sequence[Sequence[int]],
    ) -> None:
        self.root = root
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.grid = tuple(
            tuple(int(c) for c in g)
            if isinstance(g, Sequence)
            else regular_chunks(n, max(1, int(g)))
            for g, n in zip(chunks, self.shape)
        )
        if any(sum(g) != n for g, n in zip(self.grid, self.shape)):
            raise ValueError(f"scratch chunks {self.grid} do not add up to the shape {self.shape}")
        self.chunks = tuple(max(g, default=1) or 1 for g in self.grid)
        self._starts = tuple(offsets(g) for g in self.grid)
        self.token = f"scratch:{root}"
        self.path = os.path.join(root, DATA_FILE)
        os.makedirs(root, exist_ok=True)
        with open(self.path, "ab") as f:  # sparse: pages exist once written
            f.truncate(math.prod(self.shape) * self.dtype.itemsize)

    def describe(self) -> str:
        return f"scratch array {self.root} {self.shape}"

    def copy_bytes(self, block: tuple[int, ...]) -> int:
        """Bytes a write copies while it runs: none (see :meth:`buffer_bytes`)."""
        return 0

    def buffer_bytes(self, block: tuple[int, ...]) -> int:
        """The per-thread buffer a write keeps: one chunk gathered out of a block of shape
        ``block``, unless every chunk is a slab of it."""
        return gathered_bytes(block, self.chunks, self.dtype.itemsize)

    def _extent(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        """Chunk ``coords``'s region of the array."""
        return tuple(slice(o[k], o[k + 1]) for k, o in zip(coords, self._starts))

    def _boxes(self, where: tuple[slice, ...]) -> Iterator[tuple[tuple, tuple, tuple]]:
        """Each chunk under the non-empty region ``where`` (steps 1): its coordinates, its
        part of the array, and that part relative to ``where``."""
        spans = [
            range(bisect.bisect_right(o, s.start) - 1, bisect.bisect_left(o, s.stop))
            for o, s in zip(self._starts, where)
        ]
        for coords in itertools.product(*spans):
            ext = self._extent(coords)
            box = tuple(
                slice(max(e.start, s.start), min(e.stop, s.stop)) for e, s in zip(ext, where)
            )
            local = tuple(slice(b.start - s.start, b.stop - s.start) for b, s in zip(box, where))
            yield coords, box, local

    def boundaries(self, axis: int) -> tuple[int, ...]:
        """Where chunks start and end along ``axis`` (0 and the axis' length included)."""
        return self._starts[axis]

    def _offset(self, ext: tuple[slice, ...]) -> int:
        """Byte offset of the chunk covering ``ext``: the chunks before it in C order. Per axis,
        those starting earlier on it, each spanning the chunk's own lengths on the axes before
        and the whole array on the axes after."""
        elements, outer = 0, 1
        for ax, e in enumerate(ext):
            elements += outer * e.start * math.prod(self.shape[ax + 1 :])
            outer *= e.stop - e.start
        return elements * self.dtype.itemsize

    def write(self, where: tuple[slice, ...], block: np.ndarray) -> None:
        """Store ``block`` at ``where``: whole chunks only (the writer's blocks are aligned)."""
        if block.size == 0:
            return
        fd = os.open(self.path, os.O_WRONLY)
        try:
            for coords, box, local in self._boxes(where):
                if box != self._extent(coords):
                    raise ValueError(
                        f"{self.describe()}: a write of {where} cuts chunk {coords} "
                        f"(chunks {self.chunks}); scratch writes are whole chunks"
                    )
                data = contiguous(block[local], self.dtype)
                _write_all(fd, memoryview(data).cast("B"), self._offset(box))
        finally:
            os.close(fd)

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        """The elements at ``where`` (steps 1), read from the chunks under it."""
        out = np.empty(tuple(max(0, s.stop - s.start) for s in where), self.dtype)
        if out.size == 0:
            return out
        fd = os.open(self.path, os.O_RDONLY)
        try:
            for coords, box, local in self._boxes(where):
                ext = self._extent(coords)
                dst = out[local]
                if box == ext and dst.flags.c_contiguous:
                    self._read_all(fd, dst, ext)
                    continue
                whole = np.empty(tuple(e.stop - e.start for e in ext), self.dtype)
                self._read_all(fd, whole, ext)
                dst[...] = whole[
                    tuple(slice(b.start - e.start, b.stop - e.start) for b, e in zip(box, ext))
                ]
        finally:
            os.close(fd)
        return out

    def _read_all(self, fd: int, dst: np.ndarray, ext: tuple[slice, ...]) -> None:
        """Fill ``dst`` with the chunk covering ``ext``; a short read (the file cut) is an error."""
        view, offset = memoryview(dst).cast("B"), self._offset(ext)
        done = 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], offset + done)
            if got == 0:
                raise OSError(
                    f"{self.describe()}: chunk at {ext} ends after {done} of {len(view)} bytes"
                )
            done += got


def _write_all(fd: int, data: memoryview, offset: int) -> None:
    """``data`` written at ``offset`` whole (a write may take fewer bytes than offered)."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)
