"""xarray's chunk manager for lazy arrays: ``chunked_array_type="lazyarr"``.

xarray talks to a chunked array library through a
``ChunkManagerEntrypoint`` registered under the entry-point group
``xarray.chunkmanagers`` (``pyproject.toml`` registers this class as
``lazyarr``). With it, ``xr.open_zarr(path, chunked_array_type="lazyarr",
chunks={})``, ``.chunk(chunked_array_type="lazyarr")``, ``.compute()``,
``.load()``, ``.persist()`` and ``.to_zarr()`` keep lazy arrays inside
xarray objects; arithmetic and reductions go through the arrays' own
methods and the Array API namespace (:attr:`LazyarrManager.array_api`).

What lazyarr adds over one array at a time: ``compute`` and ``persist``
receive every lazy variable of a Dataset at once and run them in one
shared plan (common work, such as a shared input or a shared mean, runs
once); ``store`` writes every variable block by block through
``lazyarr.store`` in one plan, each block written by the task that made it.

Lazy arrays are Dask collections too (``dask.compute(x)`` works), and
xarray's Dask manager claims every duck array that is a Dask collection;
xarray refuses a type that two managers claim. So this manager, when
xarray loads it, tells the Dask manager to leave lazy arrays to it
(:func:`_leave_lazy_arrays_to_lazyarr`). xarray also indexes every Dask
collection through its Dask adapter, whose orthogonal indexing
(``isel(y=[0, 1], x=[1, 2, 3])``) relies on dask's ``x[a, b]`` being outer;
lazyarr's ``x[a, b]`` is NumPy's pointwise indexing, so the adapter indexes
lazy arrays one axis at a time (:func:`_index_lazy_arrays_by_axis`). And
``apply_ufunc(..., dask="parallelized")`` over lazy arrays and Dask arrays
together (``interp`` chunks its coordinates with Dask) runs on lazyarr, the
Dask arrays read lazily as sources, where xarray refuses to mix chunk types
(:func:`_run_mixed_apply_ufunc_on_lazyarr`). With flox installed, xarray hands
groupby and resample reductions to flox, whose Dask code claims every Dask
collection and hands back a Dask array built around the lazy one; lazy arrays
take xarray's own groupby instead (:func:`_keep_lazy_groupbys_off_flox`), whose
sums, means, counts, products, maxima and minima lazyarr then computes in two
stages under flox's adapter (:mod:`lazyarr.xarray_groupby`); trailing rolling
windows are reduced in one stage (:mod:`lazyarr.xarray_rolling`), not through
xarray's stacked windows. These are the changes made to xarray.

xarray's Dask code paths (``ffill``/``bfill``, ``polyfit``) call the manager's
:attr:`~LazyarrManager.array_api` as they call ``dask.array``: there NumPy
ufuncs take dask's ``dtype=`` (the result cast to it, as
``da.isnan(x, dtype=int)``), everything else is lazyarr's own
(:class:`DaskStyleNamespace`).

``map_blocks``, ``blockwise`` and ``apply_gufunc`` delegate to lazyarr's
functions of those names (Dask's signatures) when lazyarr has them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from dask.array.core import normalize_chunks as dask_normalize_chunks
from xarray.core import _aggregations as xr_aggregations
from xarray.core import groupby as xr_groupby
from xarray.core.indexing import DaskIndexingAdapter, OuterIndexer
from xarray.namedarray.daskmanager import DaskManager
from xarray.namedarray.parallelcompat import ChunkManagerEntrypoint

import lazyarr
from lazyarr._array import LazyArray
from lazyarr._convert import chunk_limit
from lazyarr.io.readers import is_dask_array
from lazyarr.namespace.compute import compute as compute_all
from lazyarr.namespace.compute import persist as persist_all
from lazyarr.namespace.creation import from_array
from lazyarr.namespace.io import store as store_all
from lazyarr.xarray_groupby import install as install_groupbys
from lazyarr.xarray_rolling import install as install_rolling

try:
    from xarray.computation import apply_ufunc as xr_apply_ufunc
except ImportError:  # xarray before its computation/ package kept apply_ufunc here
    from xarray.core import computation as xr_apply_ufunc  # type: ignore[no-redef]

__all__ = ["DaskStyleNamespace", "LazyarrManager"]

# keywords of Dask's versions that mean nothing here (locks, graph names, flushing)
_IGNORED = ("lock", "flush", "name", "inline_array", "meta", "asarray", "scheduler", "traverse")


def _delegate(name: str) -> Callable[..., Any]:
    """lazyarr's function ``name``, or a clear error while lazyarr has none."""
    fn = getattr(lazyarr, name, None)
    if fn is None:
        raise NotImplementedError(
            f"lazyarr.{name} is not available in this version of lazyarr, so xarray "
            f"operations that need the chunk manager's {name} do not work on lazy arrays yet"
        )
    return fn


