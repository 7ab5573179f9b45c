"""Readers: regions of arrays kept outside this process's memory, read when a block runs.

A reader stands for one stored array (a zarr array, an HDF5 dataset, a
``.npy`` file, or any object with ``shape``, ``dtype`` and ``__getitem__``).
It is held by a :class:`~lazyarr.graph.ops.creation.FromReader` source and
read inside the executor: on the numba executor's threads, on the dask
workers. It pickles as a *description* (a file name and a dataset path, or
the object itself where the object pickles as one, like a zarr array), so a
worker reopens the data instead of receiving it through the client. Opened
handles are kept per process (HDF5 files and memmaps are opened once).

``token`` is the reader's identity in expression keys: the location,
the layout and the file's identity where the storage has one (device,
inode, size, modification time), so two reads of one array are shared, and
a rewritten or replaced file is a new key whose reads reopen it.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any

import numpy as np

from lazyarr.graph.token import ByToken
from lazyarr.io.zarr_chunks import ChunkFiles, chunk_files

__all__ = [
    "ArrayLikeReader",
    "DaskReader",
    "HDF5Reader",
    "NpyReader",
    "Reader",
    "ZarrReader",
    "reader_for",
    "stored_chunks",
]


class Reader(ByToken):
    """Base: ``shape``, ``dtype``, the source's own ``chunks`` (or None) and a ``token``."""

    shape: tuple[int, ...]
    dtype: np.dtype
    chunks: tuple[int, ...] | None
    token: str

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        """The elements at ``where`` (one slice per axis, steps positive) as an ndarray."""
        raise NotImplementedError

    def describe(self) -> str:
        """Where the data is, in words (for plans and errors)."""
        raise NotImplementedError


def _stamp(path: str) -> str:
    """The identity of the file at ``path``: device, inode, size and modification time.

    A file replaced by another (``os.replace``, a store swapped in) has a new
    inode even when its size and time match, so it is a new key and a new handle.
    Empty if the file cannot be read.
    """
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


class ArrayLikeReader(Reader):
    """Any object with ``shape``, ``dtype`` and ``__getitem__``; pickled with the object.

    zarr arrays pickle as their store and path (a worker reopens them); for
    other objects the identity is fresh per reader (nothing else is known
    about them), and the object must pickle to run on a cluster.
    """

    def __init__(self, obj: Any, token: str | None = None) -> None:
        self.obj = obj
        self.shape = tuple(int(n) for n in obj.shape)
        self.dtype = np.dtype(obj.dtype)
        self.chunks = stored_chunks(obj, self.shape)
        self.token = token or _zarr_token(obj) or f"array-like:{uuid.uuid4().hex}"

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        part = self.obj[where]
        densify = getattr(part, "todense", None)  # sparse arrays (pydata, SciPy) refuse
        if densify is not None and not isinstance(part, np.ndarray):  # np.asarray:
            part = densify()  # lazyarr's blocks are dense, each made as it is read
        return np.asarray(part)

    def describe(self) -> str:
        return f"{type(self.obj).__module__}.{type(self.obj).__name__} {self.shape}"


class ZarrReader(ArrayLikeReader):
    """A zarr array on a local store whose chunk files decode straight into the block."""

    def __init__(self, obj: Any, files: ChunkFiles, token: str | None = None) -> None:
        super().__init__(obj, token)
        self.files = files

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        if any(s.step not in (None, 1) for s in where) or not all(s.stop > s.start for s in where):
            return super().read(where)
        out = np.empty(tuple(s.stop - s.start for s in where), self.dtype)
        self.files.read_into(self.obj, where, out)
        return out


