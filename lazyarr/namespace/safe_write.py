"""Writes that never lose data: over a source of their own plan, or over an existing store.

A write whose target is also read by the computation (``to_zarr(from_zarr(p) * 2, p,
overwrite=True)``, ``la.store(y, z)`` where ``y`` reads ``z``) must not start
before every read it could clobber is done, and a write that fails must leave
the old data whole. Three ways, chosen by the target:

* a local zarr store written with ``overwrite``: the new array is written beside
  the old one and the two directories are swapped when it is complete
  (:func:`swap_in`); a failure removes the new one and leaves the old as it was;
* a ``.npy`` file: written to a temporary file beside it, renamed over it;
* any other target that a source reads: the new values are *staged* first, in
  memory when they fit the memory budget (:func:`staging_fits`), else in a
  scratch zarr store under ``temporary-directory`` (:func:`scratch_path`);
  only then are they written to the target (``namespace/io.py``). The scratch
  store is removed after success and failure; if the final copy fails the
  error says the staged copy is kept, and where.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.expr import Expr, reached
from lazyarr.graph.ops import FromReader
from lazyarr.graph.ops.creation import FromArray
from lazyarr.io.locations import (
    Location,
    arrays_overlap,
    path_location,
    reader_location,
    target_location,
)
from lazyarr.io.scratch import new_scratch_dir

__all__ = [
    "ReadSet",
    "memory_budget",
    "scratch_path",
    "staging_fits",
    "swap_in",
    "temporary_sibling",
]


class ReadSet:
    """Every place a set of expressions reads: stored locations and in-memory arrays."""

    def __init__(self, exprs: Sequence[Expr]) -> None:
        self.locations: list[tuple[Location, str]] = []
        self.arrays: list[np.ndarray] = []
        for e in reached(exprs):
            if isinstance(e.op, FromReader):
                where = reader_location(e.op.reader)
                if where is not None:
                    self.locations.append((where, e.op.reader.describe()))
            elif isinstance(e.op, FromArray) and e.op.data is not None:
                arr = e.op.data.array
                self.arrays.append(arr)
                filename = getattr(arr, "filename", None)
                if isinstance(arr, np.memmap) and filename:
                    self.locations.append((path_location(filename), f"memmap {filename}"))

    def clobbered_by(self, target: Any) -> str | None:
        """What a write into ``target`` would overwrite of these reads (None: nothing)."""
        where = target_location(target)
        found = self.reads_location(where) if where is not None else None
        if found is not None:
            return found
        for arr in self.arrays:
            if arrays_overlap(target, arr):
                return f"the in-memory array {arr.shape} {arr.dtype}"
        return None

    def reads_location(self, where: Location) -> str | None:
        """What of these reads lies inside or around ``where`` (None: nothing)."""
        for loc, what in self.locations:
            if loc.overlaps(where):
                return what
        return None


def memory_budget() -> int:
    """Bytes a staged copy may take in memory: half of ``memory-limit``, else a quarter of RAM."""
    limit = config.get("memory-limit")
    if limit is not None:
        return config.parse_bytes(limit) // 2
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError):  # pragma: no cover - systems without sysconf
        return 1 << 30


def staging_fits(nbytes: int) -> bool:
    """A staged copy of ``nbytes`` is kept in memory (else in a scratch store on disk)."""
    return nbytes <= memory_budget()


def scratch_path(prefix: str) -> str:
    """A fresh directory under ``temporary-directory``; the caller removes it when done."""
    return new_scratch_dir(prefix, config.get("temporary-directory"))


def temporary_sibling(path: str, tag: str) -> str:
    """A fresh name beside ``path`` in its directory (same file system: renames are atomic)."""
    head, tail = os.path.split(os.path.abspath(path))
    return os.path.join(head, f".{tail}.lazyarr-{tag}-{uuid.uuid4().hex[:12]}")


def swap_in(new: str, path: str) -> None:
    """Put the complete directory or file ``new`` where ``path`` is, then drop the old one.

    A file is replaced atomically. A directory is renamed aside first, so for a
    moment between the two renames only the aside copy exists; its name,
    ``.<name>.lazyarr-old-<hex>``, says what it is.
    """
    if not os.path.isdir(path) or not os.path.isdir(new):
        os.replace(new, path)
        return
    old = temporary_sibling(path, "old")
    os.rename(path, old)
    try:
        os.rename(new, path)
    except BaseException:
        os.rename(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)
