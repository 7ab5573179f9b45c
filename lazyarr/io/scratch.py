"""Scratch arrays: intermediates on local disk, one raw file per chunk, exactly their size.

A staged rechunk (:mod:`lazyarr.staged_rechunk`) writes its input in one grid
and reads it back in another. zarr would do, but it pads every edge chunk to
the full chunk shape (a 241-row axis in 48-row chunks stores 288 rows: 20%
more bytes written and read) and runs each edge chunk through its own slower
path. Here each chunk is one file of its own exact bytes, written whole by
the one task that writes it and read straight into the block that needs it,
so the scratch holds exactly the array's bytes. It lives under a directory
that the caller removes; it pickles as that directory, so dask workers on
this machine read and write it too.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from lazyarr.graph.token import ByToken
from lazyarr.io.zarr_chunks import chunk_boxes

__all__ = ["ScratchArray", "new_scratch_dir"]


def new_scratch_dir(prefix: str, parent: str | None) -> str:
    """A fresh directory ``lazyarr-<prefix>-*`` under ``parent`` (None: the system's temporary
    directory), made if missing; the caller removes it."""
    if parent is not None:
        os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"lazyarr-{prefix}-", dir=parent)


class ScratchArray(ByToken):
    """An array of ``shape`` and ``dtype`` in chunks of ``chunks``, one raw file each."""

    def __init__(
        self, root: str, shape: tuple[int, ...], dtype: Any, chunks: tuple[int, ...]
    ) -> None:
        self.root = root
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.chunks = tuple(max(1, int(c)) for c in chunks)
        self.token = f"scratch:{root}"
        os.makedirs(root, exist_ok=True)

    def describe(self) -> str:
        return f"scratch array {self.root} {self.shape}"

    def _path(self, coords: tuple[int, ...]) -> str:
        return os.path.join(self.root, ".".join(map(str, coords)) or "0")

    def _extent(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        """Chunk ``coords``'s region of the array (cut at the array's edge)."""
        return tuple(
            slice(k * c, min((k + 1) * c, n)) for k, c, n in zip(coords, self.chunks, self.shape)
        )

    def write(self, where: tuple[slice, ...], block: np.ndarray) -> None:
        """Store ``block`` at ``where``: whole chunks only (the writer's blocks are aligned)."""
        if block.size == 0:
            return
        for coords, box, local in chunk_boxes(where, self.chunks):
            if box != self._extent(coords):
                raise ValueError(
                    f"{self.describe()}: a write of {where} cuts chunk {coords} "
                    f"(chunks {self.chunks}); scratch writes are whole chunks"
                )
            data = np.ascontiguousarray(block[local], dtype=self.dtype)
            with open(self._path(coords), "wb") as f:
                f.write(memoryview(data).cast("B"))

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        """The elements at ``where`` (steps 1), read from the chunk files under it."""
        out = np.empty(tuple(max(0, s.stop - s.start) for s in where), self.dtype)
        if out.size == 0:
            return out
        for coords, box, local in chunk_boxes(where, self.chunks):
            ext = self._extent(coords)
            dst = out[local]
            path = self._path(coords)
            if box == ext and dst.flags.c_contiguous:
                with open(path, "rb", buffering=0) as f:
                    got = f.readinto(memoryview(dst).cast("B"))
                if got != dst.nbytes:
                    raise OSError(f"scratch chunk {path}: {got} of {dst.nbytes} bytes")
                continue
            whole = np.fromfile(path, dtype=self.dtype)
            shape = tuple(e.stop - e.start for e in ext)
            if whole.size != np.prod(shape):
                raise OSError(f"scratch chunk {path}: {whole.size} elements, not {shape}")
            inner = tuple(slice(b.start - e.start, b.stop - e.start) for b, e in zip(box, ext))
            dst[...] = whole.reshape(shape)[inner]
        return out
