"""xarray's rolling reductions over lazy arrays in one stage: ``rolling(time=7).mean()``.

xarray reduces the windows of a chunked array by building them
(``rolling.construct``: the array stacked ``window`` times on a new axis) and
reducing the new axis, once for the values and once for the counts; bottleneck
and numbagg, which move along the axis instead, take NumPy arrays only. For a
lazy array, a trailing (not centred) window along one dimension is reduced by
:func:`lazyarr.namespace.moving.moving_reduce` instead (``sum``, ``mean``,
``max``, ``min``, ``prod``), with xarray's meaning of missing values and
``min_periods``; every other rolling reduction takes xarray's own path.
:func:`install` makes the change, once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from xarray.computation import rolling as xr_rolling
from xarray.core import duck_array_ops

from lazyarr._array import LazyArray
from lazyarr.namespace.moving import moving_reduce

__all__ = ["install"]

_NAMES = {getattr(duck_array_ops, n): n for n in ("sum", "max", "min", "prod")}
"""xarray's window reductions that :func:`moving_reduce` computes, by their function."""


def install() -> None:
    """Reduce trailing rolling windows of lazy arrays in one stage (idempotent)."""
    cls = xr_rolling.DataArrayRolling
    if not getattr(cls._array_reduce, "for_lazyarr", False):
        cls._array_reduce = _one_stage_where_possible(cls._array_reduce)  # type: ignore[method-assign]


def _one_stage_where_possible(array_reduce: Any) -> Any:
    """xarray's ``DataArrayRolling._array_reduce``, with :func:`moving_reduce` for lazy data."""

    def one_stage_reduce(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = _reduction(args, kwargs)
        extra = set(kwargs) - {
            "array_agg_func",
            "bottleneck_move_func",
            "numbagg_move_func",
            "rolling_agg_func",
            "keep_attrs",
            "fillna",
            "sliding_window_view_kwargs",
        }
        obj = self.obj
        if (
            name is None
            or extra
            or not isinstance(obj.variable._data, LazyArray)
            or len(self.dim) != 1
            or self.center[0]
            or obj.dtype.kind not in "iuf"
        ):
            return array_reduce(self, *args, **kwargs)
        axis = obj.get_axis_num(self.dim[0])
        values = moving_reduce(obj.data, self.window[0], axis, name, self.min_periods)
        keep = self._get_keep_attrs(kwargs.get("keep_attrs"))
        return obj.__class__(values, obj.coords, attrs=obj.attrs if keep else {}, name=obj.name)

    one_stage_reduce.for_lazyarr = True  # type: ignore[attr-defined]
    return one_stage_reduce


def _reduction(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The name of the reduction xarray asks for (None: one :func:`moving_reduce` lacks)."""
    names = ("array_agg_func", "bottleneck_move_func", "numbagg_move_func", "rolling_agg_func")
    given = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
    if len(args) > len(names):
        return None
    rolling = given.get("rolling_agg_func")
    if rolling is not None:
        return "mean" if rolling is xr_rolling.Rolling._mean else None
    func = given.get("array_agg_func")
    return _NAMES.get(func) if isinstance(func, Hashable) else None