def stored_chunks(obj: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``obj.chunks`` when it is a chunk shape for ``shape`` (one positive int per axis:
    zarr, h5py), else None (dask's tuples of blocks, contiguous HDF5, plain objects)."""
    chunks = getattr(obj, "chunks", None)
    ok = (
        isinstance(chunks, tuple)
        and len(chunks) == len(shape)
        and all(isinstance(c, (int, np.integer)) and c > 0 for c in chunks)
    )
    return tuple(int(c) for c in chunks) if ok else None


def _zarr_token(obj: Any) -> str | None:
    """``zarr:<store>/<path>`` with the stamp of its metadata, for zarr arrays on a local store."""
    store = getattr(obj, "store", None)
    root = getattr(store, "root", None)
    if root is None or not hasattr(obj, "metadata"):
        return None
    path = getattr(obj, "path", "") or ""
    meta = os.path.join(str(root), path, "zarr.json")
    if not os.path.exists(meta):
        meta = os.path.join(str(root), path, ".zarray")
    return f"zarr:{root}/{path}:{obj.shape}:{getattr(obj, 'chunks', '')}:{_stamp(meta)}"


_OPEN = threading.local()


def _opened(name: tuple, identity: str, opener: Any) -> Any:
    """A handle opened once per thread and process (HDF5 handles are not shared by threads).

    ``name`` says which file, ``identity`` which version of it (its token): a
    handle to an older version of the same file is closed and the file reopened.
    """
    cache = getattr(_OPEN, "handles", None)
    if cache is None:
        cache = _OPEN.handles = {}
    kept = cache.get(name)
    if kept is not None and kept[0] == identity:
        return kept[1]
    if kept is not None:
        close = getattr(kept[1], "close", None)
        if close is not None:
            close()
    handle = opener()
    cache[name] = (identity, handle)
    return handle


class HDF5Reader(Reader):
    """A dataset of an HDF5 (or NetCDF-4) file, reopened by file name where it is read."""

    def __init__(self, filename: str, dataset: str) -> None:
        import h5py

        self.filename = os.path.abspath(filename)
        self.dataset = dataset
        with h5py.File(self.filename, "r") as f:
            d = f[dataset]
            self.shape = tuple(d.shape)
            self.dtype = np.dtype(d.dtype)
            self.chunks = tuple(d.chunks) if d.chunks else None
        self.token = f"hdf5:{self.filename}:{dataset}:{_stamp(self.filename)}"

    def _dataset(self) -> Any:
        import h5py

        f = _opened(("hdf5", self.filename), self.token, lambda: h5py.File(self.filename, "r"))
        return f[self.dataset]

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        d = self._dataset()
        if any(s.step != 1 for s in where):  # h5py reads strided selections slowly: read, then step
            box = tuple(slice(s.start, s.stop) for s in where)
            return np.asarray(d[box])[tuple(slice(None, None, s.step) for s in where)]
        return np.asarray(d[where])

    def describe(self) -> str:
        return f"HDF5 {self.filename}:{self.dataset} {self.shape}"


class NpyReader(Reader):
    """A ``.npy`` file, memory-mapped where it is read (only the read pages come in)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        try:
            m = np.load(self.path, mmap_mode="r")
        except ValueError as e:  # a truncated file: NumPy's mmap error names no file
            e.add_note(f"while opening the .npy file {self.path} (truncated or not a .npy?)")
            raise
        self.shape = tuple(m.shape)
        self.dtype = m.dtype
        self.chunks = None
        self.token = f"npy:{self.path}:{_stamp(self.path)}"

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        m = _opened(("npy", self.path), self.token, lambda: np.load(self.path, mmap_mode="r"))
        return np.array(m[where])  # a copy: blocks never alias the file

    def describe(self) -> str:
        return f".npy {self.path} {self.shape}"


def is_dask_array(obj: Any) -> bool:
    """True for a ``dask.array.Array`` (asked of the object: this module never imports dask)."""
    return type(obj).__module__.startswith("dask.array") and hasattr(obj, "__dask_graph__")


class DaskReader(Reader):
    """A Dask array: reading a region computes only the Dask blocks under it.

    The region is computed with Dask's synchronous scheduler where the block
    is read (a numba executor thread, or the Dask worker running the lazyarr
    task), so no thread pool or cluster client is started inside another.
    The Dask array pickles with its graph; its name (Dask's deterministic
    token of the graph) is the identity.
    """

    def __init__(self, arr: Any) -> None:
        self.arr = arr
        self.shape = tuple(int(n) for n in arr.shape)
        self.dtype = np.dtype(arr.dtype)
        self.chunks = None
        self.blocks = tuple(tuple(int(c) for c in axis) for axis in arr.chunks)
        self.token = f"dask:{arr.name}"

    def read(self, where: tuple[slice, ...]) -> np.ndarray:
        return np.asarray(self.arr[where].compute(scheduler="sync"))

    def describe(self) -> str:
        return f"dask.array {self.arr.name} {self.shape}"


def reader_for(obj: Any) -> Reader:
    """The reader of an array-like: HDF5 datasets by file name, everything else as it is."""
    module = type(obj).__module__
    if module.startswith("h5py"):
        return HDF5Reader(obj.file.filename, obj.name)
    for attr in ("shape", "dtype", "__getitem__"):
        if not hasattr(obj, attr):
            raise TypeError(f"{type(obj).__name__} has no {attr!r}: it cannot be read as an array")
    files = chunk_files(obj) if module.startswith("zarr") else None
    return ArrayLikeReader(obj) if files is None else ZarrReader(obj, files)
