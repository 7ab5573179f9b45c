"""lazyarr: lazy NumPy-style arrays, optimized as a whole, run on Numba or Dask.

>>> import lazyarr as la
>>> x = la.arange(10, chunks=4)
>>> float((x * 2).sum())
90.0
"""

import sys as _sys

from lazyarr import _array
from lazyarr import config as config
from lazyarr import fft as fft  # submodule namespaces
from lazyarr import lib as lib
from lazyarr import linalg as linalg
from lazyarr import random as random
from lazyarr._array import LazyArray as LazyArray
from lazyarr._fallback import NumPyFallbackWarning as NumPyFallbackWarning
from lazyarr._version import __version__ as __version__
from lazyarr.namespace import dask_indexers as _dask_indexers  # noqa: F401  (x.vindex, x.blocks)
from lazyarr.namespace.comparison import *  # noqa: F403
from lazyarr.namespace.compute import *  # noqa: F403
from lazyarr.namespace.covariance import *  # noqa: F403
from lazyarr.namespace.creation import *  # noqa: F403
from lazyarr.namespace.daskarray import from_dask as from_dask
from lazyarr.namespace.daskarray import to_dask as to_dask
from lazyarr.namespace.dtypes import *  # noqa: F403
from lazyarr.namespace.elementwise import *  # noqa: F403
from lazyarr.namespace.gufuncs import *  # noqa: F403
from lazyarr.namespace.histograms import *  # noqa: F403
from lazyarr.namespace.index_arithmetic import *  # noqa: F403
from lazyarr.namespace.indexing import *  # noqa: F403
from lazyarr.namespace.io import from_npy as from_npy
from lazyarr.namespace.io import from_zarr as from_zarr
from lazyarr.namespace.io import store as store
from lazyarr.namespace.io import to_npy as to_npy
from lazyarr.namespace.io import to_zarr as to_zarr
from lazyarr.namespace.linalg import *  # noqa: F403
from lazyarr.namespace.manipulation import *  # noqa: F403
from lazyarr.namespace.metadata import *  # noqa: F403
from lazyarr.namespace.nanfuncs import *  # noqa: F403
from lazyarr.namespace.numerical import *  # noqa: F403
from lazyarr.namespace.ordering import *  # noqa: F403
from lazyarr.namespace.quantiles import *  # noqa: F403
from lazyarr.namespace.reductions import *  # noqa: F403
from lazyarr.namespace.searching import *  # noqa: F403
from lazyarr.namespace.selection import *  # noqa: F403
from lazyarr.namespace.sets import *  # noqa: F403
from lazyarr.namespace.shape_editing import *  # noqa: F403
from lazyarr.namespace.shuffle import shuffle as shuffle
from lazyarr.namespace.sorting import *  # noqa: F403
from lazyarr.namespace.spacing import *  # noqa: F403
from lazyarr.namespace.statistics import *  # noqa: F403
from lazyarr.namespace.topk import *  # noqa: F403
from lazyarr.namespace.tree_reduction import reduction as reduction
from lazyarr.namespace.userfuncs import *  # noqa: F403
from lazyarr.namespace.windows import sliding_window_view as sliding_window_view
from lazyarr.optimize.memory import MemoryLimitError as MemoryLimitError

_array.serve("namespace")(_sys.modules[__name__])  # what __array_namespace__ returns

# namespace functions record calls on arrays whose lengths are not counted yet
from lazyarr.namespace import deferred as _deferred  # noqa: E402

_deferred.defer_namespace(globals(), _array.HANDLED_FUNCTIONS, _array.SERVED)
Deferred = _deferred.Deferred

__array_api_version__ = "2024.12"
