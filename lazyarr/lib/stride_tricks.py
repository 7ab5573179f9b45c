"""``numpy.lib.stride_tricks`` for lazy arrays (xarray's rolling asks ``xp.lib.stride_tricks``)."""

from lazyarr.namespace.windows import sliding_window_view as sliding_window_view

__all__ = ["sliding_window_view"]
