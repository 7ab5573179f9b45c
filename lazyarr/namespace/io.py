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

import contextlib
import math
import os
import shutil
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, serve, wrap
from lazyarr._convert import as_expr, chunk_limit, chunks_for, is_auto
from lazyarr.graph.chunks import aligned_chunks, regular_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import FromReader
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.ops.store import misaligned_axes, write
from lazyarr.io.locations import Location, path_location, store_location
from lazyarr.io.readers import NpyReader, Reader, reader_for
from lazyarr.io.writers import writer_for
from lazyarr.io.zarr_chunks import sweep_partials
from lazyarr.namespace.safe_write import (
    ReadSet,
    scratch_path,
    staging_fits,
    swap_in,
    temporary_sibling,
)

__all__ = ["from_npy", "from_reader", "from_zarr", "is_array_like", "store", "to_npy", "to_zarr"]


def is_array_like(obj: Any) -> bool:
    """True for stored arrays read lazily: ``shape``, ``dtype`` and ``__getitem__``, and not
    an in-memory NumPy array (those are wrapped as they are)."""
    if isinstance(obj, np.ndarray) or hasattr(obj, "_expr"):
        return False
    return all(hasattr(obj, a) for a in ("shape", "dtype", "__getitem__"))


def from_reader(reader: Reader, chunks: Any = None) -> LazyArray:
    """A lazy array whose blocks ``reader`` reads when they run."""
    if reader.dtype.kind in "OUSV":
        raise TypeError(f"lazyarr arrays cannot hold dtype {reader.dtype}")
    shape = reader.shape
    auto = is_auto(chunks) and reader.chunks is not None
    if auto:
        blocks = aligned_chunks(shape, reader.dtype.itemsize, reader.chunks, chunk_limit())
    else:
        blocks = chunks_for(chunks, shape, reader.dtype)
    op = FromReader(reader=reader, auto_chunks=auto)
    return wrap(Expr(op, (), shape, reader.dtype, blocks))


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


@serve("store")
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

    A target that the sources also read is never written while they read
    it: those values are staged first (in memory when they fit, else in a
    scratch store), then written (:mod:`lazyarr.namespace.safe_write`).
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
    xs, writers, offs = [], [], []
    for src, tgt, region in zip(srcs, tgts, regs):
        x = as_expr(src)
        writer = writer_for(tgt)
        offset = _offset(region, writer.shape, x.shape)
        if x.dtype != writer.dtype and not np.can_cast(x.dtype, writer.dtype, "same_kind"):
            raise TypeError(f"cannot store {x.dtype} into {writer.describe()} of {writer.dtype}")
        xs.append(x)
        writers.append(writer)
        offs.append(offset)
    for w in writers:
        if w.files is not None and os.path.isdir(w.files.root):
            sweep_partials(w.files.root)  # leftovers of a killed earlier write
    reads = ReadSet(xs)
    clobbered = [reads.clobbered_by(w.target) for w in writers]
    if any(clobbered):
        if not compute:
            what = next(c for c in clobbered if c)
            raise ValueError(
                f"cannot defer a write over {what}, which the same computation reads: "
                "store it with compute=True (lazyarr then stages the values first)"
            )
        _store_staged(xs, writers, offs, clobbered, executor, progress)
        return None
    writes = [wrap(_write_aligned(x, w, o)) for x, w, o in zip(xs, writers, offs)]
    if not compute:
        return writes[0] if single else writes
    compute_all(*writes, executor=executor, progress=progress)
    return None


def _write_aligned(x: Expr, writer: Any, offset: tuple[int, ...]) -> Expr:
    """The write of ``x`` into ``writer``, re-blocked first where blocks would split a chunk."""
    if writer.chunks is not None and misaligned_axes(x.chunks, writer.chunks, offset):
        x = rechunk(x, _target_blocks(x, writer.chunks, offset))
    return write(x, writer, offset)


def _store_staged(
    xs: list[Expr],
    writers: list[Any],
    offs: list[tuple[int, ...]],
    clobbered: list[str | None],
    executor: str | None,
    progress: bool | None,
) -> None:
    """Compute the values bound for clobbered targets into a staged copy, then write them.

    The first compute reads every source and writes only targets nobody reads;
    the clobbered targets are written from the staged copy once it is whole.
    """
    staged = [i for i, c in enumerate(clobbered) if c]
    direct = [
        wrap(_write_aligned(xs[i], writers[i], offs[i])) for i, c in enumerate(clobbered) if not c
    ]
    copies, scratch = _stage([xs[i] for i in staged], direct, executor, progress)
    _write_copies(copies, staged, writers, offs, executor, progress, scratch)


def _stage(
    exprs: list[Expr], also: list[LazyArray], executor: str | None, progress: bool | None
) -> tuple[list[Expr], str | None]:
    """``exprs`` computed once (with the writes ``also``) into staged copies: in memory when
    they fit the budget, else in a scratch store whose directory is returned (None: memory).
    On failure nothing staged is left behind."""
    from lazyarr.namespace.compute import compute as compute_all

    if staging_fits(sum(e.dtype.itemsize * math.prod(e.shape) for e in exprs)):
        values = compute_all(*map(wrap, exprs), *also, executor=executor, progress=progress)
        return [as_expr(v, chunks=e.chunks) for e, v in zip(exprs, values)], None
    scratch = scratch_path("staged")
    try:
        stores = [
            _scratch_array(os.path.join(scratch, f"{i}.zarr"), e) for i, e in enumerate(exprs)
        ]
        writes = [
            wrap(_write_aligned(e, writer_for(z), (0,) * e.ndim)) for e, z in zip(exprs, stores)
        ]
        compute_all(*writes, *also, executor=executor, progress=progress)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return [from_zarr(z, chunks=e.chunks)._expr for e, z in zip(exprs, stores)], scratch


