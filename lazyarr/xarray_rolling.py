"""xarray's rolling and coarsening reductions over lazy arrays in one stage each.

xarray reduces the windows of a chunked array by building them
(``rolling.construct``: the array stacked ``window`` times on a new axis) and
reducing the new axis, once for the values and once for the counts; bottleneck
and numbagg, which move along the axis instead, take NumPy arrays only. For a
lazy array, a trailing (not centred) window along one dimension is reduced by
:func:`lazyarr.namespace.moving.moving_reduce` instead (``sum``, ``mean``,
``max``, ``min``, ``prod``), with xarray's meaning of missing values and
``min_periods``; every other rolling reduction takes xarray's own path.

``coarsen(lat=2, lon=2).mean()`` (and ``sum``, ``max``, ``min``) reshapes each
coarsened axis into ``(n, window)`` and reduces the window axes: a copy of every
block, then a slow reduction of short inner axes. For lazy data it is
:func:`lazyarr.namespace.coarsening.coarsen` over the array xarray trimmed or
padded: one stage that adds strided slices of each block. :func:`install`
makes both changes, once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from xarray.computation import rolling as xr_rolling
from xarray.core import duck_array_ops
from xarray.core.options import _get_keep_attrs
from xarray.core.variable import Variable

from lazyarr._array import LazyArray, wrap
from lazyarr.graph.ops.manipulation import Reshape
from lazyarr.namespace.coarsening import coarsen
from lazyarr.namespace.moving import moving_reduce

__all__ = ["install"]

_NAMES = {getattr(duck_array_ops, n): n for n in ("sum", "max", "min", "prod")}
"""xarray's window reductions that :func:`moving_reduce` computes, by their function."""


_COARSEN = {getattr(duck_array_ops, n): n for n in ("sum", "mean", "max", "min")}
"""xarray's coarsening reductions that :func:`coarsen` combines from strided slices."""


def install() -> None:
    """Reduce trailing rolling windows and coarsened windows of lazy arrays in one stage
    (idempotent)."""
    cls = xr_rolling.DataArrayRolling
    if not getattr(cls._array_reduce, "for_lazyarr", False):
        cls._array_reduce = _one_stage_where_possible(cls._array_reduce)  # type: ignore[method-assign]
    if not getattr(Variable.coarsen, "for_lazyarr", False):
        Variable.coarsen = _coarsen_by_slices(Variable.coarsen)  # type: ignore[method-assign]


def _coarsen_by_slices(variable_coarsen: Any) -> Any:
    """xarray's ``Variable.coarsen``, with :func:`coarsen` for lazy data."""

    def coarsen_by_slices(
        self: Any,
        windows: Any,
        func: Any,
        boundary: Any = "exact",
        side: Any = "left",
        keep_attrs: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        name = _COARSEN.get(func) if isinstance(func, Hashable) else None
        windows = {k: v for k, v in windows.items() if k in self.dims}
        if (
            name is None
            or not windows
            or set(kwargs) - {"skipna"}
            or not isinstance(self._data, LazyArray)
            or self.dtype.kind not in "iuf"
        ):
            return variable_coarsen(self, windows, func, boundary, side, keep_attrs, **kwargs)
        reshaped, _ = self.coarsen_reshape(windows, boundary, side)  # trimmed or padded
        expr = getattr(reshaped, "_expr", None)
        if expr is None or not isinstance(expr.op, Reshape) or expr.inputs[0].ndim != self.ndim:
            return variable_coarsen(self, windows, func, boundary, side, keep_attrs, **kwargs)
        skipna = kwargs.get("skipna")
        if expr.inputs[0].dtype.kind == "f" and (skipna or skipna is None):  # padded: floats
            name = f"nan{name}"
        axes = {self.get_axis_num(d): w for d, w in windows.items()}
        data = coarsen(name, wrap(expr.inputs[0]), axes)
        keep = _get_keep_attrs(default=True) if keep_attrs is None else keep_attrs
        return self._replace(data=data, attrs=self.attrs if keep else None)

    coarsen_by_slices.for_lazyarr = True  # type: ignore[attr-defined]
    return coarsen_by_slices


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
