"""Where stored data lives, so that a write can tell whether it would overwrite its own reads.

A :class:`Location` names a place in a file system (a ``.npy`` file, an HDF5
file, a zarr array's directory) or a node of a zarr store that is not on
disk (a memory store). Two locations overlap when one lies inside the
other: writing a zarr group replaces its arrays, writing one dataset of an
HDF5 file may move the others. In-memory NumPy arrays are compared by the
memory they span instead (:func:`arrays_overlap`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Location",
    "arrays_overlap",
    "reader_location",
    "store_location",
    "target_location",
    "zarr_location",
]


@dataclass(frozen=True)
class Location:
    """A place data is kept: ``space`` (a file system, or one zarr store) and a path in it."""

    space: str
    parts: tuple[str, ...]

    def overlaps(self, other: Location) -> bool:
        """One of the two lies inside the other (or they are the same place)."""
        n = min(len(self.parts), len(other.parts))
        return self.space == other.space and self.parts[:n] == other.parts[:n]

    def __str__(self) -> str:
        return (
            "/".join(self.parts) if self.space == "fs" else f"{self.space}:{'/'.join(self.parts)}"
        )


def path_location(path: str | os.PathLike) -> Location:
    """The file system location of ``path`` (links resolved, so two spellings compare equal)."""
    return Location("fs", tuple(p for p in os.path.realpath(os.fspath(path)).split(os.sep) if p))


def zarr_location(array: Any) -> Location | None:
    """Where a zarr array or group is: its directory on a local store, else its store node."""
    store = getattr(array, "store", None)
    if store is None:
        return None
    return store_location(store, getattr(array, "path", "") or "")


def store_location(store: Any, path: str) -> Location:
    """Where node ``path`` of a zarr store is: a directory for a local store, else the node
    in that store (memory stores are told apart by the dict their arrays share)."""
    parts = tuple(p for p in path.split("/") if p)
    root = getattr(store, "root", None)
    if root is not None and type(store).__name__ == "LocalStore":
        base = path_location(str(root))
        return Location(base.space, base.parts + parts)
    inner = getattr(store, "_store_dict", store)
    return Location(f"{type(store).__name__}@{id(inner):x}", parts)


def reader_location(reader: Any) -> Location | None:
    """Where a reader of :mod:`lazyarr.io.readers` reads (None: not on disk nor in a store)."""
    for attr in ("filename", "path"):  # HDF5Reader, NpyReader
        where = getattr(reader, attr, None)
        if isinstance(where, str) and os.path.isabs(where):
            return path_location(where)
    obj = getattr(reader, "obj", None)
    if obj is not None and type(obj).__module__.startswith("zarr"):
        return zarr_location(obj)
    return None


def target_location(target: Any) -> Location | None:
    """Where a write target keeps its data: a zarr array, an h5py dataset, a memmap's file."""
    module = type(target).__module__
    if module.startswith("zarr"):
        return zarr_location(target)
    if module.startswith("h5py"):
        return path_location(target.file.filename)
    filename = getattr(target, "filename", None)
    if isinstance(target, np.memmap) and filename:
        return path_location(filename)
    return None


def arrays_overlap(target: Any, array: Any) -> bool:
    """``target`` (a NumPy array written in place) may share memory with ``array``."""
    return (
        isinstance(target, np.ndarray)
        and isinstance(array, np.ndarray)
        and bool(np.may_share_memory(target, array))
    )