def _write_copies(
    copies: list[Expr],
    staged: list[int],
    writers: list[Any],
    offs: list[tuple[int, ...]],
    executor: str | None,
    progress: bool | None,
    scratch: str | None,
) -> None:
    """Write staged copies into their targets, then drop the scratch store; a failure keeps
    it and says where."""
    from lazyarr.namespace.compute import compute as compute_all

    writes = [wrap(_write_aligned(c, writers[i], offs[i])) for c, i in zip(copies, staged)]
    try:
        compute_all(*writes, executor=executor, progress=progress)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    except BaseException as err:
        kept = f"in {scratch}" if scratch else "only in memory (lost with this error)"
        targets = ", ".join(writers[i].describe() for i in staged)
        err.add_note(
            f"lazyarr: every read had finished; writing the staged values into {targets} "
            f"failed part way. The staged values are kept {kept}."
        )
        raise


def _scratch_array(path: str, x: Expr) -> Any:
    """A zarr array in a scratch store holding ``x`` in its own blocks (uncompressed: read once)."""
    import zarr

    chunks = tuple(max(max(c, default=1), 1) for c in x.chunks)
    return zarr.create_array(path, shape=x.shape, dtype=x.dtype, chunks=chunks, compressors=None)


@serve("to_zarr")
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

    Overwriting a local store never loses the old array: the new one is
    written beside it and swapped in when complete, so ``x`` may read the
    array it replaces, and a failed write leaves the old one whole. Other
    stores that ``x`` reads are staged first (see :func:`store`). A new local
    array whose write is refused (``MemoryLimitError``) or fails is removed
    again, with the directories made for it.
    """
    import zarr

    e = as_expr(x)
    chunk_shape = tuple(max(1, c[0]) if c else 1 for c in e.chunks)
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    local = _local_array_dir(url, component)
    reads = ReadSet([e])
    read_here = None
    if overwrite:
        where = path_location(local) if local is not None else _store_location(url, component)
        read_here = reads.reads_location(where) if where is not None else None
    if read_here and not compute:
        raise ValueError(
            f"cannot defer writing over {read_here}, which the same computation reads: "
            "call to_zarr with compute=True"
        )

    def create(at: Any, name: str | None, replace: bool) -> Any:
        return zarr.create_array(
            at, name=name, shape=e.shape, dtype=e.dtype, chunks=chunk_shape, overwrite=replace
        )

    if overwrite and compute and local is not None and os.path.exists(local):
        new = temporary_sibling(local, "new")
        try:
            store(wrap(e), create(new, None, False), executor=executor, progress=progress)
            swap_in(new, local)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        return zarr.open_array(url, path=component or "", mode="r+")
    if read_here:
        (copy,), scratch = _stage([e], [], executor, progress)
        target = create(url, component, True)
        _write_copies(
            [copy], [0], [writer_for(target)], [(0,) * e.ndim], executor, progress, scratch
        )
        return target
    made = _first_missing(local) if compute and local is not None else None
    target = create(url, component, overwrite)
    try:
        lazy = store(wrap(e), target, compute=compute, executor=executor, progress=progress)
    except BaseException:
        if made is not None:  # refused or failed: no empty or partial array stays behind
            shutil.rmtree(made, ignore_errors=True)
        raise
    return target if compute else lazy


def _first_missing(path: str) -> str | None:
    """The outermost directory of ``path`` that does not exist yet (None: ``path`` exists):
    what writing a new array there creates, and removes again if the write fails."""
    missing = None
    while not os.path.exists(path):
        missing, parent = path, os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _local_array_dir(url: Any, component: str | None) -> str | None:
    """The directory a zarr array at ``url``/``component`` lives in, for local paths and stores."""
    root = None
    if isinstance(url, str) and ("://" not in url or url.startswith("file://")):
        root = url.removeprefix("file://")
    elif type(url).__name__ == "LocalStore":
        root = str(url.root)
    if root is None:
        return None
    return os.path.abspath(os.path.join(root, *(p for p in (component or "").split("/") if p)))


def _store_location(url: Any, component: str | None) -> Location | None:
    """Where a zarr array at ``url``/``component`` would be, for stores that are not local paths."""
    if not hasattr(url, "get") or isinstance(url, (str, bytes)):
        return None
    return store_location(url, component or "")


def to_npy(x: Any, path: str | os.PathLike, *, executor: str | None = None) -> None:
    """Write ``x`` to a ``.npy`` file block by block (through a memory map, on this machine).

    The file is written under a temporary name beside ``path`` and renamed over
    it when complete: ``x`` may read the file it replaces, and a failed write
    leaves the old file as it was.
    """
    e = as_expr(x)
    path = os.path.abspath(os.fspath(path))
    tmp = temporary_sibling(path, "new") + ".npy"
    try:
        target = np.lib.format.open_memmap(tmp, mode="w+", dtype=e.dtype, shape=e.shape)
        try:
            store(wrap(e), target, executor=executor)
        finally:
            target.flush()
            del target
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
