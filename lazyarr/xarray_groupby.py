"""xarray's groupby and resample reductions over lazy arrays, in two stages through flox's adapter.

Lazy arrays take xarray's own groupby (flox's Dask code would hand back a Dask
array: ``xarray_chunkmanager._keep_lazy_groupbys_off_flox``), which reduces
each group on its own: one selection, one reduction and one reshape per group,
1,100 stages and a second of planning for a daily climatology. So when that
path asks for a sum, mean, count, product, maximum or minimum of one grouping
variable along its own dimension, it is handed back to xarray's flox adapter
(``GroupBy._flox_reduce``: flox lines up the data and builds the result's
coordinates), whose call of ``flox.core.groupby_reduce`` on a lazy array runs
:func:`lazyarr.namespace.groupreduce.group_reduce` instead: two stages whatever
the number of groups. Everything else (``median``, ``std``, ``quantile``,
groupings over several variables or axes) stays on xarray's per-group path,
which stays lazy. :func:`install` makes both changes, once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from xarray.core import duck_array_ops
from xarray.core import groupby as xr_groupby

from lazyarr._array import LazyArray
from lazyarr.namespace.groupreduce import GROUP_FUNCS, group_reduce

__all__ = ["install"]

_FLOX_NAMES = {
    getattr(duck_array_ops, name): name for name in ("sum", "prod", "mean", "count", "max", "min")
}
"""xarray's own reductions that :func:`group_reduce` computes, with flox's names for them."""


def install() -> None:
    """Send lazy groupby reductions to :func:`group_reduce` where it applies (idempotent)."""
    try:
        import flox.xarray as flox_xarray
    except ImportError:  # xarray's flox adapter needs flox
        return
    for cls in (xr_groupby.DataArrayGroupByBase, xr_groupby.DatasetGroupByBase):
        if not getattr(cls.reduce, "for_lazyarr", False):
            cls.reduce = _two_stages_where_possible(cls.reduce)  # type: ignore[method-assign]
    grouped = flox_xarray.groupby_reduce
    if not getattr(grouped, "for_lazyarr", False):
        flox_xarray.groupby_reduce = _lazy_groupby_reduce(grouped)


def _holds_lazy(obj: Any) -> bool:
    variables = getattr(obj, "variables", None) or {"": obj.variable}
    return any(isinstance(v._data, LazyArray) for v in variables.values())


def _two_stages_where_possible(reduce: Any) -> Any:
    """xarray's per-group ``reduce``, with the reductions :func:`group_reduce` computes
    handed to xarray's flox adapter when the object holds lazy arrays."""

    def two_stage_reduce(self: Any, func: Any, dim: Any = None, **kwargs: Any) -> Any:
        name = _FLOX_NAMES.get(func) if isinstance(func, Hashable) else None
        if name is None or kwargs.get("axis") is not None or not _holds_lazy(self._obj):
            return reduce(self, func, dim, **kwargs)
        if not _one_variable_along_its_dim(self, dim):
            return reduce(self, func, dim, **kwargs)
        kwargs.pop("axis", None)
        kwargs.pop("shortcut", None)
        return self._flox_reduce(dim=dim, func=name, **kwargs)  # min_count as xarray gives it

    two_stage_reduce.for_lazyarr = True  # type: ignore[attr-defined]
    return two_stage_reduce


def _one_variable_along_its_dim(groupby: Any, dim: Any) -> bool:
    """One grouping variable of numbers in memory, reduced along its own dimension only."""
    if len(groupby.groupers) != 1 or groupby._by_chunked:
        return False
    group = groupby.groupers[0].group
    return group.ndim == 1 and tuple(groupby._parse_dim(dim)) == tuple(group.dims)


def _lazy_groupby_reduce(groupby_reduce: Any) -> Any:
    """flox's ``groupby_reduce``, with a lazy array grouped along its last axis by
    :func:`group_reduce`; everything else goes to flox."""

    def lazy_groupby_reduce(
        array: Any,
        *by: Any,
        func: Any,
        expected_groups: Any = None,
        axis: Any = None,
        fill_value: Any = None,
        dtype: Any = None,
        min_count: int | None = None,
        **kwargs: Any,
    ) -> Any:
        codes = np.asarray(by[0]) if len(by) == 1 and not isinstance(by[0], LazyArray) else None
        ours = (
            isinstance(array, LazyArray)
            and isinstance(func, str)
            and func in GROUP_FUNCS
            and codes is not None
            and codes.ndim == 1
            and codes.dtype.kind in "iu"
            and axis in (-1, (-1,), array.ndim - 1, (array.ndim - 1,))
            and isinstance(expected_groups, tuple)
            and len(expected_groups) == 1
            and not kwargs.get("finalize_kwargs")
        )
        if not ours:
            return groupby_reduce(
                array,
                *by,
                func=func,
                expected_groups=expected_groups,
                axis=axis,
                fill_value=fill_value,
                dtype=dtype,
                min_count=min_count,
                **kwargs,
            )
        groups = np.asarray(expected_groups[0])
        out = group_reduce(array, codes, len(groups), func, -1, fill_value, min_count, dtype)
        return out, groups

    lazy_groupby_reduce.for_lazyarr = True  # type: ignore[attr-defined]
    return lazy_groupby_reduce
