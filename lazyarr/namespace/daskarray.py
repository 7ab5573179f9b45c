"""Between Dask arrays and lazy arrays: ``from_dask`` and ``to_dask``.

``from_dask(d)`` is a lazy array with ``d``'s chunks whose blocks are read
from ``d`` when a plan needs them (a :class:`~lazyarr.io.readers.DaskReader`
source: slice pushdown and culling mean ``from_dask(d)[:10]`` computes
only the Dask blocks under the first ten rows). ``to_dask(x)`` is a Dask
array with ``x``'s chunks whose every block, when Dask computes it, is a
lazyarr compute of that region of ``x`` (lazyarr plans only the blocks the
region needs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr._array import LazyArray, serve, wrap
from lazyarr._convert import as_expr, dask_source, is_auto
from lazyarr.graph.expr import Expr
from lazyarr.io.readers import is_dask_array
from lazyarr.namespace.io import from_reader

__all__ = ["from_dask", "is_dask_array", "to_dask"]


def from_dask(darr: Any, chunks: Any = None) -> LazyArray:
    """A lazy array over the Dask array ``darr``, in its chunks unless ``chunks`` is given.

    Nothing is computed here; each block computes the Dask blocks it reads
    when it runs.
    """
    if not is_dask_array(darr):
        raise TypeError(f"from_dask takes a dask.array.Array, not {type(darr).__name__}")
    source = dask_source(darr)
    return wrap(source) if is_auto(chunks) else from_reader(source.op.reader, chunks)


class _Regions:
    """What ``dask.array.from_array`` reads: each region is a lazyarr compute of ``expr``."""

    def __init__(self, expr: Expr) -> None:
        self.expr = expr
        self.shape = expr.shape
        self.dtype = expr.dtype
        self.ndim = expr.ndim

    def __getitem__(self, region: Any) -> np.ndarray:
        return wrap(self.expr)[region].compute()


@serve("to_dask")
def to_dask(x: Any) -> Any:
    """A Dask array with the chunks of ``x``; each block is a lazyarr compute of its region."""
    import dask.array as da

    e = as_expr(x)
    return da.from_array(
        _Regions(e),
        chunks=e.chunks,
        name=f"lazyarr-to-dask-{e.key}",
        lock=False,
        asarray=True,
        meta=np.empty((0,) * e.ndim, e.dtype),
    )
