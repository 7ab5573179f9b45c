"""Reading stored arrays lazily: ``from_array`` of array-likes, ``from_zarr``, ``from_npy``.

Nothing is read when these are called: each block is read by the task that
needs it (on the numba executor's threads, on the dask workers), and with
slice pushdown only the indexed elements are read. Blocks default to whole
multiples of the storage's own chunks near ``array.chunk-size``, so no
stored chunk is read by two blocks.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import chunk_limit, chunks_for, is_auto
from lazyarr.graph.chunks import aligned_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import FromReader
from lazyarr.io.readers import NpyReader, Reader, reader_for

__all__ = ["from_npy", "from_reader", "from_zarr", "is_array_like"]


def is_array_like(obj: Any) -> bool:
    """True for stored arrays read lazily: ``shape``, ``dtype`` and ``__getitem__``, and not
    an in-memory NumPy array (those are wrapped as they are)."""
    if isinstance(obj, np.ndarray) or hasattr(obj, "_expr"):
        return False
    return all(hasattr(obj, a) for a in ("shape", "dtype", "__getitem__"))


def from_reader(reader: Reader, chunks: Any = None) -> LazyArray:
    """A lazy array whose blocks ``reader`` reads when they run."""
    if reader.dtype.kind in "OUSVMm":
        raise TypeError(f"lazyarr arrays cannot hold dtype {reader.dtype}")
    shape = reader.shape
    if is_auto(chunks) and reader.chunks is not None:
        blocks = aligned_chunks(shape, reader.dtype.itemsize, reader.chunks, chunk_limit())
    else:
        blocks = chunks_for(chunks, shape, reader.dtype)
    return wrap(Expr(FromReader(reader=reader), (), shape, reader.dtype, blocks))


def from_zarr(store: Any, component: str | None = None, chunks: Any = None) -> LazyArray:
    """A lazy array over a zarr array: a path or store, and the array's path in it.

    Blocks default to multiples of the zarr chunks near ``array.chunk-size``.
    """
    import zarr

    if isinstance(store, zarr.Array):
        arr = store
    else:
        if isinstance(store, (str, os.PathLike)):
            store = os.fspath(store)
        arr = zarr.open_array(store, path=component or "", mode="r")
    return from_reader(reader_for(arr), chunks)


def from_npy(path: str | os.PathLike, chunks: Any = None) -> LazyArray:
    """A lazy array over a ``.npy`` file, memory-mapped where each block is read."""
    return from_reader(NpyReader(os.fspath(path)), chunks)


def array_like(obj: Any, chunks: Any = None) -> LazyArray:
    """``from_array`` of an object that is not in memory (zarr, h5py, netCDF4, ...)."""
    return from_reader(reader_for(obj), chunks)
