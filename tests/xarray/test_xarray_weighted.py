"""xarray's weighted mean on lazy arrays: two sums over one read of the data (the einsums
of ``xr.dot`` built as products and sums, ``graph/ops/einsum_sum.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api, config
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.linalg import Einsum
from lazyarr.testing import assert_eq

xr = pytest.importorskip("xarray")


def data(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def weighted_mean(chunked: bool):
    """xarray's cos(lat)-weighted mean over (lat, lon) of data with NaNs, as DataArrays."""
    v = data((10, 6, 8), "float32")
    v[2, 1, 3] = v[5, :, :] = np.nan
    lat = np.linspace(-60, 60, 6)
    da = xr.DataArray(v, dims=("time", "lat", "lon"), coords={"lat": lat})
    if chunked:
        da = da.chunk({"time": 3}, chunked_array_type="lazyarr")
    return da.weighted(np.cos(np.deg2rad(da.lat))).mean(("lat", "lon"))


def test_xarrays_weighted_mean_is_two_sums_read_in_one_pass():
    want = weighted_mean(False)
    got = weighted_mean(True)
    assert isinstance(got.data, la.LazyArray)
    assert_eq(got.data, want.values, rtol=1e-6)
    # the two sums (of weights where valid, of weighted values) are siblings over one input:
    # one joint task per block of the data reads each block once
    with config.set({"numba.compile-threshold": 0}):
        prepared = api._prepare([got.data._expr], "numba", True, None)
    assert prepared.graph.kinds().get("JOINT") == 4  # time blocks of 3, 3, 3, 1
    sums = [s for s in prepared.plan.stages.values() if isinstance(s.expr.op, Reduce)]
    assert len(sums) == 2
    assert not any(isinstance(s.expr.op, Einsum) for s in prepared.plan.stages.values())


def test_xarrays_weighted_mean_on_the_dask_executor(dask_ex):
    want = weighted_mean(False)
    got = weighted_mean(True)
    assert_eq(got.data, want.values, rtol=1e-6, executors=["dask"])
    with config.set({"executor": "dask"}):
        got.data.compute()
    assert la.last_run().stats.extra["task_kinds"].get("JOINT") == 4
