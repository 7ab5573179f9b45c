"""Stored arrays: lazy reads (``from_array``, ``from_zarr``, ``from_npy``) and block writes.

Nothing is read when these are called: each block is read by the task that
needs it (on the numba executor's threads, on the dask workers), and with
slice pushdown only the indexed elements are read. Blocks default to whole
multiples of the storage's own chunks near ``array.chunk-size``, so no
stored chunk is read by two blocks.

Writes are sink stages (:class:`~lazyarr.graph.ops.store.Write`): each block
is written by the task that computed it, never gathered here; blocks that
would split a stored chunk are re-blocked first.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr, chunk_limit, chunks_for, is_auto
from lazyarr.graph.chunks import aligned_chunks, regular_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import FromReader
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.ops.store import misaligned_axes, write
from lazyarr.io.readers import NpyReader, Reader, reader_for
from lazyarr.io.writers import writer_for

__all__ = ["from_npy", "from_reader", "from_zarr", "is_array_like", "store", "to_npy", "to_zarr"]


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


def _target_blocks(
    x: Expr, stored: tuple[int, ...], offset: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    """Blocks of ``x`` that never split a stored chunk: multiples of ``stored`` near
    ``array.chunk-size``, the first one cut to where the target's next chunk starts."""
    out = []
    sizes = aligned_chunks(x.shape, x.dtype.itemsize, stored, chunk_limit())
    for n, blocks, c, off in zip(x.shape, sizes, stored, offset):
        head = (-off) % c
        if head == 0 or n <= head:
            out.append(blocks if head == 0 else (n,))
            continue
        out.append((head, *regular_chunks(n - head, blocks[0])))
    return tuple(out)


def _offset(region: Any, target_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Where ``region`` (slices with step 1 of the target) starts; its shape must be ``shape``."""
    if region is None:
        if tuple(target_shape) != tuple(shape):
            raise ValueError(
                f"cannot store an array of shape {shape} into a target of shape "
                f"{target_shape} (give regions= to write part of it)"
            )
        return (0,) * len(shape)
    region = region if isinstance(region, tuple) else (region,)
    region = region + (slice(None),) * (len(target_shape) - len(region))
    starts, sizes = [], []
    for sl, n in zip(region, target_shape):
        if not isinstance(sl, slice):
            raise TypeError(f"regions hold slices, not {type(sl).__name__}")
        start, stop, step = sl.indices(n)
        if step != 1:
            raise ValueError(f"regions are slices with step 1, not {sl}")
        starts.append(start)
        sizes.append(max(0, stop - start))
    if tuple(sizes) != tuple(shape):
        raise ValueError(f"region {region} has shape {tuple(sizes)}, the array {shape}")
    return tuple(starts)


def store(
    sources: Any,
    targets: Any,
    regions: Any = None,
    *,
    compute: bool = True,
    executor: str | None = None,
    progress: bool | None = None,
) -> Any:
    """Write ``sources`` into ``targets`` block by block (dask's ``store``).

    Targets support ``__setitem__`` (zarr arrays, h5py datasets, NumPy
    arrays); ``regions`` (one tuple of slices per target) says where each
    source goes. Each block is written by the task that computes it, so
    nothing is gathered here. With ``compute=False`` the writes come back
    as lazy arrays (one count of written elements per block) to compute
    later, together with other work.
    """
    from lazyarr.namespace.compute import compute as compute_all

    single = not isinstance(sources, (list, tuple))
    srcs = [sources] if single else list(sources)
    tgts = [targets] if single else list(targets)
    if len(srcs) != len(tgts):
        raise ValueError(f"{len(srcs)} sources but {len(tgts)} targets")
    regs = [regions] * len(srcs) if regions is None or single else list(regions)
    if len(regs) != len(srcs):
        raise ValueError(f"{len(regs)} regions for {len(srcs)} sources")
    writes = []
    for src, tgt, region in zip(srcs, tgts, regs):
        x = as_expr(src)
        writer = writer_for(tgt)
        offset = _offset(region, writer.shape, x.shape)
        if writer.chunks is not None and misaligned_axes(x.chunks, writer.chunks, offset):
            x = rechunk(x, _target_blocks(x, writer.chunks, offset))
        if x.dtype != writer.dtype and not np.can_cast(x.dtype, writer.dtype, "same_kind"):
            raise TypeError(f"cannot store {x.dtype} into {writer.describe()} of {writer.dtype}")
        writes.append(wrap(write(x, writer, offset)))
    if not compute:
        return writes[0] if single else writes
    compute_all(*writes, executor=executor, progress=progress)
    return None


def to_zarr(
    x: Any,
    url: Any,
    component: str | None = None,
    overwrite: bool = False,
    *,
    compute: bool = True,
    executor: str | None = None,
    progress: bool | None = None,
) -> Any:
    """Write ``x`` to a new zarr array at ``url`` (a path or store), ``component`` inside it.

    The zarr chunks are ``x``'s blocks (its first block along each axis), so
    each block writes its own chunks; an existing array is an error unless
    ``overwrite``. Returns the zarr array (or, with ``compute=False``, the
    lazy write to compute later).
    """
    import zarr

    e = as_expr(x)
    chunk_shape = tuple(max(1, c[0]) if c else 1 for c in e.chunks)
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    target = zarr.create_array(
        url, name=component, shape=e.shape, dtype=e.dtype, chunks=chunk_shape, overwrite=overwrite
    )
    lazy = store(wrap(e), target, compute=compute, executor=executor, progress=progress)
    return target if compute else lazy


def to_npy(x: Any, path: str | os.PathLike, *, executor: str | None = None) -> None:
    """Write ``x`` to a ``.npy`` file block by block (through a memory map, on this machine)."""
    e = as_expr(x)
    target = np.lib.format.open_memmap(os.fspath(path), mode="w+", dtype=e.dtype, shape=e.shape)
    try:
        store(wrap(e), target, executor=executor)
    finally:
        target.flush()
        del target
