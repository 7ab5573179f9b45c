"""Writers: targets that blocks are written into where they are computed.

A writer wraps a target with ``__setitem__`` (a zarr array, an h5py
dataset, a NumPy array or memmap). It is held by a
:class:`~lazyarr.graph.ops.store.Write` sink and called by the task that
computed the block. A zarr array pickles as its store and path, so dask
workers write to the store directly; a target that lives in this process's
memory refuses to be pickled (a worker would write into its own copy).
Each call writes whole stored chunks (the write op refuses blocks that
split them); a zarr array on a local store has them compressed straight
from the block into a temporary file that is renamed over the chunk
(:mod:`lazyarr.io.zarr_chunks`), so an interrupted run leaves every chunk
old or new, never half written.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import numpy as np

from lazyarr.graph.token import ByToken
from lazyarr.io.chunk_pieces import padding_bytes
from lazyarr.io.readers import stored_chunks
from lazyarr.io.zarr_chunks import chunk_files, gathered_bytes, stream_context_bytes

__all__ = ["ArrayWriter", "writer_for"]


class ArrayWriter(ByToken):
    """Writes blocks into ``target[where]``; its identity is fresh per store call."""

    def __init__(self, target: Any) -> None:
        for attr in ("shape", "dtype", "__setitem__"):
            if not hasattr(target, attr):
                raise TypeError(
                    f"cannot store into {type(target).__name__}: it has no {attr!r} "
                    "(targets are zarr arrays, h5py datasets, NumPy arrays or memmaps)"
                )
        self.target = target
        self.shape = tuple(int(n) for n in target.shape)
        self.dtype = np.dtype(target.dtype)
        self.chunks = stored_chunks(target, self.shape)
        self.in_memory = isinstance(target, np.ndarray) or type(target).__module__.startswith(
            "h5py"
        )
        self.token = f"write:{uuid.uuid4().hex}"
        zarr_array = type(target).__module__.startswith("zarr")
        self.files = chunk_files(target) if zarr_array else None

    def write(self, where: tuple[slice, ...], block: np.ndarray) -> None:
        """Store ``block`` at ``where`` (whole stored chunks, or the array's edge)."""
        if self.files is not None and all(s.stop > s.start for s in where):
            self.files.write_from(self.target, where, block)
        else:
            self.target[where] = block

    def copy_bytes(self, block: tuple[int, ...]) -> int:
        """Bytes a write of a block of shape ``block`` copies while it runs: the block again
        where zarr encodes it (lazyarr's own chunk writes stream: :meth:`buffer_bytes`)."""
        if self._writes_files():
            return 0
        return math.prod(block) * self.dtype.itemsize

    def buffer_bytes(self, block: tuple[int, ...]) -> int:
        """The per-thread buffers lazyarr's own chunk writes keep: the pieces that gather a
        chunk out of a block of shape ``block`` when it is not a slab of it, or pad an
        edge chunk, as they stream into the file (a whole chunk where the codec does not
        stream), and the zstd compressor that streams chunks (its window and tables)."""
        if not self._writes_files():
            return 0
        itemsize = self.dtype.itemsize
        chunk_bytes = math.prod(self.chunks) * itemsize
        gathered = gathered_bytes(block, self.chunks, itemsize)
        edges = any(n % c for n, c in zip(self.shape, self.chunks))
        if self.files.streams():
            gathered = padding_bytes(self.chunks, itemsize) if gathered or edges else 0
        elif edges:
            gathered = chunk_bytes
        return gathered + stream_context_bytes(self.files.codec, chunk_bytes)

    def _writes_files(self) -> bool:
        return self.files is not None and self.files.writable and self.chunks is not None

    def describe(self) -> str:
        store = getattr(self.target, "store", None)
        path = getattr(self.target, "path", None) or getattr(self.target, "name", None)
        where = f" {store}" if store is not None else ""
        where += f":{path}" if path else ""
        kind = f"{type(self.target).__module__.split('.')[0]}.{type(self.target).__name__}"
        return f"{kind}{where} {self.shape}"

    def __reduce__(self) -> Any:
        if self.in_memory:
            raise TypeError(
                f"cannot send {self.describe()} to other processes: it is written in this "
                "process only (store into a zarr array to write from dask workers, or "
                "compute with a local executor)"
            )
        return (_rebuilt, (self.target, self.token))


def _rebuilt(target: Any, token: str) -> ArrayWriter:
    w = ArrayWriter(target)
    w.token = token
    return w


def writer_for(target: Any) -> ArrayWriter:
    """The writer of ``target`` (an existing writer is kept)."""
    return target if isinstance(target, ArrayWriter) else ArrayWriter(target)