def _run_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords that lazyarr's compute takes (``executor``, ``optimize``, ``progress``...)."""
    return {k: v for k, v in kwargs.items() if k not in _IGNORED}


def _leave_lazy_arrays_to_lazyarr() -> None:
    """Make xarray's Dask manager not claim lazy arrays (idempotent)."""
    claims = DaskManager.is_chunked_array
    if getattr(claims, "leaves_lazyarr", False):
        return

    def is_chunked_array(self: DaskManager, data: Any) -> bool:
        return not isinstance(data, LazyArray) and claims(self, data)

    is_chunked_array.leaves_lazyarr = True  # type: ignore[attr-defined]
    DaskManager.is_chunked_array = is_chunked_array  # type: ignore[method-assign]


def _keep_lazy_groupbys_off_flox() -> None:
    """Make xarray's groupby and resample reductions over lazy arrays use xarray's own
    groupby, not flox (idempotent): flox's Dask path would return a Dask array."""
    for module in (xr_groupby, xr_aggregations):
        only = module.contains_only_chunked_or_numpy
        if getattr(only, "keeps_lazyarr", False):
            continue
        module.contains_only_chunked_or_numpy = _without_lazy_arrays(only)


def _without_lazy_arrays(only: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``only``, but False for an xarray object that holds a lazy array."""

    def contains_only_chunked_or_numpy(obj: Any) -> bool:
        variables = getattr(obj, "variables", None) or {"": obj.variable}
        lazy = any(isinstance(v._data, LazyArray) for v in variables.values())
        return not lazy and only(obj)

    contains_only_chunked_or_numpy.keeps_lazyarr = True  # type: ignore[attr-defined]
    return contains_only_chunked_or_numpy


def _index_lazy_arrays_by_axis() -> None:
    """Make xarray's Dask adapter index lazy arrays orthogonally one axis at a time
    (idempotent): several integer arrays in ``x[...]`` are pointwise in lazyarr, as in NumPy."""
    oindex = getattr(DaskIndexingAdapter, "_oindex_get", None)
    if oindex is None or getattr(oindex, "by_axis_for_lazyarr", False):
        return

    def _oindex_get(self: DaskIndexingAdapter, indexer: OuterIndexer) -> Any:
        key = indexer.tuple
        arrays = sum(not isinstance(k, slice) for k in key)
        lazy = any(isinstance(k, LazyArray) for k in key)
        if not isinstance(self.array, LazyArray) or (arrays < 2 and not lazy):
            return oindex(self, indexer)
        value = self.array
        for axis, k in reversed(list(enumerate(key))):
            if isinstance(k, LazyArray) and value.ndim == 1:
                value = value.vindex[k]  # a coordinate at lazy positions (idxmax): no compute
            elif not isinstance(k, slice) or k != slice(None):
                value = value[(slice(None),) * axis + (k,)]
        return value

    _oindex_get.by_axis_for_lazyarr = True  # type: ignore[attr-defined]
    DaskIndexingAdapter._oindex_get = _oindex_get  # type: ignore[method-assign]


def _run_mixed_apply_ufunc_on_lazyarr(manager: LazyarrManager) -> None:
    """Make ``apply_ufunc`` pick ``manager`` for lazy arrays mixed with Dask arrays (its
    functions read the Dask arrays as lazy sources), not refuse the mix (idempotent)."""
    choose = xr_apply_ufunc.get_chunked_array_type
    if getattr(choose, "mixes_for_lazyarr", False):
        return

    def get_chunked_array_type(*args: Any) -> Any:
        lazy = any(isinstance(a, LazyArray) for a in args)
        return manager if lazy and any(is_dask_array(a) for a in args) else choose(*args)

    get_chunked_array_type.mixes_for_lazyarr = True  # type: ignore[attr-defined]
    xr_apply_ufunc.get_chunked_array_type = get_chunked_array_type


# xarray's wrappers that hand the array under them through unchanged (their ``array``)
_PASS_THROUGH = ("ImplicitToExplicitIndexingAdapter", "CopyOnWriteArray", "LazilyIndexedArray")


def _stored_array(data: Any) -> Any:
    """The zarr array under xarray's lazily indexed wrappers of a whole, undecoded zarr
    variable (so lazyarr decodes its chunk files straight into blocks, on every thread, not
    through zarr's one event loop); ``data`` itself when a wrapper selects, decodes or
    converts anything."""
    inner = data
    while type(inner).__name__ in _PASS_THROUGH and type(inner).__module__.startswith("xarray"):
        key = getattr(inner, "key", None)
        if key is not None and any(k != slice(None) for k in getattr(key, "tuple", (0,))):
            return data  # a selection of the variable: xarray's indexing decides
        inner = inner.array
    if type(inner).__name__ != "ZarrArrayWrapper":
        return data
    stored = inner.get_array()
    same = tuple(stored.shape) == tuple(data.shape) and np.dtype(stored.dtype) == data.dtype
    return stored if same and type(stored).__module__.startswith("zarr") else data


class DaskStyleNamespace:
    """``lazyarr`` as xarray's Dask code calls ``dask.array``: a NumPy ufunc's ``dtype=``
    casts its result (dask's meaning; NumPy's would pick the loop and may refuse)."""

    @staticmethod
    def isnull(x: Any) -> LazyArray:
        """``dask.array.isnull``: NaN and NaT are missing (xarray's datetime ``mean`` asks)."""
        x = lazyarr.asarray(x)
        return lazyarr.isnan(x) if x.dtype.kind in "fcmM" else lazyarr.zeros_like(x, dtype=bool)

    @staticmethod
    def notnull(x: Any) -> LazyArray:
        """``dask.array.notnull``: the values that are neither NaN nor NaT."""
        return ~DaskStyleNamespace.isnull(x)

    def __getattr__(self, name: str) -> Any:
        fn = getattr(lazyarr, name)
        if not isinstance(getattr(np, name, None), np.ufunc):
            return fn

        def cast_after(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            return out if dtype is None else out.astype(dtype)

        return cast_after

    def __repr__(self) -> str:
        return "<lazyarr namespace, dask-style ufunc dtype=>"


_DASK_STYLE = DaskStyleNamespace()


class LazyarrManager(ChunkManagerEntrypoint[LazyArray]):
    """Lazy arrays inside xarray objects (``chunked_array_type="lazyarr"``)."""

    array_cls: type[LazyArray]

    def __init__(self) -> None:
        self.array_cls = LazyArray
        _leave_lazy_arrays_to_lazyarr()
        _keep_lazy_groupbys_off_flox()
        install_groupbys()
        install_rolling()
        _index_lazy_arrays_by_axis()
        _run_mixed_apply_ufunc_on_lazyarr(self)

    def is_chunked_array(self, data: Any) -> bool:
        return isinstance(data, LazyArray)

    def chunks(self, data: LazyArray) -> tuple[tuple[int, ...], ...]:
        return data.chunks

    def normalize_chunks(
        self,
        chunks: Any,
        shape: tuple[int, ...] | None = None,
        limit: int | None = None,
        dtype: Any = None,
        previous_chunks: Any = None,
    ) -> tuple[tuple[int, ...], ...]:
        """Dask's rules for chunk specs (xarray passes them in Dask's forms: ``-1``,
        ``"auto"``, dicts, the storage's chunks as ``previous_chunks``); ``"auto"``
        aims at lazyarr's block size (``array.chunk-size``)."""
        return dask_normalize_chunks(
            chunks,
            shape=shape,
            limit=limit if limit is not None else chunk_limit(),
            dtype=np.dtype(dtype) if dtype is not None else np.dtype(np.float64),
            previous_chunks=previous_chunks,
        )

    def get_auto_chunk_size(self) -> int:
        return chunk_limit()

    def from_array(self, data: Any, chunks: Any, **kwargs: Any) -> LazyArray:
        """A lazy array over ``data``: NumPy arrays wrapped, backend arrays (xarray's
        lazily indexed zarr/netCDF variables) read block by block when a plan runs."""
        if isinstance(data, LazyArray):
            return data if chunks is None else data.rechunk(chunks)
        return from_array(_stored_array(data), chunks=chunks)

    def rechunk(self, data: LazyArray, chunks: Any, **kwargs: Any) -> LazyArray:
        return data.rechunk(chunks)

    def shuffle(self, x: LazyArray, indexer: list[list[int]], axis: int, chunks: Any) -> LazyArray:
        """Each group of positions along ``axis`` into one block (``GroupBy.shuffle_to_chunks``)."""
        from lazyarr.namespace.shuffle import shuffle

        return shuffle(x, indexer, axis, "auto" if chunks is None else chunks)

    def compute(self, *data: Any, **kwargs: Any) -> tuple[Any, ...]:
        """NumPy values of every lazy array given, computed in one shared plan."""
        lazy = [i for i, d in enumerate(data) if isinstance(d, LazyArray)]
        values = compute_all(*(data[i] for i in lazy), **_run_options(kwargs)) if lazy else ()
        out = list(data)
        for i, v in zip(lazy, values):
            out[i] = v
        return tuple(out)

    def persist(self, *data: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Every lazy array given persisted in one shared plan; other objects as they are."""
        lazy = [i for i, d in enumerate(data) if isinstance(d, LazyArray)]
        kept = persist_all(*(data[i] for i in lazy), **_run_options(kwargs)) if lazy else ()
        out = list(data)
        for i, v in zip(lazy, kept):
            out[i] = v
        return tuple(out)

    @property
    def array_api(self) -> Any:
        """lazyarr's namespace, with dask's meaning of a ufunc's ``dtype=``."""
        return _DASK_STYLE

    def store(self, sources: Any, targets: Any, **kwargs: Any) -> Any:
        """Write ``sources`` into ``targets`` (zarr arrays) block by block, in one plan.

        ``regions`` says where each source goes; with ``compute=False`` the
        lazy writes come back to compute later (``lazyarr.compute``).
        """
        compute = kwargs.pop("compute", True)
        regions = kwargs.pop("regions", None)
        single = not isinstance(sources, (list, tuple))
        if regions is not None and not single:
            regions = [None if r is None else tuple(r) for r in regions]
            if all(r is None for r in regions):
                regions = None
        options = _run_options(kwargs)
        return store_all(
            sources,
            targets,
            regions,
            compute=compute,
            executor=options.get("executor"),
            progress=options.get("progress"),
        )

    def unify_chunks(self, *args: Any, **kwargs: Any) -> tuple[dict[Any, Any], list[Any]]:
        """Dask's ``unify_chunks(x, "ij", y, "jk", ...)``: arrays sharing an index get the
        chunks of the first array that has it (a dimension of size 1 broadcasts)."""
        pairs = list(zip(args[::2], args[1::2]))
        chunkss: dict[Any, tuple[int, ...]] = {}
        pairs = [(lazyarr.from_dask(a) if is_dask_array(a) else a, ind) for a, ind in pairs]
        for a, ind in pairs:
            if ind is None or not isinstance(a, LazyArray):
                continue
            for i, c in zip(ind, a.chunks):
                if i not in chunkss or (len(chunkss[i]) == 1 and chunkss[i][0] == 1):
                    chunkss[i] = c
        arrays = []
        for a, ind in pairs:
            if ind is None or not isinstance(a, (LazyArray, np.ndarray)):
                arrays.append(a)
                continue
            a = a if isinstance(a, LazyArray) else from_array(a)
            want = tuple(c if n != 1 else (1,) for c, n in zip((chunkss[i] for i in ind), a.shape))
            arrays.append(a if a.chunks == want else a.rechunk(want))
        return chunkss, arrays

    def reduction(
        self,
        arr: LazyArray,
        func: Callable[..., Any],
        combine_func: Callable[..., Any] | None = None,
        aggregate_func: Callable[..., Any] | None = None,
        axis: int | Sequence[int] | None = None,
        dtype: Any = None,
        keepdims: bool = False,
    ) -> LazyArray:
        """dask's ``reduction`` (``la.reduction``): ``func`` per block, ``combine_func``
        over pairs of states, ``aggregate_func`` at the end (xarray's ``first``/``last``)."""
        return lazyarr.reduction(
            arr,
            chunk=func,
            combine=combine_func,
            aggregate=aggregate_func if aggregate_func is not None else func,
            axis=axis,
            dtype=dtype,
            keepdims=keepdims,
        )

    def scan(
        self,
        func: Callable[..., Any],
        binop: Callable[..., Any],
        ident: float,
        arr: LazyArray,
        axis: int | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> LazyArray:
        return _delegate("cumreduction")(func, binop, ident, arr, axis=axis, dtype=dtype, **kwargs)

    def apply_gufunc(
        self, func: Callable[..., Any], signature: str, *args: Any, **kwargs: Any
    ) -> Any:
        return _delegate("apply_gufunc")(func, signature, *args, **kwargs)

    def map_blocks(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return _delegate("map_blocks")(func, *args, **kwargs)

    def blockwise(self, func: Callable[..., Any], out_ind: Any, *args: Any, **kwargs: Any) -> Any:
        return _delegate("blockwise")(func, out_ind, *args, **kwargs)
